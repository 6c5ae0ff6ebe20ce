"""Model sources: torchvision by name, Python model files, torch.export `.pt2` archives and
TorchScript files.

A Python model file defines `get_model()` (an nn.Module or a callable) and
`get_example_inputs()` (a tuple of inputs); optionally `get_input_variants()` (a list of input
tuples, for shape sweeps). `FILE.py:NAME` picks the factory `NAME()` instead of `get_model()`. Every failure
becomes a `ModelLoadError` naming the file, the line and the problem.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import re
import sys
import traceback
import zipfile
from dataclasses import dataclass, field
from typing import Any, Callable

from core.config import ModelSpec

PY_SUFFIXES = (".py",)
EXPORT_SUFFIXES = (".pt2",)
TORCHSCRIPT_SUFFIXES = (".pt", ".pth", ".ts", ".jit", ".torchscript")
VIDEO_FRAMES = 16


class ModelLoadError(Exception):
    """A model that cannot be profiled: `message` says what and what to do."""

    def __init__(self, message: str, file: str = "", line: int = 0, detail: str = ""):
        where = f"{file}:{line}: " if file and line else (f"{file}: " if file else "")
        super().__init__(where + message)
        self.message, self.file, self.line, self.detail = message, file, line, detail


@dataclass
class LoadedModel:
    """A model ready to call: `model(*inputs)`. `compile_supported` is False for
    TorchScript, with the reason in `note`."""

    model: Callable
    inputs: tuple
    kind: str  # torchvision | python | export | torchscript
    description: str
    compile_supported: bool = True
    note: str = ""
    variants: list[tuple] = field(default_factory=list)


def split_factory(source: str) -> tuple[str, str]:
    """"file.py:get_other_model" → ("file.py", "get_other_model"); plain paths get "get_model"."""
    path, sep, factory = source.rpartition(":")
    if sep and path.endswith(PY_SUFFIXES) and factory.isidentifier():
        return path, factory
    return source, "get_model"


_DEFINES_VARIANTS = re.compile(r"^def get_input_variants\s*\(", re.MULTILINE)


def defines_variants(source: str) -> bool:
    """Whether a Python model file defines get_input_variants() (so a shape sweep is
    possible), read as text: nothing is run. The job checks for real."""
    path = split_factory(source)[0]
    if not path.endswith(PY_SUFFIXES):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return bool(_DEFINES_VARIANTS.search(fh.read()))
    except OSError:
        return False


def is_file_source(source: str) -> bool:
    source = split_factory(source)[0]
    return os.path.sep in source or source.endswith(PY_SUFFIXES + EXPORT_SUFFIXES + TORCHSCRIPT_SUFFIXES) \
        or os.path.exists(source)


def load_model(spec: ModelSpec) -> LoadedModel:
    """Build the model and its example inputs on the CPU (the job moves them to a device)."""
    source = spec.source
    if not is_file_source(source):
        return _load_torchvision(spec)
    source, factory = split_factory(source)
    path = os.path.abspath(os.path.expanduser(source))
    if not os.path.exists(path):
        raise ModelLoadError("file not found; check the path.", file=source)
    if path.endswith(PY_SUFFIXES):
        return _load_python_file(path, factory)
    if path.endswith(EXPORT_SUFFIXES):
        return _load_export(path, spec)
    return _load_torchscript(path, spec)


# ------------------------------------------------------------------ torchvision


def torchvision_model_names() -> list[str]:
    import torchvision

    return sorted(torchvision.models.list_models())


def _torchvision_family(name: str) -> str:
    import torchvision.models as tvm

    for family in ("video", "segmentation", "detection", "optical_flow", "quantization"):
        if name in tvm.list_models(module=getattr(tvm, family)):
            return family
    return "classification"


def _load_torchvision(spec: ModelSpec) -> LoadedModel:
    import torch
    import torchvision

    names = torchvision_model_names()
    if spec.source not in names:
        close = [n for n in names if spec.source.lower() in n][:10]
        hint = f" Close matches: {', '.join(close)}." if close else ""
        raise ModelLoadError(
            f"{spec.source!r} is neither a file nor a torchvision model.{hint} "
            "Give a torchvision name (e.g. resnet18) or a path to a .py, .pt2 or TorchScript file."
        )
    family = _torchvision_family(spec.source)
    if family in ("detection", "optical_flow"):
        raise ModelLoadError(
            f"torchvision's {spec.source} takes "
            + ("a list of images" if family == "detection" else "two images")
            + ", not one tensor; wrap it in a model file (get_model / get_example_inputs) to profile it."
        )
    if spec.batch_size < 1 or spec.image_size < 16:
        raise ModelLoadError("batch size must be at least 1 and image size at least 16.")
    # Never a download (no model hub here): no weights, and no backbone weights either,
    # which segmentation builders would otherwise fetch by default.
    kwargs: dict[str, Any] = {"weights": None}
    params = inspect.signature(torchvision.models.get_model_builder(spec.source)).parameters
    if "weights_backbone" in params:
        kwargs["weights_backbone"] = None
    if family == "quantization":
        kwargs["quantize"] = False
    model = torchvision.models.get_model(spec.source, **kwargs)
    if spec.weights:
        _load_weights(model, spec.weights)
    if family == "video":
        size = 112 if spec.image_size == 224 else spec.image_size
        shape = (spec.batch_size, 3, VIDEO_FRAMES, size, size)
    else:
        shape = (spec.batch_size, 3, spec.image_size, spec.image_size)
    generator = torch.Generator().manual_seed(0)
    inputs = (torch.randn(*shape, generator=generator),)
    return LoadedModel(model, inputs, "torchvision", f"torchvision {spec.source} ({family}, weights=None)")


def _load_weights(model, path: str) -> None:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ModelLoadError(f"cannot read weights ({exc}). Weights must be a state_dict saved with "
                             "torch.save(model.state_dict(), path).", file=path) from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    try:
        model.load_state_dict(state)
    except Exception as exc:
        raise ModelLoadError(f"weights do not fit this model: {str(exc).splitlines()[0]}", file=path) from None


# ------------------------------------------------------------------ Python files


def _error_line_in(path: str, exc: BaseException) -> int:
    """The last traceback line that lies in `path` (0 when none does)."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno or 0
    return line


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def import_model_file(path: str):
    """Run a model file as a fresh module; ModelLoadError with the line on any failure."""
    name = f"_profiled_model_{abs(hash(path))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelLoadError(f"syntax error: {exc.msg}", file=path, line=exc.lineno or 0,
                             detail=traceback.format_exc()) from None
    except Exception as exc:
        raise ModelLoadError(f"running the file failed: {_short(exc)}", file=path,
                             line=_error_line_in(path, exc), detail=traceback.format_exc()) from None
    return module


