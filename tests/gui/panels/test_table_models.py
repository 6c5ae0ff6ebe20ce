"""The table models over core dataclasses: Qt's model contract (qtmodeltester), sorting,
filtering, and what the detail view shows. No child process, no torch compile."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from gui.form.config_panel import QueueModel
from gui.panels.break_detail import detail_html
from gui.panels.compile import CompileBreakdownModel, RecompileModel
from gui.panels.graph_breaks import PER_CALL_COLUMN, GraphBreakModel, GraphBreaksPanel, break_counts
from gui.panels.summary import SummaryModel, SummaryPanel
from gui.panels.summary_columns import COLUMNS
from tests.gui.helpers import fake_result


def _results():
    failed = fake_result(
        "job2",
        backend="aot_eager",
        breaks=False,
        status_event=ev.JobFailed(
            "job2", reason="compile failed (BackendCompilerFailed): boom", detail="Traceback ...", phase="compile"
        ),
    )
    return [fake_result("job1"), failed]


def test_models_pass_qtmodeltester(qtmodeltester):
    results = _results()
    for model_type in (SummaryModel, GraphBreakModel, RecompileModel, CompileBreakdownModel):
        model = model_type()
        model.set_results(results)
        qtmodeltester.check(model, force_py=True)
    queue = QueueModel()
    queue.add(CompileConfig(backend="eager"))
    queue.add(CompileConfig(backend="inductor", mode="max-autotune"))
    assert not queue.add(CompileConfig(backend="eager"))  # no duplicates
    queue.set_status(CompileConfig(backend="eager"), "failed", "model: syntax error")
    qtmodeltester.check(queue, force_py=True)


def test_summary_shows_core_figures_and_failure(qtbot):
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    results = _results()
    panel.model.set_results(results)
    summary = results[0].summary()
    headers = [c.header for c in COLUMNS]
    text = {h: panel.model.index(0, i).data() for i, h in enumerate(headers)}
    assert text["Config"] == "eager"
    assert text["Status"] == "completed"
    assert f"{summary['speedup']:.2f}×" in text["Speedup\n[95% CI]"]
    assert text["Compile\n(cache)"] == "0.50 s"
    sites, per_call = break_counts(summary)
    assert text["Graph breaks\nsites / per call"] == (f"{sites} / {per_call}" if per_call is not None else str(sites))
    failed_status = panel.model.index(1, 1).data()
    assert failed_status.startswith("failed: compile failed")
    assert "Traceback" in panel.model.index(1, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert "Partly compiled" in panel.coverage.text()


def test_graph_breaks_sort_filter_and_detail(qtbot):
    panel = GraphBreaksPanel()
    qtbot.addWidget(panel)
    results = _results()
    panel.set_results(results)
    assert panel.model.rowCount() == 2  # the repeated break is one row, passed twice per call
    # sorted by breaks per call, highest first
    # no op profile in these results: the figure is the compile's, and says so
    assert panel.proxy.index(0, PER_CALL_COLUMN).data() == "2 (compile)"
    panel.filter_edit.setText("branching")
    assert panel.proxy.rowCount() == 1
    panel.select_row(0)
    gb = panel.selected_break()
    assert gb.gb_code == "GB0170"
    html = panel.detail.toHtml()
    assert "Use torch.cond." in html and "Make it branchless." in html
    assert "h.sum() &gt; 0" in html  # the source context recorded in the report
    assert "gb0170.html" in html
    panel.filter_edit.clear()
    assert panel.proxy.rowCount() == 2
    assert panel.compile_panel.recompile_model.rowCount() == 2  # one per job
    assert panel.compile_panel.tabs.tabText(1) == "Recompiles (2)"  # the tab counts them
    assert panel.compile_panel.recompile_title.text().startswith("2 recompilations")
    assert panel.compile_panel.breakdown_model.rowCount() == 2


def test_detail_highlights_the_break_line():
    gb = fake_result().graph_breaks[0]
    html = detail_html(gb)
    assert "font-weight:bold'>15  " in html.replace('"', "'")
    assert "def forward" in html  # the surrounding lines come from the report's context
    # torch's explanation (it names what broke), then the line itself, then the counts
    line_at = html.replace('"', "'").index("font-weight:bold'>15  ")
    assert html.index("Detected data-dependent branching.") < line_at < html.index("per compiled call")


def test_detail_shows_three_lines_either_side_of_the_break():
    """A long recorded context is cut to the break line and 3 lines either side, so the line
    is in view in the pane at 1400x900; the report keeps the whole context."""
    import dataclasses

    gb = dataclasses.replace(
        fake_result().graph_breaks[0], line=20, context_start=10, context=tuple(f"x{n} = {n}" for n in range(10, 31))
    )
    html = detail_html(gb)
    assert "x20 = 20" in html and "x17 = 17" in html and "x23 = 23" in html
    assert "x16 = 16" not in html and "x24 = 24" not in html


def test_skipped_frame_and_library_break_rows():
    """Per call, Location (short path, full path on hover) and Your code; a skipped frame
    says what ran eagerly."""
    result = fake_result("a")
    assert result.apply(
        ev.GraphBreakFound(
            "a",
            graph_break=rec.GraphBreak(
                "Attempted to wrap RNN, GRU, or LSTM",
                "GB0014",
                file="/opt/lib/site-packages/torch/nn/rnn.py",
                line=12,
                frame_skipped=True,
                eager_function="forward (rnn.py:10)",
                user_file="/home/me/model.py",
                user_line=30,
                logged=2,
                per_call=1,
            ),
        )
    )
    model = GraphBreakModel()
    model.set_results([result])
    row = model.rowCount() - 1
    assert model.index(row, PER_CALL_COLUMN).data() == "frame skipped"
    assert model.index(row, 3).data() == "torch/nn/rnn.py:12"
    assert "/opt/lib/site-packages/torch/nn/rnn.py:12" in model.index(row, 3).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(row, 4).data() == "model.py:30"
    assert (
        "times one compiled call"
        in model.headerData(PER_CALL_COLUMN, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole).lower()
    )
    html = detail_html(model.graph_break(row))
    assert "ran eagerly: <code>forward (rnn.py:10)</code>" in html and "logged 2×" in html
    assert "your code: <code>/home/me/model.py:30</code>" in html


def test_compile_breakdown_says_whether_cuda_graphs_were_recorded():
    from tests.core.fakes import fake_result as core_fake

    skip = rec.CudagraphSkip("skipping cudagraphs due to mutated inputs (1 instances)", "/m/<i>model.py", 12)
    results = [
        core_fake("inductor", device="cuda"),
        core_fake(CompileConfig("inductor", mode="reduce-overhead"), device="cuda"),
        core_fake(CompileConfig("inductor", mode="reduce-overhead"), device="cuda", cudagraph_skips=[skip]),
        core_fake(CompileConfig("inductor", mode="max-autotune")),
    ]
    model = CompileBreakdownModel()
    model.set_results(results)
    col = 2  # beside the compile time, seen without scrolling
    assert model.headerData(col, Qt.Orientation.Horizontal) == "CUDA graphs"
    assert [model.index(i, col).data() for i in range(4)] == ["–", "no skip reported", "1 skipped", "none (CPU)"]
    tip = model.index(2, col).data(Qt.ItemDataRole.ToolTipRole)
    assert "mutated inputs (1 instances)" in tip and "&lt;i&gt;model.py:12" in tip  # escaped, not HTML


def test_the_summary_columns_fit_again_only_when_a_text_grows(qtbot):
    """A running row refreshes once a second; its columns were measured at each refresh
    (ResizeToContents: every cell and header, ~370 calls into Python). A column is fitted when
    its text gets longer than its longest at the last fit, that column only; every column at
    every new set."""
    from core.analysis.results import JobResult
    from gui.panels.summary_columns import COLUMNS
    from tests.gui.helpers import fake_events, fake_spec

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.show()
    result = JobResult(fake_spec("a"))
    panel.show_results([result])
    before = [str(panel.model.index(0, c).data() or "") for c in range(len(COLUMNS))]
    fits, all_fits = [], []
    one, every = panel.table.resizeColumnToContents, panel.table.resizeColumnsToContents
    panel.table.resizeColumnToContents = lambda column: (fits.append(column), one(column))[1]
    panel.table.resizeColumnsToContents = lambda: (all_fits.append(1), every())[1]
    *events, end = fake_events("a")
    for event in events:
        result.apply(event)
    panel.model.mark_changed("a")
    panel.model._on_refresh_due()  # the 1 Hz refresh: figures now where a dash was
    after = [str(panel.model.index(0, c).data() or "") for c in range(len(COLUMNS))]
    grown = [c for c in range(len(COLUMNS)) if len(after[c]) > len(before[c])]
    assert grown and sorted(fits) == grown and not all_fits  # the grown columns, each once
    panel.model.mark_changed("a")
    panel.model._on_refresh_due()  # the same texts
    assert sorted(fits) == grown
    for column in grown:
        text = panel.model.index(0, column).data()
        assert panel.table.columnWidth(column) >= panel.table.fontMetrics().horizontalAdvance(text)
    panel.show_results([result])  # a new set: every column
    assert all_fits == [1]


def test_the_empty_summarys_headers_are_whole(qtbot):
    """With no results, the Summary's columns had Qt's default width: two-line headers read
    "eager / compilec" and "Max erro". Each column is as wide as its header from the start."""
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.resize(1400, 600)
    panel.show()
    header = panel.table.horizontalHeader()
    for column in range(panel.model.columnCount()):
        assert header.sectionSize(column) >= header.sectionSizeHint(column), panel.model.headerData(
            column, Qt.Orientation.Horizontal
        )


def test_many_configs_that_say_the_same_share_a_line_above_the_table(qtbot):
    """Eleven "X: completed" lines above the table left it one row at 1366x700; past four
    configs, those that say the same share one line, and the rest keep theirs."""
    import dataclasses

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    few = [fake_result(f"j{i}", backend=f"b{i}", breaks=False) for i in range(3)]
    panel.model.set_results(few)
    assert panel.coverage.text().count("<br>") == 2  # a line each
    many = [fake_result(f"k{i}", backend=f"b{i}", breaks=False) for i in range(6)]
    odd = fake_result("k9", backend="odd")
    odd.compile = dataclasses.replace(odd.compile, coverage="Fully compiled: one graph")
    many.append(odd)
    panel.model.set_results(many)
    text = panel.coverage.text()
    assert text.count("<br>") == 1, text  # the six that say the same, and the one that does not
    first, second = text.split("<br>")
    assert all(f">b{i}</b>" in first for i in range(6)) and first.endswith(": Partly compiled: 4 graphs")
    assert second.endswith("<b>odd</b></span>: Fully compiled: one graph")
