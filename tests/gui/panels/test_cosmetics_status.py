"""Shortened texts say their whole text on hover (issue 44, item 7): the zoo window's status line
was cut at its progress bar with no way to read the rest, the sweep and throughput tables' cells
cut with "…" showed only their column's description on hover, the compile-stage bars' config
names were shortened with no tooltip, and the sweep chart's title kept its whole key on one line."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.vocab import events as ev
from core.vocab import records as rec
from gui.charts.compile_stages import CompileStagesChart
from gui.charts.sweep import SweepChart
from gui.panels.sweep import SweepModel
from gui.panels.throughput import ThroughputModel
from gui.widgets.fitting_label import ElidedLabel, FittingLabel
from tests.core.fakes import fake_result
from tests.gui.helpers import fake_sweep_result
from tests.gui.panels.test_throughput import batch_result

DETAIL = (
    "compiling forward (m.py:10) [0/0]: inductor lowering (so far: dynamo tracing 0.4 s); 1 graph, "
    "0 graph breaks found so far"
)


def test_an_elided_label_shortens_to_its_width_and_says_the_whole_on_hover(qtbot):
    label = ElidedLabel("short", tip="what it is")
    qtbot.addWidget(label)
    label.resize(400, 20)
    label.show()
    assert label.text() == "short" and label.toolTip() == "what it is"
    label.setText(DETAIL)
    assert label.text().endswith("…") and len(label.text()) < len(DETAIL)
    assert label.fontMetrics().horizontalAdvance(label.text()) <= label.contentsRect().width()
    assert label.toolTip() == f"{DETAIL}\n\nwhat it is" and label.whole_text() == DETAIL
    label.resize(2000, 20)
    qtbot.waitUntil(lambda: label.text() == DETAIL)
    assert label.toolTip() == "what it is"


def test_a_fitting_labels_shorter_text_has_the_whole_one_on_hover(qtbot):
    label = FittingLabel(["<b>Title</b> (a long explanation of the key)", "<b>Title</b>"])
    qtbot.addWidget(label)
    label.resize(600, 20)
    label.show()
    qtbot.waitUntil(lambda: "(a long" in label.text())
    assert label.toolTip() == ""
    label.resize(60, 20)
    qtbot.waitUntil(lambda: label.text() == "<b>Title</b>")
    assert label.toolTip() == "Title (a long explanation of the key)"
    label.setToolTip("its own")  # a tooltip given stays
    label.resize(600, 20)
    qtbot.waitUntil(lambda: "(a long" in label.text())
    assert label.toolTip() == "its own"


def test_the_zoo_windows_status_line_is_whole_on_hover_and_clear_of_the_progress_bar(qtbot, tmp_path):
    from core.zoo.files import load_zoo
    from gui.window.zoo_window import ZooWindow
    from tests.core.zoo_fakes import write_fake_zoo

    class Main:
        def show_error(self, *args):
            raise AssertionError(args)

    write_fake_zoo(str(tmp_path))
    window = ZooWindow(Main())
    qtbot.addWidget(window)
    window.resize(700, 420)
    window.show_zoo(load_zoo(str(tmp_path)))
    for widget in (window.progress, window.cancel_button):
        widget.show()
    window.show()

    class Job:
        label = "timm:vit_tiny · inductor"

    window._on_zoo_phase_changed(Job(), "compile", DETAIL)
    whole = f"Running timm:vit_tiny · inductor: {DETAIL}"
    line = window.status_line
    qtbot.waitUntil(lambda: line.text().endswith("…"))
    assert line.whole_text() == whole and whole in line.toolTip()
    assert line.isVisible() and line.geometry().right() < window.progress.geometry().left()
    assert line.fontMetrics().horizontalAdvance(line.text()) <= line.contentsRect().width()


def test_table_cells_that_may_be_cut_say_their_whole_text_on_hover(qtbot):
    sweep = SweepModel()
    sweep.set_results([fake_sweep_result()])
    tip = sweep.data(sweep.index(0, 2), Qt.ItemDataRole.ToolTipRole)
    assert sweep.data(sweep.index(0, 2)) in tip  # the input shapes, whole
    config = sweep.data(sweep.index(0, 0))
    assert config in sweep.data(sweep.index(0, 0), Qt.ItemDataRole.ToolTipRole)
    throughput = ThroughputModel()
    throughput.set_results([batch_result()])
    last = throughput.columnCount() - 1
    oom = throughput.index(2, last)
    assert "out of memory at batch size 16: boom" in throughput.data(oom, Qt.ItemDataRole.ToolTipRole)
    assert "inductor" in throughput.data(throughput.index(0, 0), Qt.ItemDataRole.ToolTipRole)


def test_a_shortened_config_name_of_the_compile_stages_says_the_whole_on_hover(qtbot):
    result = fake_result("inductor_with_a_backend_name_longer_than_the_room_for_it")
    label = result.config.label
    result.apply(ev.CompileFinished(result.job_id, result=rec.CompileResult(3.0, dynamo_s=2.0, aot_autograd_s=1.0)))
    chart = CompileStagesChart()
    qtbot.addWidget(chart)
    chart.resize(400, 60)
    chart.show()
    chart.set_results([result])
    chart.grab()
    assert label in [tip for _, tip in chart._segments]


def test_the_sweep_charts_title_keeps_to_one_line_and_is_whole_on_hover(qtbot):
    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.resize(1200, 300)
    chart.show()
    qtbot.waitUntil(lambda: "ran eagerly" in chart.title.text())
    one_line = chart.title.height()
    chart.resize(360, 300)
    qtbot.waitUntil(lambda: "ran eagerly" not in chart.title.text())
    assert chart.title.height() <= one_line + 2
    assert "× ran eagerly" in chart.title.toolTip()
