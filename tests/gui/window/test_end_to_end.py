"""The app driving real profiling jobs (child processes, backend eager, a tiny model):
a full run fills every panel; cancel mid-run; a failing job keeps what it measured and the
app keeps working; export and session round trip."""

from __future__ import annotations

import os

from core.vocab.config import CompileConfig
from tests.gui.helpers import GRAPH_BREAK_MODEL, RUN_TIMEOUT_MS


def _configure(window, configs, iters=20, warmup=2):
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    panel = window.config_panel
    panel.queue.clear()
    for config in configs:
        assert panel.queue.add(config)
    panel.iters.setValue(iters)
    panel.warmup.setValue(warmup)


def test_run_fills_every_panel_and_a_failing_job_is_shown(qtbot, window, tmp_path):
    ok = CompileConfig(backend="eager")
    failing = CompileConfig(backend="eager", fullgraph=True)  # the model breaks the graph: fullgraph refuses
    _configure(window, [ok, failing])
    assert window.actions.run.isEnabled() and not window.actions.cancel.isEnabled()
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
        qtbot.waitUntil(lambda: window.actions.cancel.isEnabled(), timeout=10_000)  # follows the runner
    results = window.session.results
    assert [r.status for r in results] == ["completed", "failed"]
    good, bad = results
    # latency chart: every timed sample of the completed job, plus the warm-up
    assert window.latency_chart.point_count(good.job_id, "compiled") == 20 + 2
    assert window.latency_chart.point_count(good.job_id, "eager") == 20 + 2
    assert good.job_id in window.latency_chart._markers  # the compile is marked
    # summary: figures from core
    summary = window.summary_panel.model.summary(0)
    assert summary["status"] == "completed" and summary["speedup"] is not None
    assert "Partly compiled" in window.summary_panel.coverage.text()
    # graph breaks: the model's three breaks, with details (the tab refreshes when it is shown)
    window.show_tab("graph-breaks")
    panel = window.graph_breaks_panel
    codes = {panel.model.graph_break(i).gb_code for i in range(panel.model.rowCount())}
    assert {"GB0170", "GB0124", "GB0025"} <= codes
    panel.select_row(0)
    assert "Hints" in panel.detail.toHtml()
    assert panel.compile_panel.breakdown_model.rowCount() >= 1
    # the failed job: its reason beside its config, what it measured kept
    assert "fullgraph" in bad.failure_reason
    queue_status = window.config_panel.queue.index(1, 1).data()
    assert queue_status.startswith("failed: ")
    assert window.summary_panel.model.index(1, 1).data().startswith("failed")
    assert window.latency_chart.point_count(bad.job_id, "eager") == 2  # eager warm-up before the compile
    # the app keeps working: buttons back, export writes the profile command's files
    assert window.actions.run.isEnabled() and not window.actions.cancel.isEnabled()
    paths = window.export_csv(str(tmp_path / "report"))
    names = sorted(os.path.basename(p) for p in paths)
    assert {"summary.csv", "latency.csv", "graph_breaks.csv", "resources.csv", "recompiles.csv", "report.json"} <= set(
        names
    )
    with open(tmp_path / "report" / "graph_breaks.csv") as fh:
        assert "GB0170" in fh.read()


def test_cancel_mid_run(qtbot, window):
    _configure(window, [CompileConfig(backend="eager"), CompileConfig(backend="aot_eager")], iters=1_000_000)
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
        first = window.session.results[0].job_id
        qtbot.waitUntil(lambda: window.latency_chart.point_count(first, "compiled") > 10, timeout=RUN_TIMEOUT_MS)
        assert window.actions.cancel.isEnabled()
        window.actions.cancel.trigger()
    statuses = [r.status for r in window.session.results]
    assert statuses == ["cancelled", "cancelled"]
    assert window.latency_chart.point_count(first, "compiled") > 10  # what it measured is kept
    assert window.actions.run.isEnabled() and not window.actions.cancel.isEnabled()
    assert "cancelled" in window.progress.format()


def test_bad_model_file_fails_clearly(qtbot, window, tmp_path):
    bad = tmp_path / "broken_model.py"
    bad.write_text("import torch\n\ndef get_model(:\n    pass\n")
    window.set_model(str(bad), trusted=True)
    window.config_panel.queue.clear()
    window.config_panel.set_config(CompileConfig(backend="eager"))
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
    result = window.session.results[0]
    assert result.status == "failed"
    assert "syntax error" in result.failure_reason and "broken_model.py:3" in result.failure_reason
    assert "syntax error" in window.status_label.text()
    assert window.actions.run.isEnabled()


def test_cancel_right_after_run_is_not_lost(qtbot, window):
    """A cancel before the worker thread has entered the runner cancels the run (the runner
    keeps it); the config that ran without a queue stays listed with its status."""
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    panel = window.config_panel
    panel.queue.clear()
    panel.set_config(CompileConfig(backend="eager"))
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
        window.cancel_run()
    assert [r.status for r in window.session.results] == ["cancelled"]
    assert panel.queue.rowCount() == 1 and panel.queue.configs == []  # shown, not queued
    assert panel.queue.index(0, 0).data() == "eager (last run)"
    assert panel.queue.index(0, 1).data().startswith("cancelled")
    assert panel.run_configs() == [panel.current_config()]
