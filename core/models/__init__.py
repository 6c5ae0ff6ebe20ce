"""Model sources: torchvision by name, timm by name (`timm:NAME`), Hugging Face by model type or
local folder (`hf:TYPE`, `hf:PATH`), Python model files, torch.export `.pt2` archives and
TorchScript files.

A Python model file defines `get_model()` (an nn.Module or a callable) and
`get_example_inputs()` (a tuple of inputs); optionally `get_input_variants()` (a list of input
tuples, for shape sweeps). `FILE.py:NAME` picks the factory `NAME()` instead of `get_model()`. Every failure
(sys.exit() included) becomes a `ModelLoadError` naming the file, the line and the problem.

A `.pt2` archive is inspected before torch.export.load, which would unpickle, and so run, what a
crafted archive holds: one that would unpickle anything is refused (export_archives).

One module per source: torchvision_models, timm_models, hf_models (with hf_inputs),
python_files, export_archives, torchscript_files; values holds what inputs and outputs may be
(nested containers, keyword calls); catalog lists what can be picked without building anything;
this package holds what they share, `load_model`, which picks one, and `check_source`, which
validates a source before any work.

Every model is called as `model(*inputs)`; keyword inputs go through values.keyword_call.
"""

from __future__ import annotations

import os
import re
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable

from core.vocab.config import ModelSpec

