"""A job's child process, seen from the parent: starting it, ending it and all it started,
and what is left of it afterwards (its log, its sample log, how it ended).

The runner (core.run.runner) decides *when*; this module knows *how*. Why a child process per
job: torch.compile is not thread-safe (pytorch/pytorch#118260), its config overrides are
thread-local since 2.12, and compiling holds the GIL for long stretches (a compile on a
worker thread stalled a 10 ms main-thread timer by up to 434 ms here). In a child, a crash,
an out-of-memory kill or a hung compile ends that job only.
"""

from __future__ import annotations

import os
import pickle
import signal
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from multiprocessing.connection import Connection

from core import PROJECT_ROOT
from core.run.sampling import memory_limit_mb
from core.vocab.config import JobSpec

MEMORY_TIGHT_FRACTION = 0.8  # the job's last RSS readings against the machine's memory
MAX_KEPT_LOGS = 20  # failed jobs' logs kept in the log folder, newest first
LOG_HEAD_BYTES = 256 * 1024
LOG_TAIL_BYTES = 2 * 1024 * 1024
LOG_FOLDER_NAME = "compile-profiler-logs"
# Never through a link, never a file that is already there: a log in a folder another user
# could reach must not truncate or reveal that user's files (O_NOFOLLOW is 0 where missing).
NEW_FILE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def is_private_folder(path: str) -> bool:
    """Whether `path` is a real folder (not a link) owned by this user that no one else may
    enter (mode 0700), as lstat sees it."""
    try:
        st = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077 == 0


def private_folder(path: str) -> bool:
    """Make `path` a private folder (see `is_private_folder`) if it is not there, and say
    whether it is one now. A folder that is ours but open to others is closed (mode 0700);
    one owned by someone else, or a link, is refused."""
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return False
    try:
        st = os.lstat(path)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and stat.S_IMODE(st.st_mode) & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        return False
    return is_private_folder(path)


def log_folder() -> str:
    """This user's private folder for job logs and sample logs: under $XDG_RUNTIME_DIR when it is a
    private folder, else a per-user folder in the temporary folder; when that name is taken by
    someone else (or is a link), a fresh private folder made by `tempfile.mkdtemp`. A fixed folder
    shared by every user let another user's links make a run truncate or reveal files."""
    runtime = os.environ.get("XDG_RUNTIME_DIR", "")
    candidates = [os.path.join(runtime, LOG_FOLDER_NAME)] if runtime and is_private_folder(runtime) else []
    candidates.append(os.path.join(tempfile.gettempdir(), f"{LOG_FOLDER_NAME}-{os.getuid()}"))
    for path in candidates:
        if private_folder(path):
            return path
    return tempfile.mkdtemp(prefix=f"{LOG_FOLDER_NAME}-")


def create_new_file(path: str) -> int:
    """Create `path` for writing (mode 0600) and return its descriptor; FileExistsError if anything,
    a link included, is already there."""
    return os.open(path, NEW_FILE_FLAGS, 0o600)


def describe_exit(exitcode: int | None, memory_tight: bool = False) -> str:
    """A user-facing sentence for how a child process ended. A SIGKILL is blamed on memory
    only when the job's memory was near the machine's limit (`memory_tight`)."""
    if exitcode is None:
        return "the job process did not end"
    if exitcode < 0:
        sig = -exitcode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGKILL:
            if memory_tight:
                return (
                    f"the job process was killed ({name}) while its memory was near the machine's limit: "
                    "most likely out of memory; try a smaller batch size"
                )
            return f"the job process was killed ({name}) by something outside it"
        if sig == signal.SIGSEGV:
            return f"the job process crashed with a segmentation fault ({name})"
        if sig == signal.SIGABRT:
            return f"the job process aborted ({name})"
        return f"the job process was ended by {name}"
    return f"the job process exited with code {exitcode} without reporting a result"


def log_tail(path: str, lines: int = 25) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def memory_was_tight(recent_rss_mb) -> bool:
    """Whether the job's RSS in its last readings came near the machine's memory limit."""
    recent = list(recent_rss_mb)
    return bool(recent) and max(recent) >= MEMORY_TIGHT_FRACTION * memory_limit_mb()


