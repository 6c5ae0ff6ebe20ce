"""The op-level profile of a job: `calls` eager and `calls` compiled calls under
torch.profiler (CPU, plus CUDA on a GPU), after the timed benchmark and never inside it.

Marking the compiled code without changing what was timed. Two things are invisible to
the profiler by themselves: where a compiled graph starts and ends (backends eager and
aot_eager leave no mark), and inductor's C++ kernels on the CPU (they appear only when
`cpp.enable_kernel_profile=True` was set *before compiling*, which changes the generated
code, and recompiling would cost a second compile, ~30 s cold for resnet18). Instead, for
the profile only, `Instrumentation` wraps the callables the compiled code looks up by name
at every call: dynamo's `__compiled_fn_*` globals (one per graph) and the kernel globals of
inductor's output modules (`cpp_fused_...`), each in a profiler range named after it, and
puts the originals back afterwards. The code that ran in the benchmark is the code that is
profiled; only the two ranges are added (~1 µs each while the profiler records).

How many times a call passes each graph break (`break_passes`) is counted from torch's own
ranges: every run of a frame's compiled code is a "Torch-Compiled Region: F/C", and code
compiled for a frame that broke runs up to the break each time it runs (from dynamo's cache
too: a layer run four times in a loop passes its break four times). A break inside a function
dynamo had inlined is logged by the caller's frame compile too (which breaks at the call); its
region holds the callee's, so only the innermost region of a break counts.
"""

from __future__ import annotations

import sys

from core.analysis import time_breakdown as tb
from core.analysis.cudagraph_coverage import ProfiledEvent, coverage
from core.capture.graphs import cpu_kernel_names
from core.vocab.artifacts import JobArtifacts, make_dirs
from core.vocab.op_records import BreakPasses, OpProfile

COMPILED_FN_PREFIX = "__compiled_fn_"  # dynamo's globals holding each compiled graph


def _marked(fn, name: str):
    import torch

    record = torch._C._profiler._RecordFunctionFast

    def profiled_call(*args, **kwargs):
        with record(name):
            return fn(*args, **kwargs)

    profiled_call.__wrapped__ = fn
    profiled_call._compile_profiler_mark = True
    try:  # dynamo must run the wrapper as it is, not trace it as a new frame
        from torch._dynamo.eval_frame import skip_code

        skip_code(profiled_call.__code__)
    except (ImportError, AttributeError):
        pass
    return profiled_call


def _globals_dicts(model) -> list[dict]:
    """Every global namespace compiled code of `model` may live in: loaded modules (model
    files are registered in sys.modules) and the namespaces of the model's forward methods
    (a torch.export module's forward lives in one of its own)."""
    seen: dict[int, dict] = {}
    for module in list(sys.modules.values()):
        d = getattr(module, "__dict__", None)
        if isinstance(d, dict):
            seen[id(d)] = d
    candidates = [model]
    if hasattr(model, "modules"):
        try:
            candidates += list(model.modules())
        except Exception:
            pass
    for obj in candidates:
        for fn in (getattr(type(obj), "forward", None), getattr(obj, "forward", None), obj):
            g = getattr(getattr(fn, "__func__", fn), "__globals__", None)
            if isinstance(g, dict):
                seen[id(g)] = g
    return list(seen.values())


class Instrumentation:
    """Within `with`: every compiled graph and every inductor C++ kernel of this process is
    marked for the profiler (see the module docstring); afterwards everything is as it was.
    `kernels` holds the kernel names marked, `graphs` how many graph globals were."""

    def __init__(self, model):
        self.model = model
        self._saved: list[tuple[dict, str, object]] = []
        self.kernels: set[str] = set()
        self.graphs = 0

    def _swap(self, namespace: dict, key: str, name: str) -> None:
        value = namespace.get(key)
        if value is None or not callable(value) or getattr(value, "_compile_profiler_mark", False):
            return
        namespace[key] = _marked(value, name)
        self._saved.append((namespace, key, value))

    def __enter__(self) -> "Instrumentation":
        for namespace in _globals_dicts(self.model):
            for key in [k for k in list(namespace) if isinstance(k, str) and k.startswith(COMPILED_FN_PREFIX)]:
                self._swap(namespace, key, f"{tb.GRAPH_MARK}{key} ##")
        self.graphs = len(self._saved)
        if "torch._inductor.codecache" in sys.modules:
            from torch._inductor.codecache import PyCodeCache

            for module in list(getattr(PyCodeCache, "modules", [])):
                try:
                    with open(module.__file__, encoding="utf-8") as fh:
                        names = cpu_kernel_names(fh.read())
                except (OSError, TypeError, AttributeError):
                    continue
                for name in names:
                    self._swap(module.__dict__, name, name)
                    self.kernels.add(name)
        return self

    def __exit__(self, *exc) -> None:
        for namespace, key, value in reversed(self._saved):
            if getattr(namespace.get(key), "_compile_profiler_mark", False):
                namespace[key] = value
        self._saved.clear()


