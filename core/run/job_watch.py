"""What the runner watches of a running job, across its processes: its phase, how many timed
samples arrived (to recover the rest from the sample log), its recent memory and, with
--iters auto, each process's speedup and time, from which `JobWatch.another_process` decides
whether the runner adds a process (the multi-process orchestration of core.run.runner)."""

from __future__ import annotations

import collections
import time

import numpy as np

from core.analysis.results import JobResult
from core.analysis.stats import between_process_precision
from core.vocab import events as ev
from core.vocab.config import JobSpec
from core.vocab.limits import AUTO_PROCESSES_CAP


class JobWatch:
    """What the runner itself needs to know of a running job: its phase, how many timed
    samples arrived (to recover the rest from the sample log) and its recent memory."""

    def __init__(self, spec: JobSpec, result: JobResult | None):
        self.spec, self.result = spec, result
        self.phase = ""
        self.samples = 0  # timed samples received from the current process
        self.recent_rss: collections.deque = collections.deque(maxlen=15)  # 3 s at 5 Hz
        # --iters auto over several processes: each one's speedup and the benchmark seconds
        # spent, so that the runner can tell whether another process would narrow the interval.
        self.process_speedups: list[float] = []
        self.benchmark_s = 0.0  # the benchmark seconds of the processes asked for
        self.further_walls: list[float] = []  # the whole time of each process after the first
        self.added_s = 0.0  # the whole time of the processes the runner added
        self._since: float | None = None  # when the current process entered its benchmark phase
        self._times: dict[str, list[float]] = {"eager": [], "compiled": []}

    def see(self, event: ev.Event) -> None:
        if isinstance(event, ev.PhaseChanged):
            if event.phase == "benchmark" and self._since is None:
                self._since = time.monotonic()
            elif event.phase != "benchmark":
                self._benchmark_ended()
            self.phase = event.phase
        elif isinstance(event, ev.LatencyMeasured):
            self.samples += len(event.samples)
            if self.spec.auto_iters:
                for s in event.samples:
                    if not s.warmup and s.side in self._times:
                        self._times[s.side].append(s.latency_ms)
        elif isinstance(event, ev.ResourceSampled) and event.sample is not None:
            self.recent_rss.append(event.sample.rss_mb)
        if self.result is not None:
            self.result.apply(event)

    def _benchmark_ended(self) -> None:
        if self._since is not None:
            self.benchmark_s += time.monotonic() - self._since
            self._since = None

    def process_ended(self, wall_s: float | None = None, added: bool = False) -> None:
        """The current process is over (`wall_s`: its whole time, for those after the first;
        `added`: one the runner added): keep its speedup and its time, drop its calls."""
        since = self._since
        self._benchmark_ended()
        if added and since is not None:
            self.benchmark_s -= time.monotonic() - since  # an added process counts whole, below
        if wall_s is not None:
            self.further_walls.append(wall_s)
            if added:
                self.added_s += wall_s
        eager, compiled = self._times["eager"], self._times["compiled"]
        if eager and compiled:
            c = float(np.median(compiled))
            if c > 0:
                self.process_speedups.append(float(np.median(eager)) / c)
        self._times = {"eager": [], "compiled": []}
        self.phase = ""

    def another_process(self, k: int) -> float | None:
        """--iters auto: the budget (seconds of benchmark) for process k beyond those asked for,
        or None when it would not help or may not run: the precision over the processes is
        reached, AUTO_PROCESSES_CAP processes ran, or max_time_s would be exceeded. The
        processes asked for count their benchmark; an added one counts whole (its start and
        compile too: time the user did not ask for), and is expected to take as long as the
        further processes so far took on average."""
        spec = self.spec
        if not spec.auto_iters or spec.timed_processes() < 2 or k >= AUTO_PROCESSES_CAP:
            return None
        if len(self.process_speedups) < k:  # a process failed or measured nothing: do not add more
            return None
        precision = between_process_precision(self.process_speedups)
        if precision is None or precision <= spec.precision_pct:
            return None
        left = spec.max_time_s - self.benchmark_s - self.added_s
        cost = float(np.mean(self.further_walls)) if self.further_walls else self.benchmark_s / k
        if left < max(cost, 1.0):
            return None
        return min(left, spec.max_time_s / spec.timed_processes())
