"""Closing as a desktop tool closes (issue 19, item 4): during a run the user is asked first
("Keep running" the default, the run going on meanwhile); closing the main window closes its
zoo windows and dialogs, so the app ends; nothing is left running."""

from __future__ import annotations

import time

import psutil
from PySide6.QtWidgets import QDialog, QMessageBox

from core.vocab.config import CompileConfig
from gui.window import closing
from tests.gui.helpers import GRAPH_BREAK_MODEL, RUN_TIMEOUT_MS


def _question(window) -> QMessageBox | None:
    return next((b for b in window.findChildren(QMessageBox, "close_question") if b.isVisible()), None)


def _click(box: QMessageBox, text: str) -> None:
    button = next(b for b in box.buttons() if b.text() == text)
    button.click()


def _start_long_run(qtbot, window) -> str:
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    window.config_panel.queue.clear()
    window.config_panel.set_config(CompileConfig(backend="eager"))
    window.config_panel.iters.setValue(1_000_000)
    window.config_panel.warmup.setValue(1)
    assert window.run_profile()
    job = window.session.results[0].job_id
    qtbot.waitUntil(lambda: window.latency_chart.point_count(job, "compiled") > 5, timeout=RUN_TIMEOUT_MS)
    return job


def test_closing_during_a_run_asks_and_keep_running_keeps_it(qtbot, window):
    window.ask_before_closing = True  # as the app does (the fixture turns it off)
    job = _start_long_run(qtbot, window)
    window.close()
    box = _question(window)
    assert box is not None and window.isVisible() and window.controller.busy
    assert box.defaultButton().text() == closing.KEEP_TEXT and box.escapeButton().text() == closing.KEEP_TEXT
    assert "a profile (0 of 1 configs done)" in box.text()
    _click(box, closing.KEEP_TEXT)
    before = window.latency_chart.point_count(job, "compiled")
    qtbot.waitUntil(lambda: window.latency_chart.point_count(job, "compiled") > before, timeout=RUN_TIMEOUT_MS)
    assert window.isVisible() and window.controller.busy  # still running, still measuring

    window.close()
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        _click(_question(window), closing.QUIT_TEXT)
    assert not window.isVisible() and not window.controller.busy
    assert window.session.results[0].status == "cancelled"


def test_closing_the_main_window_closes_its_zoo_windows_and_dialogs(qtbot, window, tmp_path):
    from gui.window.zoo_window import ZooWindow, keep

    zoo_window = keep(window, ZooWindow(window))
    zoo_window.show()
    dialog = QDialog(window)  # the compile log, compare and about windows are parented so
    dialog.show()
    started = time.perf_counter()
    window.close()
    assert not window.isVisible() and not zoo_window.isVisible() and not dialog.isVisible()
    assert time.perf_counter() - started < 1.0
    assert window.torch_info_loader.helpers_running == 0


def test_closing_with_nothing_running_asks_nothing_and_leaves_no_child(qtbot, window):
    window.ask_before_closing = True
    children_before = {p.pid for p in psutil.Process().children(recursive=True)}
    window.close()
    assert not window.isVisible() and _question(window) is None
    qtbot.waitUntil(
        lambda: (
            not {p.pid for p in psutil.Process().children(recursive=True) if p.status() != psutil.STATUS_ZOMBIE}
            - children_before
        ),
        timeout=5000,
    )


def test_a_zoo_run_in_a_zoo_window_is_asked_about_and_cancelled_with_the_main_window(qtbot, window):
    from types import SimpleNamespace

    from gui.window.zoo_window import ZooWindow, keep

    window.ask_before_closing = True
    zoo_window = keep(window, ZooWindow(window))
    waited = []
    zoo_window.controller = SimpleNamespace(busy=True, wait=lambda: waited.append(True))  # a zoo run going
    zoo_window.progress.setRange(0, 6)
    zoo_window.progress.setValue(2)
    zoo_window.show()
    window.close()
    box = _question(window)
    assert box is not None and "a zoo run (2 of 6 jobs done)" in box.text() and zoo_window.isVisible()
    _click(box, closing.QUIT_TEXT)
    assert not window.isVisible() and not zoo_window.isVisible() and waited == [True]


def test_closing_a_zoo_window_during_its_run_asks_too(qtbot, window):
    from types import SimpleNamespace

    from gui.window.zoo_window import ZooWindow, keep

    zoo_window = keep(window, ZooWindow(window))
    waited = []
    zoo_window.controller = SimpleNamespace(busy=True, wait=lambda: waited.append(True))
    zoo_window.show()
    zoo_window.close()
    box = next(b for b in zoo_window.findChildren(QMessageBox, "close_question") if b.isVisible())
    _click(box, closing.KEEP_TEXT)
    assert zoo_window.isVisible() and waited == []
    zoo_window.close()
    _click(next(b for b in zoo_window.findChildren(QMessageBox, "close_question") if b.isVisible()), closing.QUIT_TEXT)
    assert not zoo_window.isVisible() and waited == [True]


def test_a_closed_windows_run_ends_in_its_results_without_drawing_them_again(qtbot, window):
    """Closing during a run: the cancelled job's end and the run's end still come (the results
    say "cancelled", sig_run_finished is said), but no view is drawn again for a window that is
    gone: a closed window's tabs refreshed at once, and the Decision tab's bootstrap of a
    100,000-call job held the app's exit 0.7-0.8 s (issue 22: process gone <= 1 s)."""
    _start_long_run(qtbot, window)
    drawn = []
    decision, summary = window.view("decision"), window.summary_panel.model
    decision.refresh = lambda *a, **k: drawn.append("decision")
    summary.make_owed_rows = lambda: drawn.append("summary")
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        window.close_now()
    assert window.session.results[0].status == "cancelled" and not window.controller.busy
    assert drawn == []
