"""Scratch folders of the benchmarks and harnesses: made in the temporary folder and removed when
the process that made them exits (atexit), also after an error. Before, each `python -m
tests.bench gui` round left 4 folders in /tmp (an inductor cache of ~3 MB among them): 280 after
one session's benchmarks."""

from __future__ import annotations

import atexit
import shutil
import tempfile

_made: list[str] = []


def scratch_dir(prefix: str) -> str:
    """A new folder (tempfile.mkdtemp: this user's only) removed at this process's exit; a
    process that ends with `os._exit` (no atexit) calls `remove_scratch()` first."""
    path = tempfile.mkdtemp(prefix=prefix)
    _made.append(path)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def remove_scratch() -> None:
    """Remove every scratch folder this process made, now."""
    while _made:
        shutil.rmtree(_made.pop(), ignore_errors=True)
