"""Driving `core.run.runner.JobRunner` from a worker thread and turning its events into Qt
signals.

The runner is plain, synchronous Python: `run_all` blocks until every job ended and calls
`on_event` on the thread that runs it. `ProfileWorker` lives on a QThread and re-emits each
event as `sig_event_received`, which Qt queues to the GUI thread. The jobs themselves run in
child processes, so the worker thread only waits on a pipe and the GUI thread stays free
(a compile on a thread of this process would hold the GIL for hundreds of ms).

`RunController` is what the window talks to: start, cancel, and the state the runner
pushes (never changed on a click). Cancel goes straight to the runner, from the GUI
thread: `JobRunner.cancel` may be called from any thread and is never lost, even when it
arrives before the worker thread has entered `run_all`.

A job's end can carry work that every view reads at once (its speedup interval, a bootstrap
of up to 5,000 values a resample: ~0.8 s for a 100,000-call job): `work_before_end` names it,
and the controller has it done on a thread of its own before it delivers the job's terminal
event, holding what comes after it (the next job's events, the run's end) so that they are
delivered in the order the runner sent them (the GUI thread never waits).
"""

from __future__ import annotations

import threading
from collections import deque
from typing import Callable

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.run.runner import JobRunner, RunListener, RunnerState, RunnerStatus
from core.vocab import events as ev
from core.vocab.config import JobSpec


class ProfileWorker(QObject, RunListener):
    """Runs a list of jobs on the thread it was moved to; the runner's listener."""

    sig_event_received = Signal(object)
    """A `core.vocab.events.Event` arrived from the running job (emitted on the worker thread)."""

    sig_status_changed = Signal(object)
    """The runner's `RunnerStatus` changed (emitted on the worker thread)."""

    sig_run_finished = Signal()
    """`run_all` returned: every job of the run has ended (emitted on the worker thread)."""

    def __init__(self):
        super().__init__()
        self._ended: set[str] = set()

    @Slot(object, object)
    def run(self, runner: JobRunner, specs: list[JobSpec]) -> None:
        """Worker thread: run every job; never raises. Should the runner itself fail, the
        jobs that had not ended yet end as failed with the error; ended ones stay as they are."""
        self._ended = set()
        try:
            runner.run_all(specs)
        except Exception as exc:  # a bug in the runner must not kill the thread silently
            for spec in specs:
                if spec.job_id not in self._ended:
                    self.sig_event_received.emit(ev.JobFailed(spec.job_id, reason=f"runner error: {exc!r}"))
        finally:
            self.sig_run_finished.emit()

    # ---- RunListener (worker thread)
    def on_event(self, event) -> None:
        self.sig_event_received.emit(event)

    def on_job_ended(self, index, total, spec, terminal) -> None:
        self._ended.add(spec.job_id)

    def on_status(self, status: RunnerStatus) -> None:
        self.sig_status_changed.emit(status)


