"""The parent-side job runner: jobs one at a time, each in its own child process
(core.run.job_process), events streamed to a listener as they happen.

`JobRunner` is plain Python and an explicit state machine (after pymmcore-plus's MDARunner):

    IDLE → STARTING (child taken, spec sent) → RUNNING (the child reports) →
    FINISHING (child ended, lost samples recovered, log kept or removed) → IDLE

Every job ends with exactly one terminal event (JobCompleted, JobFailed or JobCancelled:
the finish reason). `run_all` runs a list of jobs and is the only batch loop: the CLI and
the app's worker both use it, with a `RunListener` for their per-job hooks. `cancel()` may
be called from any thread (or from inside a callback); it is honoured at the next poll,
within ~50 ms, and a cancel requested before a run starts cancels that run. The status is
pushed to the listener (`on_status`) on every change and can be read at any time.

Events are folded into a `JobResult` once, by whoever needs one: `run()`/`run_all()`
return JobResults for the CLI and tests (`collect=True`); the app folds in its own session
and runs the runner with `collect=False`.
"""

from __future__ import annotations

import enum
import itertools
import os
import subprocess
import threading
import time
import traceback
from dataclasses import dataclass, replace
from typing import Callable

from core.analysis.results import JobResult
from core.run.compile_cache import with_config_cache
from core.run.job_endings import TIMEOUT_GUESSES, FinishReason, event_problem, reason_of, unreadable_event_reason
from core.run.job_process import (
    ChildProcess,
    cap_log,
    describe_exit,
    end_processes,
    launch_child,
    log_folder,
    log_tail,
    memory_was_tight,
    remove_file,
    rotate_logs,
)
from core.run.job_watch import JobWatch
from core.run.sampling import GpuMonitor, ProcessSampler
from core.vocab import events as ev
from core.vocab.config import JobSpec
from core.vocab.records import JobStatus
from core.vocab.samples import read_sample_log

EventCallback = Callable[[ev.Event], None]


class RunnerState(str, enum.Enum):
    IDLE = "idle"
    STARTING = "starting"  # child taken and given its spec, not yet reporting
    RUNNING = "running"
    FINISHING = "finishing"  # terminal event received or child ended; cleaning up


@dataclass(frozen=True)
class RunnerStatus:
    """A snapshot of the runner, safe to read from any thread. `index` counts jobs of the
    current batch from 1; `total` is the batch size (1 for a single `run`). `finish_reason`
    says how the last job ended (core.run.job_endings.FinishReason), as the runner decided
    it; None from a job's start until its end."""

    state: RunnerState
    job_id: str = ""
    phase: str = ""
    index: int = 0
    total: int = 0
    cancelling: bool = False
    finish_reason: FinishReason | None = None


class RunListener:
    """What a runner tells whoever drives it; every method is optional (no-op here), called
    on the thread that runs `run`/`run_all`."""

    def on_job_started(self, index: int, total: int, spec: JobSpec) -> None:
        """Job `index` of `total` (from 1) is about to start."""

    def on_event(self, event: ev.Event) -> None:
        """An event of the running job (its terminal event included)."""

    def on_job_ended(self, index: int, total: int, spec: JobSpec, terminal: ev.Event) -> None:
        """Job `index` ended; `terminal` says how (its type is the finish reason)."""

    def on_status(self, status: RunnerStatus) -> None:
        """The runner's status changed."""


class _EventListener(RunListener):
    def __init__(self, on_event: EventCallback):
        self.on_event = on_event


