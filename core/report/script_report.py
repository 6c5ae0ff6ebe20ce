"""The report folder of a script run (`main.py run SCRIPT --out DIR`), written and read back.

    report.json          everything: the script, its arguments and overrides, each run (how it
                         ended, its entry points with every kept call, compiled frames, graph
                         breaks, recompiles), and the comparison (`kind: "script"`)
    functions.csv        one row per compiled entry point: calls, steady medians, speedup with its
                         interval and grade, verdict, compile time, first calls' extra time, pay-back
    calls.csv            every kept call: run, entry point, index, ms, new input shapes, compiled
    compile_frames.csv   every frame torch compiled: the call it came in, seconds per stage
    graph_breaks.csv     the breaks and skipped frames per entry point, at the script's lines
    recompiles.csv       every recompile with its guard failures
    output.txt           the last part of each run's stdout and stderr
    summary.txt          what the command printed as its finding

The folder is claimed as every report folder is (core.report.files.OutputFolder: locked, only
our own files replaced with --overwrite). No torch, no Qt.
"""

from __future__ import annotations

import json
import os

from core.analysis.script_results import ScriptResult, result_from_runs, summary_lines
from core.analysis.script_runs import ScriptRun, entry_from_dict, entry_to_dict
from core.report.csv_cells import csv_text
from core.report.files import ReportError, atomic_write, read_json_file
from core.vocab.script_job import FLAG_COMPILED, FLAG_NEW_SHAPE

REPORT_KIND = "script"
FORMAT = 1
SCRIPT_FILES = (
    "functions.csv",
    "calls.csv",
    "compile_frames.csv",
    "graph_breaks.csv",
    "recompiles.csv",
    "output.txt",
    "summary.txt",
    "report.json",
)

FUNCTION_COLUMNS = [
    "function",
    "file",
    "line",
    "kind",
    "settings",
    "calls_compiled",
    "calls_eager",
    "input_shapes",
    "steady_calls_compiled",
    "steady_calls_eager",
    "compiled_median_ms",
    "eager_median_ms",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "verdict",
    "timing_grade",
    "timing_reason",
    "iteration_compiled_ms",
    "iteration_eager_ms",
    "iteration_speedup",
    "iteration_speedup_ci_low",
    "iteration_speedup_ci_high",
    "iteration_verdict",
    "compile_s",
    "first_calls_extra_s",
    "first_iterations_extra_s",
    "payback_calls",
    "payback",
    "graph_break_places",
    "skipped_frames",
    "recompiles",
    "frames_compiled",
    "paths_differ",
]


def _run_to_dict(run: ScriptRun | None) -> dict | None:
    if run is None:
        return None
    d = {k: v for k, v in vars(run).items() if k != "entries"}
    d["entries"] = [entry_to_dict(e) for e in run.entries.values()]
    return d


def _run_from_dict(d) -> ScriptRun | None:
    if not isinstance(d, dict):
        return None
    entries = [entry_from_dict(e) for e in d.get("entries") or () if isinstance(e, dict)]
    run = ScriptRun(
        stance=str(d.get("stance", "")),
        exit_code=None if d.get("exit_code") is None else int(d["exit_code"]),
        error=str(d.get("error") or ""),
        ended=str(d.get("ended") or ""),
        wall_s=None if d.get("wall_s") is None else float(d["wall_s"]),
        process_s=float(d.get("process_s") or 0.0),
        peak_rss_mb=None if d.get("peak_rss_mb") is None else float(d["peak_rss_mb"]),
        cuda_peak_mb=None if d.get("cuda_peak_mb") is None else float(d["cuda_peak_mb"]),
        notes=[str(n) for n in d.get("notes") or ()],
        others_cores=[float(x) for x in d.get("others_cores") or ()],
        dropped=int(d.get("dropped") or 0),
        unreadable=int(d.get("unreadable") or 0),
        stdout_tail=str(d.get("stdout_tail") or "")[:1_000_000],
        stderr_tail=str(d.get("stderr_tail") or "")[:1_000_000],
        torch_version=str(d.get("torch_version") or ""),
        pid=int(d.get("pid") or 0),
        finished=bool(d.get("finished")),
    )
    run.entries = {e.key: e for e in entries}
    return run


