"""Two reports of the same script (`main.py run`), compared function by function: a CI gate on a
team's real training or inference script.

Functions are matched by name and the script file's name (the line may move as the script is
edited; when one name is compiled at several lines, the line decides). By default, as `compare`
judges model reports, the compiled run's steady times are compared (a call's and, where both
runs timed it, the iteration's: 2 ms of work added to each step is a slower step even though
it is added to the eager run too). With `relative`, each function's speedup (its compiled calls
against the eager calls of its own run) is compared instead, so a slower or busier CI machine
as a whole is not a regression:

- REGRESSION: the new speedup is below the baseline's by more than the threshold, and the two
  intervals do not overlap; or the function now breaks the graph at more places. Where both
  runs timed the loop's iteration around a function's calls (core.analysis.script_results), it
  is judged the same way on a row of its own ("NAME, per iteration");
- MISSING: compiled in the baseline, not in the new run (not measured: no pass either);
- cannot tell: either side has no speedup it can stand on (no eager run, too few steady calls,
  an unusable timing);
- improved / same.

Exit codes as `compare` of model reports (core.cli.compare): 0, 1 a regression or a missing
function, 3 nothing could be judged. No torch, no Qt.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from core.analysis.quality import UNUSABLE
from core.analysis.script_results import MIN_STEADY_CALLS, FunctionResult, ScriptResult
from core.analysis.stats import median_interval
from core.vocab.formatting import ms_or_missing

REGRESSION, IMPROVED, SAME, MISSING, NEW, CANNOT_TELL = (
    "REGRESSION",
    "improved",
    "same",
    "MISSING",
    "new",
    "cannot tell",
)


@dataclass
class FunctionComparison:
    name: str
    status: str
    detail: str = ""


@dataclass
class ScriptComparison:
    """The rows compared (a script's functions, or a generation report's configs: `noun`)."""

    functions: list[FunctionComparison] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    noun: str = "function"

    @property
    def failed(self) -> bool:
        return any(f.status in (REGRESSION, MISSING) for f in self.functions)

    @property
    def exit_code(self) -> int:
        if self.failed:
            return 1
        judged = [f for f in self.functions if f.status in (IMPROVED, SAME)]
        return 0 if judged else 3

    def lines(self) -> list[str]:
        out = [f"{f.name}: {f.status}" + (f" ({f.detail})" if f.detail else "") for f in self.functions]
        n = {s: sum(1 for f in self.functions if f.status == s) for s in (REGRESSION, MISSING, CANNOT_TELL)}
        if self.failed:
            out.append(f"FAILED: {n[REGRESSION]} regression(s), {n[MISSING]} missing {self.noun}(s)")
        elif self.exit_code == 3:
            out.append(f"cannot tell: no {self.noun}'s speed could be judged on both sides")
        else:
            out.append(
                f"ok: no {self.noun} regressed" + (f"; {n[CANNOT_TELL]} could not be judged" if n[CANNOT_TELL] else "")
            )
        return out


def _key(f: FunctionResult) -> tuple[str, str]:
    return (f.compiled.name, os.path.basename(f.compiled.file))


def _usable(f: FunctionResult) -> str:
    """Why this function's speedup cannot be stood on ("" when it can)."""
    if f.speedup is None:
        return f.why or "no speedup"
    if f.grade.grade == UNUSABLE:
        return f"timing unusable: {f.grade.reason}"
    return ""


def _breaks(f: FunctionResult) -> int:
    return sum(1 for gb in f.compiled.graph_breaks if not gb.frame_skipped and not gb.compile_failed)


def _gone_or_broken(name: str, b: FunctionResult, n: FunctionResult | None) -> FunctionComparison | None:
    """A function missing from the new run, or breaking the graph at more places: judged before
    (and whatever) its speed."""
    if n is None:
        return FunctionComparison(name, MISSING, "compiled in the baseline, not in the new run")
    if _breaks(n) > _breaks(b):
        return FunctionComparison(name, REGRESSION, f"graph-break places {_breaks(b)} -> {_breaks(n)}")
    return None


def _match(base: list[FunctionResult], new: list[FunctionResult]):
    """(baseline function, new function or None) pairs, and the new functions left over."""
    by_key: dict[tuple, list[FunctionResult]] = {}
    for f in new:
        by_key.setdefault(_key(f), []).append(f)
    pairs = []
    for b in base:
        options = by_key.get(_key(b), [])
        chosen = next((f for f in options if f.compiled.line == b.compiled.line), options[0] if options else None)
        if chosen is not None:
            options.remove(chosen)
        pairs.append((b, chosen))
    return pairs, [f for fs in by_key.values() for f in fs]


def _judged_time(name: str, base_ms, new_ms, threshold_pct: float, what: str) -> FunctionComparison:
    """The compiled run's steady times (a call's, or an iteration's) against the baseline's: a
    regression or an improvement only beyond the threshold with the two medians' 95% intervals
    apart (what was added between calls on both sides counts: the step is slower)."""
    bm, bl, bh = median_interval(base_ms)
    nm, nl, nh = median_interval(new_ms)
    change = nm / bm - 1.0 if bm > 0 else 0.0
    detail = f"compiled {what} {ms_or_missing(bm)} -> {ms_or_missing(nm)} ({change:+.1%})"
    apart = nl > bh or nh < bl
    if change > threshold_pct / 100.0 and apart:
        return FunctionComparison(name, REGRESSION, detail)
    if change < -threshold_pct / 100.0 and apart:
        return FunctionComparison(name, IMPROVED, detail)
    return FunctionComparison(name, SAME, detail + f"; within {threshold_pct:g}% or the noise")


