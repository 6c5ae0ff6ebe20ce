"""The op profile's records, declared once: what a profiled event is (its category), where a
call's time goes (TIME_CATEGORIES), an operator's figures, a side's profile, what a graph
break costs, the time in each compiled graph, and the whole profile (core.measure.op_profile
makes it, core.analysis.time_breakdown explains it). Frozen dataclasses; no Qt, any thread."""

from __future__ import annotations

from dataclasses import dataclass

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
TIME_CATEGORIES = (
    "kernels",
    "operators_in_graphs",
    "runtime_wrappers",
    "guard_checks",
    "operators_outside_graphs",
    "python",
    "other",
)
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
class BreakPasses:
    """How many times one compiled call passes one graph-break site (reason, file, line:
    GraphBreak.key), counted in the profiled calls (core.measure.op_profile.break_passes): the
    runs of the compiled code of every frame compile that broke there, the most any one
    profiled call made."""

    reason: str
    file: str
    line: int
    per_call: int = 0

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.reason, self.file, self.line)


@dataclass(frozen=True)
class LineTime:
    """Time per call at one source line (core.measure.line_profile): `eager_ms` the torch calls
    made from it in eager calls, `compiled_ms` the compiled kernels charged to it (a fused
    kernel's time shared equally among its lines) plus, on a graph break's line
    (`graph_break`), the eager code between the graphs it splits; None when the compiled side
    was not profiled. `kernels` the kernels charged to it."""

    file: str
    line: int
    source: str = ""
    eager_ms: float = 0.0
    compiled_ms: float | None = None
    kernels: tuple[str, ...] = ()
    graph_break: bool = False

    @property
    def lost_ms(self) -> float | None:
        """How much slower the line is compiled (negative: faster)."""
        return None if self.compiled_ms is None else self.compiled_ms - self.eager_ms


@dataclass(frozen=True)
class GraphTime:
    """Time spent inside one compiled graph per compiled call (from the op profile)."""

    graph: str
    ms_per_call: float
    calls_per_call: float = 0.0
    # around it, per call: the guard checks that chose it (dynamo's cache lookup just before
    # it) and the runtime wrappers' own time (AOT dispatcher prologue, pre-graph bytecode, ...)
    guard_ms_per_call: float | None = None
    wrapper_ms_per_call: float | None = None


@dataclass(frozen=True)
class CudagraphCoverage:
    """Per compiled call, from the op profile (core.analysis.cudagraph_coverage): GPU time in
    CUDA-graph replays and in all, in ms, the replays, and their share."""

    graph_ms_per_call: float
    device_ms_per_call: float
    launches_per_call: float

    @property
    def share(self) -> float | None:
        return self.graph_ms_per_call / self.device_ms_per_call if self.device_ms_per_call > 0 else None

    def text(self) -> str:
        if self.share is None:
            return "no GPU time in the profiled calls"
        return (
            f"{self.share:.0%} of the compiled call's GPU time ran in CUDA-graph replays "
            f"({self.graph_ms_per_call:.3f} of {self.device_ms_per_call:.3f} ms a call, "
            f"{self.launches_per_call:g} replay{'s' if self.launches_per_call != 1 else ''} a call)"
        )


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
    break_passes: tuple[BreakPasses, ...] = ()  # every ordinary break site; () when not counted
    # time per source line (core.measure.line_profile); what the lines account for per call on
    # each side against the call's whole time (eager: under the timing mode; compiled: the op
    # profile's), and why a side has no lines
    lines: tuple[LineTime, ...] = ()
    lines_eager_ms: float = 0.0
    lines_eager_call_ms: float = 0.0
    lines_compiled_ms: float = 0.0
    lines_unmatched_ms: float = 0.0
    lines_note: str = ""
    eager_trace: str = ""
    compiled_trace: str = ""
    note: str = ""
    cudagraphs: CudagraphCoverage | None = None  # on a GPU: the compiled calls' GPU time in graph replays

    @property
    def between_graphs_ms(self) -> float:
        """Time per compiled call between two graphs: the break costs + unattributed."""
        return sum(b.cost_ms_per_call for b in self.break_costs) + self.unattributed_ms
