"""Model sources: torchvision by name, Python model files, torch.export `.pt2` archives and
TorchScript files.

A Python model file defines `get_model()` (an nn.Module or a callable) and
`get_example_inputs()` (a tuple of inputs); optionally `get_input_variants()` (a list of input
tuples, for shape sweeps). `FILE.py:NAME` picks the factory `NAME()` instead of `get_model()`. Every failure
(sys.exit() included) becomes a `ModelLoadError` naming the file, the line and the problem.

A `.pt2` archive is inspected before torch.export.load, which would unpickle, and so run, what a
crafted archive holds: one that would unpickle anything is refused (export_archives).

One module per source: torchvision_models, python_files, export_archives, torchscript_files;
this package holds what they share and `load_model`, which picks one.
"""
from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field
from typing import Callable

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
    from core.models import export_archives, python_files, torchscript_files, torchvision_models

    if not is_file_source(source):
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
        hint = (" (argparse exits when the command line does not match: a model file gets no "
                "command-line arguments of its own)"
                if any(os.path.basename(f.filename) == "argparse.py" for f in frames) else "")
        message = f"{who} called {call}{hint}; a model file must {must}, not exit."
    else:
        message = (f"{who} raised {short_error(exc)}, which is not an Exception (it stops a program); "
                   f"a model file must {must}.")
    return ModelLoadError(message, file=path, line=line, detail=traceback.format_exc())


def check_forward(loaded: LoadedModel, source: str) -> None:
    """Call the model once; a failure names the model file's line when there is one."""
    try:
        loaded.model(*loaded.inputs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        path = os.path.abspath(split_factory(source)[0]) if loaded.kind == "python" else ""
        line = error_line_in(path, exc) if path else 0
        if not isinstance(exc, Exception):  # sys.exit() in forward
            raise exit_error(exc, "the model's forward", "return outputs from forward",
                              source if loaded.kind != "torchvision" else "", line) from None
        shapes = ", ".join(describe_input(x) for x in loaded.inputs)
        raise ModelLoadError(f"the model's forward raised {short_error(exc)} on inputs ({shapes}); "
                             "check get_example_inputs() matches what the model expects.",
                             file=source if loaded.kind != "torchvision" else "", line=line,
                             detail=traceback.format_exc()) from None


def describe_input(x) -> str:
    import torch

    if isinstance(x, torch.Tensor):
        return f"{x.dtype}".replace("torch.", "") + "[" + "×".join(str(d) for d in x.shape) + "]"
    return type(x).__name__


TORCHSCRIPT_NOTE = ("TorchScript module: torch.compile does not support ScriptModules, so only the eager "
                     "profile runs. Compile the original eager nn.Module instead (e.g. via a model file).")


def torchvision_model_names() -> list[str]:
    """Every torchvision model name (imports torchvision)."""
    from core.models.torchvision_models import model_names

    return model_names()