def call_file_function(module, path: str, fn_name: str):
    fn = getattr(module, fn_name, None)
    if fn is None or not callable(fn):
        raise ModelLoadError(f"the file defines no {fn_name}() function; a model file needs "
                             "get_model() and get_example_inputs() (see the README); FILE.py:NAME picks "
                             "another model factory.", file=path)
    try:
        return fn()
    except Exception as exc:
        line = _error_line_in(path, exc) or fn.__code__.co_firstlineno
        raise ModelLoadError(f"{fn_name}() raised {_short(exc)}", file=path, line=line,
                             detail=traceback.format_exc()) from None


def _as_input_tuple(value, path: str, what: str, line: int) -> tuple:
    import torch

    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple):
        raise ModelLoadError(f"{what} must return a tuple of inputs, not {type(value).__name__}.",
                             file=path, line=line)
    return value


def _load_python_file(path: str, factory: str = "get_model") -> LoadedModel:
    import torch

    module = import_model_file(path)
    model = call_file_function(module, path, factory)
    get_model_line = getattr(module, factory).__code__.co_firstlineno
    if not (isinstance(model, torch.nn.Module) or callable(model)):
        raise ModelLoadError(f"{factory}() must return an nn.Module or a callable, not {type(model).__name__}.",
                             file=path, line=get_model_line)
    if isinstance(model, torch.jit.ScriptModule):
        return LoadedModel(model, _as_input_tuple(call_file_function(module, path, "get_example_inputs"), path,
                                                  "get_example_inputs()", 0),
                           "python", os.path.basename(path), False, _TORCHSCRIPT_NOTE)
    raw_inputs = call_file_function(module, path, "get_example_inputs")
    inputs = _as_input_tuple(raw_inputs, path, "get_example_inputs()",
                             module.get_example_inputs.__code__.co_firstlineno)
    variants: list[tuple] = []
    if hasattr(module, "get_input_variants"):
        raw = call_file_function(module, path, "get_input_variants")
        line = module.get_input_variants.__code__.co_firstlineno
        if not isinstance(raw, (list, tuple)):
            raise ModelLoadError("get_input_variants() must return a list of input tuples.", file=path, line=line)
        variants = [_as_input_tuple(v, path, "each entry of get_input_variants()", line) for v in raw]
    doc = (module.__doc__ or "").strip().splitlines()
    name = os.path.basename(path) + ("" if factory == "get_model" else f":{factory}")
    description = name + (f": {doc[0]}" if doc else "")
    return LoadedModel(model, inputs, "python", description, variants=variants)


