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


def mark_flag(m: DimMark) -> str:
    """A mark as the command line gives it: `--mark-dynamic 0:1:8:512`."""
    bounds = (
        f":{'' if m.min is None else m.min}:{'' if m.max is None else m.max}"
        if m.min is not None or m.max is not None
        else ""
    )
    return f"--mark-dynamic {m.input}:{m.dim}{bounds}"


def check_marks(inputs: tuple, marks: tuple[DimMark, ...]) -> str:
    """Why the marks do not fit these inputs, as a setting to fix ("" when they fit): an input
    that is not there or not a tensor, a dimension it lacks, a range that leaves out its size.
    Said before anything compiles: it read "compile failed (ConfigError)", and a range that
    left out the size was blamed on the model."""
    import torch

    for m in marks:
        flag = mark_flag(m)
        if m.input >= len(inputs):
            return f"{flag} names input {m.input}, but the model takes {len(inputs)} input(s), counted from 0: fix the flag."
        x = inputs[m.input]
        if not isinstance(x, torch.Tensor):
            return f"{flag}: input {m.input} is a {type(x).__name__}, not a tensor: mark a tensor input."
        if m.dim >= x.dim():
            return f"{flag}: input {m.input} has {x.dim()} dimension(s), counted from 0 (its shape {tuple(x.shape)}): fix the flag."
        size = int(x.shape[m.dim])
        if (m.min is not None and size < m.min) or (m.max is not None and size > m.max):
            return (
                f"{flag}: input {m.input}'s dimension {m.dim} is {size} here, outside the range the flag gives; "
                "give a range that holds every size the model is called with (or no range)."
            )
    return ""


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
