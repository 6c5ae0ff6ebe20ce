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
PHASES = ("load", "eager", "compile", "compiled", "benchmark", "sweep", "accuracy", "op_profile")


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
        return cls(side, int(d["iteration"]), float(d["latency_ms"]), bool(d.get("warmup", False)),
                   int(d.get("process", 0)))


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
    # Training steps: the forward graphs' compile (dynamo through AOTAutograd) and the backward
    # graphs' (compiled by AOTAutograd at the first backward), None for inference.
    forward_compile_s: float | None = None
    backward_compile_s: float | None = None


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


# ------------------------------------------------- what the compiler made, where the time goes


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


# What a profiled event is (ops.csv `category`), decided by its name (core.analysis.time_breakdown.classify).
OP_CATEGORIES = (
    "operator",  # a dispatched operator: aten::addmm, mkldnn::_convolution_pointwise, a custom op
    "kernel",  # a kernel the compiler generated: cpp_fused_... (CPU), triton_... (GPU)
    "graph_call",  # one call of a compiled graph, marked by the job (everything it runs is inside it)
    "compiled_region",  # "Torch-Compiled Region: F/C": a frame running dynamo's code
    "guard_check",  # "TorchDynamo Cache Lookup": guards evaluated to pick the compiled code
    "runtime_wrapper",  # AOTDispatcher prologue, "Pregraph bytecode", "## Call CompiledFxGraph ##"
    "other",  # anything else: CUDA runtime calls, a user's record_function
)

# Where one call's time goes: a partition (the parts add up to the call's wall time).
TIME_CATEGORIES = ("kernels", "operators_in_graphs", "runtime_wrappers", "guard_checks",
                   "operators_outside_graphs", "python", "other")
TIME_CATEGORY_LABELS = {
    "kernels": "generated kernels",
    "operators_in_graphs": "operators inside compiled graphs",
    "runtime_wrappers": "runtime wrappers around graphs",
    "guard_checks": "guard checks (cache lookup)",
    "operators_outside_graphs": "operators outside compiled graphs (eager)",
    "python": "Python outside operators and graphs",
    "other": "other ranges (autograd functions, user ranges, CUDA runtime)",
}


@dataclass(frozen=True)
class OpStat:
    """One row of ops.csv: an operator, kernel or marker on one side, per profiled call.
    `graph` is the compile id of the compiled graph it ran in ("" outside any graph; a
    compiled region's own id; the region a guard check chose). Self time excludes what it
    called, total includes it; `device_ms_per_call` is the GPU time of the kernels it
    launched (CUDA only)."""

    name: str
    category: str
    graph: str = ""
    calls_per_call: float = 0.0
    self_ms_per_call: float = 0.0
    total_ms_per_call: float = 0.0
    device_ms_per_call: float | None = None


@dataclass(frozen=True)
class SideOpProfile:
    """The op profile of one side (eager or compiled), every figure per call.

    `ms_per_call` is a call's wall time under the profiler (slower than the timed median:
    recording costs); the TIME_CATEGORIES fields (`kernels_ms` ...) split it and add up to
    it. `in_graphs_ms` is the time inside compiled graphs, `outside_graphs_ms` the rest.
    `operators_per_call` counts operator calls made from Python or from graph code (nested
    ones not counted again), `kernels_per_call` generated-kernel launches, `graphs_per_call`
    compiled-graph calls. `ops` holds every distinct operator/kernel/marker (OpStat).
    `calls` counts the calls explained; `outlier_calls` those left out for taking more than
    twice the median call (interrupted: core.analysis.time_breakdown.steady_calls)."""

    side: str
    calls: int = 0
    outlier_calls: int = 0
    ms_per_call: float = 0.0
    kernels_ms: float = 0.0
    operators_in_graphs_ms: float = 0.0
    runtime_wrappers_ms: float = 0.0
    guard_checks_ms: float = 0.0
    operators_outside_graphs_ms: float = 0.0
    python_ms: float = 0.0
    other_ms: float = 0.0
    in_graphs_ms: float = 0.0
    outside_graphs_ms: float = 0.0
    operators_per_call: float = 0.0
    kernels_per_call: float = 0.0
    graphs_per_call: float = 0.0
    device_ms_per_call: float | None = None
    ops: tuple[OpStat, ...] = ()

    def time_by_category(self) -> dict[str, float]:
        """TIME_CATEGORIES → ms per call, in that order (a stacked bar's segments)."""
        return {c: getattr(self, f"{c}_ms") for c in TIME_CATEGORIES}

    def time_shares(self) -> dict[str, float]:
        """TIME_CATEGORIES → the fraction of a call it takes (they add up to 1)."""
        total = self.ms_per_call
        return {c: (ms / total if total else 0.0) for c, ms in self.time_by_category().items()}

    def top_ops(self, n: int = 10, by: str = "self_ms_per_call") -> list[OpStat]:
        """The `n` operators and kernels (not markers) that took longest."""
        rows = [o for o in self.ops if o.category in ("operator", "kernel")]
        return sorted(rows, key=lambda o: getattr(o, by) or 0.0, reverse=True)[:n]


@dataclass(frozen=True)
class BreakCost:
    """What one graph-break site (reason, file, line: GraphBreak.key) costs per compiled
    call (core.analysis.time_breakdown.attribute_breaks): the eager stretches between two compiled
    graphs that this break caused, summed. `gaps_per_call` counts those stretches (a break
    inside a called function splits the caller too: up to three per pass). `graphs_before`
    are the graphs that end where such a stretch starts, `graphs_after` those that start
    where it ends (compile ids), so a view can jump to the graphs on either side."""

    reason: str
    file: str
    line: int
    cost_ms_per_call: float
    gaps_per_call: float = 0.0
    graphs_before: tuple[str, ...] = ()
    graphs_after: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.reason, self.file, self.line)


@dataclass(frozen=True)
class GraphTime:
    """Time spent inside one compiled graph per compiled call (from the op profile)."""

    graph: str
    ms_per_call: float
    calls_per_call: float = 0.0


@dataclass(frozen=True)
class OpProfile:
    """The op-level profile of a job (core.measure.op_profile), taken after the timed benchmark
    with torch.profiler over `calls` calls per side.

    The compiled side's `outside_graphs_ms` = the break costs (`break_costs`, per site) +
    `unattributed_ms` (between two graphs where torch logged no break) + `entry_exit_ms`
    (before the first graph and after the last: entering the compiled code, the first
    guard check, returning). `eager_trace`/`compiled_trace` are the Chrome traces (paths
    relative to the artifacts folder, "" when not written). `note` says what could not be
    measured."""

    calls: int
    eager: SideOpProfile | None = None
    compiled: SideOpProfile | None = None
    break_costs: tuple[BreakCost, ...] = ()
    unattributed_ms: float = 0.0
    entry_exit_ms: float = 0.0
    graph_times: tuple[GraphTime, ...] = ()
    eager_trace: str = ""
    compiled_trace: str = ""
    note: str = ""

    @property
    def between_graphs_ms(self) -> float:
        """Time per compiled call between two graphs: the break costs + unattributed."""
        return sum(b.cost_ms_per_call for b in self.break_costs) + self.unattributed_ms