class JobRunner:
    """Runs profiling jobs in child processes, one at a time. See the module docstring."""

    def __init__(
        self,
        on_event: EventCallback | None = None,
        sample_interval_s: float = 0.2,
        log_dir: str | None = None,
        gpu: GpuMonitor | None = None,
        listener: RunListener | None = None,
        collect: bool = True,
    ):
        if listener is not None and on_event is not None:
            raise ValueError("give a listener or an on_event callback, not both")
        self._listener = listener or (_EventListener(on_event) if on_event else RunListener())
        self._collect = collect
        self._sample_interval_s = sample_interval_s
        if log_dir:
            os.makedirs(log_dir, exist_ok=True)
        self._log_dir = log_dir or log_folder()
        self._gpu = gpu if gpu is not None else GpuMonitor()
        self._lock = threading.Lock()
        self._cancel: str | None = None  # None, "job" (the running one) or "all" (and the rest)
        self._in_batch = False
        self._status = RunnerStatus(RunnerState.IDLE)
        self._spare: ChildProcess | None = None  # a prestarted child
        self._child_numbers = itertools.count(1)

    @property
    def gpu(self) -> GpuMonitor:
        return self._gpu

    @property
    def log_dir(self) -> str:
        """The folder of this runner's job logs (private to the user unless one was given)."""
        return self._log_dir

    @property
    def status(self) -> RunnerStatus:
        with self._lock:
            return self._status

    def _set_status(self, **changes) -> None:
        with self._lock:
            new = replace(self._status, **changes)
            changed, self._status = new != self._status, new
        if changed:
            self._listener.on_status(new)

    # ------------------------------------------------------------------ cancel

    def cancel(self, all_jobs: bool = True) -> None:
        """Ask the running job to stop (and, by default, the jobs queued after it).

        Never lost: a cancel that arrives before `run`/`run_all` has started (a user pressing
        Cancel right after Run) cancels that run; the request is cleared when it is honoured
        (a single job) or when the batch ends (all jobs)."""
        with self._lock:
            self._cancel = "all" if all_jobs or self._cancel == "all" else "job"
        self._set_status(cancelling=True)

    def _cancel_requested(self) -> bool:
        with self._lock:
            return self._cancel is not None

    def _cancel_honoured(self) -> None:
        """A job ended as cancelled: forget a request for that job only; a request for all
        stays until the batch ends."""
        with self._lock:
            if self._cancel == "job" or not self._in_batch:
                self._cancel = None
            still = self._cancel is not None
        self._set_status(cancelling=still)

    # ------------------------------------------------------------------ running

    def run_all(self, specs: list[JobSpec]) -> list[JobResult | None]:
        """Run jobs in order; after cancel() the remaining ones end as cancelled. Returns a
        JobResult per job (None for each when the runner does not collect)."""
        with self._lock:
            self._in_batch = True
        try:
            return [self.run(spec, i, len(specs)) for i, spec in enumerate(specs, 1)]
        finally:
            with self._lock:
                self._in_batch = False
                self._cancel = None
            self._set_status(cancelling=False)

    def run(self, spec: JobSpec, index: int = 1, total: int = 1) -> JobResult | None:
        """Run one job to its end; never raises for job errors. Returns its JobResult (None
        when the runner does not collect).

        Stages: start (take the prestarted child, send the spec) → watch (forward events,
        sample resources, honour cancel and timeout) → finish (end the child and everything
        it started, recover timed samples that never arrived as events, keep the log only
        when it explains a failure) → the terminal event, always exactly one."""
        watch = JobWatch(spec, JobResult(spec) if self._collect else None)
        self._listener.on_job_started(index, total, spec)
        self._set_status(
            state=RunnerState.STARTING, job_id=spec.job_id, phase="", index=index, total=total, finish_reason=None
        )
        terminal: ev.Event | None = None
        reason = FinishReason.CANCELLED  # should the runner itself be interrupted
        try:
            if self._cancel_requested():  # cancelled before it could start: never spawn it
                terminal = ev.JobCancelled(spec.job_id, phase="queue")
                return watch.result
            started = time.monotonic()
            terminal, reason = self._run_process(spec, watch, started)
            watch.process_ended()
            # One process is one draw: the further processes of the job time it again, fresh;
            # with --iters auto, more than asked while they disagree beyond the precision asked
            # and max_time_s allows (as pyperf adds workers).
            k = 1
            while isinstance(terminal, ev.JobCompleted):
                budget = None
                if k >= spec.timed_processes():
                    budget = watch.another_process(k)
                    if budget is None:
                        break
                if self._cancel_requested():  # stopped between two processes: the job keeps those it has
                    reason = FinishReason.STOPPED
                    break
                watch.samples, watch.phase = 0, ""
                t0 = time.monotonic()
                repeat = replace(spec, repeat=k, artifacts_dir=None, op_profile_calls=0, process_budget_s=budget)
                ended, _ = self._run_process(repeat, watch, started, t0)
                wall = time.monotonic() - t0
                watch.process_ended(wall, added=budget is not None)
                if isinstance(ended, ev.JobCancelled):
                    # Stopped in a further process (Ctrl+C, Cancel, tune's budget): the processes
                    # before it are whole (the first compiled, checked accuracy and profiled), so the
                    # job keeps them as its result, and says this one was stopped. It read
                    # "cancelled during start-up" and left the verdict, all measured.
                    reason = FinishReason.STOPPED
                    self._emit(
                        watch,
                        ev.ProcessEnded(
                            spec.job_id,
                            process=k,
                            status=JobStatus.CANCELLED,
                            reason=f"stopped during its {ended.phase or 'start-up'}",
                            wall_time_s=round(wall, 3),
                        ),
                    )
                    terminal = ev.JobCompleted(spec.job_id, wall_time_s=terminal.wall_time_s + wall)
                    break
                self._emit(
                    watch,
                    ev.ProcessEnded(
                        spec.job_id,
                        process=k,
                        status=(JobStatus.COMPLETED if isinstance(ended, ev.JobCompleted) else JobStatus.FAILED),
                        reason=ended.reason if isinstance(ended, ev.JobFailed) else "",
                        wall_time_s=round(wall, 3),
                    ),
                )
                terminal = ev.JobCompleted(spec.job_id, wall_time_s=terminal.wall_time_s + wall)
                k += 1
            return watch.result
        finally:
            if terminal is not None:
                self._emit(watch, terminal)
                self._listener.on_job_ended(index, total, spec, terminal)
                if reason.cancelled:
                    self._cancel_honoured()
            self._set_status(
                state=RunnerState.IDLE, job_id="", phase="", finish_reason=reason if terminal is not None else None
            )

    def _run_process(
        self, spec: JobSpec, watch: JobWatch, t_zero: float, started: float | None = None
    ) -> tuple[ev.Event, FinishReason]:
        """One process of a job (the first, or a further one when spec.repeat): start it,
        watch it, finish it; returns its terminal event and why it ended. `t_zero` is the
        job's start (the resource readings' clock), `started` this process's (its timeout's)."""
        started = t_zero if started is None else started
        try:
            child = self._take_child()
            child.send(with_config_cache(spec))  # the config's own inductor cache (core.run.compile_cache)
        except OSError as exc:
            failed = ev.JobFailed(spec.job_id, reason=f"could not start the job process: {exc}", phase="start-up")
            return failed, FinishReason.FAILED
        sampler = None
        try:
            sampler = ProcessSampler(child.proc.pid, self._gpu, t0=t_zero, process=spec.repeat)
        except Exception:
            pass  # the child may already be gone; its exit is reported below
        terminal, reason = None, FinishReason.CANCELLED  # the watch loop itself raised (e.g. KeyboardInterrupt)
        try:
            terminal, reason = self._watch(spec, child, sampler, watch, started)
        finally:
            terminal = self._finish(spec, child, sampler, watch, terminal)
        return terminal, reason

    # What a further process of a job reports (the first has told everything else already).
    REPEAT_EVENTS = (ev.PhaseChanged, ev.LatencyMeasured, ev.ResourceSampled, ev.CallCostsMeasured)

    def _watch(
        self, spec: JobSpec, child: ChildProcess, sampler, watch: JobWatch, started: float
    ) -> tuple[ev.Event, FinishReason]:
        """Forward the child's events until its terminal event, a cancel, a timeout or its end;
        returns the terminal event and the finish reason decided here."""
        proc, reader = child.proc, child.reader
        next_sample = started
        while True:
            now = time.monotonic()
            if self._cancel_requested():
                child.stop()
                return ev.JobCancelled(spec.job_id, phase=watch.phase), FinishReason.CANCELLED
            if now - started > spec.timeout_s:
                child.stop()
                timed_out = ev.JobFailed(
                    spec.job_id,
                    reason=f"timed out after {spec.timeout_s:g} s during the {watch.phase or 'start-up'} phase "
                    f"({TIMEOUT_GUESSES.get(watch.phase, 'a hung or very slow step?')}); raise the timeout to "
                    "allow more time",
                    detail=log_tail(child.log_path),
                    phase=watch.phase,
                )
                return timed_out, FinishReason.TIMEOUT
            if now >= next_sample and sampler is not None:
                sample = sampler.sample(watch.phase or "load")
                if sample is not None:
                    self._emit(watch, ev.ResourceSampled(spec.job_id, sample=sample))
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
                died = ev.JobFailed(
                    spec.job_id,
                    reason=describe_exit(proc.poll(), memory_was_tight(watch.recent_rss)),
                    detail=log_tail(child.log_path),
                    phase=watch.phase,
                )
                return died, FinishReason.CRASHED
            except Exception as exc:  # not a pickle, or one of something this process cannot make
                return self._unreadable(spec, child, watch, f"{type(exc).__name__}: {exc}", exc), FinishReason.CRASHED
            problem = event_problem(event, spec.job_id)
            if problem:
                return self._unreadable(spec, child, watch, problem), FinishReason.CRASHED
            if isinstance(event, ev.TERMINAL_EVENTS):
                return event, reason_of(event)
            if isinstance(event, ev.JobStarted):
                self._set_status(state=RunnerState.RUNNING)
            if isinstance(event, ev.PhaseChanged):
                self._set_status(phase=event.phase)
            if spec.repeat and not isinstance(event, self.REPEAT_EVENTS):
                continue
            try:
                self._emit(watch, event)
            except Exception as exc:  # an event whose fields are not what its kind declares
                unusable = f"a {event.kind} that cannot be used: {exc}"
                return self._unreadable(spec, child, watch, unusable, exc), FinishReason.CRASHED

    def _unreadable(self, spec: JobSpec, child: ChildProcess, watch: JobWatch, problem: str, exc=None) -> ev.JobFailed:
        child.stop()
        detail = "".join(traceback.format_exception(exc)) if exc is not None else ""
        return ev.JobFailed(
            spec.job_id,
            reason=unreadable_event_reason(problem[:300]),
            detail=f"{detail}\n{log_tail(child.log_path)}".strip(),
            phase=watch.phase,
        )

    def _finish(self, spec: JobSpec, child: ChildProcess, sampler, watch: JobWatch, terminal) -> ev.Event:
        """End the child and all it started; recover lost samples; decide the log's fate."""
        self._set_status(state=RunnerState.FINISHING)
        child.reader.close()
        if terminal is None:  # the watch loop itself raised (e.g. KeyboardInterrupt)
            terminal = ev.JobCancelled(spec.job_id, phase=watch.phase)
        if not isinstance(terminal, ev.JobCompleted):
            child.stop()
        try:
            child.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.stop()
        if sampler is not None:
            end_processes(sampler.known_processes())
        missing = read_sample_log(child.sample_path, skip=watch.samples)
        if missing:  # measured, but the child died before sending them
            self._emit(watch, ev.LatencyMeasured(spec.job_id, samples=tuple(missing)))
        remove_file(child.sample_path)
        if isinstance(terminal, ev.JobFailed):
            cap_log(child.log_path)
            rotate_logs(self._log_dir)
            terminal = ev.JobFailed(
                terminal.job_id,
                terminal.reason,
                f"{terminal.detail}\n\n(the job's full log: {child.log_path})".strip(),
                terminal.phase,
            )
        else:
            remove_file(child.log_path)  # kept only when it can explain a failure
        return terminal

    def _emit(self, watch: JobWatch, event: ev.Event) -> None:
        watch.see(event)
        self._listener.on_event(event)

    # ------------------------------------------------------------------ child processes

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
            spare.discard()

    def _take_child(self) -> ChildProcess:
        with self._lock:
            spare, self._spare = self._spare, None
        if spare is not None and spare.proc.poll() is None:
            return spare
        if spare is not None:
            spare.discard()
        return self._launch_child()

    def _launch_child(self) -> ChildProcess:
        return launch_child(os.path.join(self._log_dir, f"job-{os.getpid()}-{next(self._child_numbers)}"))
