"""What a profiling job (core.measure.job.Job) times and reports with: its events, each sent
through `emit`, the phase it is in, its latency samples (written to the sample log at once, sent
in batches), the peak memory of each phase, and the timed call itself (CUDA events on the GPU,
the host clock on the CPU). core.measure.timing and core.measure.sweep use these through
core.measure.context.JobContext. Runs in the job's child process; torch is imported here.
"""

from __future__ import annotations

import time
from typing import Callable

from core.measure.environment import peak_rss_mb, reset_peak_rss
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import JobSpec
from core.vocab.formatting import MB
from core.vocab.samples import SampleLog

Emit = Callable[[ev.Event], None]
FLUSH_INTERVAL_S = 0.1
L2_FLUSH_BYTES = 256 * MB


class JobCancelledError(Exception):
    pass


class JobInstruments:
    """A job's events, samples, memory phases and timed calls; core.measure.job.Job adds the phases."""

    def __init__(self, spec: JobSpec, emit: Emit, should_stop: Callable[[], bool], sample_log: SampleLog):
        import torch

        self.torch = torch
        self.spec, self._emit, self._should_stop = spec, emit, should_stop
        self.phase = ""
        self._pending: list[rec.LatencySample] = []
        self._log = sample_log
        self._last_flush = time.perf_counter()
        self.cuda = spec.device == "cuda"
        self._flush_buffer = None  # --flush-cache: the buffer cleared before each timed call (CUDA)
        self.capture = None  # what torch reports while compiling (core.capture.live), from the compile on

    def emit(self, event_type, **fields) -> None:
        self._emit(event_type(self.spec.job_id, **fields))

    @property
    def process_note(self) -> str:
        """ "process 2 of 3: " for the processes after the first (JobSpec.processes)."""
        spec = self.spec
        if spec.repeat >= spec.timed_processes():  # added by the runner (core.run.runner.JobRunner.run)
            return f"process {spec.repeat + 1} (added: the processes disagree): "
        return f"process {spec.repeat + 1} of {spec.timed_processes()}: " if spec.repeat else ""

    def enter(self, phase: str, detail: str = "", step: int = 0, steps: int = 0) -> None:
        self.flush()
        self.poll_capture()
        self.phase = phase
        self.emit(
            ev.PhaseChanged,
            phase=phase,
            detail=self.process_note + detail,
            step=step,
            steps=steps,
            process=self.spec.repeat,
        )

    def poll_capture(self) -> None:
        """What torch recorded since the capture last looked (compiles and CUDA-graph skips of
        a recompile in the middle of a phase), reported at each phase and at the end."""
        if self.capture is not None:
            self.capture.poll()

    # ---- latency samples: written to the sample log at once (survives a crash), sent as
    # events in batches so sending never sits inside a timed call
    def record(self, sample: rec.LatencySample) -> None:
        if self.spec.repeat:
            sample = rec.LatencySample(
                sample.side, sample.iteration, sample.latency_ms, sample.warmup, self.spec.repeat
            )
        self._log.write(sample)
        self._pending.append(sample)
        if time.perf_counter() - self._last_flush >= FLUSH_INTERVAL_S:
            self.flush()
        if self._should_stop():
            raise JobCancelledError()

    def flush(self) -> None:
        if self._pending:
            self.emit(ev.LatencyMeasured, samples=tuple(self._pending))
            self._pending = []
        self._last_flush = time.perf_counter()

    # ---- memory per phase
    def start_memory_phase(self) -> None:
        reset_peak_rss()
        if self.cuda:
            self.torch.cuda.reset_peak_memory_stats()

    def end_memory_phase(self, phase: str) -> None:
        alloc = reserved = None
        if self.cuda:
            alloc = self.torch.cuda.max_memory_allocated() / MB
            reserved = self.torch.cuda.max_memory_reserved() / MB
        self.emit(ev.MemoryMeasured, peak=rec.MemoryPeak(phase, round(peak_rss_mb(), 2), alloc, reserved))

    def timed(self, fn, inputs, before=None) -> float:
        """Milliseconds for one call: on CUDA between a pair of CUDA events (the GPU's own clock,
        as triton's do_bench), the L2 cache flushed first with --flush-cache; on the CPU by the
        host clock."""
        if before is not None:
            before()
        if self.cuda:
            return self._cuda_timed(fn, inputs, 1)
        t0 = time.perf_counter()
        fn(*inputs)
        return (time.perf_counter() - t0) * 1000.0

    def timed_block(self, fn, inputs, before, calls: int) -> float:
        """Milliseconds a call over `calls` calls back to back, one synchronisation for the block
        (the throughput method; core.measure.timing.time_throughput)."""
        if self.cuda:
            return self._cuda_timed(fn, inputs, calls, before)
        t0 = time.perf_counter()
        for _ in range(calls):
            if before is not None:
                before()
            fn(*inputs)
        return (time.perf_counter() - t0) * 1000.0 / calls

    def _cuda_timed(self, fn, inputs, calls: int, before=None) -> float:
        torch = self.torch
        if self.spec.flush_cache:
            self._l2_flush().zero_()  # outside the events: the flush is not timed
        torch.cuda.synchronize()  # what came before is not timed
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(calls):
            if before is not None and calls > 1:
                before()
            fn(*inputs)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / calls

    def _l2_flush(self):
        """A 256 MB buffer whose clearing evicts the GPU's L2 cache (triton's do_bench does the same)."""
        if self._flush_buffer is None:
            self._flush_buffer = self.torch.empty(L2_FLUSH_BYTES // 4, dtype=self.torch.int32, device="cuda")
        return self._flush_buffer

    def check_stop(self) -> None:
        if self._should_stop():
            raise JobCancelledError()

    def to_device(self, inputs: tuple) -> tuple:
        if not self.cuda:
            return inputs
        from core.models.values import to_device

        return tuple(to_device(x, "cuda") for x in inputs)  # nested too: a detection model's list of images
