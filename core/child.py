"""Entry point of a job's child process: `python -m core.child WRITE_FD`.

The runner starts this with subprocess (not multiprocessing's spawn, which would re-run the
caller's main module in the child) in a session of its own, so Ctrl+C in a terminal reaches
only the parent, which cancels cleanly. The JobSpec arrives pickled on stdin; events go back
pickled over the inherited pipe; stdout and stderr are the job's log file.
"""
from __future__ import annotations

import os
import pickle
import sys
from multiprocessing.connection import Connection


def main(argv: list[str]) -> None:
    conn = Connection(int(argv[0]), readable=False)
    # Import the heavy modules before waiting for the spec: a child started ahead of time
    # (JobRunner.prestart) does this while the parent is still validating or idle.
    from core.job import run_job

    try:
        import torch  # noqa: F401
        import torchvision  # noqa: F401
    except ImportError:
        pass  # the job reports what is missing
    spec = pickle.load(sys.stdin.buffer)

    try:
        run_job(spec, conn.send)
    finally:
        try:
            conn.close()
        except OSError:
            pass
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(0)  # skip interpreter teardown (atexit hooks of compile workers); results are sent


if __name__ == "__main__":
    main(sys.argv[1:])
