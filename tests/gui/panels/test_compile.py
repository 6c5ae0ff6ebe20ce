"""Where the compile time went (issue 19, item 3): one bar per config of exclusive stages that
add up to the compile, torch's nested figures on hover, no cumulative figure read as a phase."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QToolTip

from core.vocab import events as ev
from core.vocab import records as rec
from gui.panels.compile import CompilePanel
from tests.core.fakes import fake_result


def _with_compile(result, compile_result):
    result.apply(ev.CompileFinished(result.job_id, result=compile_result))
    return result


RESNET18 = rec.CompileResult(
    19.17, dynamo_s=18.465, aot_autograd_s=17.764, inductor_s=16.364, codegen_s=15.595, kernel_compile_s=14.2
)


def test_each_config_gets_a_bar_of_stages_and_torch_figures_on_hover(qtbot):
    panel = CompilePanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 300)
    panel.show()
    inductor = _with_compile(fake_result("inductor"), RESNET18)
    eager_backend = _with_compile(fake_result("eager"), rec.CompileResult(0.2, dynamo_s=0.15, aot_autograd_s=0.001))
    old_report = _with_compile(fake_result("aot_eager"), rec.CompileResult(0.5))  # no stage timed
    panel.set_results([inductor, eager_backend, old_report])
    chart = panel.stages
    assert chart.row_count() == 2
    assert chart.stage_keys(0) == ["tracing", "aot", "lowering", "codegen", "kernel_compile", "outside"]
    assert chart.stage_keys(1) == ["tracing", "aot", "outside"]
    tip = chart.hover_text(0, "kernel_compile")
    assert "Kernel compile: 14.2 s (74%)" in tip and "dynamo 18.465 s ⊃ AOTAutograd 17.764 s" in tip
    headers = [panel.breakdown_model.headerData(c, Qt.Orientation.Horizontal) for c in range(4)]
    assert not {"Dynamo s", "AOTAutograd s", "Inductor s", "Codegen s"} & set(headers)
    compile_tip = panel.breakdown_model.index(0, 1).data(Qt.ItemDataRole.ToolTipRole)
    assert "kernel compile 14.2 s" in compile_tip and "⊃" in compile_tip
    chart.grab()  # drawn once: the segments' places are known
    rect = chart._segments[4][0]  # the kernel compile of the first bar, the widest
    qtbot.mouseMove(chart, QPoint(int(rect.center().x()), int(rect.center().y())))
    qtbot.waitUntil(lambda: "Kernel compile" in QToolTip.text(), timeout=3000)


def test_no_compile_and_empty_results_draw_a_sentence(qtbot):
    panel = CompilePanel()
    qtbot.addWidget(panel)
    panel.show()
    for results in (
        [],
        [fake_result("eager", status="failed")],
        [_with_compile(fake_result(), rec.CompileResult(1.0))],
    ):
        panel.set_results(results)
        assert panel.stages.row_count() == 0
        panel.stages.grab()


def test_the_recompiles_guard_failures_and_every_breakdown_row_are_in_sight(qtbot):
    """At a 1400 px window the panel is ~960 x 330 px: side by side with the breakdown, the
    recompiles got 170 px and their guard failures were behind a scroll bar; stacked under it,
    neither had room for its rows. A tab each, at the panel's whole size, with long labels and
    paths capped (the whole text on hover): three configs' breakdown rows, every breakdown
    column and the guard failures are in sight, and the tab counts the recompiles."""
    from core.vocab.config import CompileConfig

    path = "/home/someone/.venv/lib/python3.11/site-packages/torch/_dynamo/external_utils.py:67"
    results = []
    for limit in (8, 16, 32):
        config = CompileConfig(backend="aot_eager", dynamic="false", dynamo_config=(("cache_size_limit", limit),))
        result = _with_compile(fake_result(config), RESNET18)
        failure = ("0/0: tensor 'args[0]' size mismatch at index 0. expected 8, actual 16",)
        result.apply(ev.RecompileFound(result.job_id, recompile=rec.Recompile("inner", path, failure)))
        results.append(result)
    panel = CompilePanel()
    qtbot.addWidget(panel)
    panel.resize(960, 330)
    panel.show()
    panel.set_results(results)
    qtbot.wait(10)
    breakdown, recompiles = panel.breakdown, panel.recompiles
    assert breakdown.viewport().height() >= 3 * breakdown.verticalHeader().defaultSectionSize()
    header = breakdown.horizontalHeader()
    last = header.count() - 1
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= breakdown.viewport().width()
    assert panel.tabs.tabText(1) == "Recompiles (3)"
    panel.tabs.setCurrentIndex(1)
    qtbot.wait(10)
    assert recompiles.width() >= 0.9 * panel.width()
    reasons_at = recompiles.horizontalHeader().sectionViewportPosition(3)
    assert 0 <= reasons_at < recompiles.viewport().width() - 300  # room for the guard failure
    label = results[0].config.label
    assert label in recompiles.model().index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert label in breakdown.model().index(0, 0).data(Qt.ItemDataRole.ToolTipRole)
    assert path in recompiles.model().index(0, 2).data(Qt.ItemDataRole.ToolTipRole)


def test_a_column_width_the_user_chose_stays_while_a_runs_figures_change(qtbot):
    """The caps are applied when the rows change (new configs, new recompiles), not at every job
    event: a config column the user dragged wider keeps its width while the figures move."""
    panel = CompilePanel()
    qtbot.addWidget(panel)
    panel.show()
    result = _with_compile(fake_result("inductor"), RESNET18)
    panel.set_results([result])
    header = panel.breakdown.horizontalHeader()
    header.resizeSection(0, 400)  # the user's drag
    panel.set_results([result])  # a job event: the same rows
    assert header.sectionSize(0) == 400
    other = _with_compile(fake_result("aot_eager"), RESNET18)
    panel.set_results([result, other])  # a new config: capped again
    assert header.sectionSize(0) <= 130
