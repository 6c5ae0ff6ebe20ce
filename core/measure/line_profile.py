"""Time per source line, eager against compiled (part of the op profile; runs in the job's child).

Eager: a few more eager calls under a TorchFunctionMode that times every torch call made from
Python (an op, a functional, a tensor method) and charges it to the line that made it: the
innermost frame of the user's own code on the stack (core.vocab.source_paths: not torch, not
site-packages, not the standard library), so library code is folded under the user's call
site; when no user frame is on the stack, the innermost frame. Calls made inside a timed call
are not seen again (the mode is off inside its own handler), so nothing counts twice. What the
timed calls do not cover (Python between them) is the call's unattributed rest.

Compiled: inductor's provenance (torch's structured-trace artifact
`inductor_provenance_tracking_node_mappings`, enabled for the job with
`torch._inductor.config.trace.provenance_tracking_level = 1`, read with this compile's dynamo
graph by core.capture.provenance) maps each kernel of each compiled graph to the source lines of
the FX nodes it computes. A kernel's time in the profiled calls
(its profiler range, inside the "Torch-Compiled Region" of its graph) is shared **equally**
among the distinct lines of its nodes. An extern kernel (a call into aten, e.g.
`extern_kernels.addmm:1`) is the aten op of that name in its graph's region, matched in order.
The eager code between two graphs is charged to the graph break that splits them (its line),
as the break costs of the op profile price it. The rest (graph entry and exit, guards, the
runtime wrappers, kernels no provenance names) is the compiled side's unattributed time.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict

from core.analysis import time_breakdown as tb
from core.vocab.op_records import LineTime
from core.vocab.source_paths import line_site, source_line

TRITON_PREFIX = "triton_"  # inductor's GPU kernels (the GPU path: python -m tests.gpu_check checks it)
MAX_LINES = 500  # lines kept per job (the costliest), so a huge model's report stays small
DISTURBED_RATIO = 2.0  # eager calls under the line timer this much slower than profiled: said so


def disturbed(timer_ms: float, profiled_ms: float | None) -> str:
    """A note when the eager calls under the line timer ran far slower than under the profiler
    (a busy machine, or the timer's own cost): the per-line eager times are then inflated."""
    if not profiled_ms or timer_ms <= DISTURBED_RATIO * profiled_ms:
        return ""
    return (
        f"The eager calls under the line timer took {timer_ms / profiled_ms:.1f}x the profiled eager call "
        f"({timer_ms:.3f} ms against {profiled_ms:.3f} ms): the machine was busy or timing each torch call "
        "slowed them; per-line eager times are inflated."
    )


# ------------------------------------------------------------------ eager


def _stack(frame) -> list[tuple[str, int]]:
    """(file, current line) of each frame from `frame` outwards, outermost first."""
    frames = []
    while frame is not None:
        frames.append((frame.f_code.co_filename, frame.f_lineno))
        frame = frame.f_back
    frames.reverse()
    return frames


def eager_line_times(model, inputs: tuple, calls: int, sync=None) -> tuple[dict[tuple[str, int], float], float]:
    """(line → ms per call of the torch calls made from it, ms per call of the whole calls) over
    `calls` eager calls under the timing mode (see the module docstring)."""
    from torch.overrides import TorchFunctionMode

    totals: dict[tuple[str, int], float] = defaultdict(float)
    clock = time.perf_counter

    class LineTimer(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            where = line_site(_stack(sys._getframe(1)))
            t0 = clock()
            out = func(*args, **(kwargs or {}))
            if sync is not None:
                sync()
            if where is not None:
                totals[where] += clock() - t0
            return out

    whole = 0.0
    with LineTimer():
        for _ in range(calls):
            t0 = clock()
            model(*inputs)
            if sync is not None:
                sync()
            whole += clock() - t0
    n = max(1, calls)
    return {k: v * 1000.0 / n for k, v in totals.items()}, whole * 1000.0 / n


# ------------------------------------------------------------------ compiled


def _short(kernel: str) -> str:
    """A provenance key's kernel as the profiler names it: "cpp_fused_relu_0:2" → "cpp_fused_relu_0",
    "extern_kernels.addmm:1" → "addmm" (matched against "aten::addmm")."""
    name = kernel.rsplit(":", 1)[0]
    return name.rsplit(".", 1)[-1] if "." in name else name


def _handle(kernel: str) -> int:
    tail = kernel.rsplit(":", 1)[-1]
    return int(tail) if tail.isdigit() else 0


def compiled_line_times(
    steps: list[tb.Node], kernels: frozenset[str], provenance: dict[str, dict[str, list[tuple[str, int]]]]
) -> tuple[dict[tuple[str, int], float], dict[tuple[str, int], set[str]], float]:
    """(line → kernel ms per call charged to it, line → the kernels charged ("name [graph]"),
    kernel ms per call no provenance names) from the profiled compiled calls (`steps`), the C++ kernels the op
    profile marked (`kernels`) and the provenance of each compile id."""
    per_line: dict[tuple[str, int], float] = defaultdict(float)
    names: dict[tuple[str, int], set[str]] = defaultdict(set)
    unmatched = 0.0
    # per compile id: kernel name → lines; extern op name → [lines of each call, in handle order]
    fused: dict[str, dict[str, list[tuple[str, int]]]] = {}
    extern: dict[str, dict[str, list[list[tuple[str, int]]]]] = {}
    for cid, table in provenance.items():
        f, e = {}, defaultdict(list)
        for key in sorted(table, key=_handle):
            if key.startswith("extern_kernels.") or "." in key.rsplit(":", 1)[0]:
                e[_short(key)].append(table[key])
            else:
                f[_short(key)] = table[key]
        fused[cid], extern[cid] = f, dict(e)

    def charge(lines, us: float, kernel: str) -> None:
        share = us / len(lines)
        for where in lines:
            per_line[where] += share
            names[where].add(kernel)

    def walk(node: tb.Node, cid: str, seen: dict, in_op: bool) -> None:
        nonlocal unmatched
        region = tb.region_id(node.name)
        if region:
            cid, seen = region, defaultdict(int)
        us = node.end - node.start
        if cid and node.name.startswith(TRITON_PREFIX) and node.name in fused.get(cid, {}):
            # a Triton kernel's launch range (inductor's launcher records one under the profiler):
            # its time is the GPU's, the kernels it launched (Node.device_us), else the launch's own
            charge(fused[cid][node.name], node.device_us or us, f"{node.name} [{cid}]")
            return
        if cid and node.name in kernels:
            lines = fused.get(cid, {}).get(node.name)
            if lines:
                charge(lines, us, f"{node.name} [{cid}]")
            else:
                unmatched += us
            return
        if cid and not in_op and "::" in node.name and not node.name.startswith("##"):
            op = node.name.split("::", 1)[1]
            calls = extern.get(cid, {}).get(op)
            if calls is not None:
                i = seen[op]
                seen[op] += 1
                charge(calls[min(i, len(calls) - 1)], us, f"extern_kernels.{op} [{cid}]")
                return
            in_op = True  # an op no provenance names: its time stays unattributed, its children too
        for child in node.children:
            walk(child, cid, seen, in_op)

    for step in steps:
        walk(step, "", defaultdict(int), False)
    n = max(1, len(steps))
    return (
        {k: v / n / 1000.0 for k, v in per_line.items()},
        dict(names),
        unmatched / n / 1000.0,
    )


def line_times(
    eager: dict[tuple[str, int], float],
    compiled: dict[tuple[str, int], float] | None,
    kernels: dict[tuple[str, int], set[str]],
    break_costs=(),
) -> tuple[LineTime, ...]:
    """One LineTime per line with time on either side, the eager code between graphs charged to
    its break's line; the costliest MAX_LINES, in file and line order."""
    profiled = compiled is not None
    compiled = dict(compiled or {})
    breaks = set()
    for b in break_costs:
        if b.file and b.line:
            compiled[(b.file, b.line)] = compiled.get((b.file, b.line), 0.0) + b.cost_ms_per_call
            breaks.add((b.file, b.line))
    keys = set(eager) | set(compiled)
    rows = [
        LineTime(
            file=f,
            line=ln,
            source=source_line(f, ln),
            eager_ms=eager.get((f, ln), 0.0),
            compiled_ms=compiled.get((f, ln), 0.0) if profiled else None,
            kernels=tuple(sorted(kernels.get((f, ln), ()))),
            graph_break=(f, ln) in breaks,
        )
        for f, ln in keys
    ]
    rows.sort(key=lambda r: max(r.eager_ms, r.compiled_ms or 0.0), reverse=True)
    return tuple(sorted(rows[:MAX_LINES], key=lambda r: (r.file, r.line)))
