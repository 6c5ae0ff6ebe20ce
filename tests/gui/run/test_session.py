"""Sessions (report.json) round-trip through the window with every panel filled; errors
such as an unwritable folder are shown and lose nothing; stale events are dropped."""

from __future__ import annotations

import os

from core.vocab import events as ev
from core.vocab import records as rec
from tests.gui.helpers import fake_result


def test_session_save_and_open_round_trip(qtbot, window, tmp_path):
    results = [fake_result("a"), fake_result("b", backend="aot_eager")]
    window.session.load(results, {"model": "graph_break_model.py"})
    path = window.save_session(str(tmp_path / "report.json"))
    assert path and os.path.exists(path)
    window.session.load([], {})
    assert window.summary_panel.model.rowCount() == 0
    assert window.open_session(path)
    assert window.summary_panel.model.rowCount() == 2
    assert window.summary_panel.model.summary(0)["speedup"] == results[0].summary()["speedup"]
    assert window.latency_chart.point_count("a", "compiled") == 20
    assert window.graph_breaks_panel.model.rowCount() == 4
    assert window.graph_breaks_panel.compile_panel.recompile_model.rowCount() == 2
    assert len(window.resource_panel._tracks) == 4
    assert len(window.distribution_chart._curves) == 4


def test_unwritable_folder_is_reported_and_nothing_is_lost(qtbot, window, tmp_path):
    window.session.load([fake_result("a")], {})
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    assert window.export_csv(str(blocker / "report")) == []
    assert "cannot use" in window.last_error and "Choose a folder you can write to" in window.last_error
    assert window.save_session(str(blocker / "report.json")) == ""
    assert "cannot write" in window.last_error
    assert window.session.results[0].job_id == "a"  # still there to save elsewhere
    assert window.export_csv(str(tmp_path / "ok"))


def test_open_session_error_is_shown(qtbot, window, tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text("{not json")
    assert not window.open_session(str(bad))
    assert "not a valid report.json" in window.last_error


def test_stale_events_are_dropped(qtbot, window):
    window.session.load([fake_result("a")], {})
    before = len(window.session.results[0].samples)
    assert not window.session.apply(ev.LatencyMeasured("old-job", samples=(rec.LatencySample("eager", 0, 1.0),)))
    assert len(window.session.results[0].samples) == before
    assert window.latency_chart.point_count("old-job", "eager") == 0


def test_settings_are_remembered(qtbot, settings):
    from gui.window.main_window import MainWindow

    first = MainWindow(settings)
    qtbot.addWidget(first)
    first.config_panel.iters.setValue(123)
    first.model_panel.batch.setValue(4)
    first.tabs.setCurrentIndex(2)
    first.close()
    second = MainWindow(settings)
    qtbot.addWidget(second)
    assert second.config_panel.iters.value() == 123
    assert second.model_panel.batch.value() == 4
    assert second.tabs.currentIndex() == 2
    second.close()


def test_every_control_has_a_tooltip(qtbot, window):
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit

    missing = [
        w.objectName() or type(w).__name__ + ":" + (getattr(w, "text", lambda: "")() or "")
        for kind in (QAbstractButton, QComboBox, QAbstractSpinBox, QLineEdit)
        for w in window.findChildren(kind)
        if w.isVisibleTo(window) and not w.toolTip() and not _inside_plot(w)
    ]
    assert not missing, missing


def _inside_plot(widget) -> bool:
    """Parts of composite widgets (a spin box's line edit, a plot's buttons) carry no tooltip."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QAbstractSpinBox, QComboBox

    if isinstance(widget.parent(), (QAbstractSpinBox, QComboBox)):
        return True
    parent = widget.parent()
    while parent is not None:
        if isinstance(parent, pg.GraphicsView) or type(parent).__name__ in ("QTabBar", "QScrollBar"):
            return True
        parent = parent.parent()
    return False
