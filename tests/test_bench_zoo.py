"""The zoo bench's parts (tests/bench/zoo.py): which lines end a job on either executor, the
per-job figure, and whose CPU counts as other processes' load."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time

import psutil

from tests.bench.zoo import OthersSampler, job_ends, per_job_s

LOCAL = [
    (4.0, "[1/3] /m/a.py · eager: started"),
    (8.1, "[1/3] /m/a.py · eager: speedup 0.61x [95% CI 0.13-0.84], compile 0.3 s, 0 graph breaks"),
    (8.1, "[2/3] /m/b.py · eager: started"),
    (12.3, "[2/3] /m/b.py · eager: speedup 0.55x [95% CI 0.26-0.95], compile 0.3 s, 0 graph breaks"),
    (12.3, "[3/3] /m/c.py · eager: started"),
    (17.0, "[3/3] /m/c.py · eager: speedup 0.50x [95% CI 0.20-0.90], compile 0.3 s, 0 graph breaks"),
    (18.0, "zoo written to /out (zoo.csv, zoo_summary.csv, zoo.json; a report folder per model)"),
]
RAY = [
    (4.5, "starting Ray (up to 300 s; Ctrl+C stops)"),
    (9.1, "[1/2] /m/a.py · eager: started on vm/47188c"),
    (13.0, "[1/2] /m/a.py · eager: error: the model raised"),
    (13.0, "[2/2] /m/b.py · eager: started on vm/47188c"),
    (17.2, "[2/2] /m/b.py · eager: speedup 0.55x [95% CI 0.26-0.95] on vm/47188c"),
]


def test_a_job_ends_at_its_result_line_on_either_executor_and_a_start_or_an_error_is_no_end():
    assert job_ends(LOCAL) == [8.1, 12.3, 17.0]
    assert job_ends(RAY) == [17.2]  # "started on NODE" is a start, the error line no result
    assert per_job_s(job_ends(LOCAL)) == statistics.median([12.3 - 8.1, 17.0 - 12.3])
    assert per_job_s(job_ends(RAY)) is None  # one end: no interval


BURN = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end: pass"
# Stands for the zoo: it burns, so does its child (a job's process), and a child of its that ends
# after a second leaves a burning child behind, handed to init (Ray's processes at shutdown).
ZOO = f"""
import subprocess, sys
burn = {BURN!r}
subprocess.Popen([sys.executable, "-c", burn])
mid = f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {{burn!r}}]); time.sleep(1.0)"
subprocess.Popen([sys.executable, "-c", mid])
exec(burn)
"""


def _descendants(pid: int) -> list[int]:
    return [p.pid for p in psutil.Process(pid).children(recursive=True)]


def test_the_zoos_own_processes_are_not_others_load_and_a_process_beside_it_is():
    ours = subprocess.Popen([sys.executable, "-c", ZOO])
    beside = subprocess.Popen([sys.executable, "-c", BURN])  # the bench's --load, or someone else's work
    tree: list[int] = []
    try:
        deadline = time.monotonic() + 60
        while len(tree) < 3 and time.monotonic() < deadline:  # its child, the middle one and its child
            tree = _descendants(ours.pid)
            time.sleep(0.02)
        sampler = OthersSampler(ours.pid, every=0.25)
        time.sleep(2.5)  # the middle one ends after 1 s: its child is handed to init, still burning
        orphaned = [pid for pid in tree if pid not in _descendants(ours.pid)]
        others, steal = sampler.result()
    finally:
        for pid in tree:
            subprocess.run(["kill", "-9", str(pid)], capture_output=True)
        for p in (ours, beside):
            p.kill()
            p.wait()
    assert len(tree) == 3, tree
    assert orphaned, "a process of the zoo's was handed to init"
    assert sampler.by_pid.get(beside.pid, 0) > 0, sampler.by_pid
    assert not {ours.pid, *tree} & set(sampler.by_pid), (ours.pid, tree, orphaned, sampler.by_pid)
    assert sampler.cpu_s >= sampler.by_pid[beside.pid] and others > 0 and steal >= 0
