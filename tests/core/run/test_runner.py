"""The runner with real child processes: crashes, timeouts and cancels keep partial results."""

import os

import psutil
import pytest

from core import PROJECT_ROOT as ROOT
from core.run.job_endings import TIMEOUT_GUESSES, FinishReason, reason_of
from core.run.job_process import describe_exit
from core.run.runner import JobRunner, RunListener, RunnerState
from core.vocab import events as ev
from core.vocab import records as rec
from tests.core.helpers import MLP_MODEL, make_spec

# maybe_misbehave() runs eagerly (compiler.disable), counting model calls: the eager check
# is call 1, eager warm-up calls 2-3, the compile call 4, compiled warm-up 5-6.
MISBEHAVING_MODEL = """\
import os, time
import torch

CALLS = [0]


@torch.compiler.disable
def maybe_misbehave():
    CALLS[0] += 1
    if CALLS[0] >= {at_call}:
        {action}


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        maybe_misbehave()
        return self.lin(x)


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(2, 8),)
"""


class _Reasons(RunListener):
    """Forwards events to `on_event` and keeps each job's finish reason, as the runner's status said it."""

    def __init__(self, on_event=None):
        self.forward, self.reasons, self.statuses = on_event, [], []

    def on_event(self, event):
        if self.forward is not None:
            self.forward(event)

    def on_status(self, status):
        ended = status.state == RunnerState.IDLE and (not self.statuses or self.statuses[-1].state != RunnerState.IDLE)
        self.statuses.append(status)
        if ended:  # a job ended (the batch's end may push the idle status again, not cancelling)
            self.reasons.append(status.finish_reason)


def test_completed_job_streams_every_event_kind(write_model):
    events = []
    runner = JobRunner(on_event=events.append, sample_interval_s=0.1)
    result = runner.run(make_spec(write_model(MLP_MODEL), iters=20))
    assert result.status == "completed", result.failure_reason + result.failure_detail
    kinds = {e.kind for e in events}
    assert {
        "JobStarted",
        "PhaseChanged",
        "ModelLoaded",
        "LatencyMeasured",
        "CompileFinished",
        "MemoryMeasured",
        "ResourceSampled",
        "JobCompleted",
    } <= kinds
    assert all(e.job_id == result.job_id for e in events)
    assert len(result.latencies("compiled")) == 20
    assert result.resources and all(s.rss_mb >= 0 for s in result.resources)
    assert {s.phase for s in result.resources} & {"load", "eager"}
    assert runner.status.state == RunnerState.IDLE
    assert runner.status.finish_reason == FinishReason.COMPLETED


def test_child_abort_fails_the_job_and_keeps_partial_results(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=6, action="os.abort()"), "abort.py")
    runner = JobRunner()
    result = runner.run(make_spec(path, warmup=2))
    assert result.status == "failed"
    assert "aborted (SIGABRT)" in result.failure_reason
    assert runner.status.finish_reason == FinishReason.CRASHED
    assert len(result.latencies("eager", include_warmup=True)) == 2  # eager warm-up survived
    assert result.compile is not None  # the compile finished before the crash


def test_hung_job_times_out_and_keeps_partial_results(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=4, action="time.sleep(600)"), "hang.py")
    pids = []
    runner = JobRunner(on_event=lambda e: pids.append(e.pid) if isinstance(e, ev.JobStarted) else None)
    result = runner.run(make_spec(path, warmup=2, timeout_s=15))
    assert result.status == "failed"
    assert "timed out after 15 s during the compile phase" in result.failure_reason
    assert runner.status.finish_reason == FinishReason.TIMEOUT
    assert len(result.latencies("eager", include_warmup=True)) == 2
    assert pids and not _running(pids[0])  # the hung child was ended, not left behind


def test_a_hang_while_the_calls_are_timed_is_not_called_a_compile():
    """The reported case: "(a hung or very slow compile?)" was said for a hang in the benchmark
    phase too. Each phase has its own guess; only the compile phases blame the compiler."""
    assert set(rec.PHASES) <= set(TIMEOUT_GUESSES)
    assert "compile" in TIMEOUT_GUESSES["compile"]
    assert "compile" not in TIMEOUT_GUESSES["benchmark"] and "timed call" in TIMEOUT_GUESSES["benchmark"]