TIMM_PREFIX = "timm:"
HF_PREFIX = "hf:"
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
    TorchScript, with the reason in `note`. An input may be a tensor or any nesting of
    containers of tensors (a list of images for detection models). `input_names`, when not
    empty, names each input ("" for a positional one): a model taking keywords is wrapped in a
    values.keyword_call that receives them positionally."""

    model: Callable
    inputs: tuple
    kind: str  # torchvision | timm | hf | python | export | torchscript
    description: str
    compile_supported: bool = True
    note: str = ""
    variants: list[tuple] = field(default_factory=list)
    input_names: tuple[str, ...] = ()


def split_factory(source: str) -> tuple[str, str]:
    """ "file.py:get_other_model" → ("file.py", "get_other_model"); plain paths get "get_model"."""
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


def source_kind(source: str) -> str:
    """ "timm", "hf", "file" or "torchvision": which loader a model source goes to."""
    if source.startswith(TIMM_PREFIX):
        return "timm"
    if source.startswith(HF_PREFIX):
        return "hf"
    return "file" if is_file_source(source) else "torchvision"


def workload_settings(model, task: str, device: str) -> dict[str, str]:
    """The settings that make a run's workload for this kind of source (a ModelSpec's, the task,
    the device), named as the app's form names them: what results on screen and the next run
    must share to be the same measurement. A model file makes its own inputs: its batch and image
    size are not among them."""
    kind = source_kind(model.source)
    out = {}
    if kind in ("torchvision", "timm", "hf"):
        out["batch size"] = str(model.batch_size)
    if kind in ("torchvision", "timm"):
        out["image size"] = str(model.image_size)
    if kind == "hf":
        out["HF seq len"] = str(model.seq_len)
        out["HF config"] = " ".join(model.hf_config) or "(none)"
    out["task"] = task
    out["device"] = device
    return out


def workload_differences(shown: dict[str, str], next_run: dict[str, str]) -> list[str]:
    """ "batch size 1 (these results: 2)" for each setting the next run would change."""
    return [f"{k} {next_run[k]} (these results: {v})" for k, v in shown.items() if k in next_run and next_run[k] != v]


def is_file_source(source: str) -> bool:
    """A model file path (`timm:` and `hf:` sources are not, even `hf:./folder`)."""
    if source.startswith((TIMM_PREFIX, HF_PREFIX)):
        return False
    source = split_factory(source)[0]
    return (
        os.path.sep in source
        or source.endswith(PY_SUFFIXES + EXPORT_SUFFIXES + TORCHSCRIPT_SUFFIXES)
        or os.path.exists(source)
    )


MODEL_SEED = 0
"""torch is seeded with this before a model is built, so that its random weights are the same in
every run (and in a bundle's repro.py, which seeds the same)."""


def load_model(spec: ModelSpec) -> LoadedModel:
    """Build the model and its example inputs on the CPU (the job moves them to a device), torch
    seeded with MODEL_SEED first."""
    import torch

    source = spec.source
    from core.models import export_archives, python_files, torchscript_files, torchvision_models

    torch.manual_seed(MODEL_SEED)

    kind = source_kind(source)
    if kind == "timm":
        from core.models import timm_models

        return timm_models.load(spec)
    if kind == "hf":
        from core.models import hf_models

        return hf_models.load(spec)
    if kind == "torchvision":
        return torchvision_models.load(spec)
    source, factory = split_factory(source)
    path = os.path.abspath(os.path.expanduser(source))
    if not os.path.exists(path):
        raise ModelLoadError("file not found; check the path.", file=source)
    if path.endswith(PY_SUFFIXES):
        return python_files.load(path, factory)
    if path.endswith(EXPORT_SUFFIXES):
        return export_archives.load(path, spec)
    return torchscript_files.load(path, spec)


def error_line_in(path: str, exc: BaseException) -> int:
    """The last traceback line that lies in `path` (0 when none does)."""
    line = 0
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.abspath(frame.filename) == path:
            line = frame.lineno or 0
    return line


def short_error(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".rstrip(": ")


def exit_error(exc: BaseException, who: str, must: str, path: str, line: int) -> ModelLoadError:
    """The error for model code that exits, sys.exit() / exit() / raise SystemExit, or raises
    another BaseException that is not an Exception (a GeneratorExit, a custom BaseException).

    Without this the job reported "load failed (SystemExit): 0", with no file or line. Not for
    KeyboardInterrupt: a real Ctrl+C (or a SIGINT sent to the job) must stop the job, not be
    reported as a mistake in the model file, so callers let it propagate."""
    if isinstance(exc, SystemExit):
        call = "sys.exit()" if exc.code is None else f"sys.exit({exc.code!r})"
        frames = traceback.extract_tb(exc.__traceback__)
        hint = (
            " (argparse exits when the command line does not match: a model file gets no "
            "command-line arguments of its own)"
            if any(os.path.basename(f.filename) == "argparse.py" for f in frames)
            else ""
        )
        message = f"{who} called {call}{hint}; a model file must {must}, not exit."
    else:
        message = (
            f"{who} raised {short_error(exc)}, which is not an Exception (it stops a program); "
            f"a model file must {must}."
        )
    return ModelLoadError(message, file=path, line=line, detail=traceback.format_exc())


FILE_KINDS = ("python", "export", "torchscript")
_FORWARD_HINTS = {
    "python": "check get_example_inputs() matches what the model expects",
    "export": "the inputs were built from the program's recorded input shapes",
    "torchscript": "TorchScript files get one batch×3×H×W tensor (--batch-size, --image-size)",
    "torchvision": "check --batch-size and --image-size suit this model",
    "timm": "check --batch-size and --image-size suit this model",
    "hf": "check --seq-len, --batch-size and the --hf-config overrides suit this model",
}


def check_forward(loaded: LoadedModel, source: str) -> None:
    """Call the model once; a failure names the model file's line when there is one. Outputs
    may be anything (tensors, tuples, lists, dicts, ModelOutputs): they are not inspected."""
    try:
        loaded.model(*loaded.inputs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        path = os.path.abspath(split_factory(source)[0]) if loaded.kind == "python" else ""
        line = error_line_in(path, exc) if path else 0
        file = source if loaded.kind in FILE_KINDS else ""
        if not isinstance(exc, Exception):  # sys.exit() in forward
            raise exit_error(exc, "the model's forward", "return outputs from forward", file, line) from None
        shapes = ", ".join(describe_inputs(loaded))
        hint = _FORWARD_HINTS.get(loaded.kind, "check the inputs match what the model expects")
        raise ModelLoadError(
            f"the model's forward raised {short_error(exc)} on inputs ({shapes}); {hint}.",
            file=file,
            line=line,
            detail=traceback.format_exc(),
        ) from None


def describe_input(x) -> str:
    """One input as text: `float32[2×3×224×224]`, `list of 2 float32[3×224×224]`, ..."""
    from core.models.values import describe_value

    return describe_value(x)


def describe_inputs(loaded: LoadedModel) -> tuple[str, ...]:
    """Every input as text, named when the model takes it by keyword (`input_ids=int64[1×128]`):
    what ModelLoaded.input_shapes carries."""
    names = loaded.input_names or ("",) * len(loaded.inputs)
    return tuple(f"{name}={describe_input(x)}" if name else describe_input(x) for name, x in zip(names, loaded.inputs))


def normalize_source(source: str) -> str:
    """The source as a job receives it: file paths and hf: folders made absolute (a job may run
    from another folder), names unchanged."""
    kind = source_kind(source)
    if kind == "file":
        path, factory = split_factory(source)
        return os.path.abspath(path) + (f":{factory}" if factory != "get_model" else "")
    if kind == "hf":
        from core.models import hf_config

        parsed = hf_config.parse_source(source)
        if parsed.is_folder:
            return HF_PREFIX + parsed.target + (f"#{parsed.head}" if parsed.head else "")
    return source


def check_source(spec: ModelSpec, device: str = "cpu", torchvision_names: Sequence[str] | None = None) -> None:
    """Validate a model source before any work, cheaply (no model is built): ModelLoadError
    saying what is wrong and what to do (a missing file, an unknown name with close matches,
    a missing package with the command that installs it, a Hugging Face config that would not
    fit in memory). `torchvision_names`: torchvision's model names when the caller has them
    (core.run.torch_info's cache): a name not among them is refused without importing torchvision."""
    kind = source_kind(spec.source)
    if kind == "timm":
        from core.models import timm_models

        timm_models.check(spec)
    elif kind == "hf":
        from core.models import hf_models

        hf_models.check(spec, device)
    elif kind == "torchvision":
        from core.models import torchvision_models

        torchvision_models.check(spec, torchvision_names)
    elif not os.path.exists(split_factory(spec.source)[0]):
        raise ModelLoadError(f"model file {split_factory(spec.source)[0]} not found; check the path.")
    elif os.path.isdir(split_factory(spec.source)[0]):  # a job ran and failed reading it as TorchScript
        folder = split_factory(spec.source)[0]
        raise ModelLoadError(
            f"{folder} is a folder, not a model file: name a .py model file, a .pt2 or a TorchScript file in it, "
            f"or a Hugging Face checkpoint folder as hf:{folder}."
        )
    else:
        from core.models.python_files import check_file

        check_file(*split_factory(spec.source))


def close_matches(name: str, names: list[str], n: int = 10) -> list[str]:
    """Names like `name`: spelling neighbours first, then names containing it."""
    import difflib

    low = name.lower()
    found = difflib.get_close_matches(low, names, n=n, cutoff=0.6)
    found += [x for x in names if len(low) >= 3 and low in x.lower() and x not in found]
    return found[:n]


def require_package(package: str, needed_for: str):
    """Import and return `package`, or raise ModelLoadError naming it and the command that
    installs it into the environment this runs in (`.venv/bin/pip install timm`)."""
    import importlib

    try:
        return importlib.import_module(package)
    except ImportError as exc:
        raise ModelLoadError(
            f"{needed_for} needs the Python package {package!r}, which is not installed "
            f"here ({short_error(exc)}). Install it with: {pip_command(package)}"
        ) from None


def pip_command(package: str) -> str:
    """The command that installs `package` into this interpreter's environment, shown relative to
    the working folder when it lies under it (`.venv/bin/pip install timm`)."""
    import sys

    bindir = os.path.dirname(sys.executable)
    pip = os.path.join(bindir, "pip.exe" if os.name == "nt" else "pip")
    if sys.prefix == getattr(sys, "base_prefix", sys.prefix) or not os.path.exists(pip):
        return f"{sys.executable} -m pip install {package}"
    try:
        rel = os.path.relpath(pip)
    except ValueError:
        rel = pip
    return f"{rel if not rel.startswith(os.pardir) else pip} install {package}"


TORCHSCRIPT_NOTE = (
    "TorchScript module: torch.compile does not support ScriptModules, so only the eager "
    "profile runs. Compile the original eager nn.Module instead (e.g. via a model file)."
)


def torchvision_model_names() -> list[str]:
    """Every torchvision model name (imports torchvision)."""
    from core.models.torchvision_models import model_names

    return model_names()
