"""Reports: summary.csv, latency.csv, graph_breaks.csv, resources.csv, recompiles.csv,
variants.csv (shape sweeps only) and report.json.

Every file is written atomically (temporary file in the same folder, then rename), so a
crash never leaves half a report. Text cells that a spreadsheet would run as a formula
(starting with = + - @, a tab or a carriage return) are prefixed with a quote; numbers are
written as numbers. `load_report` reads report.json back into JobResults.
"""
from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from typing import Iterable

from core.results import STAT_FIELDS, JobResult
from core.stats import median_or_none

REPORT_VERSION = 1

SUMMARY_COLUMNS = [
    "config", "model", "backend", "mode", "dynamic", "fullgraph", "device", "status", "failure_reason",
    *[f"{phase}_{name}_ms" for phase in ("eager", "compiled") for name in STAT_FIELDS],
    "speedup", "speedup_ci_low", "speedup_ci_high", "compile_time_s", "cache_state",
    "dynamo_s", "aot_autograd_s", "inductor_s", "codegen_s",
    "graph_count", "op_count", "guard_count", "graph_break_count", "recompile_count", "frames_skipped", "coverage",
    "eager_peak_mb", "compile_peak_mb", "compiled_peak_mb", "memory_ratio", "cuda_eager_max_allocated_mb",
    "cuda_compiled_max_allocated_mb", "break_even_iters", "iterations", "threads",
]
LATENCY_COLUMNS = ["config", "phase", "iteration", "latency_ms"]
GRAPH_BREAK_COLUMNS = ["config", "reason", "gb_code", "file", "line", "source", "logged", "per_call", "explanation",
                       "hints", "frame_skipped", "doc_url"]
RESOURCE_COLUMNS = ["config", "t_s", "phase", "cpu_percent", "rss_mb", "gpu_util_percent", "gpu_mem_mb"]
RECOMPILE_COLUMNS = ["config", "function", "location", "reasons"]
VARIANT_COLUMNS = ["config", "dynamic", "variant", "input_shapes", "recompiled", "recompile_reason", "compiles",
                   "compile_time_s", "recompile_limit_hit", "ran_eagerly", "eager_median_ms", "compiled_median_ms"]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class ReportError(OSError):
    """The report could not be written or read; the message names the path and the fix."""


def safe_cell(value):
    """Make a value safe for a spreadsheet: formula-like text gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START):
        return "'" + text
    return text


def _csv_text(columns: list[str], rows: Iterable[dict]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([safe_cell(row.get(c)) for c in columns])
    return buf.getvalue()


def atomic_write(path: str, text: str) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def report_tables(results: list[JobResult]) -> dict[str, str]:
    """File name → CSV text for every CSV of the report."""
    latency, breaks, resources, recompiles, variants = [], [], [], [], []
    for r in results:
        label = r.config.label
        latency += [{"config": label, "phase": s.phase, "iteration": s.iteration, "latency_ms": s.latency_ms}
                    for s in r.samples if not s.warmup]
        breaks += [{"config": label, **{k: getattr(g, k) for k in GRAPH_BREAK_COLUMNS[1:] if k != "hints"},
                    "hints": " | ".join(g.hints)} for g in r.graph_breaks]
        resources += [{"config": label, "t_s": s.t_s, "phase": s.phase, "cpu_percent": s.cpu_percent,
                       "rss_mb": s.rss_mb, "gpu_util_percent": s.gpu_util_percent, "gpu_mem_mb": s.gpu_mem_mb}
                      for s in r.resources]
        recompiles += [{"config": label, "function": c.function, "location": c.location,
                        "reasons": " | ".join(c.reasons)} for c in r.recompiles]
        variants += [{"config": label, "dynamic": r.config.dynamic, "variant": v.index,
                      "input_shapes": "; ".join(v.input_shapes), "recompiled": v.recompiled,
                      "recompile_reason": " | ".join(v.recompile_reasons), "compiles": v.compiles,
                      "compile_time_s": v.compile_time_s, "recompile_limit_hit": v.recompile_limit_hit,
                      "ran_eagerly": v.ran_eagerly, "eager_median_ms": median_or_none(v.eager_ms),
                      "compiled_median_ms": median_or_none(v.compiled_ms)} for v in r.variants]
    return {
        "summary.csv": _csv_text(SUMMARY_COLUMNS, (r.summary() for r in results)),
        "latency.csv": _csv_text(LATENCY_COLUMNS, latency),
        "graph_breaks.csv": _csv_text(GRAPH_BREAK_COLUMNS, breaks),
        "resources.csv": _csv_text(RESOURCE_COLUMNS, resources),
        "recompiles.csv": _csv_text(RECOMPILE_COLUMNS, recompiles),
        **({"variants.csv": _csv_text(VARIANT_COLUMNS, variants)} if variants else {}),
    }



def report_json(results: list[JobResult], options: dict | None = None) -> str:
    environment = next((r.environment for r in results if r.environment), {})
    doc = {
        "report_version": REPORT_VERSION,
        "tool": "compile-profiler",
        "environment": environment,
        "options": options or {},
        "jobs": [r.to_dict() for r in results],
    }
    return json.dumps(doc, indent=1, default=str)


def write_report(results: list[JobResult], out_dir: str, options: dict | None = None) -> list[str]:
    """Write every report file into `out_dir` (created if needed); returns the paths.

    Raises ReportError with a clear message when the folder cannot be written; nothing in
    `results` is changed, so the caller can offer another folder.
    """
    out_dir = os.path.abspath(os.path.expanduser(out_dir))
    try:
        os.makedirs(out_dir, exist_ok=True)
        files = {**report_tables(results), "report.json": report_json(results, options)}
        paths = []
        for name, text in files.items():
            path = os.path.join(out_dir, name)
            atomic_write(path, text)
            paths.append(path)
        return paths
    except OSError as exc:
        raise ReportError(f"cannot write the report to {out_dir}: {exc.strerror or exc}. "
                          "Choose a folder you can write to (--out DIR).") from exc


def load_report(path: str) -> tuple[list[JobResult], dict]:
    """Read a report.json (or the folder holding one) back: (results, document header)."""
    if os.path.isdir(path):
        path = os.path.join(path, "report.json")
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as exc:
        raise ReportError(f"cannot open {path}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise ReportError(f"{path} is not a valid report.json: {exc}") from exc
    if not isinstance(doc, dict) or "jobs" not in doc:
        raise ReportError(f"{path} is not a compile-profiler report (no 'jobs').")
    try:
        results = [JobResult.from_dict(j) for j in doc["jobs"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ReportError(f"{path} has a job this version cannot read: {exc!r}") from exc
    header = {k: v for k, v in doc.items() if k != "jobs"}
    return results, header