def test_hung_benchmark_times_out_naming_the_timed_calls(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=12, action="time.sleep(600)"), "hang_late.py")
    phases = []
    runner = JobRunner(on_event=lambda e: phases.append(e.phase) if isinstance(e, ev.PhaseChanged) else None)
    result = runner.run(make_spec(path, warmup=1, iters=50, timeout_s=15))
    assert result.status == "failed" and phases[-1] == "benchmark", (phases, result.failure_reason)
    assert "timed out after 15 s during the benchmark phase (a hung or very slow timed call" in result.failure_reason
    assert "compile?" not in result.failure_reason
    assert runner.status.finish_reason == FinishReason.TIMEOUT


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_cancel_mid_run_ends_child_and_queue(write_model):
    path = write_model(MLP_MODEL)
    runner = None
    pids = []

    def on_event(event):
        if isinstance(event, ev.JobStarted):
            pids.append(event.pid)
        if isinstance(event, ev.LatencyMeasured) and any(not s.warmup and s.side == "compiled" for s in event.samples):
            runner.cancel()  # from inside the callback, as a GUI button would from another thread

    reasons = _Reasons(on_event)
    runner = JobRunner(listener=reasons)
    results = runner.run_all([make_spec(path, iters=1_000_000), make_spec(path)])
    first, second = results
    assert first.status == "cancelled" and "benchmark" in first.failure_reason
    assert len(first.latencies("compiled"))  # what was measured before the cancel stays
    assert second.status == "cancelled" and not second.samples
    assert pids and not _running(pids[0])
    assert runner.status.state == RunnerState.IDLE
    assert reasons.reasons == [FinishReason.CANCELLED, FinishReason.CANCELLED]


def test_a_cancel_in_a_further_process_keeps_the_processes_before_it(write_model):
    """Ctrl+C while process 3 of 3 started: processes 1 and 2 had been timed whole (the first
    compiled, checked accuracy), yet the job read "cancelled during start-up" and left the
    verdict. Now it completes with the processes it has, says the last one was stopped, and the
    cancel still ends the queue after it."""
    path = write_model(MLP_MODEL)
    runner = None

    def on_event(event):
        if isinstance(event, ev.PhaseChanged) and event.process == 2:  # the third process began
            runner.cancel()

    reasons = _Reasons(on_event)
    runner = JobRunner(listener=reasons)
    try:
        first, second = runner.run_all([make_spec(path, iters=20, processes=3), make_spec(path)])
    finally:
        runner.close()
    assert first.status == rec.JobStatus.COMPLETED and first.accuracy is not None
    ended = first.processes_ended
    assert [p.status for p in ended] == ["completed", "cancelled"], ended
    assert ended[1].process == 2 and ended[1].reason.startswith("stopped during its")
    assert {s.process for s in first.samples if not s.warmup} >= {0, 1}  # both whole processes kept
    assert first.summary()["speedup"] is not None
    assert "process 3 was stopped (stopped during its" in " ".join(first.quality().notes)
    assert second.status == rec.JobStatus.CANCELLED and second.failure_reason == "cancelled before it started"
    assert runner.status.state == RunnerState.IDLE
    assert reasons.reasons == [FinishReason.STOPPED, FinishReason.CANCELLED]  # the first completed, stopped


def test_describe_exit():
    assert "segmentation fault" in describe_exit(-11)
    # a SIGKILL from a person is not blamed on memory; only when memory was near the limit
    assert "killed (SIGKILL)" in describe_exit(-9) and "memory" not in describe_exit(-9)
    assert "out of memory" in describe_exit(-9, memory_tight=True)
    assert "code 3" in describe_exit(3)


def test_sigkill_from_outside_is_named_as_such(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=4, action="os.kill(os.getpid(), 9)"), "killed.py")
    runner = JobRunner()
    result = runner.run(make_spec(path, warmup=2))
    assert result.status == "failed"
    assert "killed (SIGKILL)" in result.failure_reason and "memory" not in result.failure_reason
    assert runner.status.finish_reason == FinishReason.CRASHED


def test_a_job_that_fails_by_itself_is_failed_not_crashed(write_model):
    """The job process reported its own failure (the model raised): the runner says "failed",
    and keeps "crashed" for a process that died or sent what is not an event."""
    path = write_model(MISBEHAVING_MODEL.format(at_call=1, action="raise RuntimeError('boom')"), "raises.py")
    reasons = _Reasons()
    runner = JobRunner(listener=reasons)
    result = runner.run(make_spec(path, warmup=1))
    assert result.status == "failed" and "boom" in result.failure_reason + result.failure_detail
    assert runner.status.finish_reason == FinishReason.FAILED and reasons.reasons == [FinishReason.FAILED]
    assert all(s.finish_reason is None for s in reasons.statuses[:-1])  # none while it runs
    assert reasons.statuses[0].state == RunnerState.STARTING


