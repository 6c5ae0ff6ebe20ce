"""The records a job measures and reports, declared once: a timed call, a graph break, a
recompile, a compile's result, memory and resource readings, a sweep variant, the accuracy
check, a compiled graph, the op profile; and the words they use (statuses, phases, sides,
time categories). core.vocab.events carries them between the job and whoever watches it;
reports store them as plain dicts. Frozen dataclasses; no Qt, any thread."""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass


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
PHASES = ("load", "eager", "compile", "compiled", "benchmark", "sweep", "accuracy", "op_profile", "localize")


# The two sides of a comparison: every timed call ran either the eager or the compiled model.
# ("phase" is the job's stage, PHASES above; a sample's side is not a phase.)
SIDES = ("eager", "compiled")


@dataclass(frozen=True)
class LatencySample:
    """One timed call: `side` is "eager" or "compiled"; `iteration` counts from 0 in its
    process; `process` is which of the job's fresh processes measured it (0: the first, which
    also compiled cold; see JobSpec.processes)."""

    side: str
    iteration: int
    latency_ms: float
    warmup: bool = False
    process: int = 0

    @classmethod
    def from_dict(cls, d: dict) -> "LatencySample":
        """Read a sample object; reports before version 2 called the side `phase`."""
        side = d["side"] if "side" in d else d["phase"]
        if side not in SIDES:
            raise ValueError(f"sample side must be one of {', '.join(SIDES)}, not {side!r}")
        return cls(
            side, int(d["iteration"]), float(d["latency_ms"]), bool(d.get("warmup", False)), int(d.get("process", 0))
        )


@dataclass(frozen=True)
class CallCost:
    """What one side's timed calls cost the process beyond their wall time, from the kernel's
    accounting (getrusage, read between blocks, never inside a timed call): minor and major page
    faults, and CPU time in user space and in the kernel, over `calls` calls of process `process`.
    Page faults in the compiled side mean the calls keep getting fresh memory from the kernel
    (glibc returning freed memory after each call, then faulting it in again)."""

    side: str
    calls: int = 0
    minor_faults: int = 0
    major_faults: int = 0
    user_ms: float = 0.0
    sys_ms: float = 0.0
    process: int = 0

    def per_call(self, field: str) -> float | None:
        return getattr(self, field) / self.calls if self.calls else None


# torch's hints that ask for an issue rather than say what to change (torch._dynamo.graph_break_hints)
ISSUE_REQUESTS = ("report an issue to pytorch", "file an issue on github")


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
    `compile_failed` is True when torch raised while compiling that frame and the error ended
    the job: nothing ran eagerly; `reason` and `explanation` hold torch's error.

    Two counts, never to be confused:
    - `logged`: how many times torch logged this break while compiling; dynamo restarts the
      analysis of an enclosing frame after a break, so one `.item()` can be logged 3 times.
    - `per_call`: how many times one call of the compiled model passes this break: counted in
      the op profile's calls where there is one (every run of the compiled code that broke
      there, cached variants and loops included), else from the compile alone (the logged
      count with dynamo's restarts removed).
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
    compile_failed: bool = False  # torch raised compiling this frame (the job ended): not skipped, not a break
    eager_function: str = ""  # frame_skipped: the function that ran eagerly, "name (file:line)"
    user_file: str = ""
    user_line: int = 0
    context_start: int = 0
    context: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.reason, self.file, self.line)

    @property
    def advice(self) -> tuple[str, ...]:
        """torch's hints that say what to change in the user's code: without those that ask
        for an issue to be filed ("Please report an issue to PyTorch.", "This is likely to be a
        Dynamo bug. Please report an issue to PyTorch.", "Please file an issue on GitHub…":
        torch adds them to most breaks, and they say nothing about the user's code)."""
        return tuple(h for h in self.hints if not any(k in h.lower() for k in ISSUE_REQUESTS))

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
    # Training steps: the forward graphs' compile (dynamo through AOTAutograd) and the backward
    # graphs' (compiled by AOTAutograd at the first backward), None for inference.
    forward_compile_s: float | None = None
    backward_compile_s: float | None = None
    # Inside inductor's code generation: waiting for the C++/Triton kernels to compile
    # (torch's triton_compile_time_us, which counts C++ kernels too); and autotuning at compile
    # time (compile_time_autotune_time_us: max-autotune's template benchmarks, benchmark fusion).
    kernel_compile_s: float = 0.0
    autotune_s: float = 0.0


@dataclass(frozen=True)
class CudagraphSkip:
    """torch did not use CUDA graphs for one compiled graph of a CUDA-graph mode
    (reduce-overhead, max-autotune). `reason` is the first line of torch's message ("skipping
    cudagraphs due to mutated inputs (1 instances)"), or "" when torch counted the skip
    without logging a reason (it does so for graphs with no GPU device, e.g. on the CPU);
    `file`/`line` is where torch's message points (the line that mutates an input, say),
    `compile_id` the compile it was logged in ("" at run time, e.g. cudagraph trees)."""

    reason: str
    file: str = ""
    line: int = 0
    compile_id: str = ""


@dataclass(frozen=True)
class MemoryPeak:
    """Peak memory of one phase: process RSS high-water mark, and on CUDA the allocator's."""

    phase: str
    peak_rss_mb: float
    cuda_max_allocated_mb: float | None = None
    cuda_max_reserved_mb: float | None = None


