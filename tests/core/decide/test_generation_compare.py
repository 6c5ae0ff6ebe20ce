"""`compare` on two generation reports: rows matched by config and prompt length, each judged on
its own run's speedups (decode, time to first token) with their intervals, more recompiles or
graph breaks a regression, an unusable timing "cannot tell", a missing row failing the gate."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from core import PROJECT_ROOT
from core.decide.generation_compare import compare_generations


def row(config="static cache/inductor", prompt=16, decode=(1.5, 1.4, 1.6), ttft=(1.2, 1.1, 1.3), **kw):
    return {
        "config": config,
        "prompt_len": prompt,
        "decode_speedup": decode[0],
        "decode_speedup_ci_low": decode[1],
        "decode_speedup_ci_high": decode[2],
        "ttft_speedup": ttft[0],
        "ttft_speedup_ci_low": ttft[1],
        "ttft_speedup_ci_high": ttft[2],
        "timing_grade": kw.pop("grade", "quiet"),
        "timing_reason": kw.pop("reason", ""),
        "recompiles": kw.pop("recompiles", 1),
        "graph_breaks": kw.pop("graph_breaks", 0),
        **kw,
    }


def statuses(base, new):
    c = compare_generations(base, new, 5.0)
    return [(f.name, f.status) for f in c.functions], c


def test_a_decode_slowdown_beyond_the_noise_fails_and_within_it_passes():
    got, c = statuses([row()], [row(decode=(1.1, 1.0, 1.2))])
    assert got == [("static cache/inductor, prompt 16", "REGRESSION")] and c.exit_code == 1
    assert "decode speedup 1.50x -> 1.10x (-26.7%)" in c.functions[0].detail
    got, c = statuses([row()], [row(decode=(1.45, 1.35, 1.55))])
    assert got[0][1] == "same" and c.exit_code == 0 and c.lines()[-1] == "ok: no config regressed"


def test_more_recompiles_are_a_regression_and_an_unusable_timing_cannot_tell():
    _, c = statuses([row(recompiles=1)], [row(recompiles=12)])
    assert c.functions[0].status == "REGRESSION" and "recompiles while generating 1 -> 12" in c.functions[0].detail
    _, c = statuses([row()], [row(grade="unusable", reason="other processes used 1.0 cores")])
    assert c.functions[0].status == "cannot tell" and c.exit_code == 3
    assert "new: other processes used 1.0 cores" in c.functions[0].detail


def test_rows_match_by_config_and_prompt_and_a_missing_one_fails():
    _, c = statuses([row(prompt=16), row(prompt=64)], [row(prompt=16), row(prompt=256)])
    assert [(f.name, f.status) for f in c.functions] == [
        ("static cache/inductor, prompt 16", "same"),
        ("static cache/inductor, prompt 64", "MISSING"),
        ("static cache/inductor, prompt 256", "new"),
    ]
    assert c.exit_code == 1 and c.lines()[-1] == "FAILED: 0 regression(s), 1 missing config(s)"


def _report(folder, rows) -> str:
    os.makedirs(folder)
    doc = {"kind": "generation", "format": 1, "configs": [{"label": rows[0]["config"], "rows": rows}]}
    with open(os.path.join(folder, "report.json"), "w") as fh:
        json.dump(doc, fh)
    return str(folder)


def compare(*args):
    return subprocess.run(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "compare", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_command_line_compares_generation_reports_and_refuses_a_mix_or_a_bad_figure(tmp_path):
    base = _report(tmp_path / "base", [row()])
    slower = _report(tmp_path / "new", [row(decode=(1.1, 1.0, 1.2))])
    proc = compare(base, slower)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert proc.stdout.startswith("static cache/inductor, prompt 16: REGRESSION (decode speedup 1.50x -> 1.10x")
    model = tmp_path / "model"
    model.mkdir()
    (model / "report.json").write_text(json.dumps({"jobs": []}))
    proc = compare(base, str(model))
    assert proc.returncode == 2 and "is the report of a generation profile (--task generate)" in proc.stderr
    bad = _report(tmp_path / "bad", [row(decode=("fast", 1.0, 1.2))])
    proc = compare(base, bad)
    assert proc.returncode == 2 and "is not a generation report this version can read" in proc.stderr
    assert "decode_speedup is 'fast', not a number" in proc.stderr
