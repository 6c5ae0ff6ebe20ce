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
from core.resources import GpuMonitor, ProcessSampler, memory_limit_mb
from core.results import JobResult
from core.samples import read_sample_log

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


MEMORY_TIGHT_FRACTION = 0.8  # the job's last RSS readings against the machine's memory
MAX_KEPT_LOGS = 20  # failed jobs' logs kept in the log folder, newest first
LOG_HEAD_BYTES = 256 * 1024
LOG_TAIL_BYTES = 2 * 1024 * 1024


def describe_exit(exitcode: int | None, memory_tight: bool = False) -> str:
    """A user-facing sentence for how a child process ended. A SIGKILL is blamed on memory
    only when the job's memory was near the machine's limit (`memory_tight`)."""
    if exitcode is None:
        return "the job process did not end"
    if exitcode < 0:
        sig = -exitcode
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else f"signal {sig}"
        if sig == signal.SIGKILL:
            if memory_tight:
                return (f"the job process was killed ({name}) while its memory was near the machine's limit: "
                        "most likely out of memory; try a smaller batch size")
            return f"the job process was killed ({name}) by something outside it"
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


def memory_was_tight(result: JobResult, window_s: float = 3.0) -> bool:
    """Whether the job's RSS in its last readings came near the memory limit."""
    if not result.resources:
        return False
    last_t = result.resources[-1].t_s
    recent = [r.rss_mb for r in result.resources if r.t_s >= last_t - window_s]
    return max(recent) >= MEMORY_TIGHT_FRACTION * memory_limit_mb()


def cap_log(path: str) -> None:
    """Shorten a kept log to its head and tail (a failing job can write 100 MB)."""
    try:
        size = os.path.getsize(path)
        if size <= LOG_HEAD_BYTES + LOG_TAIL_BYTES:
            return
        with open(path, "rb") as fh:
            head = fh.read(LOG_HEAD_BYTES)
            fh.seek(size - LOG_TAIL_BYTES)
            tail = fh.read()
        cut = size - len(head) - len(tail)
        with open(path, "wb") as fh:
            fh.write(head + f"\n\n[... {cut:,} bytes of the log cut here ...]\n\n".encode() + tail)
    except OSError:
        pass


def rotate_logs(folder: str, keep: int = MAX_KEPT_LOGS) -> None:
    """Keep the newest `keep` job logs in `folder`, remove older ones."""
    try:
        logs = [os.path.join(folder, n) for n in os.listdir(folder) if n.startswith("job-") and n.endswith(".log")]
        logs.sort(key=lambda p: os.path.getmtime(p), reverse=True)
    except OSError:
        return
    for old in logs[keep:]:
        _remove(old)


def end_processes(procs) -> None:
    """Kill the processes of a finished job that are still alive (a model's `sleep 300`)."""
    import psutil

    alive = []
    for p in procs:
        try:
            if p.is_running():  # also checks the pid was not reused (create time)
                p.kill()
                alive.append(p)
        except psutil.Error:
            pass
    try:
        psutil.wait_procs(alive, timeout=5)
    except Exception:
        pass


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


