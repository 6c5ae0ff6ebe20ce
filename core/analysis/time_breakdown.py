"""Where the time of one call goes: classifying profiled events, splitting each call's wall
time by category, finding the compiled graphs in it, and pricing the graph breaks between
them. Pure functions over a small tree (`Node`), built from torch.profiler's events by
core.measure.op_profile, so the rules are tested without a profiler.

How torch 2.14 shows a compiled call (measured): each frame running compiled code is a
"Torch-Compiled Region: F/C", preceded by a "TorchDynamo Cache Lookup" (the guards); a
resume function's region sits *inside* the region of the frame that called it, so regions
nest and "outside any region" says nothing. What matters is the time inside compiled
*graphs*: core.measure.op_profile marks every graph call ("## Compiled graph ... ##", category
graph_call; inductor's own "## Call CompiledFxGraph ##" stands in when no mark was set).
Everything between the end of one graph and the start of the next ran eagerly: the code at
the graph break, the next frame's guard check, dynamo's bytecode. That gap is the price of a
break, found through the regions: the innermost region holding both graphs is the frame
whose break split them (torch logs a break with the compile id of the frame where it
happened). In the simple case that is the first graph's own frame (its resume function
runs inside it); when the first graph sits in a function the frame called (a frame that
broke at that call), the gap after the function returns belongs to the caller's break.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import re
import statistics
from collections import defaultdict
from dataclasses import dataclass, field

from core.vocab.formatting import count, fmt_ms
from core.vocab.op_records import TIME_CATEGORIES, BreakCost, GraphTime, OpStat, SideOpProfile

REGION_PREFIX = "Torch-Compiled Region: "
GUARD_CHECK = "TorchDynamo Cache Lookup"
GRAPH_MARK = "## Compiled graph "  # set by core.measure.op_profile around each compiled graph's call
INDUCTOR_GRAPH_CALL = "## Call CompiledFxGraph"
RUNTIME_WRAPPERS = (
    "AOTDispatcher Runtime Wrapper Prologue",
    "Pregraph bytecode",
    "CompiledFunction",
    "CompiledFunctionBackward",
)
_KERNEL = re.compile(r"^(graph_\d+_)?(cpp_|triton_)")
STEP_PREFIX = "ProfilerStep"  # "ProfilerStep*" in events(), "ProfilerStep#3" in traces


@dataclass
class Node:
    """One profiled range on the call's thread: times in microseconds, children in order,
    `device_us` the GPU time of the kernels it launched itself."""

    name: str
    start: float
    end: float
    children: list["Node"] = field(default_factory=list)
    device_us: float = 0.0

    @property
    def duration(self) -> float:
        return max(0.0, self.end - self.start)


def classify(name: str, kernels: frozenset[str] | set[str] = frozenset()) -> str:
    """The OP_CATEGORIES value of a profiled event's name."""
    if name.startswith(GRAPH_MARK):
        return "graph_call"
    if name.startswith(REGION_PREFIX):
        return "compiled_region"
    if name == GUARD_CHECK:
        return "guard_check"
    if name in RUNTIME_WRAPPERS or (name.startswith("## ") and name.endswith(" ##")):
        return "runtime_wrapper"
    if name in kernels or _KERNEL.match(name):
        return "kernel"
    if "::" in name and not name.startswith("#"):
        return "operator"
    return "other"


def region_id(name: str) -> str:
    return name[len(REGION_PREFIX) :].strip() if name.startswith(REGION_PREFIX) else ""


@dataclass
class GraphSpan:
    start: float
    end: float
    graph: str  # compile id of the region the graph ran in
    regions: tuple = ()  # the regions around it, outermost first: (compile id, start) each


