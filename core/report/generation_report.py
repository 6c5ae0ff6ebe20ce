"""A generation profile's report folder (`kind: "generation"` in report.json): summary.csv (a row
per config and prompt length), latency.csv (a row per token), recompiles.csv, graph_breaks.csv,
each config's generation script, output.txt, summary.txt and report.json. Written by
`profile --task generate` (core.cli.generate) and the app's generation window alike.
"""

from __future__ import annotations

import json
import os

SUMMARY_COLUMNS = [
    "config",
    "cache",
    "backend",
    "prompt_len",
    "new_tokens",
    "batch_size",
    "ttft_ms_eager",
    "ttft_ms_compiled",
    "ttft_speedup",
    "ttft_speedup_ci_low",
    "ttft_speedup_ci_high",
    "decode_ms_per_token_eager",
    "decode_ms_per_token_compiled",
    "decode_p90_ms_eager",
    "decode_p90_ms_compiled",
    "decode_speedup",
    "decode_speedup_ci_low",
    "decode_speedup_ci_high",
    "tokens_per_s_eager",
    "tokens_per_s_compiled",
    "verdict",
    "timing_grade",
    "timing_reason",
    "first_generation_s_eager",
    "first_generation_s_compiled",
    "compile_s",
    "recompiles",
    "graph_breaks",
    "break_even_tokens",
]


def summary_rows(r) -> list[dict]:
    from core.analysis.generation_results import fig_median

    rows = []
    for p in r.prompts:
        c, e = p.compiled, p.eager
        breaks = sum(len(x.graph_breaks) for x in (r.script.compiled.entries.values() if r.script.compiled else ()))
        rows.append(
            {
                "config": r.label,
                "cache": r.spec.cache,
                "backend": r.label.split("/", 1)[1],
                "prompt_len": p.prompt_len,
                "new_tokens": r.spec.new_tokens,
                "batch_size": r.spec.batch_size,
                "ttft_ms_eager": fig_median(e.ttft_ms) if e else None,
                "ttft_ms_compiled": fig_median(c.ttft_ms),
                "ttft_speedup": p.ttft.value if p.ttft else None,
                "ttft_speedup_ci_low": p.ttft.ci_low if p.ttft else None,
                "ttft_speedup_ci_high": p.ttft.ci_high if p.ttft else None,
                "decode_ms_per_token_eager": fig_median(e.token_ms) if e else None,
                "decode_ms_per_token_compiled": fig_median(c.token_ms),
                "decode_p90_ms_eager": p.p90(e),
                "decode_p90_ms_compiled": p.p90(c),
                "decode_speedup": p.decode.value if p.decode else None,
                "decode_speedup_ci_low": p.decode.ci_low if p.decode else None,
                "decode_speedup_ci_high": p.decode.ci_high if p.decode else None,
                "tokens_per_s_eager": fig_median(e.tokens_per_s) if e else None,
                "tokens_per_s_compiled": fig_median(c.tokens_per_s),
                "verdict": p.verdict,
                "timing_grade": p.grade.grade,
                "timing_reason": p.grade.reason or p.why,
                "first_generation_s_eager": e.first_total_s if e else None,
                "first_generation_s_compiled": c.first_total_s,
                "compile_s": r.compile_s,
                "recompiles": len(r.recompiles),
                "graph_breaks": breaks,
                "break_even_tokens": p.break_even_tokens,
            }
        )
    return rows


