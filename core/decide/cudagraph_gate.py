"""`compare --require-cudagraphs`: a gate on CUDA-graph coverage, for configs that record CUDA
graphs (reduce-overhead, max-autotune, triton.cudagraphs). A drop in the share of the compiled
calls' GPU time that ran in graph replays (core.analysis.cudagraph_coverage) beyond
COVERAGE_DROP, or more graphs skipped by torch than in the baseline (each said with torch's reason
and the user's line), is a regression; a report without a measured coverage (a CPU run, no op
profile) cannot pass the gate: cannot tell, and why. No torch, no Qt.
"""

from __future__ import annotations

from core.analysis.results import JobResult

COVERAGE_DROP = 0.05  # of the GPU time: a drop beyond 5 points of coverage is a regression


def _coverage(r: JobResult) -> float | None:
    return r.cudagraph_coverage()


def judge_cudagraphs(base: JobResult, new: JobResult, problems: list, notes: list, unknown: list) -> None:
    """Add what CUDA-graph coverage says of this config to the comparison's lists."""
    if not new.config.records_cudagraphs:
        notes.append("records no CUDA graphs (--require-cudagraphs judges configs that do)")
        return
    b, n = _coverage(base), _coverage(new)
    if n is None:
        where = "a CPU run" if new.spec.device != "cuda" else "no op profile"
        unknown.append(
            f"the new report measured no CUDA-graph coverage ({where}), so --require-cudagraphs cannot pass it"
        )
        return
    skipped_b, skipped_n = len(base.cudagraph_skips), len(new.cudagraph_skips)
    if skipped_n > skipped_b:
        first = new.cudagraph_skips[0]
        where = f" at {first.file}:{first.line}" if first.file else ""
        problems.append(
            f"torch skipped CUDA graphs {skipped_n} time{'s' if skipped_n != 1 else ''} now ({skipped_b} in the "
            f"baseline): {first.reason or 'no reason logged'}{where}"
        )
    if b is None:
        notes.append(f"CUDA-graph coverage {n:.0%} (none measured in the baseline)")
    elif b - n > COVERAGE_DROP:
        problems.append(f"CUDA-graph coverage fell from {b:.0%} to {n:.0%} of the compiled call's GPU time")
    else:
        notes.append(f"CUDA-graph coverage {b:.0%} → {n:.0%}")