@dataclass
class _Side:
    side: str
    kernels: frozenset
    calls: int = 0
    wall: float = 0.0
    time: dict = field(default_factory=lambda: defaultdict(float))
    ops: dict = field(default_factory=lambda: defaultdict(lambda: [0, 0.0, 0.0, 0.0]))
    counts: dict = field(default_factory=lambda: defaultdict(int))
    device: float = 0.0
    spans: list = field(default_factory=list)  # per call: [GraphSpan]

    def add_call(self, step: Node) -> None:
        self.calls += 1
        self.wall += step.duration
        spans: list[GraphSpan] = []
        self._walk(step, (), False, False, spans, root=True)
        self.spans.append(spans)

    def _walk(
        self, node: Node, regions: tuple, in_graph: bool, in_op: bool, spans: list, root: bool = False, chosen: str = ""
    ) -> None:
        cat = "other" if root else classify(node.name, self.kernels)
        if cat == "compiled_region":
            regions = regions + ((region_id(node.name), node.start),)
        region = regions[-1][0] if regions else ""
        # inductor's own mark stands in for a graph call where the job could not set one
        if (cat == "graph_call" or node.name.startswith(INDUCTOR_GRAPH_CALL)) and not in_graph:
            spans.append(GraphSpan(node.start, node.end, region, regions))
            self.counts["graphs"] += 1
            in_graph = True
        if cat == "kernel":
            self.counts["kernels"] += 1
        if cat == "operator" and not in_op:
            self.counts["operators"] += 1
        own = node.duration - sum(c.duration for c in node.children)
        own = max(0.0, own)
        if root or cat == "compiled_region":
            bucket = "python"
        elif cat == "kernel":
            bucket = "kernels"
        elif cat == "operator":
            bucket = "operators_in_graphs" if in_graph else "operators_outside_graphs"
        elif cat in ("graph_call", "runtime_wrapper"):
            bucket = "runtime_wrappers"
        elif cat == "guard_check":
            bucket = "guard_checks"
        else:
            bucket = "other"
        self.time[bucket] += own
        self.device += node.device_us
        if not root:
            if in_graph or cat in ("compiled_region", "runtime_wrapper", "graph_call"):
                graph = region
            else:
                graph = chosen if cat == "guard_check" else ""
            row = self.ops[(node.name, cat, graph)]
            row[0] += 1
            row[1] += own
            row[2] += node.duration
            row[3] += node.device_us
        children = node.children
        for i, child in enumerate(children):
            nxt = ""
            if child.name == GUARD_CHECK and i + 1 < len(children):
                nxt = region_id(children[i + 1].name)
            self._walk(child, regions, in_graph, in_op or cat == "operator", spans, chosen=nxt)

    def result(self, cuda: bool, max_ops: int) -> SideOpProfile:
        n = max(1, self.calls)
        ms = {c: self.time.get(c, 0.0) / n / 1000 for c in TIME_CATEGORIES}
        in_graphs = sum(s.end - s.start for call in self.spans for s in call) / n / 1000
        rows = [
            OpStat(name, cat, graph, calls / n, own / n / 1000, total / n / 1000, (dev / n / 1000) if cuda else None)
            for (name, cat, graph), (calls, own, total, dev) in self.ops.items()
        ]
        rows.sort(key=lambda o: o.self_ms_per_call, reverse=True)
        return SideOpProfile(
            side=self.side,
            calls=self.calls,
            ms_per_call=self.wall / n / 1000,
            **{f"{c}_ms": ms[c] for c in TIME_CATEGORIES},
            in_graphs_ms=in_graphs,
            outside_graphs_ms=max(0.0, self.wall / n / 1000 - in_graphs),
            operators_per_call=self.counts["operators"] / n,
            kernels_per_call=self.counts["kernels"] / n,
            graphs_per_call=self.counts["graphs"] / n,
            device_ms_per_call=(self.device / n / 1000) if cuda else None,
            ops=tuple(rows[:max_ops]),
        )


OUTLIER_FACTOR = 2.0


def steady_calls(steps: list[Node]) -> tuple[list[Node], int]:
    """The calls to explain, and how many were left out: a call that took more than
    OUTLIER_FACTOR times the median call was interrupted (another process took the core, a
    garbage collection) and would smear its pause over every per-call figure. Measured on
    this shared machine: 2 calls of 10 at 19 ms and 8 ms against 0.2 ms."""
    if len(steps) < 3:
        return list(steps), 0
    limit = OUTLIER_FACTOR * statistics.median(s.duration for s in steps)
    kept = [s for s in steps if s.duration <= limit]
    return kept, len(steps) - len(kept)


def analyse(
    side: str,
    steps: list[Node],
    kernels: frozenset = frozenset(),
    cuda: bool = False,
    max_ops: int = 5000,
    outlier_calls: int = 0,
) -> tuple[SideOpProfile, list[list[GraphSpan]]]:
    """One side's profile from its calls (one Node per call, e.g. a ProfilerStep; see
    steady_calls), and the compiled graphs each call ran, in order."""
    acc = _Side(side, frozenset(kernels))
    for step in steps:
        acc.add_call(step)
    profile = acc.result(cuda, max_ops)
    return dataclasses.replace(profile, outlier_calls=outlier_calls), acc.spans


@dataclass
class BreakAttribution:
    costs: tuple[BreakCost, ...]
    unattributed_ms: float
    entry_exit_ms: float
    graph_times: tuple[GraphTime, ...]


