"""What a report holds, made from its JobResults: its CSV files (summary.csv, latency.csv,
graph_breaks.csv, resources.csv, recompiles.csv, variants.csv for shape sweeps only, and the
explanation tables of core.report.explain_tables: ops.csv, time_breakdown.csv, graphs.csv, ...),
report.json, and the decision (recommendation.txt, and its sections of report.json). Written
into the folder by core.report.files.write_report.
"""

from __future__ import annotations

import json

import numpy as np

from core.analysis.result_json import result_to_dict
from core.analysis.results import SUMMARY_COLUMNS, JobResult
from core.analysis.stats import median_or_none
from core.analysis.variants import items_per_s
from core.report.csv_cells import csv_text
from core.report.explain_tables import explain_tables

# Version 2: samples as columns (core.vocab.samples), a graph break's `count` split into `logged`
# and `per_call`, latency.csv's `phase` column renamed `side`. Version 1 reports still open.
REPORT_VERSION = 2
READABLE_VERSIONS = (1, 2)

LATENCY_COLUMNS = ["config", "side", "process", "iteration", "latency_ms"]
GRAPH_BREAK_COLUMNS = [
    "config",
    "reason",
    "gb_code",
    "file",
    "line",
    "source",
    "logged",
    "per_call",
    "frame_skipped",
    "eager_function",
    "compile_failed",
    "user_file",
    "user_line",
    "compile_id",
    "cost_ms_per_call",
    "explanation",
    "hints",
    "doc_url",
]
RESOURCE_COLUMNS = [
    "config",
    "t_s",
    "phase",
    "process",
    "cpu_percent",
    "machine_cpu_percent",
    "rss_mb",
    "gpu_util_percent",
    "gpu_mem_mb",
]
RECOMPILE_COLUMNS = ["config", "function", "location", "reasons"]
VARIANT_COLUMNS = [
    "config",
    "dynamic",
    "variant",
    "input_shapes",
    "outcome",
    "recompiled",
    "recompile_reason",
    "compiles",
    "compile_time_s",
    "recompile_limit_hit",
    "ran_eagerly",
    "eager_median_ms",
    "compiled_median_ms",
    "batch_size",
    "eager_items_per_s",
    "compiled_items_per_s",
    "peak_mb",
    "error",
]


LATENCY_CHUNK_ROWS = 50_000


def _latency_csv(parts):
    """latency.csv from columns, in chunks of LATENCY_CHUNK_ROWS rows (a million rows in about
    a second, the csv module takes ~4; never the whole file in memory: at 2×10^6 samples the
    whole text cost ~400 MB)."""
    from core.vocab.records import SIDES

    yield ",".join(LATENCY_COLUMNS) + "\n"
    for label, side, process, iteration, latency_ms in parts:
        prefix = csv_text(["c"], [{"c": label}]).split("\n", 1)[1].rstrip("\n")  # quoted, formula-safe
        for start in range(0, len(latency_ms), LATENCY_CHUNK_ROWS):
            stop = start + LATENCY_CHUNK_ROWS
            names = np.array(SIDES, dtype=object)[side[start:stop]]
            yield "".join(
                f"{prefix},{n},{p},{i},{v!r}\n"
                for n, p, i, v in zip(
                    names.tolist(),
                    process[start:stop].tolist(),
                    iteration[start:stop].tolist(),
                    latency_ms[start:stop].tolist(),
                )
            )


