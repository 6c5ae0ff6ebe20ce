"""The event vocabulary between a profiling job (child process) and whoever watches it.

Declared once here and used everywhere: the child emits these, the runner forwards them,
`results.JobResult.apply` folds them, the GUI turns them into Qt signals and the reports
serialise what they carried. Every event carries the `job_id` of the job it belongs to, so
a stale event from a cancelled job can be recognised and dropped.

Events are frozen dataclasses; they cross the process boundary as pickles over a
multiprocessing pipe and are converted to plain dicts (`to_dict`) for JSON.
"""
from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass, field
from typing import Any

class JobStatus(str, enum.Enum):
    """Where a job stands: pending (queued, not started), running, or ended for one of three
    reasons: completed, failed, cancelled. The one status type of the product (the JobResult,
    the CLI, the app's queue and tables), written as its value in reports."""

    PENDING = "pending"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def ended(self) -> bool:
        return self in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)


# Phases of a job, in the order they happen. "benchmark" is the timed stretch in which
# eager and compiled calls alternate (as PyTorch's own benchmark runner does).
PHASES = ("load", "eager", "compile", "compiled", "benchmark", "sweep")


# The two sides of a comparison: every timed call ran either the eager or the compiled model.
# ("phase" is the job's stage, PHASES above; a sample's side is not a phase.)
SIDES = ("eager", "compiled")


@dataclass(frozen=True)
class LatencySample:
    """One timed call: `side` is "eager" or "compiled"; `iteration` counts from 0."""

    side: str
    iteration: int
    latency_ms: float
    warmup: bool = False

    @classmethod
    def from_dict(cls, d: dict) -> "LatencySample":
        """Read a sample object; reports before version 2 called the side `phase`."""
        side = d["side"] if "side" in d else d["phase"]
        if side not in SIDES:
            raise ValueError(f"sample side must be one of {', '.join(SIDES)}, not {side!r}")
        return cls(side, int(d["iteration"]), float(d["latency_ms"]), bool(d.get("warmup", False)))


@dataclass(frozen=True)
class GraphBreak:
    """One place where torch broke the graph while compiling, as torch reported it.

    `reason` is torch's gb_type ("Data-dependent branching"), `gb_code` its registry id
    ("GB0170"). `file`/`line`/`source` say where the break happened; `context` holds the
    source lines around it (`context_start` is the number of its first line), read from the
    file while profiling, so a report never needs the file again. `user_file`/`user_line` is
    the nearest frame in the user's own code (not torch, not site-packages) when the break
    lies in a library. `frame_skipped` is True when dynamo gave up on a whole frame, which
    then ran eagerly (e.g. nn.LSTM without allow_rnn); `eager_function` names it.

    Two counts, never to be confused:
    - `logged`: how many times torch logged this break while compiling; dynamo restarts the
      analysis of an enclosing frame after a break, so one `.item()` can be logged 3 times.
    - `per_call`: how many times one call of the compiled model passes this break (the
      logged count with dynamo's restarts removed).
    A break *site* is one distinct (reason, file, line); see `results.JobResult.summary`.
    """

    reason: str
    gb_code: str = ""
    doc_url: str = ""
    explanation: str = ""
    hints: tuple[str, ...] = ()
    file: str = ""
    line: int = 0
    source: str = ""
    logged: int = 1
    per_call: int = 1
    frame_skipped: bool = False
    compile_id: str = ""  # torch's frame/compile id where it was logged, e.g. "0/0"
    eager_function: str = ""  # frame_skipped: the function that ran eagerly, "name (file:line)"
    user_file: str = ""
    user_line: int = 0
    context_start: int = 0
    context: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.reason, self.file, self.line)

    @classmethod
    def from_dict(cls, d: dict) -> "GraphBreak":
        """Read a report's graph break; reports before version 2 had one `count`."""
        d = dict(d)
        if "count" in d:
            count = d.pop("count")
            d.setdefault("logged", count)
            d.setdefault("per_call", count)
        known = {f.name for f in dataclasses.fields(cls)}
        d = {k: v for k, v in d.items() if k in known}
        for k in ("hints", "context"):
            d[k] = tuple(d.get(k) or ())
        return cls(**d)


@dataclass(frozen=True)
class Recompile:
    """A recompilation of `function` and the guard failures that triggered it."""

    function: str
    location: str
    reasons: tuple[str, ...]
    compile_id: str = ""