def _iteration_cells(it) -> dict:
    """The loop's iteration around the calls (core.analysis.script_results.Timed), empty cells
    where it was not measured."""
    sp = it.speedup if it is not None else None
    return {
        "iteration_compiled_ms": _round(it.compiled_ms) if it is not None else None,
        "iteration_eager_ms": _round(it.eager_ms) if it is not None else None,
        "iteration_speedup": _round(sp.value) if sp else None,
        "iteration_speedup_ci_low": _round(sp.ci_low) if sp else None,
        "iteration_speedup_ci_high": _round(sp.ci_high) if sp else None,
        "iteration_verdict": it.verdict if it is not None else None,
    }


def function_row(f) -> dict:
    c, e = f.compiled, f.eager
    sp = f.speedup
    return {
        "function": c.name,
        "file": c.file,
        "line": c.line,
        "kind": c.kind,
        "settings": json.dumps(c.settings, sort_keys=True),
        "calls_compiled": c.calls,
        "calls_eager": e.calls if e is not None else None,
        "input_shapes": c.shapes,
        "steady_calls_compiled": int(c.steady().size),
        "steady_calls_eager": int(e.steady().size) if e is not None else None,
        "compiled_median_ms": _round(f.compiled_median_ms),
        "eager_median_ms": _round(f.eager_median_ms),
        "speedup": _round(sp.value) if sp else None,
        "speedup_ci_low": _round(sp.ci_low) if sp else None,
        "speedup_ci_high": _round(sp.ci_high) if sp else None,
        "verdict": f.verdict,
        "timing_grade": f.grade.grade,
        "timing_reason": f.grade.reason or f.why,
        **_iteration_cells(f.iteration),
        "compile_s": _round(c.compile_s),
        "first_calls_extra_s": _round(f.first_calls_extra_s),
        "first_iterations_extra_s": _round(f.first_iterations_extra_s),
        "payback_calls": f.payback_calls,
        "payback": f.payback_line(),
        "graph_break_places": sum(1 for gb in c.graph_breaks if not gb.frame_skipped and not gb.compile_failed),
        "skipped_frames": sum(1 for gb in c.graph_breaks if gb.frame_skipped),
        "recompiles": len(c.recompiles),
        "frames_compiled": len(c.frames),
        "paths_differ": f.paths_differ,
    }


def _round(value, digits: int = 6):
    return None if value is None else round(float(value), digits)


def _calls_rows(result: ScriptResult):
    for n, pair in enumerate(result.pairs):
        for side, run in zip(("compiled", "eager"), pair):
            if run is None:
                continue
            yield from _run_calls(run, side if n == 0 else f"{side} {n + 1}")


def _run_calls(run: ScriptRun, label: str):
    for e in run.entries.values():
        for i, (ms, flags) in enumerate(zip(e.ms, e.flags)):
            yield {
                "run": label,
                "function": e.name,
                "file": e.file,
                "line": e.line,
                "call": i,
                "ms": ms,
                "new_shape": bool(flags & FLAG_NEW_SHAPE),
                "compiled": bool(flags & FLAG_COMPILED),
            }


