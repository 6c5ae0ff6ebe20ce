"""The parent-side job runner: one child process per job, events streamed as they happen.

Why a child process: torch.compile is not thread-safe (pytorch/pytorch#118260), its config
overrides are thread-local since 2.12, and compiling holds the GIL for long stretches (a
compile on a worker thread stalled a 10 ms main-thread timer by up to 434 ms here). In a
child, a crash, an out-of-memory kill or a hung compile ends that job only.

`JobRunner` is plain Python: it runs jobs one at a time, synchronously, calling `on_event`
on the calling thread for every event. `cancel()` may be called from any thread (or from
inside `on_event`); it is honoured at the next poll, within ~50 ms, and a cancel requested just
before a run starts cancels that run. A desktop app drives it
from a worker thread.
"""
from __future__ import annotations

import enum
import itertools
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Callable

from core import events as ev
from core.config import JobSpec
from core.resources import GpuMonitor, ProcessSampler
from core.results import JobResult

EventCallback = Callable[[ev.Event], None]
PROJECT_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class RunnerState(str, enum.Enum):
    IDLE = "idle"
    STARTING = "starting"  # child spawned, not yet reporting
    RUNNING = "running"
    FINISHING = "finishing"  # terminal event received or child ended; cleaning up


@dataclass(frozen=True)
class RunnerStatus:
    """A snapshot of the runner, safe to read from any thread."""

    state: RunnerState
    job_id: str = ""
    phase: str = ""
    jobs_done: int = 0
    jobs_total: int = 0


def describe_exit(exitcode: int | None) -> str:
    """A user-facing sentence for how a child process ended."""
    if exitcode is None:
        return "the job process did not end"
    if exitcode < 0:
        sig = -exitcode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGKILL:
            return f"the job process was killed ({name}), most likely by the system running out of memory"
        if sig == signal.SIGSEGV:
            return f"the job process crashed with a segmentation fault ({name})"
        if sig == signal.SIGABRT:
            return f"the job process aborted ({name})"
        return f"the job process was ended by {name}"
    return f"the job process exited with code {exitcode} without reporting a result"


def _tail(path: str, lines: int = 25) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - 16384))
            text = fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


