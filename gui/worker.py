"""Driving `core.runner.JobRunner` from a worker thread and turning its events into Qt
signals.

The runner is plain, synchronous Python: `run_all` blocks until every job ended and calls
`on_event` on the thread that runs it. `ProfileWorker` lives on a QThread and re-emits each
event as `sig_event_received`, which Qt queues to the GUI thread. The jobs themselves run in
child processes, so the worker thread only waits on a pipe and the GUI thread stays free
(a compile on a thread of this process would hold the GIL for hundreds of ms).

`RunController` is what the window talks to: start, cancel, and a state that changes when
the runner's does (never on a click). Cancel goes straight to the runner, from the GUI
thread: `JobRunner.cancel` may be called from any thread and is never lost, even when it
arrives before the worker thread has entered `run_all`.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from core.config import JobSpec
from core.runner import JobRunner, RunnerState, RunnerStatus


class ProfileWorker(QObject):
    """Runs a list of jobs on the thread it was moved to."""

    sig_event_received = Signal(object)
    """A `core.events.Event` arrived from the running job (emitted on the worker thread)."""

    sig_run_finished = Signal()
    """`run_all` returned: every job of the run has ended (emitted on the worker thread)."""

    @Slot(object, object)
    def run(self, runner: JobRunner, specs: list[JobSpec]) -> None:
        """Worker thread: run every job; never raises (a failure becomes a JobFailed)."""
        try:
            runner.run_all(specs)
        except Exception as exc:  # a bug in the runner must not kill the thread silently
            from core import events as ev

            for spec in specs:
                self.sig_event_received.emit(ev.JobFailed(spec.job_id, reason=f"runner error: {exc!r}"))
        finally:
            self.sig_run_finished.emit()

    def on_event(self, event) -> None:
        """Worker thread (the runner's callback)."""
        self.sig_event_received.emit(event)


class RunController(QObject):
    """Starts runs on a worker thread and reports the runner's state. GUI thread only."""

    sig_event_received = Signal(object)
    """An event of the current run, delivered on the GUI thread."""

    sig_status_changed = Signal(object)
    """The runner's `RunnerStatus` changed (state, job, phase, jobs done/total)."""

    sig_run_started = Signal()
    """A run began: the worker accepted the jobs."""

    sig_run_finished = Signal()
    """The run ended (completed, failed or cancelled); the controller is idle again."""

    _sig_start_requested = Signal(object, object)

    def __init__(self, gpu=None, parent: QObject | None = None):
        super().__init__(parent)
        self._gpu = gpu
        self._thread = QThread()
        self._thread.setObjectName("profile-worker")
        self._worker = ProfileWorker()
        self._worker.moveToThread(self._thread)
        self._sig_start_requested.connect(self._worker.run)
        self._worker.sig_event_received.connect(self.sig_event_received)
        self._worker.sig_run_finished.connect(self._on_run_finished)
        self._thread.start()
        self._runner: JobRunner | None = None
        self._busy = False
        self._cancelling = False
        self._last_status = RunnerStatus(RunnerState.IDLE)
        self._poll = QTimer(self)
        self._poll.setInterval(100)
        self._poll.timeout.connect(self._on_poll)

    def set_gpu_monitor(self, gpu) -> None:
        self._gpu = gpu

    @property
    def busy(self) -> bool:
        """True from `start` until the worker reports the run finished."""
        return self._busy

    @property
    def cancelling(self) -> bool:
        return self._cancelling

    @property
    def status(self) -> RunnerStatus:
        return self._runner.status if self._runner is not None else RunnerStatus(RunnerState.IDLE)

    def start(self, specs: list[JobSpec]) -> None:
        if self._busy:
            raise RuntimeError("a run is already in progress")
        self._runner = JobRunner(on_event=self._worker.on_event, gpu=self._gpu)
        self._busy, self._cancelling = True, False
        self._sig_start_requested.emit(self._runner, list(specs))
        self._poll.start()
        self.sig_run_started.emit()
        self._on_poll()

    def cancel(self) -> None:
        """Ask the running job, and those queued after it, to stop (within ~50 ms)."""
        if self._busy and self._runner is not None:
            self._cancelling = True
            self._runner.cancel()
            self._on_poll(force=True)

    def shutdown(self, wait_ms: int = 15000) -> None:
        """Cancel any run and stop the worker thread (window closing)."""
        self.cancel()
        self._thread.quit()
        self._thread.wait(wait_ms)

    def _on_poll(self, force: bool = False) -> None:
        status = self.status
        if force or status != self._last_status:
            self._last_status = status
            self.sig_status_changed.emit(status)

    def _on_run_finished(self) -> None:
        self._poll.stop()
        self._busy, self._cancelling = False, False
        self._runner = None
        self._on_poll(force=True)
        self.sig_run_finished.emit()
