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
        if spec.config.fullgraph and ("Unsupported" in name or "graph break" in str(exc).lower()):
            return f"compile failed: fullgraph=True refuses graph breaks ({first}); turn fullgraph off or fix the break"
        return f"compile failed ({name}): {first}"
    if isinstance(exc, MemoryError) or "out of memory" in str(exc).lower():
        return f"out of memory during the {phase} phase: {first}; try a smaller batch size"
    return f"{phase or 'start-up'} failed ({name}): {first}"
