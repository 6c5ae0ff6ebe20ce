"""File → Open zoo report…: a window with the Zoo view (gui.panels.zoo) over a zoo folder
written by `python main.py zoo` (or started from here, gui.run.zoo_run). Clicking a cell
opens that model's report in the main window's usual views (its open_session path). A zoo
still being written (zoo.json says not finished) is re-read when it changes, so a sweep
running on the command line or a cluster fills in live. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence
from PySide6.QtWidgets import QFileDialog, QMainWindow, QProgressBar, QPushButton, QWidget

from core.capture.compile_watch import stage_in
from core.report.files import ReportError
from core.zoo.files import load_zoo
from core.zoo.results import Zoo
from gui.panels.zoo import ZooPanel
from gui.widgets.actions import make_action
from gui.widgets.fitting_label import ElidedLabel
from gui.window.app_window import AppWindow

RELOAD_MS = 2000


class ZooWindow(QMainWindow):
    """One zoo. `main` is the app's main window (where a clicked job opens). GUI thread only."""

    sig_report_opened = Signal(str, str)
    """A clicked job's report was opened in the main window: (report folder, config)."""

    def __init__(self, main, parent: QWidget | None = None):
        super().__init__(parent)
        self.main = main
        self.path = ""
        self.zoo: Zoo | None = None
        self._mtime = 0.0
        self.panel = ZooPanel()
        self.panel.sig_job_chosen.connect(self._on_job_chosen)
        self.setCentralWidget(self.panel)
        self.reload_action = make_action(
            self,
            "Reload",
            QKeySequence.StandardKey.Refresh,
            "Read the zoo's files again",
            lambda: self.reload(force=True),
        )
        menu = self.menuBar().addMenu("&Zoo")
        menu.addAction(self.reload_action)
        menu.addAction(make_action(self, "Close", QKeySequence.StandardKey.Close, "Close this zoo", self.close))
        self.controller = None  # a gui.run.zoo_run.ZooRunController while a run from here goes on
        self.closing_with_main = False  # the main window is closing: no question, the run is cancelled
        self._close_confirmed = False
        # What the window says (a running job's whole detail, say): a line of the status bar
        # shortened to the room the progress bar leaves, whole on hover (the status bar's own
        # message would be cut at the progress bar: "...inductor: compiling forw").
        self.status_line = ElidedLabel()
        self.statusBar().addWidget(self.status_line, 1)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m jobs")
        # its words whole beside the status line, which takes the rest of the room
        self.progress.setMinimumWidth(self.progress.fontMetrics().horizontalAdvance("9999 of 9999 jobs") + 40)
        self.cancel_button = QPushButton("Cancel run")
        self.cancel_button.setToolTip("Stop the running job and the queued ones; what was measured is kept")
        for widget in (self.progress, self.cancel_button):
            self.statusBar().addPermanentWidget(widget)
            widget.hide()
        self._timer = QTimer(self)
        self._timer.setInterval(RELOAD_MS)
        self._timer.timeout.connect(self.reload)
        self.resize(1000, 560)
        self.setWindowTitle("zoo")  # the platform adds " — compile-profiler" (the app's display name)

    def open(self, path: str) -> bool:
        """Read the zoo at `path` (its folder or zoo.json); False, with the error shown in the
        main window, when it cannot be read (what was on screen stays)."""
        try:
            zoo = load_zoo(path)
        except ReportError as exc:
            self.main.show_error(
                f"Cannot open {os.path.basename(path.rstrip('/')) or path}",
                f"{exc}\nWhat was on screen stays as it was.",
            )
            return False
        self.show_zoo(zoo)
        return True

    def show_zoo(self, zoo: Zoo) -> None:
        self.zoo, self.path = zoo, zoo.path
        self._mtime = self._zoo_mtime()
        self.panel.show_zoo(zoo)
        self.setWindowTitle(f"zoo {os.path.basename(zoo.path) or zoo.path}")
        self.say("Click a cell to open that model's report in the main window.")
        if zoo.finished:
            self._timer.stop()
        else:
            self._timer.start()

    def say(self, text: str) -> None:
        """Say `text` in the status bar (shortened to its room, whole on hover)."""
        self.status_line.setText(text)

    def reload(self, force: bool = False) -> None:
        """Re-read the zoo when its zoo.json changed (or always, `force`)."""
        if not self.path or (not force and self._zoo_mtime() == self._mtime):
            return
        try:
            self.show_zoo(load_zoo(self.path))
        except ReportError as exc:
            self.say(f"Could not re-read the zoo: {exc}")

    def _zoo_mtime(self) -> float:
        try:
            return os.path.getmtime(os.path.join(self.path, "zoo.json"))
        except OSError:
            return 0.0

    def _on_job_chosen(self, folder: str, config: str) -> None:
        report = os.path.join(folder, "report.json")
        if not os.path.exists(report):
            self.say(f"{folder} holds no report yet (its jobs have not run).")
            return
        if self.main.open_session(report):
            self.main.raise_()
            self.main.activateWindow()
            self.sig_report_opened.emit(folder, config)

    # ------------------------------------------------------------------ a run started from the app

    def follow(self, sweep, jobs) -> None:
        """Run a prepared sweep's jobs here (gui.run.zoo_run) and show the zoo as they end."""
        from gui.run.zoo_run import ZooRunController

        self.controller = ZooRunController(self)
        self.controller.sig_job_started.connect(self._on_zoo_job_started)
        self.controller.sig_job_ended.connect(self._on_zoo_job_ended)
        self.controller.sig_phase_changed.connect(self._on_zoo_phase_changed)
        self.controller.sig_finished.connect(self._on_zoo_finished)
        self.cancel_button.clicked.connect(self._on_cancel_clicked)
        self.show_zoo(sweep.zoo(finished=False))
        self._timer.stop()  # the run tells us; no need to read the files
        self.progress.setRange(0, max(1, len(jobs)))
        self.progress.setValue(0)
        for widget in (self.progress, self.cancel_button):
            widget.show()
        self.controller.start(sweep, jobs)

    def _on_zoo_job_started(self, job, node: str) -> None:
        self.panel.model.set_running(job.model, job.spec.config.label)
        self.say(f"Running {job.label}" + (f" on {node}" if node else ""))

    def _on_zoo_phase_changed(self, job, phase: str, detail: str) -> None:
        """The running cell says the phase (while it compiles: the compiler's stage), the status
        bar the whole detail."""
        self.panel.model.set_running_phase(stage_in(detail) or phase, detail)
        self.say(f"Running {job.label}: {detail or phase}")

    def _on_zoo_job_ended(self, job, zoo) -> None:
        self.panel.model.set_running(None, None)
        self.panel.show_zoo(zoo)
        self.zoo = zoo
        self.progress.setValue(job.index)

    def _on_zoo_finished(self, zoo, error: str) -> None:
        self.panel.model.set_running(None, None)
        for widget in (self.progress, self.cancel_button):
            widget.hide()
        if zoo is not None:
            self.show_zoo(zoo)
        if error:
            self.main.show_error("The zoo run stopped", error)
        else:
            self.say(f"Zoo written to {zoo.path}. Click a cell to open that model's report.")

    def _on_cancel_clicked(self) -> None:
        if self.controller is not None and self.controller.busy:
            self.cancel_button.setEnabled(False)
            self.say("Cancelling…")
            self.controller.cancel()

    @property
    def running(self) -> bool:
        """A zoo run started from here is going."""
        return self.controller is not None and self.controller.busy

    def closeEvent(self, event) -> None:
        """Asks first while its run is going (gui.window.closing), unless the main window
        asked already; the cancelled run's files keep every job that ended."""
        if self.running and not (self._close_confirmed or self.closing_with_main):
            from gui.window.closing import ask_to_stop

            event.ignore()
            done = f"{self.progress.value()} of {self.progress.maximum()} jobs done"
            ask_to_stop(
                self, [f"this zoo run ({done})"], self._close_confirmed_now, "Its files keep every job that ended."
            )
            return
        self._timer.stop()
        if self.controller is not None and self.controller.busy:
            self.controller.wait()  # cancels; the files hold what was measured
        super().closeEvent(event)

    def _close_confirmed_now(self) -> None:
        self._close_confirmed = True
        self.close()