def test_the_finish_reasons():
    assert reason_of(ev.JobCompleted("j")) == FinishReason.COMPLETED
    assert reason_of(ev.JobFailed("j", reason="x")) == FinishReason.FAILED
    assert reason_of(ev.JobCancelled("j")) == FinishReason.CANCELLED
    assert {r for r in FinishReason if r.cancelled} == {FinishReason.CANCELLED, FinishReason.STOPPED}
    assert str(FinishReason.TIMEOUT) == "timeout" and FinishReason.CRASHED == "crashed"


# With warmup=2 the benchmark starts at model call 7; blocks of 25 (100 iterations): calls
# 7-31 eager, 32-36 compiled, so misbehaving at call 37 comes after exactly 30 timed calls,
# all within one 100 ms batch that was never sent.
@pytest.mark.parametrize("action,timeout", [("os.abort()", 120), ("time.sleep(600)", 25)])
def test_no_timed_sample_is_lost_on_a_crash_or_hang(write_model, action, timeout):
    path = write_model(MISBEHAVING_MODEL.format(at_call=37, action=action), "late.py")
    received = []
    runner = JobRunner(on_event=lambda e: received.extend(e.samples) if isinstance(e, ev.LatencyMeasured) else None)
    result = runner.run(make_spec(path, warmup=2, iters=100, timeout_s=timeout))
    assert result.status == "failed"
    assert len(result.latencies("eager")) == 25 and len(result.latencies("compiled")) == 5
    assert len(result.latencies("eager", include_warmup=True)) == 27
    assert [s.iteration for s in result.samples if s.side == "compiled" and not s.warmup] == list(range(5))
    assert len(received) == len(result.samples)  # the recovered samples reach the listener too


SEND_ON_THE_PIPE = "Connection(int(sys.argv[1]), readable=False).{}; time.sleep(600)"


@pytest.mark.parametrize(
    "send,problem",
    [
        ("send_bytes(b'not a pickle')", "(UnpicklingError: "),
        ("send({'kind': 'JobCompleted'})", "(a dict)"),
        ("send(PhaseChanged('another-job', phase='benchmark'))", "(a PhaseChanged of another job)"),
    ],
)
def test_a_message_that_is_not_an_event_ends_the_job_and_keeps_what_was_measured(write_model, send, problem):
    """The reported case: a malformed message on the event pipe crashed `profile` with a
    traceback, losing the configs already measured."""
    source = MISBEHAVING_MODEL.format(at_call=37, action=SEND_ON_THE_PIPE.format(send))
    source = source.replace(
        "import os, time\n",
        "import os, sys, time\nfrom multiprocessing.connection import Connection\n"
        "from core.vocab.events import PhaseChanged\n",
    )
    path = write_model(source, "sender.py")
    runner = JobRunner()
    result = runner.run(make_spec(path, warmup=2, iters=100, timeout_s=120))
    assert result.status == "failed" and runner.status.finish_reason == FinishReason.CRASHED
    assert result.failure_reason.startswith("the job process sent a message on its event pipe that is not an event")
    assert problem in result.failure_reason and "what it had measured is kept" in result.failure_reason
    assert len(result.latencies("eager")) == 25 and len(result.latencies("compiled")) == 5


SPAWNING_MODEL = """\
import os, subprocess, sys
import torch

PIDS = {pid_file!r}


def get_model():
    plain = subprocess.Popen(["sleep", "300"])
    detached = subprocess.Popen(["sleep", "301"], start_new_session=True)
    # a daemon: double fork, the middle process exits, the grandchild is orphaned
    middle = subprocess.Popen([sys.executable, "-c", "import subprocess, sys; "
                               "p = subprocess.Popen(['sleep', '302'], start_new_session=True, stdout=subprocess.DEVNULL); "
                               "print(p.pid)"],
                              stdout=subprocess.PIPE, text=True)
    daemon = int(middle.communicate()[0])
    with open(PIDS, "w") as fh:
        fh.write(" ".join(str(p) for p in (plain.pid, detached.pid, daemon)))
    {then}
    return torch.nn.Linear(4, 4)


def get_example_inputs():
    return (torch.randn(2, 4),)
"""