def attribute_breaks(
    steps: list[Node], spans: list[list[GraphSpan]], break_at: dict[str, tuple[str, str, int]]
) -> BreakAttribution:
    """Price each break: in every call, the gap between consecutive graphs goes to the
    break logged in the innermost region holding both (`break_at`: compile id → the
    break's (reason, file, line)); a gap with no such break is unattributed. The time before the
    first graph and after the last is entry/exit (entering compiled code, the first guard
    check, returning). A call that ran no graph at all counts as unattributed."""
    n = max(1, len(steps))
    cost, passes = defaultdict(float), defaultdict(int)
    before, after = defaultdict(dict), defaultdict(dict)
    unattributed = entry_exit = 0.0
    graph_us, graph_calls = defaultdict(float), defaultdict(int)
    for step, call in zip(steps, spans):
        call = sorted(call, key=lambda s: s.start)
        if not call:
            unattributed += step.duration
            continue
        entry_exit += max(0.0, call[0].start - step.start) + max(0.0, step.end - call[-1].end)
        for s in call:
            graph_us[s.graph] += s.end - s.start
            graph_calls[s.graph] += 1
        for a, b in zip(call, call[1:]):
            gap = max(0.0, b.start - a.end)
            shared = [r for r, _ in itertools.takewhile(lambda pair: pair[0] == pair[1], zip(a.regions, b.regions))]
            key = break_at.get(shared[-1][0]) if shared else None
            if key is None:
                unattributed += gap
                continue
            cost[key] += gap
            passes[key] += 1
            before[key][a.graph] = None
            after[key][b.graph] = None
    costs = tuple(
        sorted(
            (
                BreakCost(k[0], k[1], k[2], cost[k] / n / 1000, passes[k] / n, tuple(before[k]), tuple(after[k]))
                for k in cost
            ),
            key=lambda b: b.cost_ms_per_call,
            reverse=True,
        )
    )
    times = tuple(GraphTime(g, us / n / 1000, graph_calls[g] / n) for g, us in graph_us.items())
    return BreakAttribution(costs, unattributed / n / 1000, entry_exit / n / 1000, times)


def region_costs(steps: list[Node], kernels: frozenset[str] | set[str] = frozenset()) -> dict[str, tuple[float, float]]:
    """What each compiled region costs around its graph, per call, in ms: compile id →
    (guard checks: the cache lookup that chose it, just before it; runtime wrappers: the self time
    of the wrappers and graph marks inside it, nested regions and the operators and kernels
    they call left out)."""
    guards: dict[str, float] = defaultdict(float)
    wrappers: dict[str, float] = defaultdict(float)

    def wrapper_time(node: Node) -> float:
        if region_id(node.name):
            return 0.0  # a nested region is its own
        category = classify(node.name, kernels)
        own = node.duration - sum(c.duration for c in node.children)
        here = own if category in ("runtime_wrapper", "graph_call") else 0.0
        if category in ("operator", "kernel"):
            return 0.0
        return here + sum(wrapper_time(c) for c in node.children)

    def walk(node: Node) -> None:
        previous = None
        for child in node.children:
            cid = region_id(child.name)
            if cid:
                if previous is not None and previous.name == GUARD_CHECK:
                    guards[cid] += previous.duration
                wrappers[cid] += sum(wrapper_time(c) for c in child.children)
            walk(child)
            previous = child

    for step in steps:
        walk(step)
    n = max(1, len(steps))
    return {
        cid: (guards.get(cid, 0.0) / n / 1000, wrappers.get(cid, 0.0) / n / 1000) for cid in set(guards) | set(wrappers)
    }


