"""The bundled example models (`resources/models/*.py`) and what a model file offers, read
from the file's text: its docstring, extra factories (`def get_model_<name>(`), whether it
defines `get_input_variants()` (a shape sweep is possible) and which dynamo setting it
needs to compile at all (nn.LSTM/GRU/RNN: allow_rnn).

Nothing here imports or runs a model file: the files are parsed (`ast`) or scanned as text,
so it is safe and fast on the GUI thread. No Qt; any thread.
"""

from __future__ import annotations

import ast
import glob
import os
import re
from dataclasses import dataclass

from core import PROJECT_ROOT as ROOT
from core.models.base import defines_variants, split_factory

EXAMPLES_DIR = os.path.join(ROOT, "resources", "models")

_FACTORY = re.compile(r"^def (get_model_\w+)\s*\(", re.MULTILINE)
_RNN = re.compile(r"\bnn\.(LSTM|GRU|RNN)\s*\(")


@dataclass(frozen=True)
class Example:
    """One entry of the Examples list: `source` is what a job profiles ("FILE.py" or
    "FILE.py:get_model_<name>"), `summary` the docstring's first line."""

    name: str
    source: str
    summary: str
    sweepable: bool


def read_source(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def _docstrings(text: str) -> tuple[str, dict[str, str]]:
    """(module docstring, {function name: docstring}) of top-level functions; ('', {}) when
    the file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return "", {}
    functions = {
        node.name: ast.get_docstring(node) or ""
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    return ast.get_docstring(tree) or "", functions


def _factory_summary(module_doc: str, function_doc: str, name: str) -> str:
    """The factory's own docstring, else the module docstring's paragraph about `name()`."""
    if function_doc:
        return function_doc.strip().splitlines()[0]
    lines = module_doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(name + "("):
            picked = [line.strip()[len(name) + 2 :].strip()]
            for more in lines[i + 1 :]:
                if not more.strip() or more.strip().startswith("get_model"):
                    break
                picked.append(more.strip())
            return " ".join(picked)
    return ""


def examples_in(folder: str = EXAMPLES_DIR) -> list[Example]:
    """Every model file of `folder`, plus one entry per extra `get_model_<name>` factory."""
    found: list[Example] = []
    for path in sorted(glob.glob(os.path.join(folder, "*.py"))):
        if os.path.basename(path).startswith("_"):
            continue
        text = read_source(path)
        module_doc, functions = _docstrings(text)
        first = module_doc.strip().splitlines()[0] if module_doc.strip() else ""
        sweepable = defines_variants(path)
        name = os.path.basename(path)
        found.append(Example(name, path, first, sweepable))
        for factory in _FACTORY.findall(text):
            summary = _factory_summary(module_doc, functions.get(factory, ""), factory) or first
            found.append(Example(f"{name}:{factory}", f"{path}:{factory}", summary, sweepable))
    return found


def is_bundled(source: str) -> bool:
    """True for a file (or FILE.py:NAME) that ships in resources/models: trusted code."""
    path = os.path.abspath(split_factory(source)[0])
    return os.path.dirname(path) == os.path.abspath(EXAMPLES_DIR) and os.path.exists(path)


def needed_dynamo_config(source: str) -> tuple[str, str, str] | None:
    """(key, value, why) of a dynamo setting without which this model file is not compiled
    at all, or None. Today: nn.LSTM/GRU/RNN, which dynamo skips unless allow_rnn=True."""
    path = split_factory(source)[0]
    if not path.endswith(".py"):
        return None
    match = _RNN.search(read_source(path))
    if match is None:
        return None
    return (
        "allow_rnn",
        "True",
        f"This model uses nn.{match.group(1)}: by default dynamo does not trace it (GB0014), the frame "
        "runs eagerly and compiling changes nothing.",
    )