def write_script_report(folder, result: ScriptResult) -> list[str]:
    """Write every file of the report into `folder` (a claimed core.report.files.OutputFolder);
    the names written. report.json last: a folder whose report.json is there is whole."""
    root = folder.path
    written = []

    def put(name: str, text) -> None:
        atomic_write(os.path.join(root, name), text)
        folder.manifest.files.add(name)
        written.append(name)

    put("functions.csv", csv_text(FUNCTION_COLUMNS, [function_row(f) for f in result.functions]))
    put(
        "calls.csv",
        csv_text(["run", "function", "file", "line", "call", "ms", "new_shape", "compiled"], _calls_rows(result)),
    )
    frames = [
        {"entry": e.name, **fr}
        for run in (result.compiled,)
        if run is not None
        for e in run.entries.values()
        for fr in e.frames
    ]
    frame_columns = ["entry", "call", "compile_id", "function", "file", "line", "compile_s", "dynamo_s"]
    frame_columns += ["aot_autograd_s", "inductor_s", "codegen_s", "ops", "guards", "fail_type", "fail_reason"]
    frame_columns += ["recompile_reason", "cache_hits", "cache_misses"]
    put("compile_frames.csv", csv_text(frame_columns, frames))
    breaks = []
    recompiles = []
    if result.compiled is not None:
        for e in result.compiled.entries.values():
            for gb in e.graph_breaks:
                kind = (
                    "compile failed" if gb.compile_failed else ("skipped frame" if gb.frame_skipped else "graph break")
                )
                breaks.append(
                    {
                        "entry": e.name,
                        "entry_file": e.file,
                        "entry_line": e.line,
                        "kind": kind,
                        "reason": gb.reason,
                        "gb_code": gb.gb_code,
                        "file": gb.file,
                        "line": gb.line,
                        "logged": gb.logged,
                        "user_file": gb.user_file,
                        "user_line": gb.user_line or None,
                        "eager_function": gb.eager_function,
                        "hints": " | ".join(gb.advice),
                        "doc_url": gb.doc_url,
                    }
                )
            for rc in e.recompiles:
                recompiles.append(
                    {
                        "entry": e.name,
                        "function": rc.function,
                        "location": rc.location,
                        "reasons": " | ".join(rc.reasons),
                        "compile_id": rc.compile_id,
                    }
                )
    put(
        "graph_breaks.csv",
        csv_text(
            ["entry", "entry_file", "entry_line", "kind", "reason", "gb_code", "file", "line", "logged"]
            + ["user_file", "user_line", "eager_function", "hints", "doc_url"],
            breaks,
        ),
    )
    put("recompiles.csv", csv_text(["entry", "function", "location", "reasons", "compile_id"], recompiles))
    output = []
    for side, run in (("compiled", result.compiled), ("eager", result.eager)):
        if run is not None:
            output += [f"===== {side} run: stdout (last part) =====", run.stdout_tail]
            output += [f"===== {side} run: stderr (last part) =====", run.stderr_tail]
    put("output.txt", "\n".join(output) + "\n")
    lines = summary_lines(result)
    put("summary.txt", "\n".join(lines) + "\n")
    doc = {
        "kind": REPORT_KIND,
        "format": FORMAT,
        "script": {
            "target": result.target,
            "args": list(result.args),
            "module": result.module,
            "cwd": result.cwd,
            "overrides": [list(p) for p in result.overrides],
        },
        "runs": {"compiled": _run_to_dict(result.compiled), "eager": _run_to_dict(result.eager)},
        "repeats": [[_run_to_dict(c), _run_to_dict(e)] for c, e in result.repeats],
        "functions": [function_row(f) for f in result.functions],
        "summary": lines,
    }
    put("report.json", json.dumps(doc, indent=1, default=str))
    folder.write_manifest()
    return written


def is_script_report(doc) -> bool:
    return isinstance(doc, dict) and doc.get("kind") == REPORT_KIND


def load_script_report(path: str) -> ScriptResult:
    """A script report folder (or its report.json) read back; ReportError says what is wrong."""
    result = script_report_or_none(path)
    if result is None:
        raise ReportError(f"{path} is not the report of a script run (main.py run).")
    return result


def script_report_or_none(path: str) -> ScriptResult | None:
    """The script report at `path`, None when it is a report of another kind (a model's);
    ReportError when it cannot be read at all."""
    doc, where = read_json_file(path, "report.json")
    if not is_script_report(doc):
        return None
    try:
        script = doc["script"]
        runs = doc.get("runs") or {}
        return result_from_runs(
            str(script["target"]),
            [str(a) for a in script.get("args") or ()],
            bool(script.get("module")),
            str(script.get("cwd", "")),
            [tuple(p) for p in script.get("overrides") or ()],
            _run_from_dict(runs.get("compiled")),
            _run_from_dict(runs.get("eager")),
            [
                (_run_from_dict(pair[0]), _run_from_dict(pair[1]))
                for pair in doc.get("repeats") or ()
                if isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], dict)
            ],
        )
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportError(
            f"{where} is not a script report this version can read ({type(exc).__name__}: {exc})."
        ) from None