def time_verdict(
    profile,
    eager_ms: float | None = None,
    compiled_ms: float | None = None,
    graph_breaks=(),
    tied: bool = False,
    unusable: bool = False,
) -> str:
    """One sentence on why compiled is faster or slower, from an OpProfile; `eager_ms` and
    `compiled_ms` are the timed medians when known (the profile's own figures otherwise),
    `graph_breaks` the job's GraphBreak rows (to name a break by the user's line), `tied`
    that the speedup's confidence interval holds 1 (neither side is faster), `unusable` that the
    timing was graded unusable (which side is faster cannot be told; the grade says why)."""
    if profile is None or profile.compiled is None or not profile.compiled.calls:
        return ""
    c, e = profile.compiled, profile.eager
    if eager_ms is None or compiled_ms is None:
        eager_ms, compiled_ms = (e.ms_per_call if e else None), c.ms_per_call
    if c.graphs_per_call == 0:
        return (
            "Nothing ran in a compiled graph: every profiled call ran eagerly, so compiling cannot help "
            "(see the coverage and the graph breaks)."
        )
    total = c.ms_per_call
    if eager_ms and compiled_ms and unusable:
        head = (
            f"Cannot tell which side is faster: the timing is unusable ({fmt_ms(compiled_ms)} against "
            f"{fmt_ms(eager_ms)} eager; the grade says why)"
        )
    elif eager_ms and compiled_ms and tied:
        head = f"Compiled and eager are within the noise ({fmt_ms(compiled_ms)} against {fmt_ms(eager_ms)} eager)"
    elif eager_ms and compiled_ms and compiled_ms > eager_ms:
        head = f"Compiled is slower ({fmt_ms(compiled_ms)} against {fmt_ms(eager_ms)} eager)"
    elif eager_ms and compiled_ms:
        head = (
            f"Compiled is {eager_ms / compiled_ms:.2f}× faster ({fmt_ms(compiled_ms)} against {fmt_ms(eager_ms)} eager)"
        )
    else:
        head = "Compiled"
    between = profile.between_graphs_ms
    ordinary = [g for g in graph_breaks if not g.frame_skipped]
    breaks = sum(g.per_call for g in ordinary) if ordinary else len(profile.break_costs)
    worst = profile.break_costs[0] if profile.break_costs else None
    fix = f"; fix {_where(worst, graph_breaks)} first ({fmt_ms(worst.cost_ms_per_call)})" if worst else ""
    overhead = c.guard_checks_ms + c.runtime_wrappers_ms
    if between >= 0.2 * total:
        n = f"{breaks:g} graph break{'s' if breaks != 1 else ''}" if breaks else "no graph break logged"
        why = f"{fmt_ms(between)} of {fmt_ms(total)} per call runs between graphs ({n}){fix}"
    elif c.guard_checks_ms >= 0.2 * total:
        why = f"guard checks cost {fmt_ms(c.guard_checks_ms)} a call ({c.guard_checks_ms / total:.0%} of its time)"
    elif overhead >= 0.3 * total:
        why = (
            f"{fmt_ms(overhead)} of {fmt_ms(total)} per call is the compiled code's own overhead "
            f"(guard checks {fmt_ms(c.guard_checks_ms)}, runtime wrappers {fmt_ms(c.runtime_wrappers_ms)})"
        )
    else:
        launched = f"{count(c.kernels_per_call, 'kernel')} and {count(c.operators_per_call, 'operator')}"
        eager_ops = f", against {count(e.operators_per_call, 'operator')} eager" if e else ""
        why = (
            f"{fmt_ms(c.in_graphs_ms)} of {fmt_ms(total)} per call runs inside compiled graphs ({launched}{eager_ops})"
        )
        if worst and between >= 0.05 * total:
            why += f"; the graph breaks cost {fmt_ms(between)}{fix}"
    # the shares are the profiled call's, which the profiler's own cost makes longer than the
    # timed median in the head: said, so 96 µs "of 0.29 ms" does not read as of the 0.17 ms timed
    return f"{head}: {PROFILED}, {why}.{disturbed_profile(total, compiled_ms)}"


PROFILED = "under the profiler"  # the time verdict's shares: of the profiled call, not the timed median
DISTURBED_RATIO, DISTURBED_MIN_MS = 10.0, 1.0  # the profiler's own cost stays well under both


def disturbed_profile(profiled_ms: float, timed_ms: float | None) -> str:
    """A warning when the profiled calls took far longer than the timed ones (10x and 1 ms
    more): the machine was busy while they ran, so the shares above may be off."""
    if not timed_ms or profiled_ms < DISTURBED_RATIO * timed_ms or profiled_ms - timed_ms < DISTURBED_MIN_MS:
        return ""
    return (
        f" Caution: the profiled calls took {fmt_ms(profiled_ms)} against {fmt_ms(timed_ms)} timed "
        f"({profiled_ms / timed_ms:.0f}x): something else used the machine while they ran, so these shares "
        "may not hold for the timed calls; run again on a quieter machine."
    )


def _where(cost: BreakCost, graph_breaks) -> str:
    for g in graph_breaks:
        if g.key == cost.key and g.user_file:
            return f"the break at {os.path.basename(g.user_file)}:{g.user_line} ({cost.reason})"
    return f"the break at {os.path.basename(cost.file) or '?'}:{cost.line} ({cost.reason})"
