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
LABEL_FILE = "config.txt"  # the config label a folder belongs to (its name holds only a slug of it)


def name_folder(folder: str, label: str) -> None:
    """Write the config's label into its folder (once), for the listing."""
    if not label:
        return
    path = os.path.join(folder, LABEL_FILE)
    if os.path.lexists(path):
        return
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "w") as f:
        f.write(label + "\n")


def hold_cache_folder(folder: str, label: str = "", attempts: int = 5) -> int | None:
    """Hold `folder` (made if missing, and labelled `label`) for this process's life: the open
    file descriptor of its lock, kept open on purpose (None when the folder cannot be made or
    locked: the job runs on, unprotected, as it did before holds existed)."""
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
                name_folder(folder, label)  # made again by this hold after a clear: labelled too
                return fd
        except OSError:
            pass  # removed between the lock and the check: take it again
        os.close(fd)
    return None


def try_exclusive(folder: str, create: bool = True) -> int | None:
    """The exclusive lock of `folder`'s lock file, without waiting: its descriptor, or None
    while a job holds the folder. OSError when the lock file cannot be opened (FileNotFoundError
    with `create` False and no lock file: no job ever held it)."""
    flags = os.O_RDWR | os.O_NOFOLLOW | (os.O_CREAT if create else 0)
    fd = os.open(os.path.join(folder, IN_USE_FILE), flags, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    except OSError:
        os.close(fd)
        raise
    return fd