def profile_calls(fn, inputs, calls: int, before=None, cuda: bool = False):
    """torch.profiler over `calls` calls of fn(*inputs), each its own ProfilerStep, after
    one recorded-and-dropped warm-up step (the profiler's own start-up)."""
    import torch
    from torch.profiler import ProfilerActivity, profile, schedule

    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities, schedule=schedule(wait=0, warmup=1, active=calls, repeat=1)) as prof:
        for _ in range(calls + 1):
            if before is not None:
                before()
            fn(*inputs)
            if cuda:
                torch.cuda.synchronize()
            prof.step()
    return prof


def _profiled_events(prof):
    """What CUDA-graph coverage reads of each profiler event (core.analysis.cudagraph_coverage)."""
    from torch.autograd import DeviceType

    for e in prof.events():
        yield ProfiledEvent(
            e.name, e.device_type != DeviceType.CPU, int(e.id), float(e.time_range.end - e.time_range.start)
        )


def call_nodes(prof) -> list[tb.Node]:
    """The profiled calls as trees of Nodes (one per ProfilerStep, on its thread)."""
    from torch.autograd import DeviceType

    nodes: dict[int, tb.Node] = {}
    events = [e for e in prof.events() if e.device_type == DeviceType.CPU and not e.is_async]
    for e in events:
        device = getattr(e, "self_device_time_total", 0.0) or 0.0
        nodes[id(e)] = tb.Node(e.name, float(e.time_range.start), float(e.time_range.end), [], float(device))
    roots = []
    for e in events:
        parent = e.cpu_parent
        if parent is not None and id(parent) in nodes:
            nodes[id(parent)].children.append(nodes[id(e)])
        else:
            roots.append((e, nodes[id(e)]))
    for node in nodes.values():
        node.children.sort(key=lambda n: n.start)
    steps = [(e, n) for e, n in roots if n.name.startswith(tb.STEP_PREFIX)]
    for e, n in roots:  # a root on the step's thread, within a step, belongs to it
        if n.name.startswith(tb.STEP_PREFIX):
            continue
        for se, step in steps:
            if se.thread == e.thread and step.start <= n.start and n.end <= step.end:
                step.children.append(n)
                step.children.sort(key=lambda c: c.start)
                break
    return [n for _, n in sorted(steps, key=lambda p: p[1].start)]


def break_passes(steps: list[tb.Node], break_at: dict[str, tuple[str, str, int]]) -> tuple[BreakPasses, ...]:
    """How many times one call passes each graph-break site, from the profiled calls (see
    the module docstring): `break_at` maps a compile id to the site its frame compile broke at;
    per call, every region of such a compile that holds no region of a compile breaking at the
    same site is a pass; a site's figure is the most passes any call made. Every site of
    `break_at` is given (0: the call never ran code that broke there); () when no call ran a
    compiled region at all (nothing to count from: the figure stays the compile's)."""
    seen_region = False

    def walk(node: tb.Node, counts: dict) -> set:
        """Sites broken at in this node's subtree (innermost passes counted into counts)."""
        nonlocal seen_region
        below: set = set()
        for child in node.children:
            below |= walk(child, counts)
        region = tb.region_id(node.name)
        if region:
            seen_region = True
            key = break_at.get(region)
            if key is not None:
                if key not in below:
                    counts[key] = counts.get(key, 0) + 1
                below = below | {key}
        return below

    most: dict[tuple, int] = {}
    for step in steps:
        counts: dict[tuple, int] = {}
        walk(step, counts)
        for key, n in counts.items():
            most[key] = max(most.get(key, 0), n)
    if not seen_region:
        return ()
    return tuple(BreakPasses(k[0], k[1], k[2], most.get(k, 0)) for k in dict.fromkeys(break_at.values()))