def report_tables(results: list[JobResult]) -> dict:
    """File name → CSV text for every CSV of the report (latency.csv as a generator of
    chunks: see atomic_write)."""
    latency, breaks, resources, recompiles, variants = [], [], [], [], []
    for r in results:
        label = r.config.label
        cols = r.samples.columns()
        timed = ~cols["warmup"]
        latency.append(
            (label, cols["side"][timed], cols["process"][timed], cols["iteration"][timed], cols["latency_ms"][timed])
        )
        breaks += [
            {
                "config": label,
                **{k: getattr(g, k) for k in GRAPH_BREAK_COLUMNS[1:] if k not in ("hints", "cost_ms_per_call")},
                "hints": " | ".join(g.hints),
                "cost_ms_per_call": (cost := r.break_cost(g)) and cost.cost_ms_per_call,
            }
            for g in r.graph_breaks
        ]
        resources += [
            {
                "config": label,
                "t_s": s.t_s,
                "phase": s.phase,
                "process": s.process,
                "cpu_percent": s.cpu_percent,
                "machine_cpu_percent": s.machine_cpu_percent,
                "rss_mb": s.rss_mb,
                "gpu_util_percent": s.gpu_util_percent,
                "gpu_mem_mb": s.gpu_mem_mb,
            }
            for s in r.resources
        ]
        recompiles += [
            {"config": label, "function": c.function, "location": c.location, "reasons": " | ".join(c.reasons)}
            for c in r.recompiles
        ]
        variants += [
            {
                "config": label,
                "dynamic": r.config.dynamic,
                "variant": v.index,
                "input_shapes": "; ".join(v.input_shapes),
                "outcome": v.outcome,
                "recompiled": v.recompiled,
                "recompile_reason": " | ".join(v.recompile_reasons),
                "compiles": v.compiles,
                "compile_time_s": v.compile_time_s,
                "recompile_limit_hit": v.recompile_limit_hit,
                "ran_eagerly": v.ran_eagerly,
                "eager_median_ms": median_or_none(v.eager_ms),
                "compiled_median_ms": median_or_none(v.compiled_ms),
                "batch_size": v.batch_size,
                "eager_items_per_s": items_per_s(v.batch_size, v.eager_ms),
                "compiled_items_per_s": items_per_s(v.batch_size, v.compiled_ms),
                "peak_mb": v.peak_mb,
                "error": v.error,
            }
            for v in r.variants
        ]
    return {
        "summary.csv": csv_text(SUMMARY_COLUMNS, (r.summary() for r in results)),
        "latency.csv": _latency_csv(latency),
        "graph_breaks.csv": csv_text(GRAPH_BREAK_COLUMNS, breaks),
        "resources.csv": csv_text(RESOURCE_COLUMNS, resources),
        "recompiles.csv": csv_text(RECOMPILE_COLUMNS, recompiles),
        **({"variants.csv": csv_text(VARIANT_COLUMNS, variants)} if variants else {}),
        **{name: csv_text(columns, rows) for name, (columns, rows) in explain_tables(results).items()},
    }


def report_json(results: list[JobResult], options: dict | None = None, sections: dict | None = None) -> str:
    """The whole report as JSON; `sections` adds top-level entries (the recommendation, the
    suggestions, a tune run's candidates) beside the environment and the options."""
    environment = next((r.environment for r in results if r.environment), {})
    doc = {
        "report_version": REPORT_VERSION,
        "tool": "compile-profiler",
        "environment": environment,
        "options": options or {},
        **{k: v for k, v in (sections or {}).items() if k not in ("report_version", "tool", "jobs")},
        "jobs": [result_to_dict(r) for r in results],
    }
    return json.dumps(doc, indent=1, default=str)


def decision(results: list[JobResult], calls: int | None = None):
    """(Recommendation, suggestions) for `calls` expected calls (core.decide.recommend, core.decide.suggestions):
    what every report carries in report.json and recommendation.txt."""
    from core.decide.recommend import DEFAULT_CALLS, recommend
    from core.decide.suggestions import suggest

    calls = calls or DEFAULT_CALLS
    return recommend(results, calls), suggest(results, calls)


def decision_files(results: list[JobResult], calls: int | None = None) -> tuple[dict, dict[str, str]]:
    """(report.json sections, {"recommendation.txt": text}) of the decision."""
    from core.decide.suggestions import suggestion_sections

    rec, suggestions = decision(results, calls)
    text = rec.text()
    for heading, group in suggestion_sections(rec, suggestions):
        text += f"\n{heading}:\n" + "\n".join(s.text() for s in group) + "\n"
    return (
        {"recommendation": rec.to_dict(), "suggestions": [s.to_dict() for s in suggestions]},
        {"recommendation.txt": text},
    )
