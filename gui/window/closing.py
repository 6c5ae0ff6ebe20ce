"""Closing as a desktop tool closes: the main window's close quits the app (its zoo windows and
dialogs go with it), and while a run is going the user is asked first, as an editor asks
before dropping unsaved work, with "Keep running" the default. Asked without blocking the
event loop (a window-modal box), so the run keeps updating while the question is open.
GUI thread only.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QMessageBox, QWidget

from gui.window.app_window import AppWindow

QUIT_TEXT = "Cancel the run and close"
KEEP_TEXT = "Keep running"


def running_work(window: AppWindow) -> list[str]:
    """What closing `window` (the main window) would stop, in words ([] when nothing runs):
    its own run (a profile or Find best settings) and the zoo runs of its zoo windows."""
    work = []
    if window.controller.busy:
        results = window.session.results
        done = sum(1 for r in results if r.ended)
        what = "Find best settings" if window.tune_run is not None else "a profile"
        work.append(f"{what} ({done} of {len(results)} configs done)")
    if window.script_window is not None and window.script_window.controller.busy:
        work.append("a script being profiled")
    if window.generation_window is not None and window.generation_window.controller.busy:
        work.append("a generation being profiled")
    for zoo_window in window.zoo_windows:
        if zoo_window.running:
            work.append(f"a zoo run ({zoo_window.progress.value()} of {zoo_window.progress.maximum()} jobs done)")
    return work


def ask_to_stop(parent: QWidget, work: list[str], on_stop: Callable[[], None], keeps: str) -> QMessageBox:
    """Ask whether to stop `work` and close; `on_stop` runs only on "Cancel the run and
    close". `keeps` says what survives the cancel. The box is window-modal, not blocking."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "A run is going",
        "Closing now cancels " + " and ".join(work) + f". {keeps}",
        QMessageBox.StandardButton.NoButton,
        parent,
    )
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setObjectName("close_question")
    stop = box.addButton(QUIT_TEXT, QMessageBox.ButtonRole.DestructiveRole)
    keep = box.addButton(KEEP_TEXT, QMessageBox.ButtonRole.RejectRole)
    box.setDefaultButton(keep)
    box.setEscapeButton(keep)
    box.finished.connect(lambda _: on_stop() if box.clickedButton() is stop else None)
    box.open()
    return box


def close_owned_windows(window: QWidget, others: list[QWidget]) -> None:
    """Close `others` (the zoo windows, which have no parent) and every visible top-level
    window parented under `window` (dialogs: Qt leaves them open when their parent closes)."""
    for other in list(others):
        other.close()
    for widget in QApplication.topLevelWidgets():
        if widget is window or not widget.isVisible():
            continue
        parent = widget.parentWidget()
        while parent is not None and parent is not window:
            parent = parent.parentWidget()
        if parent is window:
            widget.close()
