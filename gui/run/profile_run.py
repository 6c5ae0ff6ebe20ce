"""A profile that runs the user's programs in child processes, from the app: a user's script
(core.run.script_process.ScriptProfile) or a series of generation configs
(core.run.generation.GenerationSeries), on a worker thread, every callback re-emitted as a Qt
signal to the GUI thread.

The worker thread only waits on the child processes (the same runners as `main.py run` and
`profile --task generate`); what they print and report reaches the GUI thread as queued signals,
where gui.window.script_window and gui.window.generation_window show them. The controller is GUI
thread only.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.run.script_process import ScriptProfile
from core.vocab.script_job import ScriptJob

# make(on_run=..., on_event=..., on_output=..., on_result=...) -> an object with run() and cancel()
MakeProfile = Callable[..., object]


class ProfileWorker(QObject):
    """Runs one profile on its thread; every callback becomes a signal."""

    sig_run_started = Signal(object)
    sig_output = Signal(object, str, str)
    sig_event = Signal(object, object)
    sig_result = Signal(object)
    sig_finished = Signal(object, str)

    def __init__(self):
        super().__init__()
        self.profile = None
        self.cancel_requested = False  # a cancel before the profile existed (set first, read after)
        self.outcome: tuple | None = None  # (result, error) once run() returned

    def cancel(self) -> None:
        """Any thread."""
        self.cancel_requested = True
        if self.profile is not None:
            self.profile.cancel()

    @Slot(object)
    def run(self, make: MakeProfile) -> None:
        try:
            self.profile = make(
                on_run=self.sig_run_started.emit,
                on_event=self.sig_event.emit,
                on_output=self.sig_output.emit,
                on_result=self.sig_result.emit,
            )
            if self.cancel_requested:
                self.profile.cancel()
            self.outcome = (self.profile.run(), "")
        except Exception as exc:  # noqa: BLE001 - the app says why and keeps going
            self.outcome = (None, f"{type(exc).__name__}: {exc}")
        self.sig_finished.emit(*self.outcome)


def script_profile(job: ScriptJob, baseline: bool, repeat: int) -> MakeProfile:
    """A user's script, as written and (with `baseline`) under force_eager, `repeat` pairs."""

    def make(on_run, on_event, on_output, on_result):
        return ScriptProfile(
            job, baseline=baseline, repeat=repeat, on_output=on_output, on_event=on_event, on_run=on_run
        )

    return make


class ProfileRunController(QObject):
    """Starts a profile on a worker thread; cancel and wait. GUI thread only."""

    sig_run_started = Signal(object)
    """A run started: "compiled" or "eager" (a script), or (config label, side) (generation)."""

    sig_output = Signal(object, str, str)
    """A run printed: (its run, "stdout" or "stderr", text)."""

    sig_event = Signal(object, object)
    """A run's child reported: (its run, the event dict: core.vocab.script_job)."""

    sig_result = Signal(object)
    """A part of the profile ended (a generation config's GenerationResult)."""

    sig_finished = Signal(object, str)
    """It ended: (what the profile's run() returned, or None; an error sentence or "")."""

    _sig_run = Signal(object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: ProfileWorker | None = None
        self.cancelled = False

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, make: MakeProfile) -> None:
        if self.busy:
            raise RuntimeError("a profile is running already")
        self.cancelled = False
        self._worker = ProfileWorker()
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._worker.sig_run_started.connect(self.sig_run_started)
        self._worker.sig_output.connect(self.sig_output)
        self._worker.sig_event.connect(self.sig_event)
        self._worker.sig_result.connect(self.sig_result)
        self._worker.sig_finished.connect(self._on_finished)
        self._sig_run.connect(self._worker.run)
        self._thread.start()
        self._sig_run.emit(make)

    def cancel(self) -> None:
        """Stop the child (SIGINT to its process group, SIGKILL after a grace): what it did is kept."""
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
