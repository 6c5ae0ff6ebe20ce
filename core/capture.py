"""Capturing graph breaks, recompiles and compile metrics from the real compile.

Graph breaks come from torch's own `graph_breaks` log artifact (what `TORCH_LOGS=graph_breaks`
prints), recompiles from the `recompiles` artifact, both through a logging.Handler in the
job's process; frames that dynamo skipped entirely come from the compilation metrics. We do
not run a second `torch._dynamo.explain` pass: it compiles with another backend and reports
a data-dependent branch only as "generic_jump" with no GB code.
"""
from __future__ import annotations

import json
import linecache
import logging
import os
import re
from typing import Callable

from core.events import CompileResult, GraphBreak, Recompile

_GB_URL = re.compile(r"(https://\S+/gb/(gb\d{4})\.html)", re.I)
_AT = re.compile(r"Graph break.*? in user code at (.+):(\d+)\s*$")
_RECOMPILE = re.compile(r"Recompiling function (\S+) in (\S+)")
_FRAME = re.compile(r"Line: (\d+), Name: (.*?), Filename: (.*)$")

_registry: dict | None = None


def gb_registry() -> dict:
    """torch's graph-break registry: GB id → [{Gb_type, Explanation, Hints}, ...]."""
    global _registry
    if _registry is None:
        import torch._dynamo

        path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
        try:
            with open(path) as fh:
                _registry = json.load(fh)
        except (OSError, ValueError):
            _registry = {}
    return _registry


def parse_graph_break(text: str) -> GraphBreak | None:
    """Parse one `graph_breaks` log message into a GraphBreak (None if it is not one)."""
    lines = text.splitlines()
    if not lines:
        return None
    m = _AT.search(lines[0])
    file, line = (m.group(1), int(m.group(2))) if m else ("", 0)
    reason_lines: list[str] = []
    explanation: list[str] = []
    hints: list[str] = []
    section = ""
    for raw in lines[1:]:
        s = raw.strip()
        if raw.startswith("Graph Break Reason:"):
            section = "reason"
            s = raw.split(":", 1)[1].strip()
        elif s.startswith("Explanation:"):
            section = "explanation"
            explanation.append(s.split(":", 1)[1].strip())
            continue
        elif s.startswith("Hint:"):
            section = "hint"
            hints.append(s.split(":", 1)[1].strip())
            continue
        elif s.startswith("Developer debug context:") or s.startswith("For more details") \
                or s.startswith("User code traceback:"):
            section = ""
            continue
        if section == "reason" and s:
            reason_lines.append(s)
        elif section == "explanation":
            explanation.append(raw.rstrip())
        elif section == "hint" and s:
            hints[-1] += " " + s
    url_match = _GB_URL.search(text)
    url, code = (url_match.group(1), url_match.group(2).upper()) if url_match else ("", "")
    reason = reason_lines[-1].rstrip(":") if reason_lines else ""
    if not reason and code:
        reason = _registry_type(code)
    if not reason:
        return None
    return GraphBreak(
        reason=reason, gb_code=code, doc_url=url,
        explanation=_dedent("\n".join(explanation)), hints=tuple(hints),
        file=file, line=line, source=source_line(file, line),
    )


def _registry_type(code: str) -> str:
    for entry in gb_registry().get(code, []):
        if not entry.get("Gb_type", "_").startswith("_"):
            return entry["Gb_type"]
    return ""


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip()


def source_line(file: str, line: int) -> str:
    if not file or line <= 0:
        return ""
    return linecache.getline(file, line).strip()


def parse_recompile(text: str, compile_id: str = "") -> Recompile | None:
    m = _RECOMPILE.search(text)
    if not m:
        return None
    reasons = tuple(s.strip()[2:].strip() for s in text.splitlines() if s.strip().startswith("- "))
    return Recompile(function=m.group(1), location=m.group(2), reasons=reasons, compile_id=compile_id)


class _CallbackHandler(logging.Handler):
    def __init__(self, parse, callback):
        super().__init__(logging.DEBUG)
        self._parse, self._callback = parse, callback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            item = self._parse(record.getMessage())
        except Exception:  # a format change in torch must not kill the job
            return
        if item is not None:
            self._callback(item)


def install(on_graph_break: Callable[[GraphBreak], None], on_recompile: Callable[[Recompile], None]) -> None:
    """Turn on torch's graph_breaks and recompiles artifacts and route them to callbacks."""
    import torch._logging

    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    for name in list(logging.root.manager.loggerDict):
        logger = logging.getLogger(name)
        for handler in [h for h in logger.handlers if isinstance(h, _CallbackHandler)]:
            logger.removeHandler(handler)  # install() again (in-process tests) replaces, never doubles
        if name.endswith(".__graph_breaks"):
            logging.getLogger(name).addHandler(_CallbackHandler(parse_graph_break, on_graph_break))
        elif name.endswith(".__recompiles"):
            logging.getLogger(name).addHandler(
                _CallbackHandler(lambda t: parse_recompile(t, _current_compile_id()), on_recompile))


def _current_compile_id() -> str:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        return str(cid) if cid is not None else ""
    except Exception:
        return ""


# ------------------------------------------------------------------ compile metrics


def compilation_metrics() -> list:
    from torch._dynamo.utils import get_compilation_metrics

    return list(get_compilation_metrics())


