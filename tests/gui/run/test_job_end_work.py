"""A job's end carries work every view reads at once (its speedup interval): the controller has it
done on a thread of its own before it delivers the job's terminal event, and delivers what came
after it (the next job's events, the run's end) in the runner's order (gui.run.worker, issue 22:
the GUI thread never waits)."""

from __future__ import annotations

import threading
import time

import pytest

from core.vocab import events as ev
from core.vocab import records as rec
from gui.run.worker import RunController


@pytest.fixture
def controller():
    """A controller whose worker thread is stopped after the test (a QThread destroyed while it
    runs aborts the process)."""
    made = RunController()
    yield made
    made.shutdown()


def test_what_follows_a_jobs_end_waits_for_its_work_and_keeps_its_order(qtbot, controller):
    delivered, worked = [], []
    release = threading.Event()

    def work():
        worked.append(threading.current_thread() is not threading.main_thread())
        release.wait(10)

    controller.work_before_end = lambda event: work if event.job_id == "a" else None
    controller.sig_event_received.connect(lambda e: delivered.append(type(e).__name__ + ":" + e.job_id))
    controller.sig_run_finished.connect(lambda: delivered.append("run finished"))
    controller._busy = True  # as start() leaves it
    worker = controller._worker
    worker.sig_event_received.emit(ev.LatencyMeasured("a", samples=(rec.LatencySample("eager", 0, 1.0),)))
    worker.sig_event_received.emit(ev.JobCompleted("a"))
    worker.sig_event_received.emit(ev.JobStarted("b", pid=2))
    worker.sig_event_received.emit(ev.JobCompleted("b"))
    worker.sig_run_finished.emit()
    qtbot.wait(100)
    # the GUI thread runs on while the work runs on its own thread; nothing after the end is delivered
    assert worked == [True] and delivered == ["LatencyMeasured:a"] and controller.busy and controller.pending == 4
    release.set()
    qtbot.waitUntil(lambda: not controller.busy, timeout=10_000)
    assert delivered == ["LatencyMeasured:a", "JobCompleted:a", "JobStarted:b", "JobCompleted:b", "run finished"]
    assert controller.pending == 0


def test_a_failing_work_or_hook_still_delivers_the_end(qtbot, controller):
    delivered = []

    def work():
        raise ValueError("a bug in the interval")

    controller.work_before_end = lambda event: work
    controller.sig_event_received.connect(lambda e: delivered.append(e.job_id))
    controller._worker.sig_event_received.emit(ev.JobFailed("a", reason="x"))
    qtbot.waitUntil(lambda: delivered == ["a"], timeout=10_000)

    def broken_hook(event):
        raise AttributeError("a bug in the hook")

    controller.work_before_end = broken_hook
    controller._worker.sig_event_received.emit(ev.JobFailed("b", reason="x"))
    qtbot.waitUntil(lambda: delivered == ["a", "b"], timeout=10_000)  # delivered, not held for ever


def test_a_runs_job_end_interval_is_not_computed_on_the_gui_thread(qtbot, window, monkeypatch):
    """In a real run of the app, the speedup interval of each job (the bootstrap) is computed on the
    controller's job-end thread, before the Summary's final row asks for it."""
    from core.analysis import stats
    from core.vocab.config import CompileConfig
    from tests.gui.helpers import GRAPH_BREAK_MODEL, RUN_TIMEOUT_MS

    threads = []
    original = stats.speedup

    def speedup(*args, **kwargs):
        if kwargs.get("resamples", 2000):
            threads.append(threading.current_thread().name)
        return original(*args, **kwargs)

    monkeypatch.setattr(stats, "speedup", speedup)
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    window.config_panel.queue.clear()
    window.config_panel.set_config(CompileConfig(backend="eager"))
    window.config_panel.iters.setValue(20)
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        assert window.run_profile()
    started = time.monotonic()
    row = window.summary_panel.model.summary(0)
    assert row["speedup_ci_low"] is not None and time.monotonic() - started < 0.5
    assert threads and set(threads) == {"job-end"}, threads
