"""File → Profile a script…: the script window runs a real script twice in child processes, shows
its compiled functions live and then compiled against eager, remembers the form per script,
asks before a script's first run, refuses bad input with a message, and stops the script when
closed."""

from __future__ import annotations

import os
import textwrap

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from gui.form import trust

SCRIPT = """\
import sys
import torch

print("args", sys.argv[1:])
step = torch.compile(lambda x: (x @ x).relu(), backend="eager")
for i in range(int(sys.argv[1])):
    step(torch.randn(32, 32))
"""


@pytest.fixture
def script_window(qtbot, settings):
    from gui.window.script_window import ScriptWindow

    win = ScriptWindow(settings, backends=("eager", "aot_eager", "inductor"))
    qtbot.addWidget(win)
    win.show()
    yield win
    win.close()


def write(tmp_path, text=SCRIPT, name="loop.py") -> str:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_a_trusted_script_runs_twice_and_its_function_is_compared_then_saved(qtbot, script_window, settings, tmp_path):
    w = script_window
    path = write(tmp_path)
    trust.remember(settings, path)
    w.set_script(path)
    w.arguments.setText("30")
    with qtbot.waitSignal(w.sig_finished, timeout=180_000) as finished:
        assert w.run()
        assert not w.run_button.isEnabled() and w.cancel_button.isEnabled()
    result = finished.args[0]
    assert result is not None and [f.name for f in result.functions] == ["<lambda>"]
    assert w.view.model.rowCount() == 1
    row = [w.view.model.data(w.view.model.index(0, c)) for c in range(w.view.model.columnCount())]
    assert row[0] == "<lambda> (loop.py:5)" and row[1] == "30 / 30"
    f = result.functions[0]
    assert row[5] == f.verdict_cell() and row[6] == f.payback_cell()  # core's words, as they are
    tip = w.view.model.data(w.view.model.index(0, 6), Qt.ItemDataRole.ToolTipRole)
    assert tip == f.payback_line()
    iteration = w.view.model.data(w.view.model.index(0, 4), Qt.ItemDataRole.ToolTipRole)
    assert iteration == f.iteration_line() and iteration.startswith("per iteration")
    assert "args ['30']" in w.view.output.toPlainText()
    assert "1 compiled function(s)" in w.view.summary.toPlainText()
    assert w.save_button.isEnabled() and w.save_report(str(tmp_path / "report"))
    assert os.path.exists(tmp_path / "report" / "functions.csv")


BREAKING = """\
import torch


def preprocess(x):
    x = x * 2
    print("side effect")
    return x.relu()


step = torch.compile(preprocess, backend="eager")
for i in range(12):
    step(torch.randn(8 + i % 2, 4))
"""


def test_the_graph_breaks_tab_is_the_main_windows_view_with_a_row_per_function(
    qtbot, script_window, settings, tmp_path
):
    """The script's breaks and recompiles fill the same Graph breaks view the main window shows for
    configs: each function a row, torch's reason at the script's own line, its source in the details."""
    from gui.panels.graph_breaks import COST_COLUMN, GraphBreaksPanel

    w = script_window
    path = write(tmp_path, BREAKING, "breaking.py")
    trust.remember(settings, path)
    w.set_script(path)
    w.baseline.setChecked(False)
    with qtbot.waitSignal(w.sig_finished, timeout=180_000) as finished:
        assert w.run()
    (f,) = finished.args[0].functions
    panel = w.view.breaks
    assert isinstance(panel, GraphBreaksPanel)
    model = panel.model
    assert model.headerData(0, Qt.Orientation.Horizontal) == "Function" and panel.table.isColumnHidden(COST_COLUMN)
    assert model.rowCount() == len(f.compiled.graph_breaks) == 1
    gb = model.graph_break(0)
    assert model.config_label(0) == "preprocess (breaking.py:10)"
    assert gb.line == 6 and gb.file.endswith("breaking.py") and "print" in (gb.explanation + gb.reason)
    assert panel.select_row(0) and 'print("side effect")' in panel.detail.toPlainText()
    recompiles = panel.compile_panel.recompile_model
    assert recompiles.rowCount() == len(f.compiled.recompiles) >= 1
    assert recompiles.headerData(0, Qt.Orientation.Horizontal) == "Function"


