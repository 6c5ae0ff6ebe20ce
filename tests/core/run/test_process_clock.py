"""A process's age, read inside it, against the time its parent saw it live."""

import os
import subprocess
import sys
import time

from core import PROJECT_ROOT

CHILD = "import time; time.sleep(0.2); from core.run.process_clock import process_age_s; print(process_age_s())"


def test_a_process_age_is_no_more_than_its_parent_saw_it_live():
    """psutil's create_time is a wall-clock time off the boot clock by whole seconds' rounding
    and drift: a child's age read 0.38-0.45 s more than the parent's clock from Popen to its
    line, and the app's launch time swung by that. Read inside, the age is at most what the
    parent saw (plus the start's rounding to a clock tick), and at least the child's own sleep."""
    tick = 1 / os.sysconf("SC_CLK_TCK")
    for _ in range(3):
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, text=True)
        line = proc.stdout.readline()
        seen = time.perf_counter() - started
        proc.communicate(timeout=60)
        age = float(line)
        assert 0.2 <= age <= seen + tick + 0.002, (age, seen)
