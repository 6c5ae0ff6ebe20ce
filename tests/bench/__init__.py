"""The benchmarks, `python -m tests.bench NAME [options]` (tests/bench/__main__.py lists them;
docs/BENCHMARKS.md has their figures): what every benchmark shares. Each prints one
`name: value` line per figure (`say`), reads its options from its extra arguments (`_opt`),
records the cores other processes used meanwhile (`CpuWatch`) and quotes medians with a
distribution-free interval (`median_interval`).

The benchmarks themselves, one module each: fidelity (with paired, its one-process pairing),
engine (overhead, alternation, wall, freezing), app (gui, launch, charts), report (report,
stats), trust (quality, auto, advice), zoo, script (script, script-logs), generation.
"""

from __future__ import annotations

import os
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ITERS, WARMUP = 50, 5
FIDELITY_ROUNDS, FIDELITY_ITERS, FIDELITY_MIN_RUN_S = 30, 100, 2.0
# Load subsets of the fidelity rounds, by the cores other processes used during both members
# of a round (never by the ratio): "quiet" (< 0.25 core), and "a core left" (≤ 1.05: with one
# torch thread on 2 cores the measurement still had a core of its own, 0.05 for jiffy rounding).
QUIET_OTHERS_CORES = 0.25
CORE_LEFT_OTHERS_CORES = 1.05
# The fidelity bench's allocator settings for both members of a round (bench_fidelity says why).
ALLOCATORS = {
    "steady": "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432",
    "default": "",
}
SLOW_MODE_FAULTS = 500  # compiled page faults a call above which a process is in glibc's slow mode


def _mode(faults_per_call: float) -> str:
    return "slow" if faults_per_call > SLOW_MODE_FAULTS else "fast"


def _opt(args, name: str, default):
    """The value after `name` in a benchmark's extra arguments, else `default`."""
    args = list(args)
    return args[args.index(name) + 1] if name in args else default


def say(name: str, value) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{name}: {value}", flush=True)


def median_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval for the median of `values`: the order statistics
    (x_(j), x_(n+1-j)) with the largest j whose coverage, 1 - 2·P(Binomial(n, 1/2) < j), is
    still at least `confidence`. Returns (low, high, exact coverage); with too few values
    for the confidence asked, (min, max) and their coverage."""
    from math import comb

    x = sorted(values)
    n = len(x)
    best = (x[0], x[-1], 1 - 2 * 0.5**n)
    below = 0.0  # P(B <= j - 1)
    for j in range(1, (n + 1) // 2 + 1):
        below += comb(n, j - 1) / 2**n
        coverage = 1 - 2 * below
        if coverage < confidence:
            break
        best = (x[j - 1], x[n - j], coverage)
    return best


def bootstrap_median_interval(values, resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median (for comparison; with ~12 values it is
    coarse, the order-statistic interval is the one quoted)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(resamples, v.size))
    low, high = np.percentile(np.median(v[idx], axis=1), [2.5, 97.5])
    return float(low), float(high)


class CpuWatch:
    """How much CPU *other* processes used during a measurement: the machine's busy time
    (/proc/stat) minus this process's and its waited-for children's (os.times), in cores
    (0 = nobody else ran, 2 = both cores of this machine busy with others' work)."""

    def __init__(self, descendants: bool = False):
        # descendants: also count this process's live descendants as its own (psutil), for a
        # measurement whose children still run when it ends (the app's job child, helpers).
        self.descendants = descendants
        self.t0, self.busy0, self.own0 = time.perf_counter(), self._busy(), self._own()

    @staticmethod
    def _busy() -> float:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:]]
        idle = v[3] + v[4]  # idle + iowait
        return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def _own(self) -> float:
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        if self.descendants:
            import psutil

            for child in psutil.Process().children(recursive=True):
                try:
                    c = child.cpu_times()
                    own += c.user + c.system + c.children_user + c.children_system
                except psutil.Error:
                    pass  # ended meanwhile: counted once reaped
        return own

    def others_cores(self) -> float:
        wall = time.perf_counter() - self.t0
        others = (self._busy() - self.busy0) - (self._own() - self.own0)
        return max(0.0, others / wall) if wall > 0 else 0.0


def python_loop_s(n: int = 2_000_000, repeats: int = 3) -> float:
    """The machine's speed today, as one number: the best of `repeats` runs of a pure-Python
    loop of `n` additions, in seconds. The same code's start took 0.77 s one day and 1.4 s
    another on this VM (docs/BENCHMARKS.md): printed with every benchmark, so
    that figures from two days can be told apart from the machine's."""
    best = float("inf")
    for _ in range(repeats):
        started, total = time.perf_counter(), 0
        for i in range(n):
            total += i
        best = min(best, time.perf_counter() - started)
    return best
