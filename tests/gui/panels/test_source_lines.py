"""The Time breakdown's "By source line" view over a result whose op profile has lines
(gui.panels.source_lines), and over a real inductor run's report opened as a session."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from PySide6.QtCore import Qt

from core.vocab import events as ev
from core.vocab.op_records import LineTime, OpProfile, SideOpProfile
from gui.run.session import ProfileSession
from gui.widgets.theme import warning_color
from tests.gui.helpers import GRAPH_BREAK_MODEL, ROOT, fake_result

SOURCE = "import torch\n\n\ndef forward(x):\n    h = x.relu()\n    if h.sum() > 0:\n        h = h * 2\n    return h\n"


def _result(path: str):
    r = fake_result("job1", backend="inductor")
    lines = (
        LineTime(path, 5, "h = x.relu()", eager_ms=0.30, compiled_ms=0.10, kernels=("cpp_fused_relu_0",)),
        LineTime(path, 6, "if h.sum() > 0:", eager_ms=0.05, compiled_ms=0.20, graph_break=True),
        LineTime(path, 7, "h = h * 2", eager_ms=0.10, compiled_ms=0.05, kernels=("cpp_fused_mul_1",)),
    )
    profile = OpProfile(
        calls=3,
        eager=SideOpProfile("eager", calls=3, ms_per_call=0.6),
        compiled=SideOpProfile("compiled", calls=3, ms_per_call=0.5),
        lines=lines,
        lines_eager_ms=0.45,
        lines_eager_call_ms=0.6,
        lines_compiled_ms=0.35,
        lines_note="a note on the lines",
    )
    assert r.apply(ev.OpProfileMeasured(r.job_id, profile=profile))
    return r


def _panel(qtbot, results, origin=""):
    from gui.panels.time_breakdown import TimeBreakdownPanel

    s = ProfileSession()
    s.load(results, {}, origin)
    view = TimeBreakdownPanel()
    qtbot.addWidget(view)
    view.bind(s)
    view.show_results(s.results)
    return view


def test_the_view_shows_each_line_with_its_times_and_the_source_beside(qtbot, qtmodeltester, tmp_path):
    from gui.panels.source_lines import LinesModel

    path = str(tmp_path / "model.py")
    open(path, "w").write(SOURCE)
    view = _panel(qtbot, [_result(path)])
    lines = view.source_lines
    assert view.tables.tabText(view.tables.indexOf(lines)) == "By source line"
    qtmodeltester.check(lines.lines_model)
    qtmodeltester.check(lines.source_model)
    # sorted by what each line lost compiled: the graph break's line first, marked and coloured
    first = [lines.proxy.index(0, c).data() for c in range(len(LinesModel.HEADERS))]
    assert first[:6] == ["model.py:6", "if h.sum() > 0:", "0.050", "0.200", "+0.150", "break, slower"]
    slower = lines.proxy.index(0, LinesModel.CHANGE_COLUMN).data(Qt.ItemDataRole.ForegroundRole)
    assert slower.color().name() == warning_color()
    assert lines.proxy.index(1, LinesModel.CHANGE_COLUMN).data(Qt.ItemDataRole.ForegroundRole) is None
    text = lines.accounted.text()
    assert "0.45 ms of the 0.60 ms eager call" in text and "0.35 ms of the 0.50 ms compiled call" in text
    assert "a note on the lines" in text
    # the whole file with the times in the margin
    assert lines.current_file() == path and lines.source_model.rowCount() == 8
    assert lines.source_note.isHidden()
    row = lines.source_model.row_of(5)
    assert [lines.source_model.index(row, c).data() for c in range(5)] == [
        "0.300",
        "0.100",
        "",
        "5",
        "    h = x.relu()",
    ]
    assert lines.source_model.index(lines.source_model.row_of(6), 2).data() == "◆▲"
    assert lines.source_model.index(0, 0).data() == ""  # a line without time
    # clicking a line shows its kernels and its place in the source
    lines.lines_table.selectRow(lines.proxy.mapFromSource(lines.lines_model.index(0, 0)).row())
    assert "cpp_fused_relu_0" in lines.detail.text() and "model.py:5" in lines.detail.text()
    assert lines.source_table.currentIndex().row() == row


def test_a_changed_or_unreadable_file_shows_the_recorded_lines_and_no_lines_says_why(qtbot, tmp_path):
    from gui.panels.source_lines import NO_LINES

    path = str(tmp_path / "model.py")
    open(path, "w").write(SOURCE.replace("x.relu()", "x.tanh()"))
    view = _panel(qtbot, [_result(path)])
    lines = view.source_lines
    assert lines.source_model.rowCount() == 3 and "line 5 reads differently now" in lines.source_note.text()
    assert lines.source_model.index(0, 4).data() == "h = x.relu()"
    empty = _panel(qtbot, [fake_result("job2", backend="eager")])
    assert empty.source_lines.accounted.text() == NO_LINES and empty.source_lines.lines_model.rowCount() == 0


def test_a_real_inductor_report_opened_as_a_session_shows_its_lines(qtbot, window, tmp_path):
    """profile with inductor on the graph-break model, then File → Open: the view shows the
    model's lines with the breaks marked, the whole file beside them."""
    out = tmp_path / "r"
    proc = subprocess.run(
        [sys.executable, "main.py", "profile", GRAPH_BREAK_MODEL, "--backend", "inductor", "--iters", "20"]
        + ["--processes", "1"]
        + ["--op-profile", "3", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert window.open_session(str(out / "report.json"))
    lines = window.view("time-breakdown").source_lines
    model = lines.lines_model
    shown = {model.line_at(r).line: model.line_at(r) for r in range(model.rowCount())}
    assert {15, 16, 18, 19, 20, 21} <= set(shown), sorted(shown)
    assert shown[16].graph_break and shown[16].source.startswith("if h.sum() > 0:")
    assert any(k.startswith("cpp_fused") for t in shown.values() for k in t.kernels)
    assert os.path.samefile(lines.current_file(), GRAPH_BREAK_MODEL)
    assert lines.source_note.isHidden() and lines.source_model.rowCount() == len(open(GRAPH_BREAK_MODEL).readlines())
    p = json.loads((out / "report.json").read_text())["jobs"][0]["op_profile"]
    assert 0 < p["lines_compiled_ms"] <= p["compiled"]["ms_per_call"]
    assert f"The {len(p['lines'])} lines hold" in lines.accounted.text() and "compiled call (" in lines.accounted.text()
    # a line's kernels lead to its graph in the Graphs tab, whose kernels name their lines back
    row = next(r for r in range(model.rowCount()) if model.line_at(r).kernels)
    lines.lines_table.selectRow(lines.proxy.mapFromSource(model.index(row, 0)).row())
    assert lines.graph_button.isEnabled() and lines.graph_button.text().startswith("Show graph ")
    graph = lines.graph_button.text().rsplit(" ", 1)[1]
    lines.graph_button.click()
    assert window.tabs.currentWidget().view is window.view("graphs")
    graphs = window.view("graphs")
    assert graphs.selected_graph().graph == graph
    assert "←" in graphs.kernels.toPlainText() and "graph_break_model.py:" in graphs.kernels.toPlainText()