class RunController(QObject):
    """Starts runs on a worker thread and re-emits the runner's state. GUI thread only.

    The state is pushed by the runner (`sig_status_changed`); nothing here polls it."""

    sig_event_received = Signal(object)
    """An event of the current run, delivered on the GUI thread."""

    sig_status_changed = Signal(object)
    """The runner's `RunnerStatus` changed (state, job, phase, job index/total, cancelling)."""

    sig_run_started = Signal()
    """A run began: the worker accepted the jobs."""

    sig_run_finished = Signal()
    """The run ended (completed, failed or cancelled); the controller is idle again."""

    _sig_start_requested = Signal(object, object)
    _sig_work_done = Signal()  # the work before a job's end is done (from its thread)

    def __init__(self, gpu=None, parent: QObject | None = None):
        super().__init__(parent)
        self._gpu = gpu
        self._thread = QThread()
        self._thread.setObjectName("profile-worker")
        self._worker = ProfileWorker()
        self._worker.moveToThread(self._thread)
        self._sig_start_requested.connect(self._worker.run)
        self._worker.sig_event_received.connect(self._on_event)
        self._worker.sig_status_changed.connect(self._on_status_changed)
        self._worker.sig_run_finished.connect(self._on_worker_finished)
        self._sig_work_done.connect(self._on_work_done)
        self._thread.start()
        self._runner: JobRunner | None = None
        self._busy = False
        self._status = RunnerStatus(RunnerState.IDLE)
        self.work_before_end: Callable[[ev.Event], Callable[[], object] | None] = lambda event: None
        """For a job's terminal event, the work to do off the GUI thread before it is delivered
        (None: none); called on the GUI thread. The window's: the job's speedup interval."""
        self._pending: deque = deque()  # events (and the run's end) not delivered yet, in order
        self._working = False  # a job's work before its end is running on its thread
        self._worked_for = None  # the terminal event whose work was done (delivered next)

    @property
    def pending(self) -> int:
        """Events (and the run's end) held behind a job's work before its end."""
        return len(self._pending)

    def set_gpu_monitor(self, gpu) -> None:
        self._gpu = gpu

    @property
    def busy(self) -> bool:
        """True from `start` until the worker reports the run finished."""
        return self._busy

    @property
    def cancelling(self) -> bool:
        """The runner has a cancel request it has not finished honouring."""
        return self._status.cancelling

    @property
    def status(self) -> RunnerStatus:
        """The runner's last pushed status."""
        return self._status

    def start(self, specs: list[JobSpec], wrap=None) -> None:
        """Run `specs`. `wrap`, when given, wraps the worker's listener in another one with
        the runner's listener interface and an `attach(runner)` (Find best settings passes
        core.decide.tune's BudgetListener, which skips and cancels jobs to keep to its budget)."""
        if self._busy:
            raise RuntimeError("a run is already in progress")
        listener = self._worker if wrap is None else wrap(self._worker)
        # The session folds the events (gui/session.py): the runner need not collect results.
        self._runner = JobRunner(listener=listener, gpu=self._gpu, collect=False)
        if listener is not self._worker:
            listener.attach(self._runner)
        self._busy = True
        self._sig_start_requested.emit(self._runner, list(specs))
        self.sig_run_started.emit()

    def cancel(self) -> None:
        """Ask the running job, and those queued after it, to stop (within ~50 ms); the
        runner pushes `cancelling` back, which is what the buttons follow."""
        if self._busy and self._runner is not None:
            self._runner.cancel()

    def shutdown(self, wait_ms: int = 15000) -> None:
        """Cancel any run and stop the worker thread (window closing)."""
        self.cancel()
        self._thread.quit()
        self._thread.wait(wait_ms)

    def _on_status_changed(self, status: RunnerStatus) -> None:
        self._status = status
        self.sig_status_changed.emit(status)

    def _on_event(self, event) -> None:
        self._pending.append(event)
        self._deliver()

    def _on_worker_finished(self) -> None:
        self._pending.append(self._on_run_finished)
        self._deliver()

    def _deliver(self) -> None:
        """Deliver what is pending, in order, until a job's terminal event has work to be done first."""
        while self._pending and not self._working:
            item = self._pending[0]
            if isinstance(item, ev.TERMINAL_EVENTS) and item is not self._worked_for:
                try:
                    work = self.work_before_end(item)
                except Exception:  # noqa: BLE001 - a bug there must not hold the run's events for ever
                    work = None
                if work is not None:
                    self._working, self._worked_for = True, item
                    threading.Thread(target=self._work, args=(work,), name="job-end", daemon=True).start()
                    return
            self._pending.popleft()
            if callable(item):
                item()
            else:
                self.sig_event_received.emit(item)

    def _work(self, work) -> None:  # its own thread; what it computes is read on the GUI thread after
        try:
            work()
        except Exception:  # noqa: BLE001 - computed again where the GUI reads it, and any error shown there
            pass
        try:
            self._sig_work_done.emit()
        except RuntimeError:  # the controller was deleted meanwhile (its window closed)
            pass

    def _on_work_done(self) -> None:
        self._working = False
        self._deliver()

    def _on_run_finished(self) -> None:
        self._busy = False
        self._runner = None
        self._status = RunnerStatus(RunnerState.IDLE)
        self.sig_run_finished.emit()
        self.sig_status_changed.emit(self._status)
