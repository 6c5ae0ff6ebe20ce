"""A user's script profiled from the app: core.run.script_process.ScriptProfile on a worker thread,
its output and events re-emitted as Qt signals to the GUI thread.

The worker thread only waits on the script's child processes (the same runner as `main.py
run`); what the script prints and what its child reports reach the GUI thread as queued
signals, where gui.window.script_window shows them. The controller is GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.run.script_process import ScriptProfile
from core.vocab.script_job import ScriptJob


class ScriptWorker(QObject):
    """Runs one ScriptProfile on its thread; every callback becomes a signal."""

    sig_run_started = Signal(str)
    sig_output = Signal(str, str, str)
    sig_event = Signal(str, object)
    sig_finished = Signal(object, str)

    def __init__(self):
        super().__init__()
        self.profile: ScriptProfile | None = None
        self.cancel_requested = False  # a cancel before the profile existed (set first, read after)
        self.outcome: tuple | None = None  # (result, error) once run() returned

    def cancel(self) -> None:
        """Any thread."""
        self.cancel_requested = True
        if self.profile is not None:
            self.profile.cancel()

    @Slot(object, bool, int)
    def run(self, job: ScriptJob, baseline: bool, repeat: int) -> None:
        self.profile = ScriptProfile(
            job,
            baseline=baseline,
            repeat=repeat,
            on_output=self.sig_output.emit,
            on_event=self.sig_event.emit,
            on_run=self.sig_run_started.emit,
        )
        if self.cancel_requested:
            self.profile.cancel()
        try:
            self.outcome = (self.profile.run(), "")
        except Exception as exc:  # noqa: BLE001 - the app says why and keeps going
            self.outcome = (None, f"{type(exc).__name__}: {exc}")
        self.sig_finished.emit(*self.outcome)


class ScriptRunController(QObject):
    """Starts a script's profile on a worker thread; cancel and wait. GUI thread only."""

    sig_run_started = Signal(str)
    """A run of the script started: "compiled" or "eager"."""

    sig_output = Signal(str, str, str)
    """The script printed: (run, "stdout" or "stderr", text)."""

    sig_event = Signal(str, object)
    """The script's child reported: (run, the event dict: core.vocab.script_job)."""

    sig_finished = Signal(object, str)
    """It ended: (core.analysis.script_results.ScriptResult or None, an error sentence or "")."""

    _sig_run = Signal(object, bool, int)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: ScriptWorker | None = None
        self.cancelled = False

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, job: ScriptJob, baseline: bool, repeat: int = 1) -> None:
        if self.busy:
            raise RuntimeError("a script is being profiled already")
        self.cancelled = False
        self._worker = ScriptWorker()
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._worker.sig_run_started.connect(self.sig_run_started)
        self._worker.sig_output.connect(self.sig_output)
        self._worker.sig_event.connect(self.sig_event)
        self._worker.sig_finished.connect(self._on_finished)
        self._sig_run.connect(self._worker.run)
        self._thread.start()
        self._sig_run.emit(job, baseline, repeat)

    def cancel(self) -> None:
        """Stop the script (SIGINT to its process group, SIGKILL after a grace): what it did is kept."""
        if self._worker is not None:
            self.cancelled = True
            self._worker.cancel()

    def wait(self, timeout_ms: int = 30_000) -> None:
        """Cancel and wait for the worker (the window closes)."""
        if self._thread is not None:
            self.cancel()
            self._thread.quit()
            self._thread.wait(timeout_ms)
            worker = self._worker
            if worker is not None and worker.outcome is not None:  # its queued end is not waited for
                self._on_finished(*worker.outcome)

    def _on_finished(self, result, error: str) -> None:
        if self._thread is None:  # shown already (wait() took it first)
            return
        thread, worker = self._thread, self._worker
        self._thread = self._worker = None
        self._sig_run.disconnect()
        if thread is not None:
            thread.quit()
            thread.wait()
        if worker is not None:
            worker.deleteLater()
        self.sig_finished.emit(result, error)
