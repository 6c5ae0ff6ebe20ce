"""The column groups of summary.csv's row (`core.analysis.results.JobResult.summary`) that
need more than a field read: the latency statistics, the break-even verdict, the memory ratio,
the throughput, accuracy, batch-sweep and call-cost columns. Each takes the JobResult (`result`)
it describes and only reads it."""

from __future__ import annotations

from typing import Any

from core.analysis.stats import LatencyStats, median_or_none, speedup
from core.vocab import records as rec

BREAK_EVEN_UNKNOWN = "cannot tell"  # summary.csv break_even_iters: the speedup is within the noise or unjudged

STAT_FIELDS = ("median", "mean", "p90", "p99", "min", "max", "std")


def stats_columns(phase: str, stats: LatencyStats | None) -> dict[str, float | None]:
    """One side's latency statistics (ms)."""
    return {f"{phase}_{name}_ms": (getattr(stats, name) if stats else None) for name in STAT_FIELDS}


def batch_columns(result) -> dict[str, Any]:
    """A batch sweep's headline: the batch size with the best compiled throughput."""
    from core.analysis.variants import best_batch

    best = best_batch(result.variants)
    return {
        "best_batch_size": best and best["batch_size"],
        "best_batch_items_per_s": best and best["compiled_items_per_s"],
        "best_batch_speedup": best and best["speedup"],
    }


def call_cost_columns(result) -> dict[str, Any]:
    """The page faults and CPU time a timed call cost, a side."""
    out = {}
    for side in rec.SIDES:
        c = result.call_cost(side)
        for key, field_name in (
            ("faults_per_call", "minor_faults"),
            ("user_ms_per_call", "user_ms"),
            ("sys_ms_per_call", "sys_ms"),
        ):
            value = c.per_call(field_name) if c else None
            out[f"{side}_{key}"] = None if value is None else round(value, 3)
    return out


def accuracy_columns(result) -> dict[str, Any]:
    """The accuracy check's verdict and errors."""
    a = result.accuracy_verdict()
    return {
        "accuracy": a and a.status,
        "accuracy_reason": a and a.reason,
        "max_abs_error": a and a.max_abs_error,
        "max_rel_error": a and a.max_rel_error,
        "cosine": a and a.cosine,
    }


def throughput_columns(result, ci: bool) -> dict[str, Any]:
    """--timing both: the throughput phase's medians a call and its speedup with its interval."""
    eager = [x.latency_ms for x in result.throughput if x.side == "eager"]
    compiled = [x.latency_ms for x in result.throughput if x.side == "compiled"]
    sp = speedup(eager, compiled, resamples=2000 if ci else 0) if eager and compiled else None
    return {
        "throughput_eager_ms": median_or_none(eager),
        "throughput_compiled_ms": median_or_none(compiled),
        "throughput_speedup": sp and sp.value,
        "throughput_speedup_ci_low": sp.ci_low if sp and ci else None,
        "throughput_speedup_ci_high": sp.ci_high if sp and ci else None,
    }


def break_even_column(result, calls: float | None, sp, timed: bool):
    """The calls after which the compile has paid for itself, only from a speedup measurably
    above 1 in a timing that can carry a verdict; "never" when compiled is measurably no faster;
    BREAK_EVEN_UNKNOWN when the interval spans 1 or the timing is unusable (a 25,809 came from
    a 1.01x [0.89-1.29] on a busy machine). `sp` None (a live row, no interval yet): from
    the medians."""
    if not timed:
        return None
    if sp is not None and sp.ci_low is not None and sp.ci_high is not None:
        if not result.quality().trusted:
            return BREAK_EVEN_UNKNOWN
        if sp.ci_low > 1.0:
            return calls if calls is not None else BREAK_EVEN_UNKNOWN
        return "never" if sp.ci_high < 1.0 else BREAK_EVEN_UNKNOWN
    return calls if calls is not None else "never"


def memory_ratio(result) -> float | None:
    """eager peak / compiled peak: the allocator's on CUDA (as PyTorch's runner reports
    it), the process RSS high-water mark on the CPU."""
    eager, compiled = result.memory.get("eager"), result.memory.get("compiled")
    if not eager or not compiled:
        return None
    if eager.cuda_max_allocated_mb and compiled.cuda_max_allocated_mb:
        return eager.cuda_max_allocated_mb / compiled.cuda_max_allocated_mb
    return eager.peak_rss_mb / compiled.peak_rss_mb if compiled.peak_rss_mb else None