@dataclass(frozen=True)
class ResourceSample:
    """A reading of the job's process taken from outside it (by the runner) at `t_s`.
    `cpu_percent` is the job's processes' CPU use (100 = one core busy); `machine_cpu_percent`
    the whole machine's on the same scale (so the rest of the machine used the difference);
    `process` which of the job's processes ran (JobSpec.processes)."""

    t_s: float
    phase: str
    cpu_percent: float
    rss_mb: float
    gpu_util_percent: float | None = None
    gpu_mem_mb: float | None = None
    machine_cpu_percent: float | None = None
    process: int = 0

    @property
    def others_cores(self) -> float | None:
        """Cores the rest of the machine kept busy meanwhile (never below 0)."""
        if self.machine_cpu_percent is None:
            return None
        return max(0.0, (self.machine_cpu_percent - self.cpu_percent) / 100.0)


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
    # A batch sweep (--sweep-batch): the batch size of this variant, its peak memory (RSS MB, the
    # GPU's max allocated MB on CUDA) and, when it ran out of memory, why (that size ends there).
    batch_size: int | None = None
    peak_mb: float | None = None
    error: str = ""

    def __post_init__(self) -> None:
        if not self.outcome:
            object.__setattr__(self, "outcome", VariantOutcome.of(self).value)


class VariantOutcome(str, enum.Enum):
    """What torch did for one variant of a shape sweep (core.analysis.variants words it)."""

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


class AccuracyStatus(str, enum.Enum):
    """Does the compiled model compute what eager computes (core.measure.accuracy decides)?

    PASS and FAIL compare compiled outputs with eager ones on the same inputs;
    NONDETERMINISTIC means eager does not even agree with itself (two calls, same inputs,
    same seed) or its outputs change with the seed, so no comparison can mean anything;
    NOT_CHECKED says the check did not run (the reason says why)."""

    PASS = "pass"
    FAIL = "fail"
    NONDETERMINISTIC = "nondeterministic"
    NOT_CHECKED = "not checked"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


@dataclass(frozen=True)
class AccuracyResult:
    """The correctness check of one config (core.measure.accuracy), run after the timed benchmark.

    `status` is an AccuracyStatus value; `reason` says why in one sentence (for a failure:
    which output, by how much, against which tolerance). Errors are over every floating-point
    output: `max_abs_error` = max |compiled − eager|; `max_rel_error` = that error divided by
    the largest |eager| value of the same output (relative to the output's scale, so values
    near zero do not blow it up); `cosine` = the lowest cosine similarity of an output.
    `method` names the rule that decided: "allclose", "fp64" (RMSE against a float64
    reference, as PyTorch's runner does), "cosine" (low precision, or no float64 reference),
    "exact" (integer and boolean outputs). `worst_output` is the path of the output with the
    largest relative error, e.g. "[0]['logits']"."""

    status: str
    reason: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    cosine: float | None = None
    tolerance: float | None = None
    method: str = ""
    outputs: int = 0
    worst_output: str = ""
    # A failed check localized (JobSpec.localize, core.measure.localize_modules): the deepest
    # submodule whose compiled outputs diverge alone ("" when none), its class, the check's
    # sentence for it or why none was found, how many submodules were compiled and compared.
    module: str = ""
    module_kind: str = ""
    module_reason: str = ""
    modules_checked: int = 0
    module_rel_error: float | None = None


# ------------------------------------------------- what the compiler made, where the time goes


@dataclass(frozen=True)
class Specialization:
    """torch fixed a size it had made symbolic to one value (the structured trace's
    `symbolic_shape_specialization`): `sources` the sizes it names ("L['x'].size()[0]"),
    `value` the value, `reason` torch's condition ("Eq(s0, 4)"), `file`/`line` the user code
    that needed it. Dynamic shapes cannot help such a size (core.analysis.dynamic_dims)."""

    sources: tuple[str, ...] = ()
    value: str = ""
    reason: str = ""
    file: str = ""
    line: int = 0
    compile_id: str = ""


@dataclass(frozen=True)
class StageTime:
    """Seconds one compile spent in one stage, exclusive (core.capture.compile_watch: the
    innermost of torch's timed regions that names a stage)."""

    stage: str
    seconds: float


@dataclass(frozen=True)
class CompiledGraph:
    """One graph torch compiled (core.capture.graphs, from torch's structured trace).

    `graph` is its id as torch names it: the compile id of the frame compile that made it,
    "frame/compile" ("0/0"; "0/1" is frame 0 recompiled, with `recompile_reason` the guard
    failure that made it). `function`, `file`, `line` name the compiled frame (a resume
    function after a break is "torch_dynamo_resume_in_forward_at_15": it resumes at the
    break on line 15). `ops` and
    `guards` are torch's counts, `compile_s` the frame's compile time, `inputs` the graph's
    inputs ("L_x_: f32[8, 64]"), `kernels` the kernels inductor generated for it. The
    `*_file` fields are paths relative to the artifacts folder (core.vocab.artifacts), "" when
    there is none: the readable FX graph, its guards, inductor's output code."""

    graph: str
    function: str = ""
    file: str = ""
    line: int = 0
    ops: int = 0
    guards: int = 0
    compile_s: float = 0.0
    inputs: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()
    recompile_reason: str = ""
    code_file: str = ""
    guards_file: str = ""
    output_code_file: str = ""
    # the frame compile's time per stage, exclusive, as torch's timed regions showed it live
    stages: tuple[StageTime, ...] = ()
