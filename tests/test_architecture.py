"""The shape of the code, read from the source with ast (nothing is imported): every import,
function-level and type-checking ones included, follows the declared layer order, and no module
takes part in an import cycle. The checker is also run on a small tree with injected violations, to show it
sees them."""

from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Lowest first: a module may import modules of its own layer or of the layers before it.
CORE_LAYERS = (
    "core.vocab",
    "core.analysis",
    "core.models",
    "core.capture",
    "core.measure",
    "core.run",
    "core.decide",
    "core.report",
    "core.zoo",
    "core.cli",
)
GUI_LAYERS = (
    "gui.qt_compat",
    "gui.widgets",
    "gui.charts",
    "gui.panels",
    "gui.form",
    "gui.run",
    "gui.window",
    "gui.automation",
    "gui.app",
)
QT = ("PySide6", "pyqtgraph", "shiboken6")


def modules(root: str, tops=("core", "gui")) -> dict[str, str]:
    """Module name → file, for every .py file under the top packages."""
    found = {}
    for top in tops:
        for folder, _, files in os.walk(os.path.join(root, top)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    found[os.path.relpath(path, root)[:-3].replace(os.sep, ".").removesuffix(".__init__")] = path
    return found


def imports_of(path: str, name: str, known: dict[str, str]) -> set[str]:
    """Everything `path` (module `name`) imports, anywhere in it (function-level imports and
    those under `if TYPE_CHECKING:` included: a type checker follows those, and a module that
    needs its importer's type to be read is tied to it all the same): modules of the project,
    and the top-level names of the others (PySide6, ...)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    package = name if path.endswith("__init__.py") else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}
    out = set()
    for n in found:
        if n in known:
            out.add(n)
        elif n.split(".")[0] in QT:
            out.add(n.split(".")[0])
    return out


def layer_of(module: str, layers: tuple[str, ...]) -> int | None:
    return next((i for i, layer in enumerate(layers) if module == layer or module.startswith(layer + ".")), None)


def violations(root: str) -> list[str]:
    """Every import that breaks the layer order, and every import cycle, as sentences."""
    known = modules(root)
    graph = {m: imports_of(p, m, known) - {m} for m, p in known.items()}
    out = []
    for m, deps in sorted(graph.items()):
        for d in sorted(deps):
            if m.startswith("core") and (d.startswith("gui") or d in QT):
                out.append(f"{m} imports {d}: core/ never imports Qt or gui/")
                continue
            for layers in (CORE_LAYERS, GUI_LAYERS):
                mine, theirs = layer_of(m, layers), layer_of(d, layers)
                if mine is not None and theirs is not None and theirs > mine:
                    out.append(f"{m} imports {d}, a layer above it ({layers[theirs]} after {layers[mine]})")
    # a package's __init__ importing its own modules is not a cycle
    inward = {m: {d for d in deps if not d.startswith(m + ".") and d in graph} for m, deps in graph.items()}
    out += [f"import cycle: {' -> '.join(c)}" for c in cycles(inward)]
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    found = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                found.append(stack[stack.index(d) :] + [d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return found


def unlayered(root: str) -> list[str]:
    """Modules of core/ and gui/ in no declared layer (the root packages themselves aside)."""
    return sorted(
        m
        for m in modules(root)
        if m not in ("core", "gui") and layer_of(m, CORE_LAYERS) is None and layer_of(m, GUI_LAYERS) is None
    )


def test_every_import_follows_the_layer_order_and_nothing_is_cyclic():
    assert violations(ROOT) == []


def test_every_module_sits_in_a_declared_layer():
    assert unlayered(ROOT) == []


def test_the_checker_sees_injected_violations(tmp_path):
    """A function-level import of a higher layer, core importing Qt, a cycle, and a cycle closed
    by an import for type checkers alone."""
    files = {
        "core/__init__.py": "",
        "core/vocab/__init__.py": "",
        "core/vocab/words.py": "def f():\n    from core.cli.main import run\n    return run\n",
        "core/cli/__init__.py": "",
        "core/cli/main.py": "from core.vocab import words\nimport PySide6.QtCore\n\ndef run():\n    pass\n",
        "core/analysis/__init__.py": "",
        "core/analysis/a.py": "from . import b\n",
        "core/analysis/b.py": "def g():\n    from core.analysis import a\n",
        "gui/__init__.py": "",
        "gui/widgets/__init__.py": "",
        "gui/widgets/w.py": "from gui.window import main_window\n",
        "gui/window/__init__.py": "",
        "gui/window/main_window.py": "from gui.window import dialog\n",
        "gui/window/dialog.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gui.window.main_window import X\n",
        "gui/stray.py": "",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = violations(str(tmp_path))
    assert "core.vocab.words imports core.cli.main, a layer above it (core.cli after core.vocab)" in found
    assert "core.cli.main imports PySide6: core/ never imports Qt or gui/" in found
    assert "gui.widgets.w imports gui.window.main_window, a layer above it (gui.window after gui.widgets)" in found
    assert any(f.startswith("import cycle: core.analysis.a -> core.analysis.b -> core.analysis.a") for f in found)
    assert unlayered(str(tmp_path)) == ["gui.stray"]
    assert any(
        f.startswith("import cycle: ")
        and set(f.split(": ")[1].split(" -> ")) == {"gui.window.dialog", "gui.window.main_window"}
        for f in found
    ), found
