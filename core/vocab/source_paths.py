"""Where source lives and how to show it: is a file torch's, a library's or the user's own
(whole path components, never string prefixes: `.../site-packages/torchvision` is not torch),
a path shown relative to its package, the source lines around a line."""

from __future__ import annotations

import functools
import linecache
import os
import re
import sysconfig

from core import CORE_DIR

CONTEXT_LINES = 5


def _folder(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def is_under(path: str, folder: str) -> bool:
    """True when `path` lies inside `folder`, compared by whole path components: the torch
    folder does not contain `.../site-packages/torchvision/`."""
    if not path or not folder:
        return False
    p, f = _folder(path), _folder(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


@functools.lru_cache(maxsize=1)
def torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__)


_PACKAGE_DIRS = ("site-packages", "dist-packages")


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[\\/]", path) if p]


def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({paths.get("stdlib", ""), paths.get("platstdlib", "")} - {""})


@functools.lru_cache(maxsize=8192)
def is_library(path: str) -> bool:
    """torch, an installed package (site-packages, dist-packages) or the standard library."""
    if not path or path.startswith("<"):
        return True
    if is_under(path, torch_dir()) or any(d in _parts(path) for d in _PACKAGE_DIRS):
        return True
    return any(is_under(path, d) for d in _stdlib_dirs())


@functools.lru_cache(maxsize=8192)
def is_user_code(path: str) -> bool:
    """The user's own code: not torch, not an installed package, not this project's core/."""
    return not is_library(path) and not is_under(path, CORE_DIR)


@functools.lru_cache(maxsize=8192)
def _torch_or_ours(path: str) -> bool:
    return is_under(path, torch_dir()) or is_under(path, CORE_DIR)


def line_site(frames: list[tuple[str, int]]) -> tuple[str, int] | None:
    """The line a call stack (file, line) frames, outermost first, is charged to when time is
    given per source line: the innermost frame of the user's own code; without one (a model
    that lives in an installed package: timm, torchvision, transformers), the innermost frame
    that is neither torch's nor this project's; else the innermost. Library code is so folded
    under the call site that matters to the user."""
    for file, line in reversed(frames):
        if is_user_code(file):
            return file, line
    for file, line in reversed(frames):
        if file and not file.startswith("<") and not _torch_or_ours(file):
            return file, line
    return frames[-1] if frames else None


def display_path(path: str) -> str:
    """A path as a person reads it: relative to its package for installed code
    (`transformers/models/bert/modeling_bert.py`), relative to the working folder when under
    it, else the file name. Reports keep the full path; this is for showing it."""
    if not path:
        return ""
    parts = _parts(path)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _PACKAGE_DIRS and i + 1 < len(parts):
            return "/".join(parts[i + 1 :])
    try:
        rel = os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive on Windows
        rel = ""
    if rel and not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        return rel
    return os.path.basename(path) or path


def source_line(file: str, line: int) -> str:
    if not file or line <= 0:
        return ""
    return linecache.getline(file, line).strip()


def source_context(file: str, line: int, around: int = CONTEXT_LINES) -> tuple[int, tuple[str, ...]]:
    """(number of the first line, the lines) around `line`, read now so that a report never
    needs the file again. (0, ()) when the file cannot be read."""
    if not file or line <= 0:
        return 0, ()
    lines = linecache.getlines(file)
    if not lines or line > len(lines):
        return 0, ()
    start = max(1, line - around)
    stop = min(len(lines), line + around)
    return start, tuple(s.rstrip("\r\n") for s in lines[start - 1 : stop])


def describe_function(name: str, file: str, first_line: int) -> str:
    """ "name (file:line)", at the `def` line: a code object's first line is that of its first
    decorator (for Hugging Face models often `@auto_docstring`)."""
    line = first_line or 0
    if file and line > 0:
        for offset in range(0, 40):
            text = linecache.getline(file, line + offset).strip()
            if not text:
                if offset and not linecache.getline(file, line + offset + 1):
                    break
                continue
            if re.match(r"(async\s+)?def\s|class\s", text):
                line += offset
                break
            if offset == 0 and not text.startswith("@"):
                break
    where = f"{display_path(file)}:{line}" if file else ""
    return f"{name} ({where})" if where else name
