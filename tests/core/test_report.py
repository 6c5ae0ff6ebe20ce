"""Report files: headers, formula-safe cells, atomic writes, JSON round trip."""
import csv
import json
import os

import pytest

from core import events as ev
from core.config import CompileConfig, JobSpec, ModelSpec
from core.report import (GRAPH_BREAK_COLUMNS, LATENCY_COLUMNS, RESOURCE_COLUMNS, SUMMARY_COLUMNS, ReportError,
                         load_report, safe_cell, write_report)
from core.results import JobResult

REQUIRED_SUMMARY = ["config", "backend", "mode", "dynamic", "fullgraph", "status", "eager_median_ms",
                    "compiled_median_ms", "speedup", "speedup_ci_low", "speedup_ci_high", "compile_time_s",
                    "graph_count", "graph_break_count", "recompile_count", "eager_peak_mb", "compiled_peak_mb",
                    "break_even_iters"]


def synthetic_result(job_id="j1", backend="eager") -> JobResult:
    """A result folded from events exactly as the runner delivers them."""
    spec = JobSpec(job_id, ModelSpec("/models/m.py"), CompileConfig(backend=backend), iters=4)
    r = JobResult(spec)
    events = [
        ev.JobStarted(job_id, pid=1, environment={"torch": "2.x", "threads": 2}),
        ev.PhaseChanged(job_id, phase="benchmark"),
        ev.LatencyMeasured(job_id, samples=tuple(
            ev.LatencySample(p, i, v) for i in range(4) for p, v in (("eager", 10.0 + i), ("compiled", 5.0 + i)))
            + (ev.LatencySample("eager", 0, 99.0, warmup=True),)),
        ev.CompileFinished(job_id, result=ev.CompileResult(compile_time_s=2.0, graph_count=2, op_count=9,
                                                           coverage="Partly compiled")),
        ev.GraphBreakFound(job_id, graph_break=ev.GraphBreak(
            reason="Data-dependent branching", gb_code="GB0170", file="/models/m.py", line=7,
            source="-F.relu(-x)", hints=("=cmd|' /C calc'!A0", "Use torch.cond"))),
        ev.GraphBreakFound(job_id, graph_break=ev.GraphBreak(
            reason="Data-dependent branching", gb_code="GB0170", file="/models/m.py", line=7, source="-F.relu(-x)")),
        ev.RecompileFound(job_id, recompile=ev.Recompile("f", "/models/m.py:3", ("0/0: tensor 'x' size mismatch",))),
        ev.MemoryMeasured(job_id, peak=ev.MemoryPeak("eager", 100.0)),
        ev.MemoryMeasured(job_id, peak=ev.MemoryPeak("compiled", 125.0)),
        ev.ResourceSampled(job_id, sample=ev.ResourceSample(0.5, "eager", 150.0, 100.0)),
        ev.JobFinished(job_id, wall_time_s=3.0),
    ]
    for e in events:
        assert r.apply(e)
    assert not r.apply(ev.JobFailed("someone-else", reason="stale"))  # another job's event is ignored
    return r


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def test_summary_figures_from_events():
    s = synthetic_result().summary()
    assert set(s) == set(SUMMARY_COLUMNS)  # every figure is exported, nothing unexported
    assert s["status"] == "completed"
    assert s["eager_median_ms"] == 11.5 and s["compiled_median_ms"] == 6.5  # warm-up excluded
    assert s["speedup"] == pytest.approx(11.5 / 6.5)
    assert s["break_even_iters"] == pytest.approx(2000 / 5.0)
    assert s["graph_break_count"] == 1 and s["recompile_count"] == 1  # one place, seen twice
    assert s["memory_ratio"] == pytest.approx(0.8)


def test_csv_files_headers_and_formula_safety(tmp_path):
    paths = write_report([synthetic_result(), synthetic_result("j2", "aot_eager")], str(tmp_path))
    names = sorted(os.path.basename(p) for p in paths)
    assert names == ["graph_breaks.csv", "latency.csv", "recompiles.csv", "report.json", "resources.csv",
                     "summary.csv"]
    summary = read_csv(tmp_path / "summary.csv")
    assert list(summary[0]) == SUMMARY_COLUMNS and set(REQUIRED_SUMMARY) <= set(SUMMARY_COLUMNS)
    assert [row["config"] for row in summary] == ["eager", "aot_eager"]
    assert float(summary[0]["speedup"]) == pytest.approx(11.5 / 6.5)
    latency = read_csv(tmp_path / "latency.csv")
    assert list(latency[0]) == LATENCY_COLUMNS and len(latency) == 16  # 2 configs × 2 phases × 4
    breaks = read_csv(tmp_path / "graph_breaks.csv")
    assert list(breaks[0]) == GRAPH_BREAK_COLUMNS
    assert breaks[0]["count"] == "2" and breaks[0]["gb_code"] == "GB0170"
    assert breaks[0]["source"] == "'-F.relu(-x)"  # would otherwise run as a formula
    assert breaks[0]["hints"].startswith("'=cmd")
    assert list(read_csv(tmp_path / "resources.csv")[0]) == RESOURCE_COLUMNS
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp-")]  # no temp files left


def test_safe_cell():
    assert safe_cell("+1") == "'+1" and safe_cell("@x") == "'@x" and safe_cell("\tx") == "'\tx"
    assert safe_cell(-1.5) == -1.5 and safe_cell(None) == "" and safe_cell(True) == "true"
    assert safe_cell("resnet18") == "resnet18"


def test_json_round_trip(tmp_path):
    original = [synthetic_result(), synthetic_result("j2", "aot_eager")]
    write_report(original, str(tmp_path), {"iters": 4})
    loaded, header = load_report(str(tmp_path / "report.json"))
    assert header["options"] == {"iters": 4} and header["environment"]["threads"] == 2
    assert [r.summary() for r in loaded] == [r.summary() for r in original]
    assert loaded[0].graph_breaks == original[0].graph_breaks
    assert loaded[0].recompiles == original[0].recompiles and loaded[0].spec == original[0].spec
    again = json.loads((tmp_path / "report.json").read_text())["jobs"][0]
    assert again == json.loads(json.dumps(loaded[0].to_dict()))


def test_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ReportError, match="cannot write the report to .*Choose a folder"):
        write_report([synthetic_result()], str(blocker / "out"))


def test_load_report_errors(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text("{not json")
    with pytest.raises(ReportError, match="not a valid report.json"):
        load_report(str(bad))
    with pytest.raises(ReportError, match="cannot open"):
        load_report(str(tmp_path / "missing.json"))
