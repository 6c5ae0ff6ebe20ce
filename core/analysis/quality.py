"""How far a job's timing can be trusted: the measurement-quality grade, defined once.

A speedup is only as good as the calls it comes from. While a job times calls, the runner
records how much CPU the rest of the machine used (core.run.sampling: the machine's CPU time
minus the job's processes'); afterwards the calls themselves say how spread out they were,
whether a few were far slower than the rest, whether the speed drifted from the first third
of the run to the last, and, when the config was timed in several fresh processes, whether
those processes agree. From these figures a job's timing is graded:

- **quiet**: nothing to say; the figures can carry a verdict;
- **noisy**: something disturbed the timing (the reason names it); its figures stand with
  their intervals, and a verdict that rests on an interval still holds, but the user is told;
- **unusable**: the timing says more about the machine than about the model; no verdict
  is drawn from it (core.decide.recommend, core.decide.suggestions, core.decide.compare and the zoo say "cannot
  tell" and offer a re-run). Except where the direction holds (`direction_held`): the calls
  vary or the processes disagree, yet every process and the speedup's interval (which widens with
  the processes' spread) put the same side ahead on a quiet machine; the timing is then noisy,
  the reason first, and `direction_only`: its figures are not set against another report's.

The thresholds below are the only place these limits live; docs/BENCHMARKS.md ("Measurement
quality") has the measurements they were chosen from. No Qt; any thread.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from core.vocab.records import JobStatus

QUIET, NOISY, UNUSABLE, UNKNOWN = "quiet", "noisy", "unusable", "unknown"
GRADES = (QUIET, NOISY, UNUSABLE, UNKNOWN)
_ORDER = {QUIET: 0, UNKNOWN: 0, NOISY: 1, UNUSABLE: 2}

# Thresholds chosen from `python -m tests.bench quality` (docs/BENCHMARKS.md, "Measurement quality").
# Cores the rest of the machine kept busy during the benchmark (median of the 5 Hz readings).
OTHERS_NOISY_CORES = 0.25
OTHERS_UNUSABLE_CORES = 0.75
# Spread of one side's calls within a process: interquartile range / median.
IQR_NOISY = 0.25
IQR_UNUSABLE = 0.50
# Tail: the 90th percentile / the median.
P90_NOISY = 2.0
P90_UNUSABLE = 3.0
# Far-out outliers (Tukey's rule: beyond the upper quartile + 3 IQR), share of the calls.
OUTLIER_RULE = "Tukey's far-out rule: beyond the upper quartile plus 3 interquartile ranges"
OUTLIERS_NOISY = 0.05
# Drift: the median of the last third of a process's calls against its first third.
DRIFT_NOISY = 0.15
DRIFT_UNUSABLE = 0.50
# Processes that disagree: (fastest - slowest speedup) / their geometric mean.
PROCESS_SPREAD_NOISY = 0.10
PROCESS_SPREAD_UNUSABLE = 0.20
MIN_CALLS = 5  # fewer timed calls a side than this cannot be graded
# A speedup interval wider than this (±%) is shown as not known, not as a figure.
UNKNOWN_PRECISION_PCT = 100.0


@dataclass(frozen=True)
class SideSpread:
    """One side's calls in the worst of the job's processes."""

    iqr_ratio: float
    p90_ratio: float
    outliers: int
    outlier_share: float
    drift: float

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class MeasurementQuality:
    """The grade of a job's timing, with its reasons (plain words, worst first) and figures.
    `others_cores` is the median CPU (in cores) that the rest of the machine used while the
    job timed calls (None: not sampled, e.g. a report from before it was); `processes` the
    fresh processes that timed it and `process_speedups` theirs; `precision_pct` the speedup
    interval's half-width in % of the speedup, and `precision_target_pct` what --iters auto
    asked for (None: a fixed number of calls)."""

    grade: str
    reasons: tuple[str, ...] = ()
    others_cores: float | None = None
    others_cores_p90: float | None = None
    cores: int | None = None
    eager: SideSpread | None = None
    compiled: SideSpread | None = None
    processes: int = 1
    process_speedups: tuple[float, ...] = ()
    process_spread: float | None = None
    precision_pct: float | None = None
    precision_target_pct: float | None = None
    samples_per_side: tuple[int, int] = (0, 0)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # unusable by the calls alone, noisy because the direction holds (`direction_held`): which side
    # is faster is known, a figure set against another report's is not (core.decide.compare)
    direction_only: bool = False
    # False: the timed calls were shorter than one resource reading, so `others_cores` is the
    # whole job's load (others_during_benchmark), and the words say "while the job ran"
    load_while_timed: bool = True

    @property
    def trusted(self) -> bool:
        """A verdict may rest on this timing (quiet or noisy, not unusable or ungraded)."""
        return self.grade in (QUIET, NOISY)

    @property
    def precision_reached(self) -> bool | None:
        if self.precision_target_pct is None or self.precision_pct is None:
            return None
        return self.precision_pct <= self.precision_target_pct

    def sentence(self, most: int = 2) -> str:
        """ "quiet", or the grade with its first reasons (the rest counted): for tables, banners
        and the one line the CLI prints."""
        if not self.reasons:
            return self.grade
        shown = "; ".join(self.reasons[:most])
        rule = f" ({OUTLIER_RULE})"  # the rule said once, after the last reason it applies to
        if shown.count(rule) > 1:
            head, _, tail = shown.rpartition(rule)
            shown = head.replace(rule, "") + rule + tail
        more = len(self.reasons) - most
        return f"{self.grade}: {shown}" + (f" (and {more} more)" if more > 0 else "")

    def details(self) -> str:
        """Every reason, one per line, with the figures behind the grade (a tooltip)."""
        lines = [f"Timing {self.grade}."] + [f"- {r}" for r in self.reasons] + [f"- {n}" for n in self.notes]
        if self.others_cores is not None:
            lines.append(
                f"Other processes: {self.others_cores:.2f} cores (median while timing), "
                f"{self.others_cores_p90:.2f} at the 90th percentile."
            )
        for side, f in (("eager", self.eager), ("compiled", self.compiled)):
            if f is not None:
                lines.append(
                    f"{side.capitalize()}: interquartile range {100 * f.iqr_ratio:.1f}% of the median, p90 "
                    f"{f.p90_ratio:.2f}x the median, {f.outliers} far-out calls, drift "
                    f"{100 * f.drift:+.1f}%."
                )
        if self.process_speedups:
            lines.append(
                f"{self.processes} processes: speedups " + ", ".join(f"{s:.3f}x" for s in self.process_speedups) + "."
            )
        if self.precision_pct is not None:
            target = f" (asked for ±{self.precision_target_pct:g}%)" if self.precision_target_pct is not None else ""
            lines.append(f"The speedup's 95% interval is {self._precision_text()}{target}.")
        return "\n".join(lines)

    def _precision_text(self) -> str:
        """ "±2.3%", or "wider than ±100%" past UNKNOWN_PRECISION_PCT (two processes that
        disagree 2.00x against 0.54x gave ±202,339.5%: a figure that says nothing)."""
        if self.precision_pct > UNKNOWN_PRECISION_PCT:
            return f"wider than ±{UNKNOWN_PRECISION_PCT:g}%"
        return f"±{self.precision_pct:.1f}%"

    def line(self) -> str:
        """The one line `profile` prints per config."""
        extra = []
        if self.processes > 1 and self.process_speedups:
            extra.append(f"{self.processes} processes: " + " ".join(f"{s:.2f}x" for s in self.process_speedups))
        if self.precision_pct is not None:
            target = ""
            if self.precision_target_pct:
                asked = f"the ±{self.precision_target_pct:g}% asked"
                target = f", within {asked}" if self.precision_reached else f", wider than {asked}"
            if self.precision_pct > UNKNOWN_PRECISION_PCT:
                extra.append(f"speedup not known: its 95% interval is {self._precision_text()}{target}")
            else:
                extra.append(f"speedup known within ±{self.precision_pct:.1f}%{target}")
        if self.others_cores is not None:
            extra.append(f"other processes {self.others_cores:.2f} cores")
        return self.sentence() + (f" ({'; '.join(extra)})" if extra else "")

    def to_dict(self) -> dict:
        d = asdict(self)
        d["precision_reached"] = self.precision_reached
        return d

    def columns(self) -> dict:
        """The summary.csv columns (defined once here)."""
        return {
            "timing_quality": self.grade,
            "timing_quality_reason": "; ".join(self.reasons),
            "others_cpu_cores": _round(self.others_cores),
            "eager_iqr_pct": _pct(self.eager and self.eager.iqr_ratio),
            "compiled_iqr_pct": _pct(self.compiled and self.compiled.iqr_ratio),
            "eager_p90_over_median": _round(self.eager and self.eager.p90_ratio),
            "compiled_p90_over_median": _round(self.compiled and self.compiled.p90_ratio),
            "eager_outliers": self.eager and self.eager.outliers,
            "compiled_outliers": self.compiled and self.compiled.outliers,
            "eager_drift_pct": _pct(self.eager and self.eager.drift),
            "compiled_drift_pct": _pct(self.compiled and self.compiled.drift),
            "processes": self.processes,
            "process_speedups": " ".join(f"{s:.3f}" for s in self.process_speedups),
            "process_spread_pct": _pct(self.process_spread),
            "precision_pct": _round(self.precision_pct),
            "precision_target_pct": self.precision_target_pct,
            "precision_reached": self.precision_reached,
        }


def _round(x, digits: int = 3):
    return None if x is None else round(float(x), digits)


def _pct(x):
    return None if x is None else round(100.0 * float(x), 2)


QUALITY_COLUMNS = tuple(MeasurementQuality(UNKNOWN).columns())


def side_spread(by_process: dict[int, np.ndarray]) -> SideSpread | None:
    """The spread figures of one side, each taken from the worst process (None: too few calls)."""
    figures = []
    for values in by_process.values():
        v = np.asarray(values, float)
        if v.size < MIN_CALLS:
            continue
        q1, med, q3, p90 = np.percentile(v, [25, 50, 75, 90])
        if med <= 0:
            continue
        iqr = q3 - q1
        outliers = int(np.count_nonzero(v > q3 + 3 * iqr)) if iqr > 0 else 0
        third = v.size // 3
        drift = 0.0
        if third >= MIN_CALLS:
            drift = float(np.median(v[-third:]) / np.median(v[:third]) - 1.0)
            # only a drift beyond what the calls' own spread lets two medians of `third` calls
            # differ by (about 3 standard errors: 1.3 IQR / sqrt(n) each) counts
            if abs(drift) < 4.0 * (iqr / med) / np.sqrt(third):
                drift = 0.0
        figures.append(SideSpread(float(iqr / med), float(p90 / med), outliers, outliers / v.size, drift))
    if not figures:
        return None
    return SideSpread(
        max(f.iqr_ratio for f in figures),
        max(f.p90_ratio for f in figures),
        sum(f.outliers for f in figures),
        max(f.outlier_share for f in figures),
        max((f.drift for f in figures), key=abs),
    )


def others_during_benchmark(resources) -> tuple[list[float], bool]:
    """What the rest of the machine used (cores) in each reading taken while calls were timed, and
    True; when the timed calls took less than one reading's interval (a tiny model: 40 calls of
    10 µs), those of the whole job, the load around them, and False: two busy loops on this 2-core
    machine went unseen and a firm "do not compile" came from a timing graded only noisy."""
    known = [s for s in resources if s.others_cores is not None]
    timed = [s.others_cores for s in known if s.phase == "benchmark"]
    return (timed, True) if timed else ([s.others_cores for s in known], False)


def grade(result, ci: bool = True) -> MeasurementQuality:
    """Grade a JobResult's timing (see the module docstring). Shape and batch sweeps are
    graded on the machine's load only (their calls mix the variants' speeds). `ci=False`
    leaves the interval's precision out (it needs the bootstrap)."""
    spec = result.spec
    sweep = bool(result.variants)
    eager_by, compiled_by = _timed_calls(result)
    n_e = int(sum(len(v) for v in eager_by.values()))
    n_c = int(sum(len(v) for v in compiled_by.values()))
    cores = result.environment.get("cpu_count")
    others, while_timed = others_during_benchmark(result.resources)
    others_median = float(np.median(others)) if others else None
    others_p90 = float(np.percentile(others, 90)) if others else None
    eager = None if sweep else side_spread(eager_by)
    compiled = None if sweep else side_spread(compiled_by)
    speeds = process_speedups_of(eager_by, compiled_by)
    spread = None
    if len(speeds) > 1:
        geo = float(np.exp(np.mean(np.log(speeds))))
        spread = (max(speeds) - min(speeds)) / geo
    sp = None if sweep or not ci else result.summary_speedup()
    precision = None
    if sp is not None and sp.value and np.isfinite(sp.ci_low) and np.isfinite(sp.ci_high):
        precision = 100.0 * (sp.ci_high - sp.ci_low) / (2.0 * sp.value)
    target = spec.precision_pct if spec.auto_iters else None

    problems = _load_problems(others_median, cores, while_timed)  # (grade, reason)
    for side, figures in (("eager", eager), ("compiled", compiled)):
        if figures is not None:
            problems += _spread_problems(side, figures)
    if spread is not None:
        problems += _process_problems(result, speeds, spread)
    if target is not None and precision is not None and precision > target:
        problems.append(_precision_problem(result, precision, target))
    notes = [process_note(p) for p in result.processes_ended if p.status != JobStatus.COMPLETED]
    if others_median is None and result.resources:
        notes.append("the machine's load was not recorded (a report from before it was)")
    level, reasons, direction_only = _verdict(problems, (n_e, n_c), speeds, sp, others_median)
    return MeasurementQuality(
        level,
        reasons,
        others_median,
        others_p90,
        cores,
        eager,
        compiled,
        processes=max(1, len(eager_by)),
        process_speedups=tuple(speeds),
        process_spread=spread,
        precision_pct=precision,
        precision_target_pct=target,
        samples_per_side=(n_e, n_c),
        notes=tuple(notes),
        direction_only=direction_only,
        load_while_timed=while_timed,
    )


