"""The Shape sweep tab: the variant table (qtmodeltester), the chart's markers and the
per-config sentence from hand-made results; a real sweep of the LSTM example through the
worker (backend eager, dynamic false and true); a sweep session round trip."""

from __future__ import annotations

import os

from core.analysis.variants import shape_ticks
from core.vocab.config import CompileConfig
from gui.panels.sweep import SweepModel, SweepPanel
from tests.gui.helpers import LSTM_EXAMPLE, RUN_TIMEOUT_MS, fake_sweep_result

DEFAULTS = {"recompile_limit": 8}


def test_sweep_model_passes_qtmodeltester(qtmodeltester):
    model = SweepModel()
    model.set_results([fake_sweep_result("a", "false"), fake_sweep_result("b", "true")])
    assert model.rowCount() == 8
    qtmodeltester.check(model, force_py=True)
    assert model.index(1, 6).data().startswith("0/0: tensor 'args[0]' size mismatch")
    assert model.index(2, 3).data() == "recompile limit hit: ran eagerly"
    assert model.index(5, 3).data() == "reused compiled code"


def test_sweep_panel_chart_and_sentences(qtbot):
    panel = SweepPanel()
    qtbot.addWidget(panel)
    panel.set_dynamo_defaults(DEFAULTS)
    results = [fake_sweep_result("a", "false"), fake_sweep_result("b", "true")]
    panel.set_results(results)
    chart = panel.chart
    assert chart.curve_points("a", "eager") == 4 and chart.curve_points("b", "compiled") == 4
    assert chart.marker_indices("a", "recompiled") == [1]
    assert chart.marker_indices("a", "limit") == [2] and chart.marker_indices("a", "eager") == [3]
    assert chart.marker_indices("b", "limit") == []
    false_line, true_line = panel.sentences()
    assert (
        "recompile limit (8) hit at variant 2 (float32[32×4×128]): torch stopped compiling new shapes "
        "of this frame and ran them eagerly" in false_line
    )
    assert "2 recompiles" in false_line and "compile time 0.30 s" in false_line
    assert "0 recompiles (one compile served every shape)" in true_line
    assert shape_ticks(results[0].variants) == ("N in float32[N×4×128]", ["8", "16", "32", "48"])
    assert not panel.splitter.isHidden()
    panel.set_results([])  # no sweep: how to make one, not an empty chart's bare axes
    assert panel.splitter.isHidden() and "No shape sweep yet" in panel.header.text()


def test_real_lstm_sweep_fills_the_sweep_tab(qtbot, window, tmp_path):
    window.set_model(LSTM_EXAMPLE)
    panel = window.config_panel
    panel.queue.clear()
    for dynamic in ("false", "true"):
        assert panel.queue.add(CompileConfig(backend="eager", dynamic=dynamic, dynamo_config=(("allow_rnn", True),)))
    panel.iters.setValue(1)
    panel.warmup.setValue(0)
    window.model_panel.sweep.setChecked(True)
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
    assert [r.status for r in window.session.results] == ["completed", "completed"], [
        r.failure_reason for r in window.session.results
    ]
    assert window.tabs.currentWidget().view is window.sweep_panel
    sweep = window.sweep_panel
    assert sweep.model.rowCount() == 22
    first, second = (r.job_id for r in window.session.results)
    assert sweep.chart.marker_indices(first, "limit") == [8]  # dynamic=false: the 9th length hits the limit
    assert sweep.chart.marker_indices(second, "limit") == [] and sweep.chart.marker_indices(second, "recompiled") == []
    limit = window.torch_info.dynamo_defaults["recompile_limit"]
    assert f"recompile limit ({limit}) hit at variant 8 (float32[256×4×128])" in sweep.header.text()
    assert window.summary_panel.model.index(0, 2).data() == "sweep: 11 shapes"
    # export writes variants.csv; the session reopens into the sweep tab
    names = {os.path.basename(p) for p in window.export_csv(str(tmp_path / "report"))}
    assert "variants.csv" in names
    window.session.load([], {})
    assert sweep.model.rowCount() == 0
    assert window.open_session(str(tmp_path / "report" / "report.json"))
    assert sweep.model.rowCount() == 22 and sweep.chart.marker_indices(first, "limit") == [8]


def test_sweep_session_round_trip(qtbot, window, tmp_path):
    window.session.load([fake_sweep_result("a", "false"), fake_sweep_result("b", "true")], {})
    path = window.save_session(str(tmp_path / "report.json"))
    window.session.load([], {})
    window.tabs.setCurrentIndex(0)
    assert window.open_session(path)
    assert window.sweep_panel.model.rowCount() == 8
    assert window.tabs.currentWidget().view is window.sweep_panel
    assert window.sweep_panel.chart.marker_indices("a", "limit") == [2]
    assert not window.charts_splitter.isVisibleTo(window)  # nothing per iteration to chart
    assert window.summary_panel.model.index(0, 5).data() == "sweep"


def test_markers_sit_on_their_curve_in_log_scale(qtbot):
    """In log scale pyqtgraph draws log10 of the data; the markers must move with the curve."""
    import numpy as np

    from gui.charts.sweep import SweepChart

    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.reset([fake_sweep_result("a", "false")])
    job = chart._jobs["a"]
    for log in (False, True, False):
        chart.log_box.setChecked(log)
        cx, cy = job.compiled.getData()
        curve_y = dict(zip(cx.tolist(), cy.tolist()))
        for kind in ("recompiled", "limit", "eager"):
            mx, my = job.markers[kind].getData()
            assert len(mx) == 1
            assert np.allclose(my, [curve_y[x] for x in mx]), (kind, log, my, curve_y)
        assert chart.marker_points("a", "limit")[1][0] == curve_y[2.0]
    assert np.isclose(curve_y[2.0], 2.95)  # back in linear scale: the median itself
