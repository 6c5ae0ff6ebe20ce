"""What every model source shares (core.models and its modules import it; it imports none of
them): the source prefixes and file suffixes, the error every failure becomes, a loaded model,
and the helpers that word errors and find close names."""

from __future__ import annotations

import os
import re
import traceback
from dataclasses import dataclass, field
from typing import Callable

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
