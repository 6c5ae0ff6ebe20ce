"""Inputs and outputs as the engine sees them: a tensor, or containers of tensors nested in any way
(tuples, lists, dicts, Hugging Face `ModelOutput`s, dataclasses, named tuples).

Every model is called as `model(*inputs)`, whatever it takes, so each phase of a job (and every
phase added later) calls all models alike. A model that takes keyword arguments (Hugging Face
models, torch.export programs exported with keywords) is wrapped in a `KeywordCall`, which
receives the keyword values positionally and passes them on by name; `LoadedModel.input_names`
keeps the names so the inputs are shown as `input_ids=int64[1×128]`.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator


def map_tensors(fn: Callable, value: Any) -> Any:
    """`value` with every tensor in it replaced by `fn(tensor)`, containers rebuilt as the same type
    (a ModelOutput stays a ModelOutput, a named tuple a named tuple); anything else as it is."""
    import torch

    if isinstance(value, torch.Tensor):
        return fn(value)
    if isinstance(value, dict):  # dict, OrderedDict, ModelOutput (an OrderedDict subclass)
        items = {k: map_tensors(fn, v) for k, v in value.items()}
        if type(value) is dict:
            return items
        try:
            return type(value)(**items) if _is_model_output(value) else type(value)(items)
        except Exception:  # a mapping type that cannot be rebuilt this way: a plain dict holds the same
            return items
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # named tuple
        return type(value)(*(map_tensors(fn, v) for v in value))
    if isinstance(value, (list, tuple)):
        return type(value)(map_tensors(fn, v) for v in value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: map_tensors(fn, getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    return value


def _is_model_output(value: Any) -> bool:
    return any(c.__name__ == "ModelOutput" for c in type(value).__mro__)


def tensors_in(value: Any) -> Iterator:
    """Every tensor in `value`, depth first, in container order (what a loss or a device
    synchronisation needs from a model's outputs)."""
    import torch

    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from tensors_in(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from tensors_in(v)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            yield from tensors_in(getattr(value, f.name, None))


def to_device(value: Any, device: str) -> Any:
    """`value` with every tensor in it moved to `device` (nested inputs: a list of images, a dict)."""
    return map_tensors(lambda t: t.to(device), value)


def cast_floating(value: Any, dtype) -> Any:
    """`value` with every floating-point tensor in it cast to `dtype` (integer ids, masks and
    labels stay as they are)."""
    return map_tensors(lambda t: t.to(dtype) if t.is_floating_point() else t, value)


MAX_SHOWN = 4


def describe_value(value: Any) -> str:
    """A short text for an input: `float32[2×3×224×224]`, `list of 2 float32[3×224×224]`,
    `{input_ids: int64[1×128], …}`; other values by their type name."""
    import torch

    if isinstance(value, torch.Tensor):
        return f"{value.dtype}".replace("torch.", "") + "[" + "×".join(str(d) for d in value.shape) + "]"
    if isinstance(value, dict):
        shown = [f"{k}: {describe_value(v)}" for k, v in list(value.items())[:MAX_SHOWN]]
        return "{" + ", ".join(shown) + (", …" if len(value) > MAX_SHOWN else "") + "}"
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        kind = type(value).__name__
        parts = [describe_value(v) for v in value]
        if parts and all(p == parts[0] for p in parts):
            return f"{kind} of {len(parts)} {parts[0]}"
        body = ", ".join(parts[:MAX_SHOWN]) + (", …" if len(parts) > MAX_SHOWN else "")
        return f"{kind} [{body}]"
    return type(value).__name__


def keyword_call(module, keyword_names: tuple[str, ...]):
    """`module` wrapped so that `wrapper(*args, *values)` calls `module(*args, **dict(zip(keyword_names,
    values)))`: the trailing len(keyword_names) inputs are passed as those keywords.

    An nn.Module, so eval(), to(device), parameters() and torch.compile reach the wrapped model
    (dynamo inlines the wrapper's forward; it is this project's code, so graph breaks are never
    blamed on it, see core.vocab.source_paths.is_user_code). The keyword values stay inputs rather than bound
    values so the job moves them to the device and shows their shapes."""
    import torch

    class KeywordCall(torch.nn.Module):
        """model(*args, *keyword_values) → wrapped(*args, **dict(zip(keyword_names, keyword_values)))."""

        def __init__(self):
            super().__init__()
            self.wrapped = module
            self.keyword_names = tuple(keyword_names)

        def forward(self, *inputs):
            split = len(inputs) - len(self.keyword_names)
            return self.wrapped(*inputs[:split], **dict(zip(self.keyword_names, inputs[split:])))

    return KeywordCall()


def with_batch_size(inputs: tuple, batch: int) -> tuple:
    """`inputs` at batch size `batch` (a batch sweep): every tensor with a batch dimension is
    repeated along it and cut to `batch` rows (its own rows, so values stay in range: token ids
    within the vocabulary); other inputs (a detection model's list of images) are refused."""
    import torch

    def resize(x):
        if isinstance(x, torch.Tensor) and x.dim() >= 1 and x.shape[0] >= 1:
            reps = -(-batch // x.shape[0])
            return x.repeat(reps, *([1] * (x.dim() - 1)))[:batch].contiguous()
        raise ValueError(f"a batch sweep needs tensor inputs with a batch dimension, not {describe_value(x)}")

    return tuple(resize(x) for x in inputs)
