"""Entry point of a job's child process: `python -m core.measure.child WRITE_FD SAMPLE_LOG`.

The runner starts this with subprocess (not multiprocessing's spawn, which would re-run the
caller's main module in the child) in a session of its own, so Ctrl+C in a terminal reaches
only the parent, which cancels cleanly. The JobSpec arrives pickled on stdin; events go back
pickled over the inherited pipe; every timed call is also appended to SAMPLE_LOG (see
core.vocab.samples); stdout and stderr are the job's log file.

Nothing a model starts outlives its job: the child makes itself a "child subreaper", so a
process the model starts and detaches (double fork, its own session) stays its descendant,
and it ends every descendant before it exits. When the child itself is ended (cancel,
timeout, crash), the runner ends the descendants it has seen (core.run.runner).
"""

from __future__ import annotations

import os
import pickle
import sys
from multiprocessing.connection import Connection

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Linux: orphaned descendants are re-parented to this process instead of init."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def end_descendants() -> None:
    """Kill every process this one started (the model's, and inductor's compile workers)."""
    try:
        import psutil

        procs = psutil.Process().children(recursive=True)
    except Exception:
        return
    for p in procs:
        try:
            p.kill()
        except Exception:
            pass
    try:
        psutil.wait_procs(procs, timeout=5)
    except Exception:
        pass


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[0]), readable=False)
    sample_log = argv[1] if len(argv) > 1 else None
    become_subreaper()
    # Import the heavy modules before waiting for the spec: a child started ahead of time
    # (JobRunner.prestart) does this while the parent is still validating or idle.
    from core.measure.job import run_job

    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        pass  # the job reports what is missing
    spec = pickle.load(sys.stdin.buffer)
    if spec.compile_cache_dir:  # read by inductor when it first compiles (JobSpec.compile_cache_dir)
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = spec.compile_cache_dir
        from core.measure.cache_hold import hold_cache_folder

        hold_cache_folder(
            spec.compile_cache_dir, spec.config.label
        )  # kept for the process's life: no clear removes it meanwhile

    try:
        run_job(spec, conn.send, sample_log_path=sample_log)
    finally:
        end_descendants()
        try:
            conn.close()
        except OSError:
            pass
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown (atexit hooks of compile workers); results are sent


if __name__ == "__main__":
    main(sys.argv[1:])
