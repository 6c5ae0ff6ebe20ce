"""What a script run under the profiler found: each compiled entry point, compiled against its
own eager run, and the whole run's figures, defined once (the CLI, the report and the app say these).

A run's events fold into a `ScriptRun` (core.analysis.script_runs). Two runs, as written and under
`set_stance("force_eager")`, pair into `FunctionResult`s, matched by the entry point's name and
the line that compiled it:

- **steady calls** are the calls that compiled nothing and met no new input shapes, on both
  sides; the first call of each shape is set apart (it pays the compile, and eager's first
  call its own warm-up);
- **speedup** is eager's steady median over compiled's, with its 95% bootstrap interval
  (core.analysis.stats.speedup), graded like a job's timing (core.analysis.quality's limits
  for the machine's other load and the calls' spread): an interval that spans 1, or an
  unusable timing, is "cannot tell";
- **the first calls' extra time** is what the compiled run's first calls of each shape took
  beyond its steady median, less what eager's first calls took beyond its own: the compile,
  as the script paid it. **Pay-back** is that extra time over the time saved per steady call
  (eager median − compiled median), as a number of calls, set against the calls the run made.

Calls are not paired one by one: where the runs took different paths (another number of calls,
other input shapes), `paths_differ` says so and the per-call figures stand on the steady calls.
No torch, no Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from core.analysis import quality as q
from core.analysis.script_runs import EntryCalls, ScriptRun
from core.analysis.stats import Speedup, speedup
from core.vocab.formatting import ms_or_missing, seconds, speedup_interval
from core.vocab.records import GraphBreak
from core.vocab.script_job import STANCE_EAGER

MIN_STEADY_CALLS = q.MIN_CALLS  # steady calls a side needed for a speedup
ITERATION_WORDS = (
    "per iteration (from a call's start to the next call's: what the script does between calls, "
    "such as the backward pass, the optimizer step and loading data, included)"
)
RECOMPILE_STORM = 8  # recompiles of one entry point past which the run names a recompile storm

FASTER, SLOWER, CANNOT_TELL, NOT_TIMED = "faster", "slower", "cannot tell", "not timed"


@dataclass
class TimingGrade:
    """How far a function's speedup can be trusted: quality's grades and limits, read on the
    script's calls and the machine's load during each run."""

    grade: str
    reason: str = ""


LOAD_DIFFERS_CORES = q.OTHERS_NOISY_CORES
"""The machine's other load differing this much (cores) between a compiled run and its eager
run: the two sides were timed on different machines, in effect."""


def grade_timing(
    pairs: list[tuple[ScriptRun, ScriptRun]],
    c_runs: list[np.ndarray],
    e_runs: list[np.ndarray],
    pair_speedups: list[float] = (),
    what: str = "calls",
) -> TimingGrade:
    """quality's limits on a script's runs: the machine's other load during each run (and its
    difference between the two sides of a pair, which run at different times), the spread of
    the steady calls in the worst run of each side (`c_runs`, `e_runs`: each run's steady
    calls; pooled runs spread by their own differences, which the next check reads), and with several pairs (--repeat) whether their speedups agree; runs that
    disagree but all put the same side ahead are noisy, not unusable (quality.direction_held)."""
    reasons_unusable, reasons_noisy = [], []
    for i, (compiled, eager) in enumerate(pairs):
        which = f" {i + 1}" if len(pairs) > 1 else ""
        for run in (compiled, eager):
            others = run.others_median
            if others is None:
                continue
            side = "eager" if run.stance == STANCE_EAGER else "compiled"
            if others >= q.OTHERS_UNUSABLE_CORES:
                reasons_unusable.append(f"other processes used {others:.1f} cores during the {side} run{which}")
            elif others >= q.OTHERS_NOISY_CORES:
                reasons_noisy.append(f"other processes used {others:.2f} cores during the {side} run{which}")
        a, b = compiled.others_median, eager.others_median
        if a is not None and b is not None and abs(a - b) >= LOAD_DIFFERS_CORES and max(a, b) < q.OTHERS_UNUSABLE_CORES:
            reasons_noisy.append(
                f"the machine's other load differed between the sides{which} ({a:.2f} cores compiled, {b:.2f} eager)"
            )
    for side, runs in (("compiled", c_runs), ("eager", e_runs)):
        spreads = []
        for values in runs:
            if values.size >= q.MIN_CALLS:
                p25, med, p75 = np.percentile(values, [25, 50, 75])
                spreads.append((p75 - p25) / med if med > 0 else 0.0)
        if not spreads:
            continue
        spread = max(spreads)
        if spread >= q.IQR_UNUSABLE:
            reasons_unusable.append(f"the {side} {what} vary (interquartile range {spread:.0%} of the median)")
        elif spread >= q.IQR_NOISY:
            reasons_noisy.append(f"the {side} {what} vary (interquartile range {spread:.0%} of the median)")
    speeds = [v for v in pair_speedups if v > 0]
    if len(speeds) > 1:
        gmean = math.exp(sum(math.log(v) for v in speeds) / len(speeds))
        spread = (max(speeds) - min(speeds)) / gmean
        said = f"the runs disagree (speedups {min(speeds):.2f}x to {max(speeds):.2f}x)"
        same_side = all(v > 1 for v in speeds) or all(v < 1 for v in speeds)
        if spread >= q.PROCESS_SPREAD_UNUSABLE and not same_side:
            reasons_unusable.append(said)
        elif spread >= q.PROCESS_SPREAD_NOISY:
            reasons_noisy.append(said + (", all on one side" if same_side else ""))
    if reasons_unusable:
        return TimingGrade(q.UNUSABLE, "; ".join(reasons_unusable + reasons_noisy))
    if reasons_noisy:
        return TimingGrade(q.NOISY, "; ".join(reasons_noisy))
    return TimingGrade(q.QUIET)


@dataclass
class Timed:
    """One figure timed on both sides (a steady call, or the loop's iteration around it): the
    medians, the speedup with its interval, the grade and the verdict with why."""

    compiled_ms: float | None = None
    eager_ms: float | None = None
    speedup: Speedup | None = None
    grade: TimingGrade = field(default_factory=lambda: TimingGrade(q.UNKNOWN))
    verdict: str = NOT_TIMED
    why: str = ""
    pair_speedups: list[float] = field(default_factory=list)


def time_sides(full: list, c_runs: list[np.ndarray], e_runs: list[np.ndarray], what: str = "calls") -> Timed:
    """The speedup of eager's pooled values over compiled's (`c_runs`, `e_runs`: each run pair's
    values), graded on the runs `full` and the values' spread, with its verdict: faster or
    slower only when the interval says so, every pair agrees and the timing is usable."""
    t = Timed()
    c_all = np.concatenate(c_runs) if c_runs else np.asarray([], dtype=float)
    e_all = np.concatenate(e_runs) if e_runs else np.asarray([], dtype=float)
    t.compiled_ms = float(np.median(c_all)) if c_all.size else None
    t.eager_ms = float(np.median(e_all)) if e_all.size else None
    for cs, es in zip(c_runs, e_runs):
        if cs.size >= MIN_STEADY_CALLS and es.size >= MIN_STEADY_CALLS:
            t.pair_speedups.append(float(np.median(es) / np.median(cs)))
    if c_all.size < MIN_STEADY_CALLS or e_all.size < MIN_STEADY_CALLS:
        t.verdict = NOT_TIMED
        t.why = (
            f"too few steady {what} to time ({c_all.size} compiled, {e_all.size} eager; "
            f"{MIN_STEADY_CALLS} a side needed: calls that compiled or met new input shapes are set apart)"
        )
        return t
    t.speedup = speedup(e_all, c_all)
    t.grade = grade_timing(full, c_runs, e_runs, t.pair_speedups, what)
    t.verdict, t.why = _verdict(t.speedup, t.grade, t.pair_speedups)
    return t


def _verdict(sp: Speedup, grade: TimingGrade, pair_speedups: list[float]) -> tuple[str, str]:
    """faster or slower only when the interval says so, every pair agrees and the timing is
    usable; else cannot tell, and why."""
    if grade.grade == q.UNUSABLE:
        return CANNOT_TELL, f"the timing is unusable: {grade.reason}"
    if sp.ci_low > 1.0 and all(v > 1.0 for v in pair_speedups):
        return FASTER, ""
    if sp.ci_high < 1.0 and all(v < 1.0 for v in pair_speedups):
        return SLOWER, ""
    if len(pair_speedups) > 1 and (sp.ci_low > 1.0 or sp.ci_high < 1.0):
        return CANNOT_TELL, "the runs put different sides ahead"
    return CANNOT_TELL, "its interval spans 1 (no measurable difference)"


@dataclass
class FunctionResult:
    """One compiled entry point: its compiled run's figures against its eager run's."""

    compiled: EntryCalls
    eager: EntryCalls | None
    speedup: Speedup | None = None
    grade: TimingGrade = field(default_factory=lambda: TimingGrade(q.UNKNOWN))
    verdict: str = NOT_TIMED
    why: str = ""
    paths_differ: str = ""
    compiled_median_ms: float | None = None
    eager_median_ms: float | None = None
    first_calls_extra_s: float | None = None
    payback_calls: int | None = None
    runs: int = 1  # run pairs whose steady calls are pooled (--repeat)
    pair_speedups: list[float] = field(default_factory=list)  # each pair's own speedup
    # the loop's iteration around the steady calls (EntryCalls.steady_iterations): from one
    # call's start to the next, what the script does between calls (backward, optimizer step,
    # loading data) included; None where it cannot be measured
    iteration: Timed | None = None
    # the first iterations' extra time (core.analysis.script_results): the first calls' and what
    # ran between them and the next calls (torch compiles a compiled forward's backward pass in
    # the first backward, outside any call); the pay-back rests on it where the iteration is timed
    first_iterations_extra_s: float | None = None

    @property
    def name(self) -> str:
        return self.compiled.name

    @property
    def label(self) -> str:
        return f"{self.compiled.name} ({self.compiled.where})"

    @property
    def saved_ms_per_call(self) -> float | None:
        if self.compiled_median_ms is None or self.eager_median_ms is None:
            return None
        return self.eager_median_ms - self.compiled_median_ms

    def speedup_text(self) -> str:
        return speedup_interval(self.speedup)

    def verdict_line(self) -> str:
        """The function's verdict in one line: its speedup, or why there is none."""
        if self.verdict in (FASTER, SLOWER):
            return f"{self.verdict}: {self.speedup_text()} ({ms_or_missing(self.compiled_median_ms)} against eager's {ms_or_missing(self.eager_median_ms)} a steady call)"
        if self.speedup is not None:
            return f"cannot tell: {self.speedup_text()}; {self.why}"
        return f"{self.verdict}: {self.why}"

    def verdict_cell(self) -> str:
        """The verdict in a table cell: the word, and for "cannot tell" or "not timed" why."""
        if self.verdict in (FASTER, SLOWER):
            return self.verdict
        short = self.why.split(":")[0].split(" (")[0]  # the reason's first clause; verdict_line has it whole
        return f"{self.verdict}: {short}" if short else self.verdict

    def iteration_line(self) -> str:
        """The loop's iteration around the calls, compiled against eager ("" where not measured)."""
        it = self.iteration
        if it is None:
            return ""
        head = f"{ITERATION_WORDS}: "
        if it.speedup is None:
            return head + f"{it.verdict}: {it.why}"
        figures = f"{speedup_interval(it.speedup)} ({ms_or_missing(it.compiled_ms)} against eager's {ms_or_missing(it.eager_ms)})"
        said = f"{it.verdict}: {figures}" if it.verdict in (FASTER, SLOWER) else f"cannot tell: {figures}; {it.why}"
        shares = []
        for side, call, whole in (
            ("compiled", self.compiled_median_ms, it.compiled_ms),
            ("eager", self.eager_median_ms, it.eager_ms),
        ):
            if call is not None and whole:
                shares.append(f"{min(1.0, call / whole):.0%} of {'a' if side == 'compiled' else 'an'} {side} iteration")
        if shares:
            said += "; the call is " + ", ".join(shares)
        if it.grade.reason and it.speedup is not None and it.grade.grade != q.UNUSABLE:
            said += f"; timing {it.grade.grade} ({it.grade.reason})"
        return head + said

    @property
    def by_iteration(self) -> bool:
        """The pay-back rests on the loop's iteration (its first iterations and their saving),
        which the first calls and their saving leave part of out: a training loop's backward."""
        return (
            self.iteration is not None
            and self.iteration.speedup is not None
            and self.first_iterations_extra_s is not None
        )

    def payback_cell(self) -> str:
        """The pay-back in a table cell (payback_line says it whole)."""
        calls = self.compiled.calls
        verdict = self.iteration.verdict if self.by_iteration else self.verdict
        if self.first_calls_extra_s is None and not self.by_iteration:
            return "not known"
        if verdict == SLOWER:
            return "never (slower)"
        if verdict != FASTER or self.payback_calls is None:
            return "cannot tell"
        unit = "iteration" if self.by_iteration else "call"
        if self.payback_calls <= calls:
            return f"after {unit} {self.payback_calls:,} of {calls:,}"
        return f"not in this run (needs {self.payback_calls:,} of {calls:,} {unit}s)"

    def payback_line(self) -> str:
        """Whether compiling paid for itself within this run, in calls."""
        if self.by_iteration:
            return self._payback_by_iteration()
        calls = self.compiled.calls
        extra = self.first_calls_extra_s
        if extra is None:
            return "pay-back: not known (no first call and no steady call to set against each other)"
        cost = f"its first calls took {_s(extra)} more than steady ones (torch's compile time: {_s(self.compiled.compile_s)})"
        if self.verdict == SLOWER:
            return f"pay-back: never, compiled is slower; {cost}"
        if self.verdict != FASTER or self.payback_calls is None:
            return f"pay-back: cannot tell without a measurable speedup; {cost}"
        saved = self.saved_ms_per_call or 0.0
        cost += f"; it saves {ms_or_missing(saved)} a steady call, {_s(saved * calls / 1000.0)} over {calls:,} calls"
        if self.payback_calls <= calls:
            return f"paid back after call {self.payback_calls:,}; this run made {calls:,} calls ({cost})"
        return f"not paid back within this run: at this speedup it would need {self.payback_calls:,} calls; this run made {calls:,} ({cost})"

    def _payback_by_iteration(self) -> str:
        """The pay-back counted in whole iterations of the loop (each begins with a call)."""
        it, calls, extra = self.iteration, self.compiled.calls, self.first_iterations_extra_s
        cost = f"its first iterations took {_s(extra)} more than steady ones"
        between = extra - (self.first_calls_extra_s or 0.0)
        if between >= max(BETWEEN_CALLS_SAID_S, 0.1 * extra):
            cost += (
                f", {_s(between)} of it between calls (what ran there for the first time: torch compiles a compiled "
                "forward's backward pass in the first backward; other compiled functions' first calls are theirs)"
            )
        cost += f" (torch's compile time: {_s(self.compiled.compile_s)})"
        if it.verdict == SLOWER:
            return f"pay-back: never, an iteration is slower compiled; {cost}"
        if it.verdict != FASTER or self.payback_calls is None:
            return f"pay-back: cannot tell without a measurable speedup of the iteration; {cost}"
        saved = (it.eager_ms or 0.0) - (it.compiled_ms or 0.0)
        cost += f"; it saves {ms_or_missing(saved)} a steady iteration, {_s(saved * calls / 1000.0)} over {calls:,} iterations"
        if self.payback_calls <= calls:
            return f"paid back after iteration {self.payback_calls:,}; this run made {calls:,} ({cost})"
        return f"not paid back within this run: at this speedup it would need {self.payback_calls:,} iterations; this run made {calls:,} ({cost})"


_s = seconds
BETWEEN_CALLS_SAID_S = 0.05  # first iterations' extra time outside the calls that is worth a word


def _pooled(entries: list[EntryCalls]) -> np.ndarray:
    parts = [e.steady() for e in entries]
    return np.concatenate(parts) if parts else np.asarray([], dtype=float)


def compare_function(key: tuple, pairs: list[tuple[ScriptRun, ScriptRun | None]]) -> FunctionResult:
    """One entry point across the run pairs (the first pair's runs carry its breaks, recompiles,
    compiles and first calls; the steady calls of every pair are pooled for the speedup)."""
    compiled_run, eager_run = pairs[0]
    entry = compiled_run.entries[key]
    eager = eager_run.entries.get(key) if eager_run is not None else None
    r = FunctionResult(entry, eager)
    c_entries = [c.entries[key] for c, _ in pairs if key in c.entries]
    c_steady = _pooled(c_entries)
    r.compiled_median_ms = float(np.median(c_steady)) if c_steady.size else None
    if eager is None or eager_run is None:
        r.verdict = NOT_TIMED
        r.why = "no eager baseline" if eager_run is None else "the eager run never called it"
        return r
    full = [(c, e) for c, e in pairs if e is not None]
    e_steady = _pooled([e.entries[key] for _, e in full if key in e.entries])
    r.eager_median_ms = float(np.median(e_steady)) if e_steady.size else None
    r.runs = len(full)
    c_runs = [c.entries[key].steady() for c, _ in full if key in c.entries]
    e_runs = [e.entries[key].steady() for _, e in full if key in e.entries]
    for c, e in full:
        cs = c.entries[key].steady() if key in c.entries else np.asarray([])
        es = e.entries[key].steady() if key in e.entries else np.asarray([])
        if cs.size >= MIN_STEADY_CALLS and es.size >= MIN_STEADY_CALLS:
            r.pair_speedups.append(float(np.median(es) / np.median(cs)))
    differ = []
    if entry.calls != eager.calls:
        differ.append(f"{entry.calls:,} calls compiled, {eager.calls:,} eager")
    if entry.shapes != eager.shapes:
        differ.append(f"{entry.shapes} input shapes compiled, {eager.shapes} eager")
    r.paths_differ = "; ".join(differ)
    if c_steady.size < MIN_STEADY_CALLS or e_steady.size < MIN_STEADY_CALLS:
        r.verdict = NOT_TIMED
        r.why = (
            f"too few steady calls to time ({c_steady.size} compiled, {e_steady.size} eager; "
            f"{MIN_STEADY_CALLS} a side needed: calls that compiled or met new input shapes are set apart)"
        )
    else:
        r.speedup = speedup(e_steady, c_steady)
        r.grade = grade_timing(full, c_runs, e_runs, r.pair_speedups)
        r.verdict, r.why = _verdict(r.speedup, r.grade, r.pair_speedups)
    # the loop's iteration around the calls, where both runs recorded the calls' starts
    both = [(c, e) for c, e in full if key in c.entries and key in e.entries]
    c_iter = [c.entries[key].steady_iterations() for c, _ in both]
    e_iter = [e.entries[key].steady_iterations() for _, e in both]
    if all(x.size for x in c_iter + e_iter) and both:
        iteration = time_sides(both, c_iter, e_iter, "iterations")
        # a loop that does little besides the call (an inference loop, a compiled whole step)
        # has nothing for the iteration to add; nor has a function called back to back several
        # times a step (regional compilation), whose "iterations" are the gaps between blocks
        if not _mostly_the_call(r, iteration):
            r.iteration = iteration
    c_first, e_first = entry.first_calls(), eager.first_calls()
    if r.compiled_median_ms is not None and r.eager_median_ms is not None and c_first.size:
        c_extra = float(np.sum(c_first - r.compiled_median_ms))
        e_extra = float(np.sum(e_first - r.eager_median_ms)) if e_first.size else 0.0
        r.first_calls_extra_s = max(0.0, c_extra - e_extra) / 1000.0
        saved = r.saved_ms_per_call
        if r.verdict == FASTER and saved and saved > 0:
            r.payback_calls = int(c_first.size + math.ceil(r.first_calls_extra_s * 1000.0 / saved))
    if r.iteration is not None and r.iteration.speedup is not None:
        _pay_back_by_iteration(r, both, key)
    return r


CALL_SHARE_MOSTLY = 0.9  # a call this much of its iteration, on both sides: the iteration adds nothing


def _mostly_the_call(r: FunctionResult, it: Timed) -> bool:
    """The steady call is CALL_SHARE_MOSTLY or more of the iteration on both sides."""
    pairs = ((r.compiled_median_ms, it.compiled_ms), (r.eager_median_ms, it.eager_ms))
    return all(call is not None and whole and call / whole >= CALL_SHARE_MOSTLY for call, whole in pairs)


def _others_first_calls_ms(run: ScriptRun, key: tuple) -> float:
    """What other compiled functions' first calls (their compiles) took inside `key`'s first
    iterations: theirs to pay back, not this function's."""
    entry = run.entries[key]
    return sum(
        other.first_call_ms_within(start, end)
        for start, end in entry.first_iteration_spans()
        for k, other in run.entries.items()
        if k != key
    )


def _pay_back_by_iteration(r: FunctionResult, both: list, key: tuple) -> None:
    """The first iterations' extra time over the steady iteration's, less eager's (the first pair
    of runs) and less the other compiled functions' first calls inside them, and the pay-back
    in iterations where the iteration is faster."""
    it = r.iteration
    compiled_run, eager_run = both[0]
    c_first = compiled_run.entries[key].first_iterations()
    e_first = eager_run.entries[key].first_iterations()
    if not c_first.size:
        return
    c_extra = float(np.sum(c_first - it.compiled_ms)) - _others_first_calls_ms(compiled_run, key)
    e_extra = float(np.sum(e_first - it.eager_ms)) - _others_first_calls_ms(eager_run, key) if e_first.size else 0.0
    r.first_iterations_extra_s = max(0.0, c_extra - e_extra) / 1000.0
    saved = (it.eager_ms or 0.0) - (it.compiled_ms or 0.0)
    r.payback_calls = None
    if it.verdict == FASTER and saved > 0:
        r.payback_calls = int(c_first.size + math.ceil(r.first_iterations_extra_s * 1000.0 / saved))


@dataclass
class ScriptResult:
    """A script profiled: its runs and its entry points compared."""

    target: str
    args: tuple[str, ...]
    module: bool
    cwd: str
    overrides: tuple = ()
    compiled: ScriptRun | None = None
    eager: ScriptRun | None = None
    repeats: list[tuple[ScriptRun, ScriptRun | None]] = field(default_factory=list)  # further pairs (--repeat)
    functions: list[FunctionResult] = field(default_factory=list)

    @property
    def pairs(self) -> list[tuple[ScriptRun, ScriptRun | None]]:
        return ([(self.compiled, self.eager)] if self.compiled is not None else []) + list(self.repeats)

    def compare(self) -> None:
        """Pair the runs' entry points (name and the line that compiled them)."""
        self.functions = []
        if self.compiled is None:
            return
        for key in self.compiled.entries:
            self.functions.append(compare_function(key, self.pairs))

    def only_in_eager(self) -> list[EntryCalls]:
        if self.eager is None or self.compiled is None:
            return []
        return [e for k, e in self.eager.entries.items() if k not in self.compiled.entries]

    def headline(self) -> str:
        """What the run says first: nothing compiled, or the entry points' verdicts in one line."""
        if self.compiled is None:
            return "the script did not run"
        if not self.compiled.entries:
            return NOTHING_COMPILED
        counts = {}
        for f in self.functions:
            counts[f.verdict] = counts.get(f.verdict, 0) + 1
        parts = [f"{n} {v}" for v, n in counts.items()]
        line = f"{len(self.functions)} compiled function(s): " + ", ".join(parts)
        iterations = {}
        for f in self.functions:
            if f.iteration is not None:
                iterations[f.iteration.verdict] = iterations.get(f.iteration.verdict, 0) + 1
        if iterations:  # a training loop's backward and optimizer step are in it, not in the call
            line += "; the loop's iteration around each one's calls: " + ", ".join(
                f"{n} {v}" for v, n in iterations.items()
            )
        return line

    def whole_run_lines(self) -> list[str]:
        """The whole run, eager against compiled: wall time, compile time, time in the compiled
        functions, memory."""
        c, e = self.compiled, self.eager
        if c is None:
            return []
        lines = []
        if e is not None and c.wall_s is not None and e.wall_s is not None:
            diff = e.wall_s - c.wall_s
            word = "saved" if diff > 0 else "cost"
            lines.append(
                f"wall time: compiled run {_s(c.wall_s)}, eager run {_s(e.wall_s)}: compiling {word} {_s(abs(diff))} "
                "over this run (one run each: a single draw, not a measured speedup)"
            )
        elif c.wall_s is not None:
            lines.append(f"wall time: compiled run {_s(c.wall_s)} (no eager run)")
        lines.append(
            f"compile time (torch's figure): {_s(c.compile_s)} in {sum(len(x.frames) for x in c.entries.values())} frame compile(s)"
        )
        c_in = sum(x.total_ms for x in c.entries.values()) / 1000.0
        if e is not None:
            e_in = sum(x.total_ms for x in e.entries.values()) / 1000.0
            lines.append(
                f"time in the compiled functions: {_s(c_in)} compiled, {_s(e_in)} eager (every call, first calls included)"
            )
        if c.peak_rss_mb is not None:
            mem = f"peak memory (RSS): {c.peak_rss_mb:,.0f} MB compiled"
            if e is not None and e.peak_rss_mb is not None:
                mem += f", {e.peak_rss_mb:,.0f} MB eager"
            if c.cuda_peak_mb is not None:
                mem += f"; CUDA peak allocated {c.cuda_peak_mb:,.0f} MB compiled" + (
                    f", {e.cuda_peak_mb:,.0f} MB eager" if e is not None and e.cuda_peak_mb is not None else ""
                )
            lines.append(mem)
        return lines

    def warnings(self) -> list[str]:
        """What the user must know about the runs themselves."""
        out = []
        for i, (compiled, eager) in enumerate(self.pairs):
            for run, side in ((compiled, "compiled"), (eager, "eager")):
                if run is None:
                    continue
                name = f"{side} run" + (f" {i + 1}" if i else "")
                if run.exit_code not in (0, None) or run.ended or not run.finished:
                    out.append(f"the {name} {run.how_it_ended()}")
                out += [f"the {name}: {n}" for n in dict.fromkeys(run.notes)]
                if run.dropped:
                    out.append(
                        f"the {name} logged {run.dropped:,} more graph-break/recompile records than are kept; "
                        "their counts are partial"
                    )
                if run.unreadable:
                    out.append(f"{run.unreadable} event line(s) of the {name} could not be read")
        for f in self.functions:
            if f.paths_differ:
                out.append(
                    f"{f.label}: the runs took different paths ({f.paths_differ}); its figures stand on the steady calls, not call by call"
                )
            storms = len(f.compiled.recompiles)
            if storms >= RECOMPILE_STORM:
                out.append(
                    f"{f.label}: a recompile storm, {storms} recompiles (first: {', '.join(f.compiled.recompiles[0].reasons)[:200]})"
                )
        for e in self.only_in_eager():
            out.append(f"{e.name} ({e.where}) was called only in the eager run")
        return out


NOTHING_COMPILED = (
    "the script compiled nothing: no torch.compile call was reached. Check that the code path that "
    "calls torch.compile (or Module.compile) runs with these arguments, or add torch.compile where you want it."
)


def result_from_runs(
    target: str,
    args,
    module: bool,
    cwd: str,
    overrides,
    compiled: ScriptRun | None,
    eager: ScriptRun | None,
    repeats=(),
) -> ScriptResult:
    result = ScriptResult(target, tuple(args), module, cwd, tuple(overrides), compiled, eager, list(repeats))
    result.compare()
    return result


def function_lines(f: FunctionResult) -> list[str]:
    """One compiled entry point, as the command line and summary.txt say it."""
    c = f.compiled
    settings = ", ".join(f"{k}={v}" for k, v in c.settings.items()) or "torch.compile's defaults"
    calls = f"{c.calls:,} call{'s' if c.calls != 1 else ''}"
    if f.eager is not None:
        calls += f" ({f.eager.calls:,} eager)"
    lines = [f"{f.label}, {c.kind}, {settings}: {calls}, {c.shapes} input shape(s)"]
    grade = f"; timing {f.grade.grade}" + (f" ({f.grade.reason})" if f.grade.reason else "")
    said = f.speedup is None or f.grade.grade == q.UNUSABLE  # the verdict names an unusable timing itself
    lines.append("  " + f.verdict_line() + ("" if said else grade))
    if len(f.pair_speedups) > 1:
        lines.append(
            f"  {f.runs} run pairs pooled; each pair's speedup: " + ", ".join(f"{v:.2f}x" for v in f.pair_speedups)
        )
    if f.iteration is not None:
        lines.append("  " + f.iteration_line())
    lines.append("  " + f.payback_line())
    ordinary = [gb for gb in c.graph_breaks if not gb.frame_skipped and not gb.compile_failed]
    skipped = [gb for gb in c.graph_breaks if gb.frame_skipped]
    failed = [gb for gb in c.graph_breaks if gb.compile_failed]
    if not c.graph_breaks:
        lines.append("  graph breaks: none")
    for gb in ordinary:
        code = f" ({gb.gb_code})" if gb.gb_code else ""
        lines.append(f"  graph break: {gb.reason}{code} at {_break_place(gb)}, logged {gb.logged}x")
    for gb in skipped:
        lines.append(f"  skipped frame: {gb.eager_function or '?'} ran eagerly: {gb.reason} at {_break_place(gb)}")
    for gb in failed:
        lines.append(f"  compile failed: {gb.reason} at {_break_place(gb)}")
    if c.recompiles:
        first = c.recompiles[0]
        lines.append(
            f"  recompiles: {len(c.recompiles)}, first of {first.function} ({first.location}): "
            + "; ".join(first.reasons)[:300]
        )
    frames = len(c.frames)
    lines.append(f"  frames compiled: {frames}, compile time {_s(c.compile_s)} (torch's figure)")
    return lines


def _break_place(gb: GraphBreak) -> str:
    """Where a break is, and the script's line that led there when the break is in a library."""
    place = _place(gb.file, gb.line)
    if gb.user_file:
        place += f" (from {_place(gb.user_file, gb.user_line)})"
    return place


def _place(file: str, line: int) -> str:
    import os

    return f"{os.path.basename(file)}:{line}" if file else "?"


def summary_lines(result: ScriptResult) -> list[str]:
    """The whole finding as lines: the runs, each entry point, the whole run, the warnings."""
    import shlex

    what = f"-m {result.target}" if result.module else result.target
    lines = [f"script: {shlex.join([what, *result.args])} (in {result.cwd})"]
    if result.overrides:
        lines.append("overrides for every torch.compile: " + ", ".join(f"{k}={v}" for k, v in result.overrides))
    if result.compiled is not None:
        runs = f"compiled run: {result.compiled.how_it_ended()}"
        if result.eager is not None:
            runs += f"; eager run (set_stance force_eager): {result.eager.how_it_ended()}"
        else:
            runs += "; no eager run"
        lines.append(runs)
    lines.append(result.headline())
    for f in result.functions:
        lines += function_lines(f)
    lines += result.whole_run_lines()
    lines += [f"warning: {w}" for w in result.warnings()]
    return lines
