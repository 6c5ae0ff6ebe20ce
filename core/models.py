"""Model sources: torchvision by name, Python model files, torch.export `.pt2` archives and
TorchScript files.

A Python model file defines `get_model()` (an nn.Module or a callable) and
`get_example_inputs()` (a tuple of inputs); optionally `get_input_variants()` (a list of input
tuples, for shape sweeps). `FILE.py:NAME` picks the factory `NAME()` instead of `get_model()`. Every failure
(sys.exit() included) becomes a `ModelLoadError` naming the file, the line and the problem.

A `.pt2` archive is inspected before torch.export.load, which would unpickle, and so run, what a
crafted archive holds: one that would unpickle anything is refused (check_export_archive).
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
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import time, typically script code
        raise _exit_error(exc, "running the file", "define get_model() and get_example_inputs() "
                          "(put script code under `if __name__ == \"__main__\":`)", path,
                          _error_line_in(path, exc)) from None
    return module


def _exit_error(exc: BaseException, who: str, must: str, path: str, line: int) -> ModelLoadError:
    """The error for model code that exits, sys.exit() / exit() / raise SystemExit, or raises
    another BaseException that is not an Exception (a GeneratorExit, a custom BaseException).

    Without this the job reported "load failed (SystemExit): 0", with no file or line. Not for
    KeyboardInterrupt: a real Ctrl+C (or a SIGINT sent to the job) must stop the job, not be
    reported as a mistake in the model file, so callers let it propagate."""
    if isinstance(exc, SystemExit):
        call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        frames = traceback.extract_tb(exc.__traceback__)
        hint = (" (argparse exits when the command line does not match: a model file gets no "
                "command-line arguments of its own)"
                if any(os.path.basename(f.filename) == "argparse.py" for f in frames) else "")
        message = f"{who} called {call}{hint}; a model file must {must}, not exit."
    else:
        message = (f"{who} raised {_short(exc)}, which is not an Exception (it stops a program); "
                   f"a model file must {must}.")
    return ModelLoadError(message, file=path, line=line, detail=traceback.format_exc())


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
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() and the like: a ModelLoadError with the line
        line = _error_line_in(path, exc) or fn.__code__.co_firstlineno
        raise _exit_error(exc, f"{fn_name}()", _FUNCTION_MUST.get(fn_name, "return a model"),
                          path, line) from None


_FUNCTION_MUST = {"get_example_inputs": "return a tuple of inputs from get_example_inputs()",
                  "get_input_variants": "return a list of input tuples from get_input_variants()"}


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
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        path = os.path.abspath(split_factory(source)[0]) if loaded.kind == "python" else ""
        line = _error_line_in(path, exc) if path else 0
        if not isinstance(exc, Exception):  # sys.exit() in forward
            raise _exit_error(exc, "the model's forward", "return outputs from forward",
                              source if loaded.kind != "torchvision" else "", line) from None
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

    check_export_archive(path)  # before torch.export.load, which would unpickle what it finds
    try:
        program = torch.export.load(path)
    except Exception as exc:
        raise ModelLoadError(f"not a loadable torch.export archive: {_short(exc)}", file=path,
                             detail=traceback.format_exc()) from None
    _check_operator_arguments(program, path)
    inputs, keywords = _export_inputs(program, path)
    try:
        module = program.module()
    except Exception as exc:
        raise ModelLoadError(f"the exported program cannot be turned into a module: {_short(exc)}", file=path,
                             detail=traceback.format_exc()) from None
    if keywords:
        module = _keyword_call(module, keywords)
    return LoadedModel(module, inputs, "export", f"{os.path.basename(path)} (torch.export program)")


def _check_operator_arguments(program, path: str) -> None:
    """Refuse a loaded program that passes a Python callable other than an operator to a graph node.

    torch.export.save only writes operators (OpOverload, HigherOrderOperator) as arguments, but the
    loader resolves an "as_operator" argument by attribute lookup from the torch module, so a
    crafted program can hand e.g. torch.os.system to a higher-order operator that calls its function
    argument. (torch's verifier checks node targets, not arguments; today only the code generator
    failing on such a callable's repr stops it, so this does not rely on that.)"""
    import torch
    from torch.fx.node import map_aggregate

    allowed = (torch.fx.Node, torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)
    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            found: list = []
            map_aggregate((node.args, node.kwargs),
                          lambda a: found.append(a) if callable(a) and not isinstance(a, allowed) else None)
            if found:
                raise ModelLoadError(
                    f"refused to run: graph node {node.name} passes {found[0]!r}, a Python callable that is not an "
                    f"operator, to {node.target}; torch.export.save never writes that, and running it could run "
                    f"arbitrary code. {_PT2_REFUSE_HINT}", file=path)


def _export_inputs(program, path: str) -> tuple[tuple, tuple[str, ...]]:
    """Example inputs for an exported program, built from its recorded user inputs: a tensor of
    the recorded shape and dtype for each tensor input (random for floating point and complex
    dtypes; zeros otherwise, which are valid indices, masks and counts), the recorded value for
    each constant, the hint for each symbolic int. A symbolic (dynamic) dimension takes the size
    it was exported with, or else the smallest size its range allows (at least 2). Returns the
    inputs in call order and the names of the trailing ones that are keyword arguments."""
    import torch
    import torch.export.graph_signature as gs
    from torch.utils import _pytree

    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    values = []
    for s in program.graph_signature.input_specs:
        if s.kind != gs.InputKind.USER_INPUT:
            continue
        arg = s.arg
        if isinstance(arg, gs.ConstantArgument):
            values.append(arg.value)
            continue
        node = placeholders.get(getattr(arg, "name", ""))
        val = node.meta.get("val") if node is not None else None
        if isinstance(arg, gs.TensorArgument) and isinstance(val, torch.Tensor):
            shape = [_size_hint(d, program) for d in val.shape]
            if val.dtype.is_floating_point or val.dtype.is_complex:
                values.append(torch.randn(*shape, dtype=val.dtype))
            else:
                values.append(torch.zeros(*shape, dtype=val.dtype))
        elif isinstance(arg, gs.SymIntArgument) and isinstance(val, (int, torch.SymInt)):
            values.append(_size_hint(val, program))
        elif isinstance(arg, (gs.SymFloatArgument, gs.SymBoolArgument)) and isinstance(
                val, (float, bool, torch.SymFloat, torch.SymBool)):
            hint = val.node.hint if isinstance(val, (torch.SymFloat, torch.SymBool)) else val
            if hint is None:
                hint = 1.0 if isinstance(arg, gs.SymFloatArgument) else True
            values.append(float(hint) if isinstance(arg, gs.SymFloatArgument) else bool(hint))
        else:
            raise ModelLoadError(
                f"cannot build example inputs: input {getattr(arg, 'name', '?')} ({type(arg).__name__}) has no "
                "tensor shape or value recorded. Wrap the program in a model file whose get_example_inputs() "
                "returns the inputs.", file=path)
    in_spec = program.call_spec.in_spec
    if in_spec is None:
        return tuple(values), ()
    try:
        args, kwargs = _pytree.tree_unflatten(values, in_spec)
    except Exception as exc:
        raise ModelLoadError(f"cannot build example inputs: the program's inputs do not match its recorded "
                             f"call signature ({_short(exc)}). Wrap the program in a model file.", file=path) from None
    return tuple(args) + tuple(kwargs.values()), tuple(kwargs)


def _size_hint(d, program) -> int:
    """A concrete size for a dimension: an int as is; a symbolic one the size it was exported with
    (its hint), or else the lower end of its recorded range, at least 2 (0 and 1 are special-cased
    by export, so a dynamic dimension usually starts at 2)."""
    if isinstance(d, int):
        return int(d)
    node = getattr(d, "node", None)
    hint = getattr(node, "hint", None)
    if hint is not None:
        return int(hint)
    expr = getattr(node, "expr", None)
    bounds = program.range_constraints.get(expr) if expr is not None else None
    if bounds is not None:
        lower = int(bounds.lower) if getattr(bounds.lower, "is_Integer", False) else 2
        upper = int(bounds.upper) if getattr(bounds.upper, "is_Integer", False) else max(lower, 2)
        return min(max(lower, 2), upper)
    return 2


def _keyword_call(module, names: tuple[str, ...]):
    """Wrap an exported module whose program was exported with keyword arguments so it can be
    called as model(*inputs): the trailing len(names) inputs are passed as those keywords (the
    module rejects them positionally). Kept as inputs rather than bound so the job moves them to
    the device and shows their shapes."""
    import torch

    class ExportedWithKeywords(torch.nn.Module):
        """model(*args, *keyword_values) → program(*args, **dict(zip(names, keyword_values)))."""

        def __init__(self):
            super().__init__()
            self.program = module
            self.keyword_names = names

        def forward(self, *inputs):
            split = len(inputs) - len(self.keyword_names)
            return self.program(*inputs[:split], **dict(zip(self.keyword_names, inputs[split:])))

    return ExportedWithKeywords()


# What torch 2.14's torch.export.load (torch/export/pt2_archive/_package.py: load_pt2) reads from an
# archive, relative to its root folder, and how. Anything else is refused: a layout this check does
# not know is a layout it cannot vouch for.
_PT2_FIXED_ENTRIES = {"archive_format", "archive_version", "byteorder", ".data/version", ".data/serialization_id"}
_PT2_REFUSE_HINT = ("Re-export it with torch.export.save from a trusted source, or wrap the model in a "
                    "model file (get_model / get_example_inputs) instead.")


def check_export_archive(path: str) -> None:
    """Refuse a .pt2 archive that torch.export.load would run code from, before calling it.

    torch.export.load unpickles with weights_only=False every weight or tensor constant whose
    entry in data/weights/*_weights_config.json or data/constants/*_constants_config.json says
    "use_pickle": true (tensor subclasses), loads constants named custom_obj_* (TorchScript
    unpickler) and opaque_obj_* (pickle.loads) whatever their flag, retries with
    weights_only=False any torch.save payload (data/sample_inputs/*.pt, legacy
    data/weights/NAME.pt and data/constants/NAME.pt) that weights_only=True cannot read, loads the
    AOTInductor shared libraries under data/aotinductor/, imports the modules named by enum and
    defaultdict contexts in the program's pytree specs, and, when the archive fails to
    deserialize, falls back to the torch 2.7 zip format (serialized_*.pt at the zip root, all
    unpickled with the same fallback). A crafted archive ran a shell command through the first.

    So: the zip must hold one root folder with only the entries torch.export.save writes; every
    config entry must say use_pickle false and name a raw tensor; every torch.save payload must
    load with weights_only=True (checked here, with weights_only=True); no AOTInductor files; no
    import of a module that is not already loaded. A plain torch.export.save archive passes.
    ModelLoadError names the file, the entry and why otherwise."""

    def refuse(entry: str, why: str) -> ModelLoadError:
        return ModelLoadError(f"refused to load: {entry} {why}. {_PT2_REFUSE_HINT}", file=path)

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(f"not a torch.export archive ({exc}); torch.export.save writes a zip archive.",
                             file=path) from None
    with archive:
        infos = archive.infolist()
        if not infos:
            raise refuse("the archive", "is empty")
        names: set[str] = set()
        for info in infos:
            name = info.filename
            # Python's zipfile cuts a name at a NUL byte and decodes it; torch's reader does
            # neither: only plain names are unambiguous to both.
            if name != info.orig_filename or not (name.isascii() and name.isprintable()):
                raise refuse(f"entry {info.orig_filename!r}", "has a name that is not plain ASCII, so this check "
                             "and torch could read different entries")
            if name in names:
                raise refuse(f"entry {name!r}", "appears twice, so this check and torch could read different copies")
            names.add(name)
        root = infos[0].filename.split("/", 1)[0]  # torch's reader takes the first entry's folder
        if "/" not in infos[0].filename or not root:
            raise refuse(f"entry {infos[0].filename!r}", "is not inside a folder, so this is not the "
                         "layout torch.export.save writes (a folder holding archive_format, models/, data/)")
        entries: dict[str, zipfile.ZipInfo] = {}
        for info in infos:
            if not info.filename.startswith(root + "/"):
                raise refuse(f"entry {info.filename!r}", f"lies outside the archive folder {root}/ (the older "
                             "torch.export zip format kept pickled payloads there), so this is not the layout "
                             "torch.export.save writes")
            entries[info.filename[len(root) + 1:]] = info

        def read(rel: str) -> bytes:
            return archive.read(entries[rel])

        fmt = read("archive_format") if "archive_format" in entries else b""
        if fmt != b"pt2":
            raise refuse("the archive", "has no archive_format entry saying pt2, so it is not an archive "
                         "written by torch.export.save (an older torch.export format is unpickled on load)")
        from torch.export.pt2_archive.constants import ARCHIVE_VERSION_VALUE

        version = read("archive_version").decode(errors="replace") if "archive_version" in entries else "none"
        if version != ARCHIVE_VERSION_VALUE:
            raise refuse("the archive", f"has archive version {version!r}; this torch reads version "
                         f"{ARCHIVE_VERSION_VALUE!r} only")
        for rel in entries:
            _check_pt2_entry(rel, read, refuse)


def _check_pt2_entry(rel: str, read: Callable[[str], bytes], refuse: Callable[[str, str], ModelLoadError]) -> None:
    """One entry of a .pt2 archive (its path below the root folder); see check_export_archive."""
    if rel in _PT2_FIXED_ENTRIES or rel.startswith("extra/"):
        return  # fixed metadata; extra files are read as text
    if rel.startswith("data/aotinductor/"):
        raise refuse(f"entry {rel!r}", "is an AOTInductor artifact: torch.export.load loads its compiled shared "
                     "library, which runs native code")
    if rel.startswith("models/"):
        if not rel.endswith(".json"):
            raise refuse(f"entry {rel!r}", "is not a program (models/NAME.json), and torch.export.load reads every "
                         "file under models/ as one")
        _check_program_imports(rel, read(rel), refuse)
        return
    if rel.startswith("data/weights/") or rel.startswith("data/constants/"):
        leaf = rel.split("/", 2)[2]
        if rel.endswith(("_weights_config.json", "_constants_config.json")):
            _check_payload_config(rel, read(rel), refuse)
            return
        if rel.endswith(".pt"):  # the legacy NAME.pt payload, loaded in place of the config
            _check_weights_only(rel, read(rel), refuse)
            return
        if "/" not in leaf and leaf.startswith("weight_" if rel.startswith("data/weights/") else "tensor_"):
            return  # raw tensor bytes
        if leaf.startswith(("custom_obj_", "opaque_obj_")):
            raise refuse(f"entry {rel!r}", "is a pickled object (constants custom_obj_* and opaque_obj_* are "
                         "unpickled on load), which could run arbitrary code")
        raise refuse(f"entry {rel!r}", "is not part of the layout torch.export.save writes")
    if rel.startswith("data/sample_inputs/") and rel.endswith(".pt"):
        _check_weights_only(rel, read(rel), refuse)
        return
    raise refuse(f"entry {rel!r}", "is not part of the layout torch.export.save writes")


def _check_payload_config(rel: str, data: bytes, refuse) -> None:
    """A weights or constants config: every entry must be a raw tensor (use_pickle false)."""
    import json

    try:
        config = json.loads(data)["config"]
        items = list(config.items())
    except Exception:
        raise refuse(f"entry {rel!r}", "is not a readable payload config") from None
    constants = rel.endswith("_constants_config.json")
    for fqn, meta in items:
        if not isinstance(meta, dict) or not isinstance(meta.get("path_name"), str):
            raise refuse(f"entry {rel!r}", f"has an unreadable entry for {fqn!r}")
        path_name, use_pickle = meta["path_name"], meta.get("use_pickle")
        what = f"entry {rel!r} for {fqn!r} ({path_name})"
        if constants and path_name.startswith("custom_obj_"):
            raise refuse(what, "is a TorchScript custom object, which torch.export.load unpickles and which "
                         "could run arbitrary code")
        if constants and path_name.startswith("opaque_obj_"):
            raise refuse(what, "is a Python object that torch.export.load unpickles with pickle.loads, which "
                         "could run arbitrary code")
        if use_pickle is not False:
            raise refuse(what, f"says \"use_pickle\": {json.dumps(use_pickle)}: torch.export.load would unpickle it "
                         "with torch.load(weights_only=False), which could run arbitrary code (genuine archives "
                         "use this for tensor subclasses)")
        if constants and not path_name.startswith("tensor_"):
            raise refuse(what, "is not a raw tensor constant (tensor_*)")


def _check_weights_only(rel: str, data: bytes, refuse) -> None:
    """A torch.save payload that torch.export.load reads with weights_only=True and, when that fails,
    again with weights_only=False: it must load with weights_only=True (tried here, which runs no
    code), so the fallback never happens."""
    import io

    import torch

    if not data:
        return  # torch reads an empty payload as {}
    try:
        torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:
        lines = str(exc).splitlines()
        # torch's message advises retrying with weights_only=False or allowlisting the global: keep
        # only what it found (the global it refused, or the opcode it does not support)
        found = next((t for t in lines if "GLOBAL " in t or t.strip().startswith("Unsupported")), "")
        reason = found.split(". Please")[0].strip().rstrip(".") or type(exc).__name__
        raise refuse(f"entry {rel!r}", f"cannot be read with torch.load(weights_only=True) ({reason}); "
                     "torch.export.load would retry with weights_only=False, which could run arbitrary code") \
            from None


def _check_program_imports(rel: str, data: bytes, refuse) -> None:
    """A program's JSON: torch imports the module named by each enum ("__enum__") and defaultdict
    ("default_factory_module") context in its pytree specs, which sit in JSON strings inside the
    JSON. Importing a module that is not loaded yet runs its code, so that is refused."""
    import json

    try:
        document = json.loads(data)
    except Exception:
        raise refuse(f"entry {rel!r}", "is not readable JSON") from None
    stack = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            module = None
            if "__enum__" in value:
                module = str(value.get("fqn", "")).partition(":")[0]
            elif "default_factory_module" in value:
                module = str(value.get("default_factory_module", ""))
            if module is not None and module not in sys.modules:
                raise refuse(f"entry {rel!r}", f"makes torch import the module {module!r}, which is not loaded; "
                             "importing it would run its code")
            stack.extend((v, depth) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth) for v in value)
        elif isinstance(value, str) and depth < 8 and value.lstrip()[:1] in ("{", "["):
            try:
                stack.append((json.loads(value), depth + 1))
            except ValueError:
                pass


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
