"""Is the compiled model correct? Its outputs against eager's, on the same inputs.

Follows PyTorch's own benchmark runner (benchmarks/dynamo/common.py `check_accuracy`):
eager is first checked against itself: two calls with the same inputs and the same seed must
agree exactly, and a forward that draws random numbers and whose output changes with the
seed (dropout in training mode, torch.rand) cannot be compared either, because compiled code
draws its random numbers differently. Both end as NONDETERMINISTIC, never pass/fail. Then
the compiled outputs are compared with eager's by the rules of core.measure.output_match
(torch._dynamo.utils.same's), asking for a float64 reference only when a float32 output
misses allclose.

Everything here runs in the job's child process, after the timed benchmark. `check` never
raises for the model's sake: the job turns anything that goes wrong into NOT_CHECKED.
"""

from __future__ import annotations

import copy
import random
from typing import Any, Callable

from core.measure.output_match import compare, identical, tree_map_tensors
from core.vocab.records import AccuracyResult, AccuracyStatus

__all__ = ["check", "compare", "float64_reference", "free_bytes", "seed_everything"]

SEED = 1337  # PyTorch's runner (reset_rng_state) uses the same

# ------------------------------------------------------------------ the check in a job


def seed_everything(seed: int = SEED) -> None:
    import numpy as np
    import torch

    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)


def _rng_state():
    import torch

    states = [torch.get_rng_state()]
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        states += list(torch.cuda.get_rng_state_all())
    return states


def _snapshot(outputs):
    """Detached copies: CUDA-graph replays overwrite their outputs at the next call."""
    return tree_map_tensors(lambda t: t.detach().clone(), outputs)


def free_bytes(cuda: bool) -> float | None:
    """Half the memory free now (GPU memory on CUDA): what a float64 copy may take."""
    try:
        if cuda:
            import torch

            return torch.cuda.mem_get_info()[0] / 2
        import psutil

        return psutil.virtual_memory().available / 2
    except Exception:
        return None


def float64_reference(model, inputs, max_bytes: float | None = None):
    """(outputs of a float64 copy of `model` on float64 copies of `inputs`, or None, and why
    not). Refused for a non-Module or when the copy would not fit in `max_bytes`."""
    import torch

    if not isinstance(model, torch.nn.Module):
        return None, "the model is not an nn.Module"
    size = sum(t.numel() for t in list(model.parameters()) + list(model.buffers())) * 8
    if max_bytes is not None and size > max_bytes:
        return None, f"a float64 copy needs {size / 2**20:,.0f} MB, more than the memory free"
    try:
        model64 = copy.deepcopy(model).to(torch.float64)
        seed_everything()
        out = model64(*tree_map_tensors(lambda t: t.double() if t.is_floating_point() else t, inputs))
        return _snapshot(out), ""
    except Exception as exc:  # an op without float64 support, a module that refuses deepcopy
        return None, f"the float64 copy failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def check(
    eager,
    compiled,
    inputs,
    before: Callable[[], None] | None = None,
    fp64_ref: Callable[[], tuple[Any, str]] | None = None,
) -> AccuracyResult:
    """The full check of one config: eager against itself, then compiled against eager.

    Every call gets the very inputs the benchmark used: a copy made under inference_mode
    lacks a dispatch key the original has, and the compiled model would recompile for it.
    `before` runs before each compiled call (a CUDA-graph step mark); `fp64_ref` returns
    (float64 outputs or None, why not), e.g. a partial of `float64_reference`."""
    seed_everything()
    state = _rng_state()
    ref = _snapshot(eager(*inputs))
    draws_random = any(not _equal_state(a, b) for a, b in zip(state, _rng_state()))
    seed_everything()
    rerun = _snapshot(eager(*inputs))
    same, where, diff = identical(ref, rerun)
    if not same:
        return AccuracyResult(
            AccuracyStatus.NONDETERMINISTIC.value,
            f"not comparable: two eager calls with the same inputs and seed differ "
            f"({where}, max difference {diff:.3g}); the forward changes state between calls or uses "
            "nondeterministic kernels.",
            method="exact",
        )
    if draws_random:
        seed_everything(SEED + 1)
        other = _snapshot(eager(*inputs))
        if not identical(ref, other)[0]:
            return AccuracyResult(
                AccuracyStatus.NONDETERMINISTIC.value,
                "not comparable: the forward draws random numbers and its output changes with "
                "the seed (dropout in training mode, torch.rand, ...); compiled code draws them differently.",
                method="exact",
            )
    seed_everything()
    if before is not None:
        before()
    res = _snapshot(compiled(*inputs))
    return compare(ref, res, fp64_ref)


def _equal_state(a, b) -> bool:
    import torch

    return a.shape == b.shape and torch.equal(a, b)
