"""One of our own commands (`python main.py bundle|localize ...`) run for the app in a QProcess:
from the project's folder, with a time limit, its progress lines read as they come, its end
handed back with what it printed. The app's process never imports torch for it and the GUI
thread never waits on it (gui.window.bug_report, gui.window.localize_run). GUI thread only.
"""

from __future__ import annotations

import os
import signal

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from core import PROJECT_ROOT


class HelperProcess(QObject):
    """At most one command at a time. `name` says what it is in a failure ("the helper process");
    `too_long` is the sentence for a command stopped at `timeout_ms` ({minutes} is filled in)."""

    sig_progress = Signal(str)
    """The newest line the command wrote to stderr (when started with `progress=True`)."""

    sig_ended = Signal(int, bool, str, str)
    """It ended by itself: exit code, whether it exited normally, its stdout, its stderr's last line."""

    sig_failed = Signal(str)
    """It could not start, or it ran past its time and was killed: the sentence."""

    def __init__(self, parent: QObject, name: str, timeout_ms: int, too_long: str):
        super().__init__(parent)
        self.name, self.timeout_ms, self.too_long = name, timeout_ms, too_long
        self.process: QProcess | None = None
        self.last_line = ""  # the newest stderr line read
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self._on_timeout)

    @property
    def busy(self) -> bool:
        return self.process is not None

    def start(self, command: list[str], progress: bool = False) -> None:
        process = QProcess(self)  # a child of this helper; its slots are bound methods
        process.setWorkingDirectory(PROJECT_ROOT)
        if progress:
            process.readyReadStandardError.connect(self._read_progress)
        process.finished.connect(self._on_finished)
        process.errorOccurred.connect(self._on_error)
        self.process, self.last_line = process, ""
        self._timer.start(self.timeout_ms)
        process.start(command[0], command[1:])

    def stop(self, interrupt: bool = False) -> None:
        """End the command now (the window closes): `interrupt` sends it SIGINT first, as Ctrl+C
        (it cancels its job and ends its children), and kills it after 5 s; else it is killed."""
        process, self.process = self.process, None
        self._timer.stop()
        if process is None:
            return
        process.finished.disconnect(self._on_finished)
        pid = process.processId()
        if interrupt and pid:
            try:
                os.kill(pid, signal.SIGINT)
            except OSError:
                pass
            if process.waitForFinished(5000):
                return
        process.kill()
        process.waitForFinished(2000)

    def _read_progress(self) -> None:
        if self.process is None:
            return
        text = bytes(self.process.readAllStandardError()).decode("utf-8", "replace")
        lines = [t.strip() for t in text.splitlines() if t.strip()]
        if lines:
            self.last_line = lines[-1]
            self.sig_progress.emit(self.last_line)

    def _on_error(self, error) -> None:
        if error == QProcess.ProcessError.FailedToStart and self.process is not None:
            why = self.process.errorString()
            self._end()
            self.sig_failed.emit(f"{self.name} could not start ({why}).")

    def _on_timeout(self) -> None:
        if self.process is not None:
            process = self.process
            self._end()
            process.kill()
            self.sig_failed.emit(self.too_long.format(minutes=self.timeout_ms // 60000))

    def _on_finished(self, code: int, status) -> None:
        process = self.sender()
        if process is not self.process:  # already dealt with (timed out, failed to start)
            return
        self._read_progress()
        out = bytes(process.readAllStandardOutput()).decode("utf-8", "replace")
        err = bytes(process.readAllStandardError()).decode("utf-8", "replace").strip().splitlines()
        last = err[-1] if err else self.last_line
        self._end()
        self.sig_ended.emit(code, status == QProcess.ExitStatus.NormalExit, out, last)

    def _end(self) -> None:
        self._timer.stop()
        process, self.process = self.process, None
        if process is not None:
            process.deleteLater()