@pytest.mark.parametrize("then,status", [("pass", "completed"), ("import time; time.sleep(600)", "failed")])
def test_processes_a_model_starts_end_with_its_job(write_model, tmp_path, then, status):
    pid_file = str(tmp_path / "pids.txt")
    path = write_model(SPAWNING_MODEL.format(pid_file=pid_file, then=then), "spawner.py")
    result = JobRunner().run(make_spec(path, warmup=1, iters=3, timeout_s=20))
    assert result.status == status, result.failure_reason
    pids = [int(p) for p in open(pid_file).read().split()]
    assert len(pids) == 3
    assert not [p for p in pids if _running(p)]


def test_kept_logs_are_capped_and_rotated(tmp_path):
    from core.run.job_process import LOG_HEAD_BYTES, LOG_TAIL_BYTES, cap_log, rotate_logs

    big = tmp_path / "big" / "job-1-1.log"
    big.parent.mkdir()
    big.write_bytes(b"h" * LOG_HEAD_BYTES + b"x" * 10_000_000 + b"t" * LOG_TAIL_BYTES)
    cap_log(str(big))
    data = big.read_bytes()
    assert len(data) < LOG_HEAD_BYTES + LOG_TAIL_BYTES + 200 and b"bytes of the log cut here" in data
    assert data.startswith(b"h") and data.endswith(b"t")
    for i in range(30):
        log = tmp_path / f"job-2-{i}.log"
        log.write_text("x")
        os.utime(log, (1000 + i, 1000 + i))
    rotate_logs(str(tmp_path), keep=5)
    assert sorted(p.name for p in tmp_path.glob("job-2-*.log")) == sorted(f"job-2-{i}.log" for i in range(25, 30))


def test_prestarted_child_runs_the_next_job_and_close_ends_a_spare(write_model):
    pids = []
    runner = JobRunner(on_event=lambda e: pids.append(e.pid) if isinstance(e, ev.JobStarted) else None)
    runner.prestart()
    spare_pid = runner._spare.proc.pid
    result = runner.run(make_spec(write_model(MLP_MODEL), iters=3, warmup=1))
    assert result.status == "completed" and pids == [spare_pid]
    runner.prestart()
    unused = runner._spare.proc.pid
    runner.close()
    assert not _running(unused)


def test_cancel_before_the_run_starts_is_not_lost(write_model):
    runner = JobRunner()
    runner.cancel()  # e.g. Cancel pressed before the worker thread reached run_all
    results = runner.run_all([make_spec(write_model(MLP_MODEL)), make_spec(write_model(MLP_MODEL))])
    assert [r.status for r in results] == ["cancelled", "cancelled"]
    assert not any(r.samples for r in results)  # no child was started
    again = runner.run(make_spec(write_model(MLP_MODEL), iters=2, warmup=1))  # the request ended with that run
    assert again.status == "completed"


