"""The shape of the code: module-level imports form no cycle, and each layer of gui/ imports
only what sits below it (panels: core, charts, widgets and other panels; charts: core and
widgets; widgets: core). Read from the source with ast: nothing is imported."""
from __future__ import annotations

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALLOWED = {  # gui layer → the packages its modules may import at module level
    "gui.widgets": ("core", "gui.widgets"),
    "gui.charts": ("core", "gui.widgets", "gui.charts"),
    "gui.panels": ("core", "gui.widgets", "gui.charts", "gui.panels"),
}


def _modules() -> dict[str, str]:
    found = {}
    for top in ("core", "gui"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith(".py"):
                    path = os.path.join(folder, name)
                    rel = os.path.relpath(path, ROOT)[:-3].replace(os.sep, ".")
                    found[rel.removesuffix(".__init__")] = path
    return found


def _top_level_imports(path: str, known: dict[str, str]) -> set[str]:
    """Project modules imported at module level (not inside functions or TYPE_CHECKING)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return {n for n in names if n in known}


def test_no_import_cycles():
    known = _modules()
    graph = {m: _top_level_imports(p, known) - {m} for m, p in known.items()}
    for m in graph:  # a package's __init__ importing its own submodules is not a cycle
        graph[m] = {d for d in graph[m] if not d.startswith(m + ".")}
    state: dict[str, int] = {}
    cycles = []

    def visit(m, stack):
        state[m] = 1
        for d in sorted(graph[m]):
            if state.get(d) == 1:
                cycles.append(stack[stack.index(d):] + [d] if d in stack else [m, d])
            elif d not in state:
                visit(d, stack + [d])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, cycles


def test_gui_layers_import_only_what_sits_below_them():
    known = _modules()
    wrong = []
    for module, path in known.items():
        layer = next((l for l in ALLOWED if module == l or module.startswith(l + ".")), None)
        if layer is None:
            continue
        for dep in _top_level_imports(path, known):
            if not any(dep == a or dep.startswith(a + ".") for a in ALLOWED[layer]):
                wrong.append(f"{module} imports {dep}")
    assert not wrong, wrong
