"""The report's tables that explain the numbers: ops.csv, graphs.csv and time_breakdown.csv
(core.report.files writes them beside the others; the app's views read the same rows).

- ops.csv: every operator, kernel and marker of the op profile, per side, per call.
- graphs.csv: every graph torch compiled, with the time spent in it per compiled call.
- time_breakdown.csv: each side's call split by TIME_CATEGORIES (they add up to the call).
- lines.csv: time per source line, eager against compiled (core.measure.line_profile).
- compile_stages.csv: each config's compile split into exclusive stages that add up to the
  first compiled call (core.analysis.compile_stages).
"""

from __future__ import annotations

from core.analysis.compile_stages import STAGE_MEANINGS, compile_stages
from core.vocab.op_records import TIME_CATEGORY_LABELS
from core.vocab.records import SIDES

OPS_COLUMNS = [
    "config",
    "side",
    "name",
    "category",
    "graph",
    "calls_per_call",
    "self_ms_per_call",
    "total_ms_per_call",
    "device_ms_per_call",
]
GRAPH_COLUMNS = [
    "config",
    "graph",
    "function",
    "file",
    "line",
    "ops",
    "guards",
    "compile_s",
    "time_ms_per_call",
    "calls_per_call",
    "guard_ms_per_call",
    "wrapper_ms_per_call",
    "inputs",
    "kernels",
    "recompile_reason",
    "compile_stages",
    "code_file",
    "guards_file",
    "output_code_file",
]
TIME_COLUMNS = ["config", "side", "category", "label", "ms_per_call", "share"]
LINE_COLUMNS = [
    "config",
    "file",
    "line",
    "source",
    "eager_ms_per_call",
    "compiled_ms_per_call",
    "lost_ms_per_call",
    "graph_break",
    "kernels",
]

STAGE_COLUMNS = ["config", "stage", "label", "seconds", "share", "compile_time_s", "meaning"]


def ops_rows(results) -> list[dict]:
    rows = []
    for r in results:
        p = r.op_profile
        for side in (p.eager, p.compiled) if p else ():
            if side is None:
                continue
            rows += [
                {
                    "config": r.config.label,
                    "side": side.side,
                    "name": o.name,
                    "category": o.category,
                    "graph": o.graph,
                    "calls_per_call": o.calls_per_call,
                    "self_ms_per_call": o.self_ms_per_call,
                    "total_ms_per_call": o.total_ms_per_call,
                    "device_ms_per_call": o.device_ms_per_call,
                }
                for o in side.ops
            ]
    return rows


def graph_rows(results) -> list[dict]:
    rows = []
    for r in results:
        for g in r.graphs:
            t = r.graph_time(g.graph)
            rows.append(
                {
                    "config": r.config.label,
                    "graph": g.graph,
                    "function": g.function,
                    "file": g.file,
                    "line": g.line,
                    "ops": g.ops,
                    "guards": g.guards,
                    "compile_s": g.compile_s,
                    "time_ms_per_call": t.ms_per_call if t else None,
                    "calls_per_call": t.calls_per_call if t else None,
                    "guard_ms_per_call": t.guard_ms_per_call if t else None,
                    "wrapper_ms_per_call": t.wrapper_ms_per_call if t else None,
                    "inputs": "; ".join(g.inputs),
                    "kernels": " | ".join(g.kernels),
                    "recompile_reason": g.recompile_reason,
                    "compile_stages": " | ".join(f"{t.stage} {t.seconds:.3f} s" for t in g.stages),
                    "code_file": g.code_file,
                    "guards_file": g.guards_file,
                    "output_code_file": g.output_code_file,
                }
            )
    return rows


def time_rows(results) -> list[dict]:
    rows = []
    for r in results:
        p = r.op_profile
        for side_name in SIDES:
            side = getattr(p, side_name, None) if p else None
            if side is None:
                continue
            for category, ms in side.time_by_category().items():
                rows.append(
                    {
                        "config": r.config.label,
                        "side": side_name,
                        "category": category,
                        "label": TIME_CATEGORY_LABELS[category],
                        "ms_per_call": ms,
                        "share": side.time_shares()[category],
                    }
                )
    return rows


def line_rows(results) -> list[dict]:
    rows = []
    for r in results:
        for t in r.op_profile.lines if r.op_profile else ():
            rows.append(
                {
                    "config": r.config.label,
                    "file": t.file,
                    "line": t.line,
                    "source": t.source,
                    "eager_ms_per_call": t.eager_ms,
                    "compiled_ms_per_call": t.compiled_ms,
                    "lost_ms_per_call": t.lost_ms,
                    "graph_break": t.graph_break,
                    "kernels": " | ".join(t.kernels),
                }
            )
    return rows


def stage_rows(results) -> list[dict]:
    """Per config, the stages torch timed (core.analysis.compile_stages), exclusive: they add up
    to `compile_time_s`, the first compiled call's wall time. Per config, not per graph: the
    compile record holds the job's totals."""
    rows = []
    for r in results:
        for s in compile_stages(r.compile):
            rows.append(
                {
                    "config": r.config.label,
                    "stage": s.key,
                    "label": s.label,
                    "seconds": s.seconds,
                    "share": s.share,
                    "compile_time_s": r.compile.compile_time_s,
                    "meaning": STAGE_MEANINGS[s.key],
                }
            )
    return rows


def explain_tables(results) -> dict[str, tuple[list[str], list[dict]]]:
    """File name → (columns, rows), written only when some job has what they hold."""
    tables = {}
    if any(r.op_profile is not None for r in results):
        tables["ops.csv"] = (OPS_COLUMNS, ops_rows(results))
        tables["time_breakdown.csv"] = (TIME_COLUMNS, time_rows(results))
    if any(r.graphs for r in results):
        tables["graphs.csv"] = (GRAPH_COLUMNS, graph_rows(results))
    if any(r.op_profile is not None and r.op_profile.lines for r in results):
        tables["lines.csv"] = (LINE_COLUMNS, line_rows(results))
    if any(compile_stages(r.compile) for r in results):
        tables["compile_stages.csv"] = (STAGE_COLUMNS, stage_rows(results))
    return tables
