"""How long this process has lived, by the kernel's own clock. Any thread; standard library only.

psutil's `Process().create_time()` is a wall-clock time: the boot time from /proc/stat (whole
seconds) plus the process's start in ticks since boot. On this project's virtual machine the
wall clock and the boot clock drift apart: `time.time() - create_time()` read 0.38-1.08 s more
than the time from `Popen` to the process's first line, and the excess changed within minutes,
so the app's launch time swung between 0.7 and 1.3 s with the same code (docs/BENCHMARKS.md,
"The app's start, memory and exit"). On Linux both ends are taken from the boot clock instead: the start in
/proc/self/stat (clock ticks since boot, 10 ms here) against CLOCK_BOOTTIME.
"""

from __future__ import annotations

import os
import sys
import time


def process_age_s() -> float:
    """Seconds since this process started (the kernel's start, before Python's), within a clock
    tick on Linux; elsewhere psutil's wall-clock figure; NaN where neither can be read."""
    if sys.platform == "linux":
        try:
            with open("/proc/self/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
            started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime
            return time.clock_gettime(time.CLOCK_BOOTTIME) - started
        except (OSError, ValueError, IndexError):
            pass
    try:
        import psutil

        return time.time() - psutil.Process().create_time()
    except Exception:
        return float("nan")
