"""Two generation reports (`profile --task generate`) compared config by config and prompt length:
a CI gate on a served model's time to first token and per-token decode.

Rows are matched by config label ("static cache/inductor") and prompt length. Each row's speedups
are its compiled generations against the eager ones of its own run, so a slower or busier CI
machine as a whole is not a regression:

- REGRESSION: the decode (or time-to-first-token) speedup fell by more than the threshold with
  the two intervals apart; or the compiled run recompiled or broke the graph more often;
- MISSING: in the baseline, not in the new report;
- cannot tell: a side has no speedup (no eager run) or a timing graded unusable;
- improved / same.

Exit codes as `compare` of model and script reports. No torch, no Qt.
"""

from __future__ import annotations

from core.analysis.quality import UNUSABLE
from core.decide.script_compare import (
    CANNOT_TELL,
    IMPROVED,
    MISSING,
    NEW,
    REGRESSION,
    SAME,
    FunctionComparison,
    ScriptComparison,
)


def _name(row: dict) -> str:
    return f"{row['config']}, prompt {row.get('prompt_len')}"


def _change(b: dict, n: dict, what: str, threshold: float) -> tuple[str, str] | None:
    """(status, detail) of one speedup ("decode", "ttft"); None when a side has none."""
    bs, ns = b.get(f"{what}_speedup"), n.get(f"{what}_speedup")
    if not bs or not ns:
        return None
    change = ns / bs - 1.0
    word = "decode" if what == "decode" else "time to first token"
    detail = f"{word} speedup {bs:.2f}x -> {ns:.2f}x ({change:+.1%})"
    lows = (b.get(f"{what}_speedup_ci_low"), n.get(f"{what}_speedup_ci_low"))
    highs = (b.get(f"{what}_speedup_ci_high"), n.get(f"{what}_speedup_ci_high"))
    apart = None not in lows + highs and (highs[1] < lows[0] or lows[1] > highs[0])
    if change < -threshold and apart:
        return REGRESSION, detail
    if change > threshold and apart:
        return IMPROVED, detail
    return SAME, detail + f"; within {100 * threshold:g}% or the noise"


def compare_generations(base: list[dict], new: list[dict], threshold_pct: float) -> ScriptComparison:
    out = ScriptComparison(noun="config")
    threshold = threshold_pct / 100.0
    by_key = {(r["config"], r.get("prompt_len")): r for r in new}
    for b in base:
        n = by_key.pop((b["config"], b.get("prompt_len")), None)
        name = _name(b)
        if n is None:
            out.functions.append(FunctionComparison(name, MISSING, "in the baseline, not in the new report"))
            continue
        worse = [
            f"{what} {b.get(key) or 0} -> {n.get(key) or 0}"
            for key, what in (("recompiles", "recompiles while generating"), ("graph_breaks", "graph breaks"))
            if (n.get(key) or 0) > (b.get(key) or 0)
        ]
        if worse:
            out.functions.append(FunctionComparison(name, REGRESSION, "; ".join(worse)))
            continue
        unusable = [side for side, r in (("baseline", b), ("new", n)) if r.get("timing_grade") == UNUSABLE]
        if unusable:
            why = (b if unusable[0] == "baseline" else n).get("timing_reason") or "timing unusable"
            out.functions.append(FunctionComparison(name, CANNOT_TELL, f"{unusable[0]}: {why}"))
            continue
        judged = [c for c in (_change(b, n, "decode", threshold), _change(b, n, "ttft", threshold)) if c]
        if not judged:
            out.functions.append(FunctionComparison(name, CANNOT_TELL, "no speedup on both sides (no eager run?)"))
            continue
        statuses = [s for s, _ in judged]
        status = REGRESSION if REGRESSION in statuses else IMPROVED if IMPROVED in statuses else SAME
        out.functions.append(FunctionComparison(name, status, "; ".join(d for _, d in judged)))
    for n in by_key.values():
        out.functions.append(FunctionComparison(_name(n), NEW, "not in the baseline"))
    return out
