"""Issue 9 in the app with a real job (backend eager, the graph-break model): the run writes
its files into the session's folder, the Time breakdown and Graphs tabs show them, a
graph-break row jumps to the graphs beside it, and a saved session reopens with its graphs,
compile log and traces."""

from __future__ import annotations

import os

from core.vocab.config import CompileConfig
from tests.gui.helpers import GRAPH_BREAK_MODEL, RUN_TIMEOUT_MS


def test_run_explains_the_numbers_and_a_saved_session_keeps_them(qtbot, window, tmp_path):
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    panel = window.config_panel
    panel.queue.clear()
    assert panel.queue.add(CompileConfig(backend="eager"))
    panel.iters.setValue(10)
    panel.warmup.setValue(2)
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
    result = window.session.results[0]
    assert result.status == "completed", result.failure_reason
    run_folder = window.session.artifacts_dir
    assert run_folder and os.path.isdir(os.path.join(run_folder, "graphs"))
    assert result.op_profile is not None and result.graphs  # core's defaults: op profile on

    window.show_tab("time-breakdown")  # a tab not shown refreshes when opened (gui.widgets.view)
    times = window.view("time-breakdown")
    assert times.verdict.text() and "Run a profile" not in times.verdict.text()
    assert times.ops_model.rowCount() > 0 and times.chart.bars
    assert times.open_traces.isEnabled() and "compiled.json" in times.traces.text()

    window.show_tab("graphs")
    graphs = window.view("graphs")
    assert graphs.model.rowCount() == len(result.graphs)
    assert "def forward" in graphs.code.toPlainText()

    # a priced break jumps to the graph after it (the tab refreshes when it is shown)
    window.show_tab("graph-breaks")
    breaks = window.graph_breaks_panel
    costed = [
        row
        for row in range(breaks.proxy.rowCount())
        if breaks.model.break_cost(breaks.proxy.mapToSource(breaks.proxy.index(row, 0)).row())
    ]
    assert costed, "no break was priced"
    breaks.select_row(costed[0])
    assert breaks.request_graph("after", "0")
    assert window.tabs.currentWidget().view is graphs

    # save, open: the reopened session reads the copy beside report.json
    os.makedirs(tmp_path / "saved")
    saved = window.save_session(str(tmp_path / "saved" / "report.json"))
    assert saved and os.path.isdir(tmp_path / "saved" / "graphs")
    assert window.open_session(saved)
    assert window.session.artifacts_dir == str(tmp_path / "saved")
    assert "def forward" in graphs.code.toPlainText()
    dialog = graphs.open_compile_log()
    qtbot.addWidget(dialog)
    assert dialog.view.path.startswith(str(tmp_path / "saved"))
    assert window.view("time-breakdown").open_traces.isEnabled()
    # tlparse's report of the reopened session's structured trace (the browser is a stand-in)
    from PySide6.QtGui import QDesktopServices

    from core.report.tlparse import tlparse_executable

    opened = []
    monkeypatch_open = QDesktopServices.openUrl
    QDesktopServices.openUrl = staticmethod(lambda url: opened.append(url.toLocalFile()) or True)
    try:
        index = graphs.open_tlparse()
    finally:
        QDesktopServices.openUrl = monkeypatch_open
    if tlparse_executable() is None:
        assert index == "" and "tlparse" in graphs.header.text()
    else:
        assert os.path.isfile(index) and opened == [index]  # made fresh, outside the report folder
        assert not index.startswith(str(tmp_path / "saved"))