def _judged(name: str, bs, ns, threshold_pct: float) -> FunctionComparison:
    """A speedup against the baseline's: a regression or an improvement only beyond the
    threshold with the two intervals apart."""
    change = ns.value / bs.value - 1.0
    detail = f"speedup {bs.value:.2f}x -> {ns.value:.2f}x ({change:+.1%})"
    apart = ns.ci_high < bs.ci_low or ns.ci_low > bs.ci_high
    if change < -threshold_pct / 100.0 and apart:
        return FunctionComparison(name, REGRESSION, detail)
    if change > threshold_pct / 100.0 and apart:
        return FunctionComparison(name, IMPROVED, detail)
    return FunctionComparison(name, SAME, detail + f"; within {threshold_pct:g}% or the noise")


def compare_scripts(
    base: ScriptResult, new: ScriptResult, threshold_pct: float, relative: bool = False
) -> ScriptComparison:
    """Function by function: by default the compiled run's steady times (a call's, and the
    iteration's where both timed it), as `compare` judges model reports; `relative`: each
    function's speedup against its own run's eager side (for shared CI runners)."""
    if not relative:
        return _compare_times(base, new, threshold_pct)
    out = ScriptComparison()
    if tuple(base.args) != tuple(new.args):
        out.warnings.append(f"the script ran with other arguments ({list(base.args)} against {list(new.args)})")
    pairs, added = _match(base.functions, new.functions)
    for b, n in pairs:
        name = f"{b.compiled.name} ({b.compiled.where})"
        settled = _gone_or_broken(name, b, n)
        if settled is not None:
            out.functions.append(settled)
            continue
        why = _usable(b) or _usable(n)
        if why:
            which = "baseline" if _usable(b) else "new"
            out.functions.append(FunctionComparison(name, CANNOT_TELL, f"{which}: {why}"))
        else:
            out.functions.append(_judged(name, b.speedup, n.speedup, threshold_pct))
        # the loop's iteration around the calls, where both runs timed it, judged on its own (a
        # tiny forward's calls may be too noisy to judge while a slower backward is plain): a
        # training loop's backward and optimizer step regress there, not in the call
        bi, ni = b.iteration, n.iteration
        if bi is not None and ni is not None and bi.speedup is not None and ni.speedup is not None:
            label = f"{name}, per iteration"
            if UNUSABLE in (bi.grade.grade, ni.grade.grade):
                which, it = ("baseline", bi) if bi.grade.grade == UNUSABLE else ("new", ni)
                out.functions.append(
                    FunctionComparison(label, CANNOT_TELL, f"{which}: timing unusable: {it.grade.reason}")
                )
            else:
                out.functions.append(_judged(label, bi.speedup, ni.speedup, threshold_pct))
    for n in added:
        out.functions.append(FunctionComparison(f"{n.compiled.name} ({n.compiled.where})", NEW, "not in the baseline"))
    return out


def _compare_times(base: ScriptResult, new: ScriptResult, threshold_pct: float) -> ScriptComparison:
    out = ScriptComparison()
    if tuple(base.args) != tuple(new.args):
        out.warnings.append(f"the script ran with other arguments ({list(base.args)} against {list(new.args)})")
    if tuple(base.overrides) != tuple(new.overrides):
        out.warnings.append(
            f"the runs' compile settings differ ({_settings(base)} against {_settings(new)}): a change of speed may be theirs"
        )
    pairs, added = _match(base.functions, new.functions)
    for b, n in pairs:
        name = f"{b.compiled.name} ({b.compiled.where})"
        settled = _gone_or_broken(name, b, n)
        if settled is not None:
            out.functions.append(settled)
            continue
        for label, what, base_ms, new_ms, grades in (
            (name, "steady call", b.compiled.steady(), n.compiled.steady(), (b.grade, n.grade)),
            (
                f"{name}, per iteration",
                "iteration",
                b.compiled.steady_iterations(),
                n.compiled.steady_iterations(),
                (b.iteration.grade, n.iteration.grade) if b.iteration and n.iteration else None,
            ),
        ):
            if grades is None:  # no iteration timed on one side (or it adds nothing to the call)
                continue
            if base_ms.size < MIN_STEADY_CALLS or new_ms.size < MIN_STEADY_CALLS:
                out.functions.append(
                    FunctionComparison(label, CANNOT_TELL, f"too few steady {what}s ({base_ms.size}, {new_ms.size})")
                )
                continue
            if UNUSABLE in (grades[0].grade, grades[1].grade):
                which, grade = ("baseline", grades[0]) if grades[0].grade == UNUSABLE else ("new", grades[1])
                out.functions.append(
                    FunctionComparison(label, CANNOT_TELL, f"{which}: timing unusable: {grade.reason}")
                )
                continue
            out.functions.append(_judged_time(label, base_ms, new_ms, threshold_pct, what))
    for n in added:
        out.functions.append(FunctionComparison(f"{n.compiled.name} ({n.compiled.where})", NEW, "not in the baseline"))
    return out


def _settings(result: ScriptResult) -> str:
    return ", ".join(f"{k}={v}" for k, v in result.overrides) or "as written"


def comparison_rows(comparison: ScriptComparison) -> list[dict]:
    """compare.csv's rows for two script reports."""
    return [{"function": f.name, "status": f.status, "detail": f.detail} for f in comparison.functions]
