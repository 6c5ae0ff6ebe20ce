"""Words and tick labels for a shape sweep (`core.vocab.events.VariantResult` rows), defined once
for the CLI and the app: what happened to each variant (its VariantOutcome, worded), the varying dimension of the input shapes (a sequence length, a batch
size) for the chart's axis, and one sentence per config with the sweep's compile time, its
recompiles and, when it was hit, the recompile limit and what torch did then.

No Qt; any thread.
"""

from __future__ import annotations

import re

from core.analysis.stats import median_or_none
from core.vocab.records import JobStatus, VariantOutcome

_SHAPE = re.compile(r"^(\w+)\[([^\]]*)\]$")


OUTCOME_WORDS = {
    VariantOutcome.LIMIT_HIT: "recompile limit hit: ran eagerly",
    VariantOutcome.RAN_EAGERLY: "ran eagerly (recompile limit reached)",
    VariantOutcome.RECOMPILED: "recompiled",
    VariantOutcome.COMPILED: "compiled",
    VariantOutcome.REUSED: "reused compiled code",
}


def variant_outcome(v, with_time: bool = False) -> str:
    """What torch did for this variant, in a few words (with its compile time if asked)."""
    outcome = VariantOutcome(v.outcome)
    words = OUTCOME_WORDS[outcome]
    if with_time and outcome in (VariantOutcome.RECOMPILED, VariantOutcome.COMPILED):
        words += f" in {v.compile_time_s:.2f} s"
    return words


def _dims(shape: str) -> tuple[str, list[str]] | None:
    match = _SHAPE.match(shape)
    if match is None:
        return None
    dims = match.group(2).split("×") if match.group(2) else []
    return match.group(1), dims


def shape_ticks(variants) -> tuple[str, list[str]]:
    """(axis label, one tick label per variant). When one dimension of one input varies
    (an LSTM's sequence length) the ticks are its values and the label names it
    ("N in float32[N×4×128]"); otherwise the ticks are the variants' full shapes."""
    shapes = [tuple(v.input_shapes) for v in variants]
    full = [", ".join(s) for s in shapes]
    if len(shapes) < 2 or len({len(s) for s in shapes}) != 1:
        return "variant (input shapes)", full
    varying = []
    for i in range(len(shapes[0])):
        parsed = [_dims(s[i]) for s in shapes]
        if any(p is None for p in parsed) or len({(p[0], len(p[1])) for p in parsed}) != 1:
            if len({s[i] for s in shapes}) > 1:
                return "variant (input shapes)", full
            continue
        for j in range(len(parsed[0][1])):
            if len({p[1][j] for p in parsed}) > 1:
                varying.append((i, j, parsed))
    if len(varying) != 1:
        return "variant (input shapes)", full
    i, j, parsed = varying[0]
    dtype, dims = parsed[0]
    template = f"{dtype}[" + "×".join("N" if k == j else d for k, d in enumerate(dims)) + "]"
    where = f"input {i + 1}: " if len(shapes[0]) > 1 else ""
    return f"N in {where}{template}", [p[1][j] for p in parsed]


def recompile_limit(config, dynamo_defaults: dict | None) -> int | None:
    """The recompile limit this config ran with: its override, else torch's default."""
    overrides = dict(config.dynamo_config)
    for key in ("recompile_limit", "cache_size_limit"):  # cache_size_limit: the name before torch 2.6
        if key in overrides:
            return overrides[key]
    if dynamo_defaults:
        return dynamo_defaults.get("recompile_limit", dynamo_defaults.get("cache_size_limit"))
    return None


def recompile_count(variants) -> int:
    """Recompiles of a sweep: the variants after the first that made torch compile again
    (the one that hit the recompile limit included: torch tried)."""
    return sum(1 for v in variants if v.recompiled)


def sweep_sentence(result, dynamo_defaults: dict | None, summary: dict | None = None) -> str:
    """One line for a config's sweep: compile time, recompiles, the recompile limit."""
    variants = result.variants
    if not variants:
        if result.status == JobStatus.FAILED:
            return f"failed: {result.failure_reason}"
        if not result.spec.sweep_shapes:
            return "not a shape sweep (profiled one input shape)"
        return result.status if result.ended else f"{result.phase or 'starting'}…"
    summary = summary if summary is not None else result.summary(ci=False)
    total = summary.get("compile_time_s") or 0.0
    recompiles = recompile_count(variants)
    parts = [
        f"{len(variants)} variant{'s' if len(variants) != 1 else ''}, compile time {total:.2f} s in all",
        f"{recompiles} recompile{'s' if recompiles != 1 else ''}",
    ]
    if recompiles == 0 and any(v.compiles for v in variants):
        parts[-1] += " (one compile served every shape)"
    hit = next((v for v in variants if v.recompile_limit_hit), None)
    if hit is not None:
        limit = recompile_limit(result.config, dynamo_defaults)
        eager_after = [v.index for v in variants if v.ran_eagerly]
        span = (
            f" (variant{'s' if len(eager_after) > 1 else ''} "
            f"{eager_after[0]}{'–' + str(eager_after[-1]) if len(eager_after) > 1 else ''})"
            if eager_after
            else ""
        )
        parts.append(
            f"recompile limit{f' ({limit})' if limit is not None else ''} hit at variant {hit.index} "
            f"({', '.join(hit.input_shapes)}): torch stopped compiling new shapes of this frame and ran "
            f"them eagerly{span}"
        )
    if not result.ended:
        parts.append("running…")
    elif result.status != JobStatus.COMPLETED:
        parts.append(f"{result.status}: {result.failure_reason}" if result.failure_reason else result.status)
    return "; ".join(parts)


def medians(v) -> tuple[float | None, float | None]:
    """(eager, compiled) median latency of a variant, ms."""
    return median_or_none(v.eager_ms), median_or_none(v.compiled_ms)


# ------------------------------------------------------------------ batch sweeps (--sweep-batch)


def items_per_s(batch_size: int | None, times_ms) -> float | None:
    """Items per second at this batch size: batch size × 1000 / the median latency."""
    median = median_or_none(times_ms)
    if not batch_size or not median:
        return None
    return batch_size * 1000.0 / median


def throughput_rows(variants) -> list[dict]:
    """One row per batch size of a batch sweep: batch size, latency per batch and items per
    second on each side, the speedup, peak memory, and the error that ended the size (out of
    memory). Variants without a batch size (a shape sweep) are left out."""
    rows = []
    for v in variants:
        if v.batch_size is None:
            continue
        eager, compiled = items_per_s(v.batch_size, v.eager_ms), items_per_s(v.batch_size, v.compiled_ms)
        rows.append(
            {
                "batch_size": v.batch_size,
                "eager_median_ms": median_or_none(v.eager_ms),
                "compiled_median_ms": median_or_none(v.compiled_ms),
                "eager_items_per_s": eager,
                "compiled_items_per_s": compiled,
                "speedup": compiled / eager if eager and compiled else None,
                "peak_mb": v.peak_mb,
                "outcome": variant_outcome(v),
                "error": v.error,
            }
        )
    return rows


def best_batch(variants) -> dict | None:
    """The batch-sweep row with the best compiled throughput (None without one), for the
    summary: "best compiled throughput at batch size B: N items/s, speedup S×"."""
    rows = [r for r in throughput_rows(variants) if r["compiled_items_per_s"]]
    return max(rows, key=lambda r: r["compiled_items_per_s"]) if rows else None
