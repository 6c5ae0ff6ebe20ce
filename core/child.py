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
    spec = pickle.load(sys.stdin.buffer)
    conn = Connection(int(argv[0]), readable=False)
    from core.job import run_job

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