def _timed_calls(result) -> tuple[dict[int, np.ndarray], dict[int, np.ndarray]]:
    """(eager, compiled) timed calls by process; a sweep's variants pooled as one process."""
    if not result.variants:
        return result.samples.by_process("eager"), result.samples.by_process("compiled")
    eager = np.concatenate([np.asarray(v.eager_ms, float) for v in result.variants] or [np.empty(0)])
    compiled = np.concatenate([np.asarray(v.compiled_ms, float) for v in result.variants] or [np.empty(0)])
    return {0: eager}, {0: compiled}


def load_when(while_timed: bool) -> str:
    """When the machine's load was read: while calls were timed, or (timed calls shorter than
    one reading) while the job ran."""
    return "while calls were timed" if while_timed else "while the job ran (its timed calls were too short to read)"


def _load_problems(others_median: float | None, cores, while_timed: bool = True) -> list[tuple[str, str]]:
    """The machine's other load while calls were timed (or, `while_timed` False, while the job
    ran: its timed calls were shorter than one reading), graded."""
    if others_median is None:
        return []
    cores_text = f" of {cores}" if cores else ""
    when = load_when(while_timed)
    what = f"other processes used {others_median:.1f}{cores_text} cores {when}"
    if others_median >= OTHERS_UNUSABLE_CORES:
        return [(UNUSABLE, what)]
    if others_median >= OTHERS_NOISY_CORES:
        return [(NOISY, what)]
    return []


