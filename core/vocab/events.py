"""The event vocabulary between a profiling job (child process) and whoever watches it.

Declared once here and used everywhere: the child emits these, the runner forwards them,
`core.analysis.results.JobResult.apply` folds them, the GUI turns them into Qt signals and the
reports serialise what they carried (the records they carry are core.vocab.records). Every
event carries the `job_id` of the job it belongs to, so a stale event from a cancelled job can
be recognised and dropped.

Events are frozen dataclasses; they cross the process boundary as pickles over a
multiprocessing pipe and are converted to plain dicts (`to_dict`) for JSON.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from core.vocab.op_records import OpProfile
from core.vocab.records import (
    AccuracyResult,
    CallCost,
    CompiledGraph,
    CompileResult,
    CudagraphSkip,
    GraphBreak,
    JobStatus,
    LatencySample,
    MemoryPeak,
    Recompile,
    ResourceSample,
    Specialization,
    VariantResult,
)

# ---------------------------------------------------------------------------- events


@dataclass(frozen=True)
class Event:
    job_id: str

    @property
    def kind(self) -> str:
        return type(self).__name__

    def to_dict(self) -> dict[str, Any]:
        return {"event": self.kind, **dataclasses.asdict(self)}


@dataclass(frozen=True)
class JobStarted(Event):
    """The child is alive; `environment` holds versions, device, thread count."""

    pid: int = 0
    environment: dict = field(default_factory=dict)


@dataclass(frozen=True)
class PhaseChanged(Event):
    """The job entered `phase` (one of PHASES); `detail` says what it is doing in words;
    `step` of `steps` (from 1) counts within the phase where it has parts (sweep variants;
    seconds of an --iters auto benchmark's time); `process` is which of the job's processes
    (JobSpec.processes) is at it."""

    phase: str = ""
    detail: str = ""
    step: int = 0
    steps: int = 0
    process: int = 0


@dataclass(frozen=True)
class ModelLoaded(Event):
    """The model is built: its description, parameter count and input shapes."""

    description: str = ""
    model_kind: str = ""  # torchvision | timm | hf | python | export | torchscript
    parameters: int = 0
    input_shapes: tuple[str, ...] = ()
    compile_supported: bool = True
    note: str = ""


@dataclass(frozen=True)
class LatencyMeasured(Event):
    """A batch of timed calls, sent every ~100 ms so sending never sits in a timed call."""

    samples: tuple[LatencySample, ...] = ()


@dataclass(frozen=True)
class ThroughputMeasured(Event):
    """--timing both: the throughput phase's blocks, each a LatencySample of its time a call."""

    samples: tuple[LatencySample, ...] = ()


@dataclass(frozen=True)
class CompileFinished(Event):
    result: CompileResult | None = None


@dataclass(frozen=True)
class GraphBreakFound(Event):
    graph_break: GraphBreak | None = None


@dataclass(frozen=True)
class RecompileFound(Event):
    recompile: Recompile | None = None


@dataclass(frozen=True)
class SpecializationFound(Event):
    specialization: Specialization | None = None


@dataclass(frozen=True)
class CudagraphSkipped(Event):
    skip: CudagraphSkip | None = None


@dataclass(frozen=True)
class VariantMeasured(Event):
    """A shape-sweep variant is done (see VariantResult)."""

    variant: VariantResult | None = None


@dataclass(frozen=True)
class AccuracyChecked(Event):
    """The compiled outputs were compared with eager's (see AccuracyResult)."""

    accuracy: AccuracyResult | None = None


@dataclass(frozen=True)
class GraphCompiled(Event):
    """torch finished compiling one graph; its code, guards and output code are written
    (see CompiledGraph)."""

    graph: CompiledGraph | None = None


@dataclass(frozen=True)
class OpProfileMeasured(Event):
    """The op-level profile is done (see OpProfile); sent once, after the benchmark."""

    profile: OpProfile | None = None


@dataclass(frozen=True)
class MemoryMeasured(Event):
    peak: MemoryPeak | None = None


@dataclass(frozen=True)
class ResourceSampled(Event):
    sample: ResourceSample | None = None


@dataclass(frozen=True)
class CallCostsMeasured(Event):
    """A process's timed calls ended: what each side cost it in page faults and CPU time."""

    costs: tuple[CallCost, ...] = ()


@dataclass(frozen=True)
class ProcessEnded(Event):
    """A further process of the job (JobSpec.processes; `process` counts from 1 here) ended:
    completed, failed with its reason (what the job's other processes measured stays), or
    cancelled (stopped: the job ends there, completed with the processes before it). `status`
    is a JobStatus (its value in JSON); one read back from a report as text is made one again."""

    process: int = 0
    status: JobStatus = JobStatus.FAILED  # not known to have completed (a report without it reads so)
    reason: str = ""
    wall_time_s: float = 0.0

    def __post_init__(self):
        if not isinstance(self.status, JobStatus) and self.status in JobStatus._value2member_map_:
            object.__setattr__(self, "status", JobStatus(self.status))


@dataclass(frozen=True)
class JobCompleted(Event):
    """The job ran to its end; nothing more will come from it."""

    wall_time_s: float = 0.0


@dataclass(frozen=True)
class JobFailed(Event):
    """The job ended without completing. `reason` is one line for a user; `detail` is the
    traceback or the tail of the child's log. Everything received before stays valid."""

    reason: str = ""
    detail: str = ""
    phase: str = ""


@dataclass(frozen=True)
class JobCancelled(Event):
    """The job was cancelled by the user; results received before it stay valid."""

    phase: str = ""


TERMINAL_EVENTS = (JobCompleted, JobFailed, JobCancelled)
