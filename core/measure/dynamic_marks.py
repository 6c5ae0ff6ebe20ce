"""The dynamic-shape call applied: `torch._dynamo.mark_dynamic` on the inputs a config marks
(CompileConfig.mark_dynamic), before its first compiled call.

`mark_dynamic` (not `maybe_mark_dynamic`) on purpose: when the model's code needs the exact
size (a branch on it, a view that fixes it), torch refuses with ConstraintViolationError
naming the line, which is how a run learns that dynamic shapes cannot help that dimension
(core.measure.failures words it). Runs in the job's child process.
"""

from __future__ import annotations

from core.vocab.config import DimMark
from core.vocab.limits import ConfigError


def apply_marks(inputs: tuple, marks: tuple[DimMark, ...]) -> None:
    """Mark each DimMark's dimension of the input it names; ConfigError for an input that is not
    there, not a tensor, or has no such dimension."""
    import torch

    for m in marks:
        if m.input >= len(inputs):
            raise ConfigError(f"mark_dynamic {m.label}: the model takes {len(inputs)} inputs (counted from 0).")
        x = inputs[m.input]
        if not isinstance(x, torch.Tensor):
            raise ConfigError(f"mark_dynamic {m.label}: input {m.input} is a {type(x).__name__}, not a tensor.")
        if m.dim >= x.dim():
            raise ConfigError(f"mark_dynamic {m.label}: input {m.input} has {x.dim()} dimensions (counted from 0).")
        kwargs = {k: v for k, v in (("min", m.min), ("max", m.max)) if v is not None}
        torch._dynamo.mark_dynamic(x, m.dim, **kwargs)