def _spread_problems(side: str, figures: SideSpread) -> list[tuple[str, str]]:
    """One side's calls graded: their tail, their spread, their outliers and their drift."""
    problems = []
    if figures.p90_ratio >= P90_UNUSABLE:
        problems.append((UNUSABLE, f"{side} p90 is {figures.p90_ratio:.1f}x its median"))
    elif figures.p90_ratio >= P90_NOISY:
        problems.append((NOISY, f"{side} p90 is {figures.p90_ratio:.1f}x its median"))
    if figures.iqr_ratio >= IQR_UNUSABLE:
        problems.append(
            (
                UNUSABLE,
                f"{side} calls spread widely (interquartile range {100 * figures.iqr_ratio:.0f}% of the median)",
            )
        )
    elif figures.iqr_ratio >= IQR_NOISY:
        problems.append(
            (NOISY, f"{side} calls spread (interquartile range {100 * figures.iqr_ratio:.0f}% of the median)")
        )
    if figures.outlier_share >= OUTLIERS_NOISY:
        problems.append((NOISY, f"{figures.outliers} {side} calls far slower than the rest ({OUTLIER_RULE})"))
    if abs(figures.drift) >= DRIFT_UNUSABLE:
        problems.append(
            (
                UNUSABLE,
                f"{side} calls drifted {100 * figures.drift:+.0f}% from the first third of the run to the last",
            )
        )
    elif abs(figures.drift) >= DRIFT_NOISY:
        problems.append(
            (NOISY, f"{side} calls drifted {100 * figures.drift:+.0f}% from the first third of the run to the last")
        )
    return problems


