"""What a job's timing, sweep and check code may use of the job (core.measure.job.Job): declared
here as a protocol, so core.measure.timing, core.measure.sweep and core.measure.job_checks receive
it without importing the job that imports them (no import circle, type-checking imports
included). No torch at import."""

from __future__ import annotations

from typing import Any, Callable, Protocol

from core.vocab.config import JobSpec
from core.vocab.op_records import OpProfile
from core.vocab.records import AccuracyResult, LatencySample


class JobContext(Protocol):
    """The parts of a running job that time calls, sweep inputs and check the compiled model use."""

    spec: JobSpec
    torch: Any  # the torch module, imported by the job's process
    cuda: bool
    last_compile_s: float
    last_compile_metrics: list
    steps: Any  # core.measure.training.TrainingSteps for --task training, else None
    compiled_module: Any  # --task training: the module compiled, else None
    recording: Any  # core.capture.graphs.JobRecording, from the compile on
    break_at: dict[str, tuple]
    accuracy: AccuracyResult | None
    profile: OpProfile | None

    @property
    def process_note(self) -> str: ...

    def emit(self, event_type, **fields) -> None: ...

    def enter(self, phase: str, detail: str = "", step: int = 0, steps: int = 0) -> None: ...

    def timed(self, fn, inputs, before: Callable[[], None] | None = None) -> float: ...

    def timed_block(self, fn, inputs, before: Callable[[], None] | None, calls: int) -> float: ...

    def record(self, sample: LatencySample) -> None: ...

    def flush(self) -> None: ...

    def check_stop(self) -> None: ...

    def to_device(self, inputs: tuple) -> tuple: ...

    def step_marker(self) -> Callable[[], None] | None: ...

    def eager_before(self) -> Callable[[], None] | None: ...

    def start_memory_phase(self) -> None: ...

    def first_call(self, compiled, inputs) -> tuple[float, list]: ...

    def compile(self, loaded, inputs=None): ...