def reset_compile_state() -> None:
    """Forget earlier compiles of this process: code caches, counters and metrics.

    A job runs in a fresh child, so this only matters when `run_job` is called in-process
    (tests); `torch._dynamo.reset()` alone keeps `counters` and the metrics."""
    import torch._dynamo
    from torch._dynamo.utils import clear_compilation_metrics, counters

    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()


def _user_location(metric) -> tuple[str, int]:
    """The innermost stack frame outside torch and this package for a skipped frame."""
    import torch

    torch_dir = os.path.dirname(torch.__file__)
    core_dir = os.path.dirname(__file__)
    best = (metric.fail_user_frame_filename or "", metric.fail_user_frame_lineno or 0)
    if best[0].startswith((torch_dir, core_dir)):
        best = ("", 0)  # e.g. the model *is* an nn.LSTM: no user line to point at
    frames = [m for m in map(_FRAME.search, metric.stack_trace or []) if m]
    # Frames up to the job's own call into the model are the caller's, not model code.
    last_core = max((i for i, m in enumerate(frames) if m.group(3).startswith(core_dir)), default=-1)
    for m in frames[last_core + 1:]:
        if not m.group(3).startswith(torch_dir):
            best = (m.group(3), int(m.group(1)))
    return best


def merge_skipped_frames(logged: list[GraphBreak], metrics: list) -> list[GraphBreak]:
    """The logged graph breaks, with those that made dynamo skip a whole frame replaced by
    one entry each (frame_skipped=True, located in user code where there is any)."""
    skipped = skipped_frames(metrics)
    codes = {g.gb_code for g in skipped if g.gb_code}
    return [g for g in logged if g.gb_code not in codes] + skipped


def skipped_frames(metrics: list) -> list[GraphBreak]:
    """Frames dynamo gave up on (fail_type set): the model ran those eagerly."""
    found = []
    for m in metrics:
        if not m.fail_type or not m.fail_reason:
            continue
        gb = parse_graph_break("Graph Break Reason: " + m.fail_reason.split("\n", 1)[0] + "\n"
                               + "\n".join(m.fail_reason.split("\n")[1:]))
        if gb is None:
            continue
        file, line = _user_location(m)
        found.append(GraphBreak(
            reason=gb.reason, gb_code=gb.gb_code, doc_url=gb.doc_url, explanation=gb.explanation,
            hints=gb.hints, file=file, line=line, source=source_line(file, line), frame_skipped=True))
    return found


def summarize_compile(metrics: list, compile_time_s: float, backend: str, graph_breaks: int) -> CompileResult:
    from torch._dynamo.utils import counters

    def total_s(attr):
        return sum((getattr(m, attr, None) or 0) for m in metrics) / 1e6

    compiled = [m for m in metrics if not m.fail_type and m.graph_op_count is not None]
    skipped = [m for m in metrics if m.fail_type]
    hits = sum((m.inductor_fx_local_cache_hit_count or 0) + (m.inductor_fx_remote_cache_hit_count or 0)
               for m in metrics)
    misses = sum((m.inductor_fx_local_cache_miss_count or 0) + (m.inductor_fx_remote_cache_miss_count or 0)
                 for m in metrics)
    if backend != "inductor" or hits + misses == 0:
        cache = "n/a"
    else:
        cache = "hit" if misses == 0 else ("miss" if hits == 0 else "partial")
    graph_count = int(counters["stats"].get("unique_graphs", 0))
    op_count = sum(m.graph_op_count or 0 for m in compiled)
    coverage, full = describe_coverage(graph_count, op_count, graph_breaks, skipped)
    return CompileResult(
        compile_time_s=compile_time_s,
        dynamo_s=total_s("dynamo_cumulative_compile_time_us"),
        aot_autograd_s=total_s("aot_autograd_cumulative_compile_time_us"),
        inductor_s=total_s("inductor_cumulative_compile_time_us"),
        codegen_s=total_s("inductor_code_gen_cumulative_compile_time_us"),
        cache_state=cache, fx_cache_hits=hits, fx_cache_misses=misses,
        frames_compiled=len(compiled), frames_skipped=len(skipped),
        graph_count=graph_count, op_count=op_count,
        guard_count=sum(m.guard_count or 0 for m in compiled),
        coverage=coverage, fully_compiled=full,
    )


def describe_coverage(graph_count: int, op_count: int, graph_breaks: int, skipped: list) -> tuple[str, bool]:
    """One sentence on how much of the model runs compiled: the first thing a user needs."""
    if graph_count == 0 or op_count == 0:
        if skipped:
            why = (skipped[0].fail_reason or "").split("\n", 1)[0]
            return (f"Nothing was compiled: dynamo skipped the model's frame ({why}), so it runs eagerly "
                    "and compiling changes nothing.", False)
        return ("Nothing was compiled: dynamo captured no operations, so the model runs eagerly.", False)
    if graph_breaks == 0 and not skipped and graph_count == 1:
        return (f"Fully compiled: one graph of {op_count} ops, no graph breaks.", True)
    parts = [f"Partly compiled: {graph_count} graphs ({op_count} ops)"]
    if graph_breaks:
        parts.append(f"split by {graph_breaks} graph break{'s' if graph_breaks != 1 else ''}")
    if skipped:
        parts.append(f"{len(skipped)} frame{'s' if len(skipped) != 1 else ''} skipped and run eagerly")
    return (", ".join(parts) + "; code between graphs runs eagerly in Python.", False)
