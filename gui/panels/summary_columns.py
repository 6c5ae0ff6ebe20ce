"""The Summary table's columns: what each shows of a config's row dict (`JobResult.summary`,
the columns of summary.csv), its header and tooltip. Nothing is computed here, only formatted
(gui.panels.summary shows them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core.vocab.formatting import ms_cell
from gui.panels.graph_breaks import break_counts
from gui.widgets.theme import error_color, warning_color

GRADE_COLORS = {"noisy": warning_color, "unusable": error_color}
Row = dict[str, Any]


def _pair(a, b) -> str:
    return f"{ms_cell(a)} / {ms_cell(b)}"


def _latency(eager_key: str, compiled_key: str) -> Callable[[Row], str]:
    def text(s: Row) -> str:
        if s.get("sweep"):
            return f"sweep: {s['variants']} shapes" if s.get("variants") else "sweep"
        return _pair(s[eager_key], s[compiled_key])

    return text


def _mb(v) -> str:
    return "–" if v is None else f"{v:,.0f}"


def _speedup(s: Row) -> str:
    if s.get("speedup") is None:
        return "sweep" if s.get("sweep") else "–"
    if s.get("speedup_ci_low") is None:  # a running job: the interval comes when it ends
        return f"{s['speedup']:.2f}×"
    return f"{s['speedup']:.2f}× [{s['speedup_ci_low']:.2f}–{s['speedup_ci_high']:.2f}]"


def _timing(s: Row) -> str:
    """The measurement-quality grade (core.analysis.quality) and, when the config was timed in several
    processes, their count."""
    grade = s.get("timing_quality")
    if not grade:
        return "–"
    processes = s.get("processes") or 1
    return f"{grade} ({processes} proc.)" if processes > 1 else grade


def _compile(s: Row) -> str:
    if s.get("compile_time_s") is None:
        return "–"
    cache = s.get("cache_state") or "n/a"
    if s.get("sweep"):
        return f"{s['compile_time_s']:.2f} s (sweep total)"
    return f"{s['compile_time_s']:.2f} s" + (f" ({cache})" if cache != "n/a" else "")


def _break_even(s: Row) -> str:
    v = s.get("break_even_iters")
    if v is None:
        return "–"
    return v if isinstance(v, str) else f"{v:,.0f}"


def _status(s: Row) -> str:
    if s.get("failure_reason"):
        return f"{s['status']}: {s['failure_reason']}"
    return s.get("status") or ""


def _count(key: str) -> Callable[[Row], str]:
    return lambda s: "–" if s.get(key) is None else str(s[key])


def graph_breaks(s: Row) -> str:
    sites, per_call = break_counts(s)
    if sites is None:
        return "–"
    return f"{sites} / {per_call}" if per_call is not None else str(sites)


def _accuracy(s: Row) -> str:
    return s.get("accuracy") or "–"


def _error(s: Row) -> str:
    a, r = s.get("max_abs_error"), s.get("max_rel_error")
    if a is None and r is None:
        return "–"
    return f"{_sci(a)} / {_sci(r)}"


def _sci(v) -> str:
    return "–" if v is None else f"{v:.2g}"


def _cosine(s: Row) -> str:
    return "–" if s.get("cosine") is None else f"{s['cosine']:.6f}"


def failing(s: Row) -> bool:
    return s.get("accuracy") == "fail"


def sites(s: Row):
    return break_counts(s)[0]


@dataclass(frozen=True)
class Column:
    header: str
    text: Callable[[Row], str]
    tooltip: str
    sort_key: str = ""


COLUMNS = (
    Column("Config", lambda s: s["config"], "backend / mode / dynamic / fullgraph of this job", "config"),
    Column("Status", _status, "completed, running, failed (with the reason) or cancelled", "status"),
    Column(
        "Median ms\neager / compiled",
        _latency("eager_median_ms", "compiled_median_ms"),
        "Median latency of the timed iterations (warm-up excluded); a shape sweep has one per shape (Shape sweep tab)",
        "compiled_median_ms",
    ),
    Column(
        "p90 ms\neager / compiled",
        _latency("eager_p90_ms", "compiled_p90_ms"),
        "90th percentile latency",
        "compiled_p90_ms",
    ),
    Column(
        "p99 ms\neager / compiled",
        _latency("eager_p99_ms", "compiled_p99_ms"),
        "99th percentile latency",
        "compiled_p99_ms",
    ),
    Column(
        "Speedup\n[95% CI]",
        _speedup,
        "eager median / compiled median, with a bootstrap 95% "
        "confidence interval; above 1 means compiling made it faster",
        "speedup",
    ),
    Column(
        "Timing",
        _timing,
        "How far the timing can be trusted: quiet, noisy (something disturbed it; the figures "
        "stand with their intervals) or unusable (no verdict is drawn from it); hover a cell for the reasons "
        "and figures",
        "timing_quality",
    ),
    # Memory and accuracy (with its errors) before the compile details: in view at 1400 px.
    Column(
        "Peak MB\neager / compiled",
        lambda s: f"{_mb(s['eager_peak_mb'])} / {_mb(s['compiled_peak_mb'])}",
        "Peak resident memory (RSS) of the job process in the eager and compiled phases",
        "compiled_peak_mb",
    ),
    Column(
        "Accuracy",
        _accuracy,
        "Do the compiled outputs match eager's on the same inputs (torch's same() "
        "tolerances)? pass, fail, nondeterministic (eager disagrees with itself: not comparable) or not "
        "checked; hover a cell for why",
        "accuracy",
    ),
    Column(
        "Max error\nabs / rel",
        _error,
        "Largest |compiled − eager| over every floating-point output, and that "
        "error relative to the output's largest eager value",
        "max_abs_error",
    ),
    Column(
        "Cosine",
        _cosine,
        "Lowest cosine similarity between a compiled and an eager output (1 = same direction)",
        "cosine",
    ),
    Column(
        "Compile\n(cache)",
        _compile,
        "Wall time of the first compiled call, and whether inductor's FX graph cache was hit",
        "compile_time_s",
    ),
    Column(
        "Break-even\niterations",
        _break_even,
        "Calls after which the compile time has paid for itself, from a speedup measurably above 1; 'never' "
        "when compiled is measurably not faster; 'cannot tell' when the speedup is within the noise or the "
        "timing could not be judged",
        "break_even_iters",
    ),
    Column(
        "Graph breaks\nsites / per call",
        graph_breaks,
        "Sites: distinct places in the code where torch "
        "broke the graph. Per call: how many breaks one call of the compiled model passes",
        "graph_break_sites",
    ),
    Column(
        "Recompiles", _count("recompile_count"), "Recompilations (guard failures) during the run", "recompile_count"
    ),
)
ACCURACY_COLUMN = next(i for i, c in enumerate(COLUMNS) if c.text is _accuracy)
TIMING_COLUMN = next(i for i, c in enumerate(COLUMNS) if c.text is _timing)


def row_of(result) -> Row:
    """The summary of a JobResult; the bootstrap interval only once it has ended."""
    row = result.summary(ci=result.ended)
    row["sweep"] = result.spec.sweep_shapes
    row["variants"] = len(result.variants)
    return row
