"""Whether two reports can be set side by side: the same model (`model_mismatch`: configs
matched by label would otherwise set one model's figures against another's), and the differences
of their machines and versions that make timings hard to compare (`environment_warnings`).
No torch, no Qt.
"""

from __future__ import annotations

import os

from core.analysis.results import JobResult
from core.models import is_file_source

# the environment fields whose difference between two reports makes their timings hard to
# compare, each with its name in the warning (environment_warnings)
TIMING_ENVIRONMENT_KEYS = (
    ("torch", "torch version"),
    ("device", "device"),
    ("device_name", "device model"),
    ("threads", "thread count"),
    ("cuda_version", "CUDA version"),
)


def environment_warnings(base_env: dict, new_env: dict) -> list[str]:
    """One sentence per difference that makes timings hard to compare."""
    out = []
    for key, name in TIMING_ENVIRONMENT_KEYS:
        b, n = base_env.get(key), new_env.get(key)
        if b != n and (b is not None or n is not None):
            out.append(f"the reports differ in {name}: baseline {b}, new {n}; timings may not be comparable")
    return out


def _model_name(source: str) -> str:
    """A model's name across machines: a model file by its file name (the baseline may have
    been made from another folder's copy), any other source as written."""
    return os.path.basename(source) if is_file_source(source) else source


def model_mismatch(base: list[JobResult], new: list[JobResult]) -> str | None:
    """Why two reports cannot be compared at all: they profile no model in common (configs are
    matched by their label, so resnet18's inductor would be set against mobilenet's). None
    when they share a model, or either report is empty (compare says it then compared nothing)."""
    b = sorted({_model_name(r.spec.model.source) for r in base})
    n = sorted({_model_name(r.spec.model.source) for r in new})
    if not b or not n or set(b) & set(n):
        return None
    return (
        f"The baseline profiles {', '.join(b)} and the new report {', '.join(n)}: no model is in both, "
        "so no config can be set against its own. Compare a report with a baseline of the same model."
    )