def test_the_form_is_remembered_per_script(qtbot, settings, tmp_path):
    from gui.window.script_window import ScriptWindow

    first, second = write(tmp_path, name="a.py"), write(tmp_path, name="b.py")
    w = ScriptWindow(settings, backends=("eager",))
    qtbot.addWidget(w)
    w.set_script(first)
    w.arguments.setText("--epochs 2")
    w.backend.setCurrentText("eager")
    w._remember(first)
    w.set_script(second)
    w.arguments.setText("--other")
    w._remember(second)
    again = ScriptWindow(settings, backends=("eager",))
    qtbot.addWidget(again)
    assert again.script.text() == second and again.arguments.text() == "--other"  # the last one
    again.set_script(first)
    assert again.arguments.text() == "--epochs 2" and again.backend.currentText() == "eager"


def test_a_new_script_asks_first_and_cancel_runs_nothing(qtbot, script_window, monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(trust, "confirm_python_file", lambda parent, settings, path: asked.append(path) or False)
    path = write(tmp_path)
    script_window.set_script(path)
    assert not script_window.run()
    assert asked == [path] and not script_window.controller.busy
    assert "Not run: loop.py" in script_window.statusBar().currentMessage()


@pytest.mark.parametrize(
    "script, arguments, message",
    [
        ("missing.py", "", "no such file"),
        ("loop.py", "'unclosed", "check the quotes"),
        ("bad.py", "", "a syntax error"),
    ],
)
def test_bad_input_is_refused_with_a_message(qtbot, script_window, tmp_path, script, arguments, message):
    write(tmp_path)
    (tmp_path / "bad.py").write_text("def f(:\n")
    script_window.set_script(str(tmp_path / script))
    script_window.arguments.setText(arguments)
    assert not script_window.run()
    box = script_window.findChild(QMessageBox, "script_refusal")
    assert box is not None and message in box.text()
    assert not script_window.controller.busy


def test_closing_the_window_stops_the_script(qtbot, script_window, settings, tmp_path):
    path = write(
        tmp_path,
        "import time, torch\nf = torch.compile(lambda x: x + 1, backend='eager')\nwhile True:\n    f(torch.ones(2)); time.sleep(0.01)\n",
    )
    trust.remember(settings, path)
    script_window.set_script(path)
    assert script_window.run()
    qtbot.waitUntil(
        lambda: "compiled" in script_window.view.folds and bool(script_window.view.folds["compiled"].run.entries),
        timeout=120_000,
    )
    script_window.close()
    assert not script_window.controller.busy
    qtbot.waitUntil(lambda: script_window.result is not None, timeout=10_000)  # its end is shown
    assert "stopped (Ctrl+C or Cancel)" in "\n".join(script_window.view.summary.toPlainText().splitlines())


def test_the_headline_says_what_the_compiler_does_while_a_call_compiles(qtbot, monkeypatch):
    """A first call that compiles for minutes shows its frame and stage, the seconds going on, and
    past STALL_S that the stage has not changed (core.capture.compile_watch's words)."""
    from gui.panels import script_view

    view = script_view.ScriptView()
    qtbot.addWidget(view)
    view.start()
    view.run_started("compiled")
    view.add_event("compiled", {"t": "entry", "id": 0, "name": "step", "file": "/w/t.py", "line": 9})
    view.add_event(
        "compiled",
        {"t": "stage", "id": 0, "frame": "step (t.py:9)", "compile_id": "0/0", "stage": "inductor lowering"},
    )
    view._redraw()
    text = view.headline.text()
    assert text.startswith("Running the script as written… compiling step (t.py:9) [0/0]: inductor lowering (")
    since = view.folds["compiled"].run.compiling.since
    monkeypatch.setattr(script_view.time, "monotonic", lambda: since + script_view.STALL_S + 5)
    view._redraw()
    assert "no compile stage has changed for 65 s, still compiling step (t.py:9) [0/0]" in view.headline.text()
    view.add_event("compiled", {"t": "compile", "id": 0, "call": 0, "frames": []})
    view._redraw()
    assert view.headline.text() == "Running the script as written…"