def write_generation_report(folder, results: list, options: dict) -> None:
    """summary.csv (a row per config and prompt length), latency.csv (a row per token),
    recompiles.csv, graph_breaks.csv, each config's generation script, output.txt, summary.txt
    and report.json (`kind: "generation"`)."""
    from core.analysis.generation_results import result_lines
    from core.report.csv_cells import csv_text
    from core.report.files import atomic_write
    from core.report.script_report import _run_to_dict

    root = folder.path

    def put(name: str, text: str) -> None:
        atomic_write(os.path.join(root, name), text)
        folder.manifest.files.add(name)

    put("summary.csv", csv_text(SUMMARY_COLUMNS, [row for r in results for row in summary_rows(r)]))
    latency = []
    for r in results:
        for p in r.prompts:
            for side, fig in (("compiled", p.compiled), ("eager", p.eager)):
                if fig is None:
                    continue
                for i, ms in enumerate(fig.ttft_ms):
                    latency.append(
                        {
                            "config": r.label,
                            "side": side,
                            "prompt_len": p.prompt_len,
                            "generation": i,
                            "token": 0,
                            "ms": ms,
                        }
                    )
                for run_i, gaps in enumerate(fig.per_generation_token_ms):
                    for t, ms in enumerate(gaps):
                        latency.append(
                            {
                                "config": r.label,
                                "side": side,
                                "prompt_len": p.prompt_len,
                                "generation": run_i,
                                "token": t + 1,
                                "ms": float(ms),
                            }
                        )
    put("latency.csv", csv_text(["config", "side", "prompt_len", "generation", "token", "ms"], latency))
    recompiles = [
        {"config": r.label, "where": m.where(), "seconds": m.seconds, "reason": m.recompile_reason}
        for r in results
        for m in r.recompiles
    ]
    put("recompiles.csv", csv_text(["config", "where", "seconds", "reason"], recompiles))
    breaks = [
        {
            "config": r.label,
            "reason": gb.reason,
            "gb_code": gb.gb_code,
            "file": gb.file,
            "line": gb.line,
            "logged": gb.logged,
        }
        for r in results
        if r.script.compiled is not None
        for e in r.script.compiled.entries.values()
        for gb in e.graph_breaks
    ]
    put("graph_breaks.csv", csv_text(["config", "reason", "gb_code", "file", "line", "logged"], breaks))
    output = []
    for r in results:
        if r.script_path and getattr(r, "script_text", ""):
            put(r.script_path, r.script_text)
        for side, run in (("compiled", r.script.compiled), ("eager", r.script.eager)):
            if run is not None:
                output += [
                    f"===== {r.label}, {side} run: stdout =====",
                    run.stdout_tail,
                    "===== stderr =====",
                    run.stderr_tail,
                ]
    put("output.txt", "\n".join(output) + "\n")
    lines = [line for r in results for line in result_lines(r) + [""]]
    put("summary.txt", "\n".join(lines))
    doc = {
        "kind": "generation",
        "format": 1,
        "options": options,
        "configs": [
            {
                "label": r.label,
                "spec": vars(r.spec) | {"hf_config": list(r.spec.hf_config), "prompt_lens": list(r.spec.prompt_lens)},
                "rows": summary_rows(r),
                "compiles": [vars(m) for m in r.compiles],
                "runs": {"compiled": _run_to_dict(r.script.compiled), "eager": _run_to_dict(r.script.eager)},
                "script": r.script_path,
            }
            for r in results
        ],
        "summary": lines,
    }
    put("report.json", json.dumps(doc, indent=1, default=str))
    folder.write_manifest()


ROW_NUMBERS = (
    "prompt_len",
    "decode_speedup",
    "decode_speedup_ci_low",
    "decode_speedup_ci_high",
    "ttft_speedup",
    "ttft_speedup_ci_low",
    "ttft_speedup_ci_high",
    "decode_ms_per_token_compiled",
    "recompiles",
    "graph_breaks",
)


def generation_rows_or_none(path: str) -> list[dict] | None:
    """The summary rows (a config and prompt length each: summary.csv's) of the generation report
    at `path`; None when it is a report of another kind; ReportError when it cannot be read, or a
    row's figure is not a number."""
    from core.report.files import ReportError, read_json_file

    doc, where = read_json_file(path, "report.json")
    if not (isinstance(doc, dict) and doc.get("kind") == "generation"):
        return None
    rows = []
    try:
        for config in doc["configs"]:
            for row in config["rows"]:
                for key in ROW_NUMBERS:
                    value = row.get(key)
                    if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))):
                        raise ValueError(f"{key} is {str(value)[:40]!r}, not a number")
                rows.append({**row, "config": str(row["config"]), "timing_grade": str(row.get("timing_grade", ""))})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ReportError(f"{where} is not a generation report this version can read ({exc}).") from None
    return rows
