"""A job's hold on its config's inductor cache folder, so that clearing the caches
(core.run.compile_cache.clear_config_caches, `main.py cache --clear`, the app's Compile caches
dialog) never deletes a folder a running job is compiling into: inductor writes C++/Triton
kernels there and loads them back, and a folder removed mid-compile fails the job.

The hold is a shared flock on IN_USE_FILE inside the folder, taken by the job's child process
for its whole life; a clear takes the exclusive lock without waiting and skips the folder when
it cannot. A hold taken while a clear was removing the folder finds its lock file unlinked (the
path names another file, or none) and takes it again on a new one.
"""

from __future__ import annotations

import fcntl
import os

IN_USE_FILE = ".in-use"  # the lock file in each config's cache folder


def hold_cache_folder(folder: str, attempts: int = 5) -> int | None:
    """Hold `folder` (made if missing) for this process's life: the open file descriptor of its
    lock, kept open on purpose (None when the folder cannot be made or locked: the job runs
    on, unprotected, as it did before holds existed)."""
    path = os.path.join(folder, IN_USE_FILE)
    for _ in range(attempts):
        try:
            os.makedirs(folder, exist_ok=True)
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        except FileNotFoundError:
            continue  # a clear renamed the folder away between the two: make it again
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)  # waits only while a clear holds it (it is removing the folder)
            if os.stat(path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino:
                return fd
        except OSError:
            pass  # removed between the lock and the check: take it again
        os.close(fd)
    return None


def try_exclusive(folder: str) -> int | None:
    """The exclusive lock of `folder`'s lock file, without waiting: its descriptor, or None
    while a job holds the folder (or the lock file cannot be opened)."""
    try:
        fd = os.open(os.path.join(folder, IN_USE_FILE), os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd
