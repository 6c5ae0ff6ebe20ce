"""Comparing two sets of model outputs (eager's and compiled's): the rules of PyTorch's
`torch._dynamo.utils.same`, with the figures behind each verdict (core.measure.accuracy runs them).

Outputs are walked together (tuples, lists, dicts, Hugging Face ModelOutput, dataclasses);
integer and boolean tensors must be equal; floating-point ones pass with
`allclose(atol=rtol=tol)`, the tolerance by dtype (TOLERANCE); otherwise float32/64 outputs
are judged against a float64 reference as `same()` does (the compiled RMSE may be at most
`multiplier × eager's RMSE + tol/10`) and float16/bfloat16 ones by cosine similarity
(≥ 0.99). Beyond `same()`: where cosine similarity decides (low precision, or no float64
reference), the norms must agree too, since cosine alone cannot see an output scaled by a
constant. torch is imported inside the functions; no Qt.
"""

from __future__ import annotations

import copy
import dataclasses
import math
from typing import Any, Callable

from core.vocab.records import AccuracyResult, AccuracyStatus

TOLERANCE = {"float64": 1e-4, "float32": 1e-4, "float16": 1e-3, "bfloat16": 1e-2}
LOW_PRECISION = ("float16", "bfloat16")
COSINE_MIN = 0.99
# Where cosine similarity decides, the norms must agree too (cosine cannot see a scaled output):
# within 10 × the dtype's tolerance, and at least 2% for bfloat16's 8-bit mantissa.
NORM_TOLERANCE = {"float64": 1e-3, "float32": 1e-3, "float16": 1e-2, "bfloat16": 2e-2}


class _NotComparable(Exception):
    """An output the check cannot compare (an unknown object type)."""


@dataclasses.dataclass
class _Leaf:
    path: str
    verdict: bool
    method: str
    why: str = ""
    abs_error: float | None = None
    rel_error: float | None = None
    cosine: float | None = None
    tolerance: float | None = None
    needs_fp64: bool = False


# ------------------------------------------------------------------ walking outputs


def _children(value) -> list[tuple[str, Any]] | None:
    """(path step, child) pairs of a container output, or None for a leaf."""
    import torch

    if isinstance(value, torch.Tensor):
        return None
    if isinstance(value, dict):  # Hugging Face ModelOutput is an OrderedDict
        return [(f"[{k!r}]", v) for k, v in value.items()]
    if isinstance(value, (list, tuple)):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [(f".{f.name}", getattr(value, f.name)) for f in dataclasses.fields(value)]
    return None


def _walk(ref, res, path: str = ""):
    """Pairs of leaves (path, ref, res); raises ValueError naming the first structural
    difference (type, length, keys)."""
    kids = _children(ref)
    if kids is None:
        yield path or "output", ref, res
        return
    if type(ref) is not type(res) and not (isinstance(ref, (list, tuple)) and isinstance(res, (list, tuple))):
        raise ValueError(f"{path or 'output'} is a {type(ref).__name__} in eager but a {type(res).__name__} compiled")
    res_kids = _children(res) or []
    if [k for k, _ in kids] != [k for k, _ in res_kids]:
        if isinstance(ref, dict):
            raise ValueError(
                f"{path or 'output'} has keys {sorted(map(str, ref))} in eager but {sorted(map(str, res))} compiled"
            )
        raise ValueError(f"{path or 'output'} has {len(kids)} items in eager but {len(res_kids)} compiled")
    for (step, a), (_, b) in zip(kids, res_kids):
        yield from _walk(a, b, path + step)


