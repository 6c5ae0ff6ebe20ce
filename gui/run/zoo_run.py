"""Running a zoo from the app: core.zoo.sweep's sweep and local executor on a worker thread,
their hooks turned into Qt signals (as gui.run.worker does for one run).

The sweep writes every model's report and the zoo's files as jobs end, exactly as
`python main.py zoo` does; the window only shows it. Cancel goes straight to the executor
(any thread may call it); every job still ends, cancelled ones included, and the sweep's
files are written before `sig_finished`.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QThread, Signal, Slot

from core.vocab import events as ev
from core.zoo.sweep import LocalExecutor, ZooJob, ZooListener, ZooSweep


class ZooWorker(QObject, ZooListener):
    """Runs one sweep on the thread it was moved to; the sweep's listener (its hooks are
    called on the executor's threads and re-emitted as queued signals)."""

    sig_job_started = Signal(object, str)
    """A job started: (ZooJob, node; "" on this machine)."""

    sig_job_ended = Signal(object, object)
    """A job ended: (ZooJob, the zoo as it stands, a core.zoo.results.Zoo)."""

    sig_finished = Signal(object, str)
    """The sweep ended: (the final Zoo or None, an error sentence or "")."""

    sig_phase_changed = Signal(object, str, str)
    """The running job's phase or its detail changed: (ZooJob, phase, detail)."""

    def __init__(self, sweep: ZooSweep):
        super().__init__()
        self.sweep = sweep
        sweep.inner = self

    @Slot(object, object)
    def run(self, executor, jobs: list[ZooJob]) -> None:
        """Worker thread: run every job, then write the final files; never raises."""
        zoo, error = None, ""
        try:
            executor.run(jobs, self.sweep)
        except Exception as exc:  # a bug must not leave the window waiting
            error = f"the zoo run stopped: {exc!r}"
        finally:
            try:
                zoo = self.sweep.finish()
            except Exception as exc:  # noqa: BLE001 - said to the user
                error = error or f"the zoo's files could not be written: {exc}"
            self.sig_finished.emit(zoo, error)

    def on_job_started(self, job: ZooJob, node: str = "") -> None:
        self.sig_job_started.emit(job, node)

    def on_event(self, job: ZooJob, event) -> None:
        if isinstance(event, ev.PhaseChanged):
            self.sig_phase_changed.emit(job, event.phase, event.detail)

    def on_job_ended(self, job: ZooJob, result) -> None:
        self.sig_job_ended.emit(job, self.sweep.zoo(finished=False))


class ZooRunController(QObject):
    """Starts a sweep on a worker thread and re-emits its progress. GUI thread only."""

    sig_job_started = Signal(object, str)
    """A job started: (ZooJob, node)."""

    sig_job_ended = Signal(object, object)
    """A job ended: (ZooJob, the zoo as it stands)."""

    sig_finished = Signal(object, str)
    """The sweep ended: (the final Zoo or None, an error sentence or "")."""

    sig_phase_changed = Signal(object, str, str)
    """The running job's phase or its detail changed: (ZooJob, phase, detail)."""

    _sig_run = Signal(object, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: ZooWorker | None = None
        self._executor: LocalExecutor | None = None
        self.total = 0

    @property
    def busy(self) -> bool:
        return self._thread is not None

    def start(self, sweep: ZooSweep, jobs: list[ZooJob], parallel: int = 1) -> None:
        """Run `jobs` of a prepared sweep (ZooSweep.prepare claimed its folders)."""
        if self.busy:
            raise RuntimeError("a zoo run is already going")
        self.total = len(jobs)
        self._executor = LocalExecutor(parallel)
        self._worker = ZooWorker(sweep)
        self._thread = QThread(self)
        self._worker.moveToThread(self._thread)
        self._worker.sig_job_started.connect(self.sig_job_started)
        self._worker.sig_job_ended.connect(self.sig_job_ended)
        self._worker.sig_phase_changed.connect(self.sig_phase_changed)
        self._worker.sig_finished.connect(self._on_finished)
        self._sig_run.connect(self._worker.run)
        self._thread.start()
        self._sig_run.emit(self._executor, jobs)

    def cancel(self) -> None:
        if self._executor is not None:
            self._executor.cancel()

    def wait(self, timeout_ms: int = 30_000) -> None:
        """Cancel and wait for the worker (closing the window)."""
        if self._thread is not None:
            self.cancel()
            self._thread.quit()
            self._thread.wait(timeout_ms)

    def _on_finished(self, zoo, error: str) -> None:
        thread, worker = self._thread, self._worker
        self._thread = self._worker = self._executor = None
        self._sig_run.disconnect()
        if thread is not None:
            thread.quit()
            thread.wait()
        if worker is not None:
            worker.deleteLater()
        self.sig_finished.emit(zoo, error)
