"""A job's failure in one line a user can act on, from the exception and the phase it came in."""

from __future__ import annotations

from core.models import ModelLoadError
from core.vocab.config import JobSpec


def is_out_of_memory(exc: BaseException) -> bool:
    """torch.OutOfMemoryError (CUDA), MemoryError, or an allocator's "out of memory" (CPU)."""
    text = str(exc).lower()
    return (
        isinstance(exc, MemoryError)
        or type(exc).__name__ == "OutOfMemoryError"
        or "out of memory" in text
        or "can't allocate memory" in text
        or "failed to allocate" in text
    )


def failure_reason(phase: str, exc: BaseException, spec: JobSpec) -> str:
    """One line a user can act on, from an exception raised in `phase`."""
    if isinstance(exc, ModelLoadError):
        return f"model: {exc}"
    text = str(exc).strip().splitlines()
    first = next((t for t in text if t.strip()), type(exc).__name__)
    name = type(exc).__name__
    if phase == "compile":
        if name == "ConstraintViolationError":
            return specialized_reason(str(exc), spec)
        if spec.config.fullgraph and ("Unsupported" in name or "graph break" in str(exc).lower()):
            return f"compile failed: fullgraph=True refuses graph breaks ({first}); turn fullgraph off or fix the break"
        return f"compile failed ({name}): {first}"
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
        return f"out of memory during the {phase} phase: {first}; try a smaller batch size"
    return f"{phase or 'start-up'} failed ({name}): {first}"


def specialized_reason(message: str, spec: JobSpec) -> str:
    """torch refused a dimension marked dynamic (CompileConfig.mark_dynamic) because the code
    needs its exact value: dynamic shapes cannot help that dimension. torch's own words (its
    "You marked ..." line) and the user line it names."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    said = next(
        (line.lstrip("- ") for line in lines if line.lstrip("- ").startswith("You marked")), lines[0] if lines else ""
    )
    said = said.split(". If you're using", 1)[0]
    where = next((line for line in lines if line.startswith("File ")), "")
    marks = ",".join(m.label for m in spec.config.mark_dynamic)
    return (
        f"dynamic shapes cannot help as marked (mark_dynamic={marks}): torch says: {said}"
        + (f" ({where})" if where else "")
        + "; leave that dimension unmarked (each size compiles its own graph) or change the code that needs its exact value"
    )
