"""The main window's helper modules see it through gui.window.app_window.AppWindow: they use no
member the protocol does not declare, none imports the window itself, and a live window has
every member declared (set in its __init__, not later by a helper)."""

from __future__ import annotations

import ast
import glob
import os
import re

from tests.test_architecture import ROOT

HELPERS = sorted(
    p
    for p in glob.glob(os.path.join(ROOT, "gui", "window", "*.py"))
    if os.path.basename(p) not in ("main_window.py", "app_window.py", "__init__.py")
)
WINDOW_NAMES = ("window", "w")  # how the helpers name the window they are handed


def protocol_members() -> set[str]:
    from gui.window.app_window import AppWindow

    return set(AppWindow.__annotations__) | {n for n in vars(AppWindow) if not n.startswith("_")}


def used_members(path: str) -> dict[str, int]:
    """The members a helper reads or writes on the window it is handed: `window.x`, `w.x`,
    `self.window.x` or `self._window.x` (x → the line of its first use)."""
    tree = ast.parse(open(path, encoding="utf-8").read())
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        v = node.value
        named = isinstance(v, ast.Name) and v.id in WINDOW_NAMES
        held = (
            isinstance(v, ast.Attribute)
            and v.attr in ("window", "_window")
            and isinstance(v.value, ast.Name)
            and v.value.id == "self"
        )
        if named or held:
            found.setdefault(node.attr, node.lineno)
    return found


def test_the_helpers_use_only_what_the_protocol_declares():
    declared = protocol_members()
    stray = [
        f"{os.path.relpath(p, ROOT)}:{line} uses window.{name}"
        for p in HELPERS
        for name, line in used_members(p).items()
        if name not in declared
    ]
    assert stray == []


def test_no_helper_imports_the_window_it_is_handed():
    for path in HELPERS:
        text = open(path, encoding="utf-8").read()
        assert "gui.window.main_window" not in text, path
        assert not re.search(r"\bMainWindow\b", text), path


def test_the_checker_sees_a_member_outside_the_protocol(tmp_path):
    helper = tmp_path / "helper.py"
    helper.write_text("def f(window):\n    window.status_label.setText('x')\n    window.secret_state = 1\n")
    used = used_members(str(helper))
    assert set(used) - protocol_members() == {"secret_state"}


def test_a_live_window_has_every_declared_member(window):
    from gui.window.app_window import AppWindow

    assert isinstance(window, AppWindow)
    missing = [name for name in AppWindow.__annotations__ if not hasattr(window, name)]
    assert missing == []
    # the state is declared in the window's __init__, not made later by a helper
    for name in ("tune_run", "compare_dialog", "run_folder", "last_error", "run_starting", "session_sections"):
        assert name in vars(window), name