def tree_map_tensors(fn: Callable, value):
    """`value` with every tensor replaced by fn(tensor), containers rebuilt (dicts keep their
    type where it can be rebuilt from items, e.g. ModelOutput)."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, dict):
        items = {k: tree_map_tensors(fn, v) for k, v in value.items()}
        try:
            out = copy.copy(value)
            for k, v in items.items():
                out[k] = v
            return out
        except Exception:
            return items
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(tree_map_tensors(fn, v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(tree_map_tensors(fn, v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        try:
            return dataclasses.replace(
                value,
                **{f.name: tree_map_tensors(fn, getattr(value, f.name)) for f in dataclasses.fields(value) if f.init},
            )
        except Exception:
            return value
    return value


# ------------------------------------------------------------------ comparing leaves


def _dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.")


def identical(ref, res) -> tuple[bool, str, float]:
    """Exact agreement (NaNs equal), as PyTorch's runner checks eager against itself
    (tol=0). Returns (same, path of the first difference, its max abs difference)."""
    import torch

    try:
        for path, a, b in _walk(ref, res):
            if isinstance(a, torch.Tensor):
                if not isinstance(b, torch.Tensor) or a.shape != b.shape or a.dtype != b.dtype:
                    return False, path, math.inf
                if not torch.equal(a, b) and not (
                    a.is_floating_point() and torch.allclose(a, b, atol=0.0, rtol=0.0, equal_nan=True)
                ):
                    diff = (
                        (a.double() - b.double()).abs().nan_to_num(0.0)
                        if a.is_floating_point() or a.is_complex()
                        else (a.long() - b.long()).abs().double()
                    )
                    return False, path, float(diff.max()) if diff.numel() else 0.0
            elif a != b:
                return False, path, math.inf
    except ValueError as exc:
        return False, str(exc), math.inf
    return True, "", 0.0


def _rmse(a, b) -> float:
    import torch

    return float(torch.sqrt(torch.mean(torch.square(a.double() - b.double()))))


def _compare_leaf(path: str, ref, res, fp64=None) -> _Leaf:
    """One output: the rules of torch._dynamo.utils.same, with the figures behind them."""
    import numpy as np
    import torch

    if isinstance(ref, np.ndarray):
        ref, res = torch.as_tensor(ref), torch.as_tensor(res) if isinstance(res, np.ndarray) else res
    if isinstance(ref, float) and isinstance(res, float):
        ref, res = torch.tensor(ref), torch.tensor(res)
    if not isinstance(ref, torch.Tensor):
        if isinstance(ref, (str, int, bool, type(None), torch.device, torch.dtype)):
            ok = type(ref) is type(res) and ref == res
            return _Leaf(path, ok, "exact", "" if ok else f"{path} is {ref!r} in eager but {res!r} compiled")
        raise _NotComparable(f"{path} is a {type(ref).__name__}, which the check cannot compare")
    if not isinstance(res, torch.Tensor):
        return _Leaf(path, False, "exact", f"{path} is a tensor in eager but a {type(res).__name__} compiled")
    if ref.dtype != res.dtype:
        return _Leaf(path, False, "exact", f"{path} is {_dtype_name(ref)} in eager but {_dtype_name(res)} compiled")
    if ref.shape != res.shape:
        return _Leaf(
            path, False, "exact", f"{path} has shape {tuple(ref.shape)} in eager but {tuple(res.shape)} compiled"
        )
    if ref.is_sparse:
        ref, res = ref.to_dense(), res.to_dense()
    if not ref.is_floating_point():
        ok = torch.equal(ref, res)
        n = 0 if ok else int((ref != res).sum())
        return _Leaf(
            path,
            ok,
            "exact",
            "" if ok else f"{path}: {n} of {ref.numel()} {_dtype_name(ref)} values differ",
            abs_error=0.0 if ok else float((ref.double() - res.double()).abs().max()),
        )
    tol = TOLERANCE.get(_dtype_name(ref), 1e-4)
    a, b = ref.detach().double(), res.detach().double()
    nan_a, nan_b = torch.isnan(a), torch.isnan(b)
    if not torch.equal(nan_a, nan_b):
        return _Leaf(
            path,
            False,
            "allclose",
            f"{path}: NaN in {'compiled' if nan_b.sum() > nan_a.sum() else 'eager'} "
            "output where the other has a number",
            tolerance=tol,
        )
    inf_a, inf_b = torch.isinf(a), torch.isinf(b)
    if not torch.equal(inf_a, inf_b) or not torch.equal(a[inf_a], b[inf_b]):
        return _Leaf(
            path,
            False,
            "allclose",
            f"{path}: an infinity in one output where the other has a number (or the other sign)",
            tolerance=tol,
        )
    finite = ~(nan_a | inf_a)  # equal NaNs and equal infinities agree; the errors are over the rest
    diff = (a - b).abs()[finite]
    abs_error = float(diff.max()) if diff.numel() else 0.0
    scale = float(a[finite].abs().max()) if diff.numel() else 0.0
    rel_error = abs_error / scale if scale > 0 else (0.0 if abs_error == 0 else math.inf)
    cos = _cosine(a[finite], b[finite])
    leaf = _Leaf(path, True, "allclose", abs_error=abs_error, rel_error=rel_error, cosine=cos, tolerance=tol)
    if torch.allclose(a, b, atol=tol, rtol=tol, equal_nan=True):
        return leaf
    if _dtype_name(ref) in LOW_PRECISION or fp64 is None:
        return _by_cosine(
            leaf, a[finite], b[finite], _dtype_name(ref), fp64_missing=_dtype_name(ref) not in LOW_PRECISION
        )
    # same(): the compiled error from the float64 truth may be `multiplier` times eager's own
    f = fp64.detach().double()
    ref_error, res_error = _rmse(f[finite], a[finite]), _rmse(f[finite], b[finite])  # agreeing NaN/inf left out
    multiplier = 3.0 if ref.numel() < 1000 or (ref.ndim == 4 and ref.shape[-1] == ref.shape[-2] == 1) else 2.0
    leaf.method = "fp64"
    leaf.verdict = res_error <= multiplier * ref_error + tol / 10.0
    if not leaf.verdict:
        leaf.why = (
            f"{path}: max abs error {abs_error:.3g} (relative {rel_error:.3g}); its RMSE from a float64 "
            f"reference is {res_error:.3g}, above {multiplier:g} × eager's own {ref_error:.3g} + {tol / 10:g}"
        )
    return leaf


def _cosine(a, b) -> float:
    import torch

    if a.numel() == 0:
        return 1.0
    na, nb = float(a.norm()), float(b.norm())
    if na == 0 and nb == 0:
        return 1.0
    return float(torch.nn.functional.cosine_similarity(a.flatten(), b.flatten(), dim=0, eps=1e-6))


def _by_cosine(leaf: _Leaf, a, b, dtype: str, fp64_missing: bool) -> _Leaf:
    leaf.method = "cosine"
    na, nb = float(a.norm()), float(b.norm())
    norm_off = abs(nb / na - 1.0) if na > 0 else (0.0 if nb == 0 else math.inf)
    norm_tol = NORM_TOLERANCE.get(dtype, 1e-3)
    leaf.verdict = leaf.cosine >= COSINE_MIN and norm_off <= norm_tol
    if fp64_missing:
        leaf.needs_fp64 = True
    if not leaf.verdict:
        what = (
            f"cosine similarity {leaf.cosine:.4f} < {COSINE_MIN}"
            if leaf.cosine < COSINE_MIN
            else f"its norm differs by {norm_off:.2%} (more than {norm_tol:.1%})"
        )
        leaf.why = (
            f"{leaf.path}: max abs error {leaf.abs_error:.3g} (relative {leaf.rel_error:.3g}), "
            f"beyond allclose tolerance {leaf.tolerance:g}; {what}"
        )
    return leaf


def compare(ref, res, fp64_ref: Callable[[], Any] | None = None) -> AccuracyResult:
    """PASS or FAIL (NOT_CHECKED for an output type it cannot compare) for compiled outputs
    `res` against eager outputs `ref`. `fp64_ref` makes the float64 reference when called
    (None when it cannot be made); it is asked for only when a float32 output misses
    allclose, so the common case costs no model copy."""
    try:
        leaves = [_compare_leaf(p, a, b) for p, a, b in _walk(ref, res)]
    except ValueError as exc:
        return AccuracyResult(AccuracyStatus.FAIL.value, f"the outputs differ in structure: {exc}", method="exact")
    except _NotComparable as exc:
        return AccuracyResult(AccuracyStatus.NOT_CHECKED.value, f"{exc}.")
    note = ""
    if any(leaf.needs_fp64 for leaf in leaves):  # a float32 output beyond allclose: ask the float64 truth
        fp64, why_not = fp64_ref() if fp64_ref is not None else (None, "no float64 reference was asked for")
        if fp64 is not None:
            paths = {p: f for p, _, f in _walk(ref, fp64)}
            leaves = [
                _compare_leaf(leaf.path, a, b, paths.get(leaf.path)) if leaf.needs_fp64 else leaf
                for leaf, (_, a, b) in zip(leaves, _walk(ref, res))
            ]
        else:
            note = f" No float64 reference ({why_not}): float32 outputs beyond allclose judged by cosine similarity."
    return _verdict(leaves, note)


def _verdict(leaves: list[_Leaf], note: str) -> AccuracyResult:
    floats = [leaf for leaf in leaves if leaf.abs_error is not None]
    worst = max(floats, key=lambda leaf: leaf.rel_error if leaf.rel_error is not None else 0.0, default=None)
    figures = dict(
        max_abs_error=max((leaf.abs_error for leaf in floats), default=None),
        max_rel_error=max((leaf.rel_error for leaf in floats if leaf.rel_error is not None), default=None),
        cosine=min((leaf.cosine for leaf in floats if leaf.cosine is not None), default=None),
        tolerance=max((leaf.tolerance for leaf in leaves if leaf.tolerance is not None), default=None),
        outputs=len(leaves),
        worst_output=worst.path if worst else "",
    )
    failed = [leaf for leaf in leaves if not leaf.verdict]
    if failed:
        more = f" ({len(failed) - 1} more output{'s fail' if len(failed) > 2 else ' fails'})" if len(failed) > 1 else ""
        return AccuracyResult(
            AccuracyStatus.FAIL.value, failed[0].why + more + "." + note, method=failed[0].method, **figures
        )
    methods = sorted({leaf.method for leaf in leaves})
    method = "fp64" if "fp64" in methods else "cosine" if "cosine" in methods else methods[0] if methods else ""
    how = {
        "allclose": f"within allclose tolerance {figures['tolerance']:g}" if figures["tolerance"] else "equal",
        "exact": "equal",
        "fp64": "within the tolerance of a float64 reference (as PyTorch's runner judges)",
        "cosine": f"with cosine similarity ≥ {COSINE_MIN} and matching norms",
    }[method]
    n = len(leaves)
    return AccuracyResult(
        AccuracyStatus.PASS.value,
        f"{n} output{'s match' if n != 1 else ' matches'} eager {how}.{note}",
        method=method,
        **figures,
    )