def cap_log(path: str) -> None:
    """Shorten a kept log to its head and tail (a failing job can write 100 MB)."""
    try:
        size = os.path.getsize(path)
        if size <= LOG_HEAD_BYTES + LOG_TAIL_BYTES:
            return
        with open(path, "rb") as fh:
            head = fh.read(LOG_HEAD_BYTES)
            fh.seek(size - LOG_TAIL_BYTES)
            tail = fh.read()
        cut = size - len(head) - len(tail)
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "wb") as fh:
            fh.write(head + f"\n\n[... {cut:,} bytes of the log cut here ...]\n\n".encode() + tail)
    except OSError:
        pass


def rotate_logs(folder: str, keep: int = MAX_KEPT_LOGS) -> None:
    """Keep the newest `keep` job logs in `folder`, remove older ones."""
    try:
        logs = [os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("job-") and n.endswith(".log")]
        logs.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    except OSError:
        return
    for old in logs[keep:]:
        remove_file(old)


def end_processes(procs) -> None:
    """Kill the processes of a finished job that are still alive (a model's `sleep 300`)."""
    import psutil

    alive = []
    for p in procs:
        try:
            if p.is_running():  # also checks the pid was not reused (create time)
                p.kill()
                alive.append(p)
        except psutil.Error:
            pass
    try:
        psutil.wait_procs(alive, timeout=5)
    except Exception:
        pass


def remove_file(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@dataclass
class ChildProcess:
    """A started job process: its event pipe, its log file and its sample log. The parent
    holds the only read end of the pipe; the child the only write end, so end-of-file means
    the child is gone."""

    proc: subprocess.Popen
    reader: Connection
    log_path: str
    sample_path: str

    def send(self, spec: JobSpec) -> None:
        try:
            self.proc.stdin.write(pickle.dumps(spec))
            self.proc.stdin.close()
        except OSError:
            pass  # the child died already; reported as its exit

    def stop(self) -> None:
        """End the child (and its compile workers) now: SIGKILL, since a process stuck in a
        C++ compile or a CUDA call does not answer SIGTERM promptly."""
        stop_process(self.proc)

    def discard(self) -> None:
        """End a child no job used, and remove its files."""
        self.reader.close()
        self.stop()
        remove_file(self.log_path)
        remove_file(self.sample_path)


def launch_child(stem: str) -> ChildProcess:
    """Start `python -m core.measure.child` in its own session with a pipe for events; its log and
    sample log are `stem`.log and `stem`.samples, both created new here (never through a link);
    where either name is taken (a kept log of an earlier process with the same pid), `stem`-2,
    `stem`-3, ... is used."""
    log_fd, log_path, sample_path = _new_log_files(stem)
    read_fd, write_fd = os.pipe()
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH")) if p)
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.measure.child", str(write_fd), sample_path],
            stdin=subprocess.PIPE,
            stdout=log_fd,
            stderr=subprocess.STDOUT,
            pass_fds=(write_fd,),
            env=env,
            start_new_session=True,
        )
    except OSError:
        os.close(read_fd)
        remove_file(log_path)
        remove_file(sample_path)
        raise
    finally:
        os.close(write_fd)  # the child holds the only write end now: EOF means it is gone
        os.close(log_fd)
    return ChildProcess(proc, Connection(read_fd, writable=False), log_path, sample_path)


def _new_log_files(stem: str, tries: int = 100) -> tuple[int, str, str]:
    """A new log file (open for writing) and a new empty sample log, named after `stem`."""
    for n in range(1, tries + 1):
        base = stem if n == 1 else f"{stem}-{n}"
        log_path, sample_path = base + ".log", base + ".samples"
        try:
            os.close(create_new_file(sample_path))
        except FileExistsError:
            continue
        try:
            return create_new_file(log_path), log_path, sample_path
        except FileExistsError:
            remove_file(sample_path)
    raise FileExistsError(f"no free log name after {tries} tries for {stem}.log")


def stop_process(proc: subprocess.Popen) -> None:
    """SIGKILL a process and its descendants, then reap it."""
    if proc.poll() is None:
        try:
            import psutil

            for child in psutil.Process(proc.pid).children(recursive=True):
                child.kill()
        except Exception:
            pass
        proc.kill()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