@dataclass
class _Child:
    """A started job process: its event pipe, its log file and its sample log."""

    proc: subprocess.Popen
    reader: Connection
    log_path: str
    sample_path: str

    def send(self, spec: JobSpec) -> None:
        try:
            self.proc.stdin.write(pickle.dumps(spec))
            self.proc.stdin.close()
        except OSError:
            pass  # the child died already; reported as its exit


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
        self._spare: _Child | None = None  # a prestarted child
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
        """Run one job to its end and return what it produced; never raises for job errors.

        Stages: start (take the prestarted child, send the spec) → watch (forward events,
        sample resources, honour cancel and timeout) → finish (end the child and everything
        it started, recover timed samples that never arrived as events, keep the log only
        when it explains a failure) → the terminal event, always exactly one."""
        result = JobResult(spec)
        if self._cancel_requested():  # cancelled before it could start: never spawn it
            self._emit(result, ev.JobCancelled(spec.job_id, phase="queue"))
            self._finish_cancel_request()
            return result
        self._set_status(state=RunnerState.STARTING, job_id=spec.job_id, phase="")
        started = time.monotonic()
        try:
            child = self._take_child()
            child.send(spec)
        except OSError as exc:
            terminal = ev.JobFailed(spec.job_id, reason=f"could not start the job process: {exc}", phase="start-up")
            self._emit(result, terminal)
            self._set_status(state=RunnerState.IDLE, job_id="", phase="")
            return result
        sampler = None
        try:
            sampler = ProcessSampler(child.proc.pid, self._gpu, t0=started)
        except Exception:
            pass  # the child may already be gone; its exit is reported below
        terminal = None
        try:
            terminal = self._watch(spec, child, sampler, result, started)
        finally:
            terminal = self._finish(spec, child, sampler, result, terminal)
        self._emit(result, terminal)
        self._set_status(state=RunnerState.IDLE, job_id="", phase="")
        if isinstance(terminal, ev.JobCancelled):
            self._finish_cancel_request()
        return result

    def _watch(self, spec: JobSpec, child: "_Child", sampler, result: JobResult, started: float) -> ev.Event:
        """Forward the child's events until its terminal event, a cancel, a timeout or its end."""
        proc, reader = child.proc, child.reader
        next_sample = started
        while True:
            now = time.monotonic()
            if self._cancel_requested():
                self._stop(proc)
                return ev.JobCancelled(spec.job_id, phase=result.phase)
            if now - started > spec.timeout_s:
                self._stop(proc)
                return ev.JobFailed(
                    spec.job_id,
                    reason=f"timed out after {spec.timeout_s:g} s during the {result.phase or 'start-up'} phase "
                           "(a hung or very slow compile?); raise the timeout to allow more time",
                    detail=_tail(child.log_path), phase=result.phase)
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
                return ev.JobFailed(spec.job_id, reason=describe_exit(proc.poll(), memory_was_tight(result)),
                                    detail=_tail(child.log_path), phase=result.phase)
            if isinstance(event, ev.TERMINAL_EVENTS):
                return event
            if isinstance(event, ev.JobStarted):
                self._set_status(state=RunnerState.RUNNING)
            if isinstance(event, ev.PhaseChanged):
                self._set_status(phase=event.phase)
            self._emit(result, event)

    def _finish(self, spec: JobSpec, child: "_Child", sampler, result: JobResult, terminal) -> ev.Event:
        """End the child and all it started; recover lost samples; decide the log's fate."""
        self._set_status(state=RunnerState.FINISHING)
        proc = child.proc
        child.reader.close()
        if terminal is None:  # the watch loop itself raised (e.g. KeyboardInterrupt)
            terminal = ev.JobCancelled(spec.job_id, phase=result.phase)
        if not isinstance(terminal, ev.JobCompleted):
            self._stop(proc)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._stop(proc)
        if sampler is not None:
            end_processes(sampler.known_processes())
        missing = read_sample_log(child.sample_path, skip=len(result.samples))
        if missing:  # measured, but the child died before sending them
            self._emit(result, ev.LatencyMeasured(spec.job_id, samples=tuple(missing)))
        _remove(child.sample_path)
        if isinstance(terminal, ev.JobFailed):
            cap_log(child.log_path)
            rotate_logs(self._log_dir)
            terminal = ev.JobFailed(terminal.job_id, terminal.reason,
                                    f"{terminal.detail}\n\n(the job's full log: {child.log_path})".strip(),
                                    terminal.phase)
        else:
            _remove(child.log_path)  # kept only when it can explain a failure
        return terminal

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
            spare.reader.close()
            self._stop(spare.proc)
            _remove(spare.log_path)
            _remove(spare.sample_path)

    def _take_child(self) -> "_Child":
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.proc.poll() is None:
            return spare
        if spare is not None:
            spare.reader.close()
            _remove(spare.log_path)
            _remove(spare.sample_path)
        return self._launch_child()

    def _launch_child(self) -> "_Child":
        """Start `python -m core.child` in its own session with a pipe for events."""
        stem = os.path.join(self._log_dir, f"job-{os.getpid()}-{next(self._child_numbers)}")
        log_path, sample_path = stem + ".log", stem + ".samples"
        read_fd, write_fd = os.pipe()
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (PROJECT_ROOT, env.get("PYTHONPATH")) if p)
        try:
            with open(log_path, "wb") as log:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "core.child", str(write_fd), sample_path],
                    stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, pass_fds=(write_fd,),
                    env=env, start_new_session=True)
        except OSError:
            os.close(read_fd)
            raise
        finally:
            os.close(write_fd)  # the child holds the only write end now: EOF means it is gone
        return _Child(proc, Connection(read_fd, writable=False), log_path, sample_path)

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