def _process_problems(result, speeds: list[float], spread: float) -> list[tuple[str, str]]:
    """The processes' speedups graded by how far they disagree (with the page faults that may explain it)."""
    problems = []
    listed = ", ".join(f"{s:.2f}x" for s in speeds)
    why = faults_between_processes(result)
    if spread >= PROCESS_SPREAD_UNUSABLE:
        problems.append(
            (
                UNUSABLE,
                f"the {len(speeds)} processes disagree (speedups {listed}): the speed "
                f"depends on the process, so one run cannot tell{why}",
            )
        )
    elif spread >= PROCESS_SPREAD_NOISY:
        problems.append((NOISY, f"the {len(speeds)} processes disagree (speedups {listed}){why}"))
    return problems


def _precision_problem(result, precision: float, target: float) -> tuple[str, str]:
    """--iters auto ended with the speedup's interval wider than asked for: why it did."""
    # a job stopped by Ctrl+C or Cancel ended its benchmark early: --max-time did not run out
    stopped = result.status == JobStatus.CANCELLED
    cause = "the run was stopped before it got there" if stopped else "--max-time ran out"
    return (NOISY, f"the speedup's interval is ±{precision:.1f}%, wider than the ±{target:g}% asked for ({cause})")


def _verdict(problems: list[tuple[str, str]], calls: tuple[int, int], speeds, sp, others_median: float | None):
    """(grade, reasons, direction_only): the worst problem's grade, every reason worst first;
    too few calls cannot be graded, and an unusable timing whose processes all put the same side
    ahead on a machine known to be quiet is only noisy."""
    n_e, n_c = calls
    direction_only = False
    if min(n_e, n_c) < MIN_CALLS:
        level = UNKNOWN
        reasons = (f"too few timed calls to judge ({n_e} eager, {n_c} compiled)",)
    else:
        problems.sort(key=lambda p: -_ORDER[p[0]])
        level = max((g for g, _ in problems), key=_ORDER.get, default=QUIET)
        reasons = tuple(r for _, r in problems)
        held = direction_held(speeds, sp)
        # forgiven only on a machine known to be quiet (a load not recorded is not known quiet)
        quiet_machine = others_median is not None and others_median < OTHERS_NOISY_CORES
        if level == UNUSABLE and held and quiet_machine:
            level, reasons, direction_only = NOISY, (held, *reasons), True
    return level, reasons, direction_only