def test_events_unpickle_without_importing_torch(write_model):
    """The parent (a GUI's worker thread) must not import torch to read events: that would hold
    the GIL for seconds. Events are re-read in a fresh interpreter that has no torch."""
    import pickle
    import subprocess
    import sys

    events = []
    JobRunner(on_event=events.append).run(make_spec(write_model(MLP_MODEL), iters=2, warmup=1))
    blob = pickle.dumps(events)
    code = (
        "import pickle, sys; events = pickle.loads(sys.stdin.buffer.read()); "
        "print(len(events), 'torch' in sys.modules, 'numpy' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], input=blob, capture_output=True, timeout=60, cwd=ROOT)
    assert proc.stdout.decode().split() == [str(len(events)), "False", "False"], proc.stderr.decode()


def _watch_after(speedups, bench_s, precision=2.0, max_time=60.0, processes=3):
    """A JobWatch that saw `speedups` (one process each, its benchmark taking bench_s / n seconds)."""
    from core.run.job_watch import JobWatch
    from core.vocab import records as rec

    spec = make_spec("m.py", precision_pct=precision, max_time_s=max_time, processes=processes)
    watch = JobWatch(spec, None)
    for p, s in enumerate(speedups):
        watch.see(ev.PhaseChanged("j", phase="benchmark", process=p))
        batch = [rec.LatencySample("eager", i, 10.0 * s, process=p) for i in range(10)]
        batch += [rec.LatencySample("compiled", i, 10.0, process=p) for i in range(10)]
        watch.see(ev.LatencyMeasured("j", samples=tuple(batch)))
        watch.process_ended()
    watch.benchmark_s = bench_s  # the clock is the runner's own; set what the processes spent
    return watch


def test_with_iters_auto_processes_that_disagree_get_another_while_the_time_allows():
    """One process is one draw: 0.78x, 1.03x, 0.77x disagree far beyond ±2%, so a fourth process
    runs (its budget what is left, at most an equal share); processes that agree, a fixed
    --iters, one process asked for, max_time spent, or the cap reached: no more."""
    from core.vocab.limits import AUTO_PROCESSES_CAP

    disagree = [0.78, 1.03, 0.77]
    assert _watch_after(disagree, bench_s=9.0).another_process(3) == 20.0  # min(60 - 9, 60 / 3)
    assert _watch_after(disagree, bench_s=45.0).another_process(3) == 15.0  # a process took 15 s: 15 left
    assert _watch_after(disagree, bench_s=58.0).another_process(3) is None  # 2 s left, a process takes ~19
    assert _watch_after([0.80, 0.801, 0.799], bench_s=9.0).another_process(3) is None  # within ±2%
    assert _watch_after(disagree, bench_s=9.0, precision=50.0).another_process(3) is None
    assert _watch_after(disagree, bench_s=9.0, processes=1).another_process(3) is None
    assert _watch_after(disagree, bench_s=9.0, precision=None).another_process(3) is None  # fixed --iters
    cap = _watch_after(disagree * 4, bench_s=12.0)
    assert cap.another_process(AUTO_PROCESSES_CAP - 1) is not None and cap.another_process(AUTO_PROCESSES_CAP) is None
    failed = _watch_after(disagree, bench_s=9.0)
    assert failed.another_process(4) is None  # process 4 measured nothing (failed): stop adding


def test_an_added_process_counts_whole_against_max_time():
    """The processes asked for count their benchmark seconds; one the runner adds counts its
    start and compile too, and the next is expected to cost what the further ones did."""
    from core.vocab import records as rec

    watch = _watch_after([0.78, 1.03], bench_s=2.0, max_time=20.0, processes=2)
    watch.further_walls = [6.0]  # process 2 took 6 s in all
    assert watch.another_process(2) == 10.0  # 18 s left, a process costs ~6: min(18, 20 / 2)
    watch.see(ev.PhaseChanged("j", phase="benchmark", process=2))
    batch = [
        rec.LatencySample(side, i, 10.0 if side == "compiled" else 7.7, process=2)
        for side in ("eager", "compiled")
        for i in range(5)
    ]
    watch.see(ev.LatencyMeasured("j", samples=tuple(batch)))
    watch.process_ended(7.0, added=True)
    assert watch.added_s == 7.0 and watch.benchmark_s == pytest.approx(2.0, abs=0.01)
    assert watch.another_process(3) == pytest.approx(10.0)  # 11 s left, a process costs ~6.5
    watch.process_ended(7.0, added=True)  # (it measured nothing: only the time counts here)
    assert watch.another_process(4) is None


# Compiled does extra work in some processes only (the model counts its loads in a file beside it):
# processes whose speedups disagree, whatever the machine's noise.
PROCESS_DEPENDENT_MODEL = """\
import os
import torch

HERE = os.path.dirname(os.path.abspath(__file__))


def get_model():
    with open(os.path.join(HERE, "loads.txt"), "a+") as fh:
        fh.seek(0)
        n = len(fh.read().splitlines())
        fh.write("x\\n")
    heavy = 12 if n % 3 == 1 else 0

    class M(torch.nn.Module):
        def forward(self, x):
            if torch.compiler.is_compiling():
                for _ in range(heavy):
                    x = torch.tanh(x @ x.T @ x)
            return x

    return M()


def get_example_inputs():
    return (torch.randn(32, 32),)
"""


def test_processes_that_disagree_are_added_to_until_max_time_and_the_report_counts_them(write_model, tmp_path):
    import csv
    import json

    from tests.core.helpers import profile_command

    path = write_model(PROCESS_DEPENDENT_MODEL, "process_dependent.py")
    out = tmp_path / "r"
    proc = profile_command(
        # ±10%: each process reaches it within itself even on a busy machine, so the time is left
        # to add processes; the processes disagree far beyond it whatever the load
        path,
        "--backend",
        "eager",
        "--max-time",
        "30",
        "--precision",
        "10",
        "--op-profile",
        "0",
        "--out",
        str(out),
        processes="2",
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "process 3 (added: the processes disagree)" in proc.stderr
    with open(out / "latency.csv", newline="") as fh:
        ran = {int(r["process"]) for r in csv.DictReader(fh)}
    assert len(ran) > 2 and ran == set(range(len(ran)))
    job = json.loads((out / "report.json").read_text())["jobs"][0]
    assert job["spec"]["processes"] == 2 and job["quality"]["processes"] == len(ran)
    assert len(job["processes_ended"]) == len(ran) - 1