@dataclass(frozen=True)
class CompileResult:
    """What the first compiled call cost and what dynamo made of the model.

    Times are seconds. `compile_time_s` is the wall time of the first compiled call; the
    phase times come from torch's compilation metrics and are cumulative as torch reports
    them (dynamo's includes the backend's, AOTAutograd's includes inductor's).
    `cache_state` is "hit", "miss", "partial" or "n/a" (backends without the FX cache).
    `coverage` says in words how much of the model actually runs compiled.
    """

    compile_time_s: float
    dynamo_s: float = 0.0
    aot_autograd_s: float = 0.0
    inductor_s: float = 0.0
    codegen_s: float = 0.0
    cache_state: str = "n/a"
    fx_cache_hits: int = 0
    fx_cache_misses: int = 0
    frames_compiled: int = 0
    frames_skipped: int = 0
    graph_count: int = 0
    op_count: int = 0
    guard_count: int = 0
    coverage: str = ""
    fully_compiled: bool = False


@dataclass(frozen=True)
class MemoryPeak:
    """Peak memory of one phase: process RSS high-water mark, and on CUDA the allocator's."""

    phase: str
    peak_rss_mb: float
    cuda_max_allocated_mb: float | None = None
    cuda_max_reserved_mb: float | None = None


@dataclass(frozen=True)
class ResourceSample:
    """A reading of the job's process taken from outside it (by the runner) at `t_s`."""

    t_s: float
    phase: str
    cpu_percent: float
    rss_mb: float
    gpu_util_percent: float | None = None
    gpu_mem_mb: float | None = None


@dataclass(frozen=True)
class VariantResult:
    """One input variant of a shape sweep: did the compiled model recompile for it, why,
    what did that cost, and how fast did each side run. `compiles` counts the compile
    attempts this variant triggered; `recompile_limit_hit` means this variant hit the
    recompile limit: torch gave up compiling new shapes of the frame and runs them eagerly."""

    index: int
    input_shapes: tuple[str, ...]
    compiles: int
    recompiled: bool
    recompile_reasons: tuple[str, ...] = ()
    compile_time_s: float = 0.0
    recompile_limit_hit: bool = False
    ran_eagerly: bool = False  # a new shape after the limit: torch ran it without compiling
    eager_ms: tuple[float, ...] = ()
    compiled_ms: tuple[float, ...] = ()
    outcome: str = ""  # a VariantOutcome value; derived from the flags above when not given

    def __post_init__(self) -> None:
        if not self.outcome:
            object.__setattr__(self, "outcome", VariantOutcome.of(self).value)


class VariantOutcome(str, enum.Enum):
    """What torch did for one variant of a shape sweep (core.sweep words it)."""

    LIMIT_HIT = "limit_hit"  # this variant hit the recompile limit: torch ran it eagerly
    RAN_EAGERLY = "ran_eagerly"  # a new shape after the limit: run eagerly without trying
    RECOMPILED = "recompiled"
    COMPILED = "compiled"  # the first variant's compile
    REUSED = "reused"  # served by code compiled for an earlier variant

    def __str__(self) -> str:
        return self.value

    @classmethod
    def of(cls, v: "VariantResult") -> "VariantOutcome":
        if v.recompile_limit_hit:
            return cls.LIMIT_HIT
        if v.ran_eagerly:
            return cls.RAN_EAGERLY
        if v.recompiled:
            return cls.RECOMPILED
        if v.compiles:
            return cls.COMPILED
        return cls.REUSED


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
    `step` of `steps` (from 1) counts within the phase where it has parts (sweep variants)."""

    phase: str = ""
    detail: str = ""
    step: int = 0
    steps: int = 0


@dataclass(frozen=True)
class ModelLoaded(Event):
    """The model is built: its description, parameter count and input shapes."""

    description: str = ""
    model_kind: str = ""  # torchvision | python | export | torchscript
    parameters: int = 0
    input_shapes: tuple[str, ...] = ()
    compile_supported: bool = True
    note: str = ""


@dataclass(frozen=True)
class LatencyMeasured(Event):
    """A batch of timed calls, sent every ~100 ms so sending never sits in a timed call."""

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
class VariantMeasured(Event):
    """A shape-sweep variant is done (see VariantResult)."""

    variant: VariantResult | None = None


@dataclass(frozen=True)
class MemoryMeasured(Event):
    peak: MemoryPeak | None = None


@dataclass(frozen=True)
class ResourceSampled(Event):
    sample: ResourceSample | None = None


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