def check_forward(loaded: LoadedModel, source: str) -> None:
    """Call the model once; a failure names the model file's line when there is one."""
    try:
        loaded.model(*loaded.inputs)
    except Exception as exc:
        path = os.path.abspath(split_factory(source)[0]) if loaded.kind == "python" else ""
        line = _error_line_in(path, exc) if path else 0
        shapes = ", ".join(describe_input(x) for x in loaded.inputs)
        raise ModelLoadError(f"the model's forward raised {_short(exc)} on inputs ({shapes}); "
                             "check get_example_inputs() matches what the model expects.",
                             file=source if loaded.kind != "torchvision" else "", line=line,
                             detail=traceback.format_exc()) from None


def describe_input(x) -> str:
    import torch

    if isinstance(x, torch.Tensor):
        return f"{x.dtype}".replace("torch.", "") + "[" + "×".join(str(d) for d in x.shape) + "]"
    return type(x).__name__


# ------------------------------------------------------------------ .pt2 and TorchScript

_TORCHSCRIPT_NOTE = ("TorchScript module: torch.compile does not support ScriptModules, so only the eager "
                     "profile runs. Compile the original eager nn.Module instead (e.g. via a model file).")


def _load_export(path: str, spec: ModelSpec) -> LoadedModel:
    import torch

    try:
        program = torch.export.load(path)
    except Exception as exc:
        raise ModelLoadError(f"not a loadable torch.export archive: {_short(exc)}", file=path,
                             detail=traceback.format_exc()) from None
    inputs = []
    user_inputs = [s for s in program.graph_signature.input_specs
                   if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    for s in user_inputs:
        node = placeholders.get(getattr(s.arg, "name", ""))
        val = node.meta.get("val") if node is not None else None
        if not isinstance(val, torch.Tensor):
            raise ModelLoadError(
                f"cannot build example inputs: input {getattr(s.arg, 'name', '?')} has no tensor shape recorded. "
                "Wrap the program in a model file whose get_example_inputs() returns the inputs.", file=path)
        shape = [int(d) if isinstance(d, int) else int(getattr(d, "node", d).hint or 2)
                 for d in val.shape]
        if val.dtype.is_floating_point:
            inputs.append(torch.randn(*shape, dtype=val.dtype))
        else:
            inputs.append(torch.zeros(*shape, dtype=val.dtype))
    module = program.module()
    return LoadedModel(module, tuple(inputs), "export", f"{os.path.basename(path)} (torch.export program)")


def _load_torchscript(path: str, spec: ModelSpec) -> LoadedModel:
    import torch

    try:
        module = torch.jit.load(path, map_location="cpu")
    except Exception as exc:
        kind = _guess_pickle_kind(path)
        raise ModelLoadError(
            f"not a TorchScript file ({_short(exc)}). {kind}", file=path, detail=traceback.format_exc()) from None
    shape = (spec.batch_size, 3, spec.image_size, spec.image_size)
    return LoadedModel(module, (torch.randn(*shape),), "torchscript",
                       f"{os.path.basename(path)} (TorchScript)", compile_supported=False, note=_TORCHSCRIPT_NOTE)


def _guess_pickle_kind(path: str) -> str:
    try:
        if zipfile.is_zipfile(path):
            return ("It looks like a file from torch.save: a state_dict is loaded as --weights for a "
                    "torchvision model; a pickled whole module would need torch.load(weights_only=False), "
                    "which can run arbitrary code, so it is refused. Save it with torch.export.save or "
                    "write a model file instead.")
    except OSError:
        pass
    return "Supported files: .py model files, .pt2 (torch.export.save) and TorchScript (torch.jit.save)."