def direction_held(speeds, sp) -> str:
    """Why the direction of a timing the calls alone grade unusable still holds ("" when it does
    not): in each of two or more processes (one process is one draw) the same side is faster, and
    the speedup's 95% interval, which widens with the processes' spread (Student's t over their
    log speedups, core.analysis.stats.speedup_over_processes), lies wholly on that side of 1.
    The calls' spread, tail or drift and the processes' disagreement then blur the figure, not
    which side is faster: 4 processes at 0.32x-0.40x all say compiled is slower. Only on a machine
    known to be quiet (other programs under OTHERS_NOISY_CORES; a load not recorded is not known):
    a busy machine may slow one side more than the other in every process. Not while a job runs
    (`grade(ci=False)` has no interval): a running job's grade may read unusable, its end noisy."""
    if len(speeds) < 2 or sp is None or not (np.isfinite(sp.ci_low) and np.isfinite(sp.ci_high)):
        return ""
    if sp.ci_high < 1.0 and max(speeds) < 1.0:
        side = "compiled is slower"
    elif sp.ci_low > 1.0 and min(speeds) > 1.0:
        side = "compiled is faster"
    else:
        return ""
    return (
        f"the figures vary, but the direction holds: {side} in each of the {len(speeds)} processes "
        f"({min(speeds):.2f}x-{max(speeds):.2f}x) and the speedup's 95% interval, {sp.ci_low:.2f}x-"
        f"{sp.ci_high:.2f}x, lies wholly on that side of 1"
    )


FAULTS_DIFFER = 500  # page faults a compiled call: between processes, a difference this large explains them


def faults_between_processes(result) -> str:
    """ ", their compiled calls took 0 to 4,723 page faults a call (...)" when the processes'
    compiled page faults differ enough to explain their speeds (see docs/BENCHMARKS.md, "One
    process is one draw"), else ""."""
    per = []
    for p in sorted({c.process for c in result.call_costs}):
        c = result.call_cost("compiled", p)
        if c is not None and c.calls:
            per.append(c.minor_faults / c.calls)
    if len(per) < 2 or max(per) - min(per) < FAULTS_DIFFER:
        return ""
    return (
        f"; their compiled calls took {min(per):,.0f} to {max(per):,.0f} page faults a call: how the "
        "allocator's freed memory happens to lie in each process decides whether every call gets fresh "
        "memory from the kernel"
    )


def process_note(ended) -> str:
    """A further process that did not complete (a ProcessEnded): failed, or stopped by a cancel
    (the job then kept the processes before it)."""
    if ended.status == JobStatus.CANCELLED:
        return f"process {ended.process + 1} was stopped ({ended.reason}); the processes before it are kept"
    return f"process {ended.process + 1} failed: {ended.reason}"


def process_speedups_of(eager_by: dict, compiled_by: dict) -> list[float]:
    from core.analysis.stats import process_speedups

    return list(process_speedups(eager_by, compiled_by).values())


def worst(qualities) -> MeasurementQuality | None:
    """The worst grade among several (None for none)."""
    qualities = [q for q in qualities if q is not None]
    return max(qualities, key=lambda q: _ORDER[q.grade], default=None)
