"""The Time breakdown and Graphs views, the compile-log dialog and the graph-break cost
column, over results folded from events (tests/gui/panels/explain_fakes.py)."""

from __future__ import annotations

import os

import pytest
from PySide6.QtCore import Qt, QUrl

from gui.run.session import ProfileSession
from tests.gui.panels.explain_fakes import explained_result


@pytest.fixture
def session(qtbot, tmp_path):
    s = ProfileSession()
    results = [explained_result(str(tmp_path), "job1", "inductor")]
    s.load(results, {}, str(tmp_path / "report.json"))
    return s


def _bound(qtbot, cls, session):
    view = cls()
    qtbot.addWidget(view)
    view.bind(session)
    view.show_results(session.results)
    return view


def test_time_breakdown_shows_core_figures(qtbot, session, qtmodeltester, monkeypatch):
    from gui.panels.time_breakdown import SELF_COLUMN, TimeBreakdownPanel

    view = _bound(qtbot, TimeBreakdownPanel, session)
    result = session.results[0]
    assert result.time_verdict() and result.time_verdict().split(":")[0] in view.verdict.text()
    assert len(view.chart.bars) == 7  # one stacked segment per category, both sides
    assert view.category_model.rowCount() == 7
    qtmodeltester.check(view.category_model)
    qtmodeltester.check(view.ops_model)
    counts = view.counts.text()
    assert "12 operators" in counts and "3 generated kernels" in counts and "0.22 ms between graphs" in counts
    # the ops table: sorted by self time, filterable, one side at a time
    assert view.proxy.index(0, 1).data() == "aten::addmm" and view.proxy.sortColumn() == SELF_COLUMN
    view.filter_edit.setText("cpp_fused")
    assert view.proxy.rowCount() == 2 and {view.proxy.index(r, 0).data() for r in range(2)} == {"eager", "compiled"}
    view.side_box.setCurrentText("compiled")
    assert view.proxy.rowCount() == 1
    # the traces: named, the viewers said, the session's own folder opened
    assert "compiled.json" in view.traces.text() and "Perfetto" in view.traces.text()
    opened = []
    monkeypatch.setattr("gui.widgets.open_path.QDesktopServices.openUrl", lambda url: opened.append(url) or True)
    assert view.open_traces.isEnabled() and view.open_traces_folder()
    assert opened == [QUrl.fromLocalFile(os.path.realpath(os.path.join(session.artifacts_dir, "traces")))]
    assert view.opened.label.text().startswith("Opened the traces folder in your file manager: ")
    # no file manager: said, with the path to copy (it used to fail without a word)
    monkeypatch.setattr("gui.widgets.open_path.QDesktopServices.openUrl", lambda url: False)
    assert not view.open_traces_folder()
    assert "Nothing could open the traces folder: no file manager was found" in view.opened.label.text()
    assert view.opened.path.endswith("traces") and not view.opened.isHidden()


def test_time_breakdown_without_a_profile(qtbot, tmp_path):
    from gui.panels.time_breakdown import NO_PROFILE, TimeBreakdownPanel
    from tests.gui.helpers import fake_result

    s = ProfileSession()
    s.load([fake_result()], {}, "")
    view = _bound(qtbot, TimeBreakdownPanel, s)
    assert NO_PROFILE.split(":")[0] in view.verdict.text()
    assert view.ops_model.rowCount() == 0 and not view.chart.bars and not view.open_traces.isEnabled()


def test_graphs_view_shows_code_guards_output_and_recompiles(qtbot, session):
    from gui.panels.graphs import REASON_COLUMN, GraphsPanel

    view = _bound(qtbot, GraphsPanel, session)
    assert [view.proxy.index(r, 0).data() for r in range(3)] == ["0/0", "0/1", "1/0"]
    assert view.selected_graph().graph == "0/0"
    assert "def forward" in view.code.toPlainText() and "TENSOR_MATCH" in view.guards.toPlainText()
    assert "cpp_fused_relu_0" in view.output_code.toPlainText()
    assert view.code.highlighter is not None
    assert view.show_graph(session.results[0].config.label, "0/1")
    assert "size mismatch" in view.proxy.index(1, REASON_COLUMN).data()
    assert "Recompiled because" in view.info.text() and "GUARDS of 0/1" in view.guards.toPlainText()
    assert not view.show_graph(session.results[0].config.label, "7/7")
    assert "3 graph(s), 1 from recompiles" in view.header.text()
    headers = [view.proxy.headerData(c, Qt.Orientation.Horizontal) for c in range(view.proxy.columnCount())]
    row = {h: view.proxy.index(0, c).data() for c, h in enumerate(headers)}  # 0/0: what it costs at run time
    assert (row["Runs / call"], row["Guards ms"], row["Wrappers ms"]) == ("1", "0.012", "0.021")
    assert view.proxy.index(1, headers.index("Guards ms")).data() == "–"  # 0/1 never ran in the profile