class JobRunner:
    """Runs profiling jobs in child processes, one at a time. See the module docstring."""

    def __init__(self, on_event: EventCallback | None = None, sample_interval_s: float = 0.2,
                 log_dir: str | None = None, gpu: GpuMonitor | None = None):
        self._on_event = on_event or (lambda e: None)
        self._sample_interval_s = sample_interval_s
        self._log_dir = log_dir or os.path.join(tempfile.gettempdir(), "compile-profiler-logs")
        os.makedirs(self._log_dir, exist_ok=True)
        self._gpu = gpu if gpu is not None else GpuMonitor()
        self._lock = threading.Lock()
        self._cancel_job = threading.Event()
        self._cancel_all = threading.Event()
        self._in_batch = False
        self._status = RunnerStatus(RunnerState.IDLE)
        self._spare = None  # a prestarted child: (process, event reader, log path)
        self._child_numbers = itertools.count(1)

    @property
    def gpu(self) -> GpuMonitor:
        return self._gpu

    @property
    def status(self) -> RunnerStatus:
        with self._lock:
            return self._status

    def _set_status(self, **changes) -> None:
        with self._lock:
            self._status = RunnerStatus(**{**self._status.__dict__, **changes})

    def cancel(self, all_jobs: bool = True) -> None:
        """Ask the running job to stop (and, by default, the jobs queued after it).

        Never lost: a cancel that arrives before `run`/`run_all` has started (a user pressing
        Cancel right after Run) cancels that run; the request is cleared when the run ends."""
        if all_jobs:
            self._cancel_all.set()
        self._cancel_job.set()

    def _cancel_requested(self) -> bool:
        return self._cancel_job.is_set() or self._cancel_all.is_set()

    # ------------------------------------------------------------------ running

    def run_all(self, specs: list[JobSpec]) -> list[JobResult]:
        """Run jobs in order; after cancel() the remaining ones end as cancelled."""
        results = []
        self._set_status(jobs_done=0, jobs_total=len(specs))
        self._in_batch = True
        try:
            for i, spec in enumerate(specs):
                results.append(self.run(spec))
                self._set_status(jobs_done=i + 1)
        finally:
            self._in_batch = False
            self._cancel_all.clear()
            self._cancel_job.clear()
        return results

    def run(self, spec: JobSpec) -> JobResult:
        """Run one job to its end and return what it produced; never raises for job errors."""
        result = JobResult(spec)
        if self._cancel_requested():  # cancelled before it could start: never spawn it
            self._emit(result, ev.JobCancelled(spec.job_id, phase="queue"))
            self._finish_cancel_request()
            return result
        self._set_status(state=RunnerState.STARTING, job_id=spec.job_id, phase="")
        started = time.monotonic()
        try:
            proc, reader, log_path = self._take_child()
            self._send_spec(proc, spec)
        except OSError as exc:
            terminal = ev.JobFailed(spec.job_id, reason=f"could not start the job process: {exc}", phase="start-up")
            self._emit(result, terminal)
            self._set_status(state=RunnerState.IDLE, job_id="", phase="")
            return result
        sampler = None
        try:
            sampler = ProcessSampler(proc.pid, self._gpu, t0=started)
        except Exception:
            pass  # the child may already be gone; its exit is reported below
        next_sample = started
        terminal: ev.Event | None = None
        try:
            while terminal is None:
                now = time.monotonic()
                if self._cancel_requested():
                    self._stop(proc)
                    terminal = ev.JobCancelled(spec.job_id, phase=result.phase)
                    break
                if now - started > spec.timeout_s:
                    self._stop(proc)
                    terminal = ev.JobFailed(
                        spec.job_id,
                        reason=f"timed out after {spec.timeout_s:g} s during the {result.phase or 'start-up'} phase "
                               "(a hung or very slow compile?); raise the timeout to allow more time",
                        detail=_tail(log_path), phase=result.phase)
                    break
                if now >= next_sample and sampler is not None:
                    sample = sampler.sample(result.phase or "load")
                    if sample is not None:
                        self._emit(result, ev.ResourceSampled(spec.job_id, sample=sample))
                    next_sample = now + self._sample_interval_s
                wait = max(0.0, min(0.05, next_sample - time.monotonic()))
                try:
                    ready = reader.poll(wait)
                except (EOFError, OSError):
                    ready = True
                if not ready:
                    continue
                try:
                    event = reader.recv()
                except (EOFError, OSError):
                    try:
                        proc.wait(timeout=5)
                    except subprocess.TimeoutExpired:
                        pass
                    terminal = ev.JobFailed(spec.job_id, reason=describe_exit(proc.poll()),
                                            detail=_tail(log_path), phase=result.phase)
                    break
                if isinstance(event, ev.TERMINAL_EVENTS):
                    terminal = event
                    break
                if isinstance(event, ev.JobStarted):
                    self._set_status(state=RunnerState.RUNNING)
                if isinstance(event, ev.PhaseChanged):
                    self._set_status(phase=event.phase)
                self._emit(result, event)
        finally:
            self._set_status(state=RunnerState.FINISHING)
            reader.close()
            if not isinstance(terminal, ev.JobFinished):
                self._stop(proc)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._stop(proc)
        if isinstance(terminal, ev.JobFailed):
            terminal = ev.JobFailed(terminal.job_id, terminal.reason,
                                    f"{terminal.detail}\n\n(the job's full log: {log_path})".strip(), terminal.phase)
        else:
            _remove(log_path)  # kept only when it can explain a failure
        self._emit(result, terminal)
        self._set_status(state=RunnerState.IDLE, job_id="", phase="")
        if isinstance(terminal, ev.JobCancelled):
            self._finish_cancel_request()
        return result

    def _finish_cancel_request(self) -> None:
        """A cancel was honoured: forget the per-job request; inside run_all the request
        for the rest of the queue stays until run_all ends."""
        self._cancel_job.clear()
        if not self._in_batch:
            self._cancel_all.clear()

    def prestart(self) -> None:
        """Start the next job's process now, so that its torch import (~3 s here) overlaps
        with the caller's own work (validating settings, a user choosing a model). Only
        call it while no job runs: an import beside a timed loop would perturb it."""
        with self._lock:
            if self._spare is None:
                self._spare = self._launch_child()

    def close(self) -> None:
        """End a prestarted process that no job used. Safe to call more than once."""
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None:
            spare[1].close()
            self._stop(spare[0])
            _remove(spare[2])

    def _take_child(self):
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare[0].poll() is None:
            return spare
        if spare is not None:
            spare[1].close()
        return self._launch_child()

    def _launch_child(self):
        """Start `python -m core.child` in its own session with a pipe for events."""
        log_path = os.path.join(self._log_dir, f"job-{os.getpid()}-{next(self._child_numbers)}.log")
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH")) if p)
        try:
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "core.child", str(write_fd)],
                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,),
                    env=env, start_new_session=True)
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds the only write end now: EOF means it is gone
        return proc, Connection(read_fd, writable=False), log_path

    @staticmethod
    def _send_spec(proc: subprocess.Popen, spec: JobSpec) -> None:
        try:
            proc.stdin.write(pickle.dumps(spec))
            proc.stdin.close()
        except OSError:
            pass  # the child died already; reported as its exit

    def _emit(self, result: JobResult, event: ev.Event) -> None:
        result.apply(event)
        self._on_event(event)

    @staticmethod
    def _stop(proc: subprocess.Popen) -> None:
        """End the child (and its compile workers) now: SIGKILL, since a process stuck in a
        C++ compile or a CUDA call does not answer SIGTERM promptly."""
        if proc.poll() is None:
            try:
                import psutil

                for child in psutil.Process(proc.pid).children(recursive=True):
                    child.kill()
            except Exception:
                pass
            proc.kill()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
