"""The runner with real child processes: crashes, timeouts and cancels keep partial results."""

import os

import psutil
import pytest

from core import PROJECT_ROOT as ROOT
from core.run.job_process import describe_exit
from core.run.runner import JobRunner, RunnerState
from core.vocab import events as ev
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


def test_child_abort_fails_the_job_and_keeps_partial_results(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=6, action="os.abort()"), "abort.py")
    runner = JobRunner()
    result = runner.run(make_spec(path, warmup=2))
    assert result.status == "failed"
    assert "aborted (SIGABRT)" in result.failure_reason
    assert len(result.latencies("eager", include_warmup=True)) == 2  # eager warm-up survived
    assert result.compile is not None  # the compile finished before the crash


def test_hung_job_times_out_and_keeps_partial_results(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=4, action="time.sleep(600)"), "hang.py")
    pids = []
    runner = JobRunner(on_event=lambda e: pids.append(e.pid) if isinstance(e, ev.JobStarted) else None)
    result = runner.run(make_spec(path, warmup=2, timeout_s=15))
    assert result.status == "failed"
    assert "timed out after 15 s during the compile phase" in result.failure_reason
    assert len(result.latencies("eager", include_warmup=True)) == 2
    assert pids and not _running(pids[0])  # the hung child was ended, not left behind


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

    runner = JobRunner(on_event=on_event)
    results = runner.run_all([make_spec(path, iters=1_000_000), make_spec(path)])
    first, second = results
    assert first.status == "cancelled" and "benchmark" in first.failure_reason
    assert len(first.latencies("compiled"))  # what was measured before the cancel stays
    assert second.status == "cancelled" and not second.samples
    assert pids and not _running(pids[0])
    assert runner.status.state == RunnerState.IDLE


def test_describe_exit():
    assert "segmentation fault" in describe_exit(-11)
    # a SIGKILL from a person is not blamed on memory; only when memory was near the limit
    assert "killed (SIGKILL)" in describe_exit(-9) and "memory" not in describe_exit(-9)
    assert "out of memory" in describe_exit(-9, memory_tight=True)
    assert "code 3" in describe_exit(3)


def test_sigkill_from_outside_is_named_as_such(write_model):
    path = write_model(MISBEHAVING_MODEL.format(at_call=4, action="os.kill(os.getpid(), 9)"), "killed.py")
    result = JobRunner().run(make_spec(path, warmup=2))
    assert result.status == "failed"
    assert "killed (SIGKILL)" in result.failure_reason and "memory" not in result.failure_reason


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