def test_graphs_view_never_reads_a_path_the_report_names(qtbot, session, tmp_path):
    """code_file says /etc/passwd: the text comes from the folder's own graphs/ (rule-built path)."""
    from gui.panels.graphs import GraphsPanel

    view = _bound(qtbot, GraphsPanel, session)
    assert session.results[0].graphs[0].code_file == "/etc/passwd"
    assert "root:" not in view.code.toPlainText() and "def forward" in view.code.toPlainText()
    session.artifacts_dir = str(tmp_path / "elsewhere")  # a report without its graphs/ folder
    view.show_results(session.results)
    assert "saved without its graphs/" in view.code.toPlainText()


def test_compile_log_dialog_filters_by_level_and_text(qtbot, session):
    from gui.panels.graphs import GraphsPanel

    view = _bound(qtbot, GraphsPanel, session)
    dialog = view.open_compile_log()
    qtbot.addWidget(dialog)
    log = dialog.view
    assert len(log.entries) == 3 and "a debug line" in log.text.toPlainText()
    log.level_box.setCurrentText("info")
    assert "a debug line" not in log.text.toPlainText() and "compiling forward" in log.text.toPlainText()
    log.search.setText("0/1")
    qtbot.waitUntil(lambda: "compiling forward" not in log.text.toPlainText())
    assert "Recompiling function forward" in log.text.toPlainText() and "1 of 3 messages" in log.status.text()


def test_graph_break_cost_column_and_jump_to_graphs(qtbot, session):
    from gui.panels.graph_breaks import COST_COLUMN, GraphBreaksPanel

    view = _bound(qtbot, GraphBreaksPanel, session)
    view.proxy.sort(COST_COLUMN, Qt.SortOrder.DescendingOrder)
    assert view.proxy.index(0, COST_COLUMN).data() == "0.21 ms"
    assert view.proxy.index(1, COST_COLUMN).data() == "–"
    view.select_row(0)
    html = view.detail.toHtml()
    assert "0.21 ms" in html and "cp-graph:after:0" in html
    with qtbot.waitSignal(view.sig_graph_requested) as blocker:
        view.detail.anchorClicked.emit(QUrl("cp-graph:after:0"))
    assert blocker.args == [session.results[0].config.label, "1/0"]
    assert not view.request_graph("after", "5") and not view.request_graph("before", "x")


def test_a_graph_s_kernels_name_the_source_lines_their_time_was_charged_to():
    from types import SimpleNamespace

    from core.vocab.op_records import LineTime
    from gui.panels.graphs import kernel_lines_text

    lines = (
        LineTime("/u/m.py", 11, kernels=("cpp_fused_relu_0 [0/0]", "extern_kernels.addmm [0/0]")),
        LineTime("/u/m.py", 12, kernels=("cpp_fused_relu_0 [0/0]",)),
        LineTime("/u/m.py", 14, kernels=("cpp_fused_relu_0 [1/0]",)),  # the same name in another graph
    )
    result = SimpleNamespace(op_profile=SimpleNamespace(lines=lines))
    g = SimpleNamespace(graph="0/0", kernels=("cpp_fused_relu_0", "cpp_fused_mul_1"))
    assert kernel_lines_text(g, result).splitlines() == [
        "cpp_fused_relu_0    ← m.py:11, m.py:12",
        "cpp_fused_mul_1",
        "extern_kernels.addmm    ← m.py:11",
    ]
    assert kernel_lines_text(g, SimpleNamespace(op_profile=None)) == "cpp_fused_relu_0\ncpp_fused_mul_1"
