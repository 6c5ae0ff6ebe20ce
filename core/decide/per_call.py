"""A job's figures per call, as the recommendation costs its options (core.decide.recommend): eager
and compiled medians and the speedup with its 95% interval, from the job's summary; a shape
sweep's call is one call of each variant in turn. No torch, no Qt.
"""

from __future__ import annotations

import math

import numpy as np


def per_call(result) -> tuple[float, float, float, float, float] | None:
    """(eager ms, compiled ms, speedup, CI low, CI high) of a job, from its summary; a shape
    sweep's from its variants (a call cycles through them)."""
    s = result.summary()
    if result.variants:
        return sweep_per_call(result.variants)
    if s["eager_median_ms"] is None or s["compiled_median_ms"] is None or not s["speedup"]:
        return None
    low, high = s["speedup_ci_low"], s["speedup_ci_high"]
    if low is None or high is None or not (math.isfinite(low) and math.isfinite(high)):
        low = high = s["speedup"]
    return s["eager_median_ms"], s["compiled_median_ms"], s["speedup"], low, high


def sweep_per_call(variants, resamples: int = 1000) -> tuple[float, float, float, float, float] | None:
    """A sweep's call is one call per variant in turn: the sum of the variants' medians,
    with a bootstrap of that sum's ratio."""
    from core.analysis.stats import bootstrap_medians

    pairs = [(np.asarray(v.eager_ms, float), np.asarray(v.compiled_ms, float)) for v in variants]
    pairs = [(e, c) for e, c in pairs if e.size and c.size]
    if not pairs:
        return None
    rng = np.random.default_rng(0)
    eager = sum(float(np.median(e)) for e, _ in pairs)
    compiled = sum(float(np.median(c)) for _, c in pairs)
    e_boot = sum(bootstrap_medians(e, float(np.median(e)), resamples, rng) for e, _ in pairs)
    c_boot = sum(bootstrap_medians(c, float(np.median(c)), resamples, rng) for _, c in pairs)
    low, high = np.percentile(e_boot / c_boot, [2.5, 97.5])
    n = len(pairs)
    return eager / n, compiled / n, eager / compiled, float(low), float(high)