def _export(prof, root: str | None, rel: str) -> str:
    if not root:
        return ""
    try:
        prof.export_chrome_trace(make_dirs(root, rel))
        return rel
    except (OSError, RuntimeError):
        return ""


def _with_region_costs(times, costs: dict) -> tuple:
    """GraphTimes with the guard and wrapper time of their region (core.analysis.time_breakdown.region_costs)."""
    import dataclasses

    return tuple(
        dataclasses.replace(t, guard_ms_per_call=costs[t.graph][0], wrapper_ms_per_call=costs[t.graph][1])
        if t.graph in costs
        else t
        for t in times
    )


def run_op_profile(
    model,
    compiled,
    inputs,
    calls: int,
    before=None,
    cuda: bool = False,
    root: str | None = None,
    artifacts: JobArtifacts | None = None,
    break_at: dict[str, tuple[str, str, int]] | None = None,
    provenance: dict[str, dict] | None = None,
) -> OpProfile:
    """Profile `calls` calls of the eager `model` and of `compiled` (None: eager only), and
    explain them: time by category, ops, graph spans, break costs (`break_at`: compile id
    → the graph break logged in that frame compile). Chrome traces go under `root`."""
    artifacts = artifacts or JobArtifacts("job")
    prof = profile_calls(model, inputs, calls, None, cuda)
    steps, dropped = tb.steady_calls(call_nodes(prof))
    eager, _ = tb.analyse("eager", steps, cuda=cuda, outlier_calls=dropped)
    eager_trace = _export(prof, root, artifacts.trace("eager"))
    del prof
    from core.measure import line_profile as lp

    sync = None
    if cuda:
        import torch

        sync = torch.cuda.synchronize
    eager_lines, eager_call_ms = lp.eager_line_times(model, inputs, calls, sync)
    lines = dict(
        lines_eager_ms=sum(eager_lines.values()),
        lines_eager_call_ms=eager_call_ms,
        lines_note=lp.disturbed(eager_call_ms, eager.ms_per_call if eager is not None else None),
    )
    if compiled is None:
        return OpProfile(
            calls=calls, eager=eager, eager_trace=eager_trace, lines=lp.line_times(eager_lines, None, {}), **lines
        )
    with Instrumentation(model) as marks:
        compiled(*inputs)  # one unprofiled call through the marks
        prof = profile_calls(compiled, inputs, calls, before, cuda)
    steps, dropped = tb.steady_calls(call_nodes(prof))
    side, spans = tb.analyse("compiled", steps, frozenset(marks.kernels), cuda, outlier_calls=dropped)
    split = tb.attribute_breaks(steps, spans, break_at or {})
    passes = break_passes(steps, break_at or {})
    compiled_lines, kernels_of, unmatched = lp.compiled_line_times(steps, frozenset(marks.kernels), provenance or {})
    lines["lines"] = lp.line_times(eager_lines, compiled_lines, kernels_of, split.costs)
    lines["lines_compiled_ms"] = sum(compiled_lines.values()) + sum(b.cost_ms_per_call for b in split.costs)
    lines["lines_unmatched_ms"] = unmatched
    if not provenance:
        lines["lines_note"] = (lines["lines_note"] + " " if lines["lines_note"] else "") + (
            "No kernel provenance from inductor (not the inductor backend, or torch recorded none): compiled time "
            "per line holds only the eager code between graphs."
        )
    compiled_trace = _export(prof, root, artifacts.trace("compiled"))
    cudagraphs = coverage(_profiled_events(prof), calls) if cuda else None
    note = ""
    if side.graphs_per_call == 0 and marks.graphs:
        note = "no compiled graph ran in the profiled calls"
    elif not marks.graphs:
        note = (
            "the compiled graphs could not be found to mark them; times inside and between graphs are "
            "estimated from inductor's own marks where present"
        )
    return OpProfile(
        calls=calls,
        eager=eager,
        compiled=side,
        break_costs=split.costs,
        unattributed_ms=split.unattributed_ms,
        entry_exit_ms=split.entry_exit_ms,
        graph_times=_with_region_costs(split.graph_times, tb.region_costs(steps, frozenset(marks.kernels))),
        break_passes=passes,
        **lines,
        eager_trace=eager_trace,
        compiled_trace=compiled_trace,
        note=note,
        cudagraphs=cudagraphs,
    )