def ask_zoo(parent: QWidget, folder: str) -> str:
    path, _ = QFileDialog.getOpenFileName(
        parent, "Open zoo report", folder, "compile-profiler zoo (zoo.json);;All files (*)"
    )
    return path


def open_zoo(window: AppWindow, path: str | None = None) -> ZooWindow | None:
    """File → Open zoo report…: a Zoo window over `path` (asks for the zoo.json when None).
    The zoo window is kept by the main window (`window.zoo_windows`) while it is open."""
    if path is None:
        path = ask_zoo(window, window.folders.get("zoo"))
        if not path:
            return None
        window.folders.remember("zoo", os.path.dirname(os.path.dirname(os.path.abspath(path))))  # beside its zoo
    zoo_window = ZooWindow(window)
    if not zoo_window.open(path):
        zoo_window.deleteLater()
        return None
    keep(window, zoo_window).show()
    return zoo_window


def keep(window: AppWindow, zoo_window: ZooWindow) -> ZooWindow:
    """Keep `zoo_window` alive while it is open (in `window.zoo_windows`); it is deleted on close."""
    zoo_window.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    windows = window.zoo_windows
    windows.append(zoo_window)
    zoo_window.destroyed.connect(lambda *_: windows.remove(zoo_window) if zoo_window in windows else None)
    return zoo_window
