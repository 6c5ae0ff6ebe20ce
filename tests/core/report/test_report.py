"""Report files: headers, formula-safe cells, atomic writes, JSON round trip."""

import csv
import json
import os

import pytest

from core.analysis.result_json import result_to_dict
from core.analysis.results import SUMMARY_COLUMNS, JobResult
from core.analysis.summary_columns import BREAK_EVEN_UNKNOWN
from core.report.csv_cells import safe_cell
from core.report.files import ReportError, load_report, write_report
from core.report.report_contents import GRAPH_BREAK_COLUMNS, LATENCY_COLUMNS, RESOURCE_COLUMNS
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec

REQUIRED_SUMMARY = [
    "config",
    "backend",
    "mode",
    "dynamic",
    "fullgraph",
    "status",
    "eager_median_ms",
    "compiled_median_ms",
    "speedup",
    "speedup_ci_low",
    "speedup_ci_high",
    "compile_time_s",
    "graph_count",
    "graph_break_sites",
    "recompile_count",
    "eager_peak_mb",
    "compiled_peak_mb",
    "break_even_iters",
]


def synthetic_result(job_id="j1", backend="eager") -> JobResult:
    """A result folded from events exactly as the runner delivers them."""
    spec = JobSpec(job_id, ModelSpec("/models/m.py"), CompileConfig(backend=backend), iters=4)
    r = JobResult(spec)
    events = [
        ev.JobStarted(job_id, pid=1, environment={"torch": "2.x", "threads": 2}),
        ev.PhaseChanged(job_id, phase="benchmark"),
        ev.LatencyMeasured(
            job_id,
            samples=tuple(
                rec.LatencySample(p, i, v) for i in range(4) for p, v in (("eager", 10.0 + i), ("compiled", 5.0 + i))
            )
            + (rec.LatencySample("eager", 0, 99.0, warmup=True),),
        ),
        ev.CompileFinished(
            job_id, result=rec.CompileResult(compile_time_s=2.0, graph_count=2, op_count=9, coverage="Partly compiled")
        ),
        ev.GraphBreakFound(
            job_id,
            graph_break=rec.GraphBreak(
                reason="Data-dependent branching",
                gb_code="GB0170",
                file="/models/m.py",
                line=7,
                source="-F.relu(-x)",
                hints=("=cmd|' /C calc'!A0", "Use torch.cond"),
            ),
        ),
        ev.GraphBreakFound(
            job_id,
            graph_break=rec.GraphBreak(
                reason="Data-dependent branching", gb_code="GB0170", file="/models/m.py", line=7, source="-F.relu(-x)"
            ),
        ),
        ev.RecompileFound(job_id, recompile=rec.Recompile("f", "/models/m.py:3", ("0/0: tensor 'x' size mismatch",))),
        ev.MemoryMeasured(job_id, peak=rec.MemoryPeak("eager", 100.0)),
        ev.MemoryMeasured(job_id, peak=rec.MemoryPeak("compiled", 125.0)),
        ev.ResourceSampled(job_id, sample=rec.ResourceSample(0.5, "eager", 150.0, 100.0)),
        ev.JobCompleted(job_id, wall_time_s=3.0),
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
    assert s["break_even_iters"] == BREAK_EVEN_UNKNOWN  # 4 calls a side cannot be graded
    assert r_live_break_even() == pytest.approx(2000 / 5.0)  # a live row (no interval yet): from the medians
    assert s["graph_break_sites"] == 1 and s["recompile_count"] == 1  # one place, seen twice
    assert s["memory_ratio"] == pytest.approx(0.8)


def r_live_break_even():
    return synthetic_result().summary(ci=False)["break_even_iters"]


def test_break_even_only_from_a_speedup_measurably_above_1_in_a_usable_timing():
    """A 1.01x [0.89-1.29] on a busy machine printed "break-even 25809 calls"."""
    from tests.core.fakes import fake_result

    clear = fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, compile_s=10.0)
    assert clear.summary()["break_even_iters"] == pytest.approx(10_000 / 5.0, rel=0.05)
    tied = fake_result("inductor", eager_ms=10.0, compiled_ms=9.9, compile_s=10.0, noise=0.2)
    s = tied.summary()
    assert s["speedup_ci_low"] < 1 < s["speedup_ci_high"] and s["break_even_iters"] == BREAK_EVEN_UNKNOWN
    slower = fake_result("inductor", eager_ms=5.0, compiled_ms=10.0)
    assert slower.summary()["break_even_iters"] == "never"
    busy = fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, others_cores=1.6)
    assert not busy.quality().trusted and busy.summary()["break_even_iters"] == BREAK_EVEN_UNKNOWN


def test_csv_files_headers_and_formula_safety(tmp_path):
    paths = write_report([synthetic_result(), synthetic_result("j2", "aot_eager")], str(tmp_path))
    names = sorted(os.path.basename(p) for p in paths)
    assert names == [
        "graph_breaks.csv",
        "latency.csv",
        "recommendation.txt",
        "recompiles.csv",
        "report.json",
        "resources.csv",
        "summary.csv",
    ]
    summary = read_csv(tmp_path / "summary.csv")
    assert list(summary[0]) == SUMMARY_COLUMNS and set(REQUIRED_SUMMARY) <= set(SUMMARY_COLUMNS)
    assert [row["config"] for row in summary] == ["eager", "aot_eager"]
    assert float(summary[0]["speedup"]) == pytest.approx(11.5 / 6.5)
    latency = read_csv(tmp_path / "latency.csv")
    assert list(latency[0]) == LATENCY_COLUMNS and len(latency) == 16  # 2 configs × 2 phases × 4
    breaks = read_csv(tmp_path / "graph_breaks.csv")
    assert list(breaks[0]) == GRAPH_BREAK_COLUMNS
    assert breaks[0]["per_call"] == "2" and breaks[0]["logged"] == "2" and breaks[0]["gb_code"] == "GB0170"
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
    assert again == json.loads(json.dumps(result_to_dict(loaded[0])))


def test_unwritable_folder_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(ReportError, match="cannot use .*/out as the report folder.*Choose a folder"):
        write_report([synthetic_result()], str(blocker / "out"))


def test_a_file_named_as_the_folder_is_said_to_be_a_file(tmp_path):
    """--out naming a file read "cannot use ... as the report folder: File exists"."""
    (tmp_path / "afile").write_text("not a folder")
    with pytest.raises(ReportError, match="afile as the report folder: it is a file, not a folder"):
        write_report([synthetic_result()], str(tmp_path / "afile"))
    assert (tmp_path / "afile").read_text() == "not a folder"


def test_load_report_errors(tmp_path):
    bad = tmp_path / "report.json"
    bad.write_text("{not json")
    with pytest.raises(ReportError, match="not a valid report.json"):
        load_report(str(bad))
    with pytest.raises(ReportError, match="cannot open"):
        load_report(str(tmp_path / "missing.json"))


def test_a_report_cut_short_or_named_through_a_link_is_said_so(tmp_path):
    """A truncated report.json gave only the parser's "Unterminated string starting at: line 166";
    one named through a link to another file did not say where it was read."""
    whole = tmp_path / "whole"
    write_report([synthetic_result()], str(whole))
    text = (whole / "report.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) // 2])
    with pytest.raises(ReportError, match="it was cut short .*copy it again"):
        load_report(str(cut))
    (tmp_path / "list.json").write_text("[1, 2")
    with pytest.raises(ReportError, match="cut short"):
        load_report(str(tmp_path / "list.json"))
    elsewhere = tmp_path / "notes.txt"
    elsewhere.write_text("hello")
    link = tmp_path / "link.json"
    link.symlink_to(elsewhere)
    with pytest.raises(ReportError) as linked:
        load_report(str(link))
    assert f"is a symbolic link to {elsewhere}" in str(linked.value) and "cut short" not in str(linked.value)


# ---------------------------------------------------------------- one run per folder


def test_a_folder_holds_one_run(tmp_path):
    from core.report.files import FolderInUseError

    sweep = synthetic_result()
    sweep.variants.append(rec.VariantResult(0, ("float32[2]",), 1, False))
    write_report([sweep], str(tmp_path))
    assert (tmp_path / "variants.csv").exists()
    with pytest.raises(FolderInUseError, match="already holds a report .*--overwrite"):
        write_report([synthetic_result()], str(tmp_path))
    write_report([synthetic_result()], str(tmp_path), overwrite=True)
    assert not (tmp_path / "variants.csv").exists()  # the stale sweep file went with the old run


def test_two_runs_cannot_write_one_folder_at_once(tmp_path):
    from core.report.files import FolderInUseError, OutputFolder

    with OutputFolder(str(tmp_path)) as first:
        with pytest.raises(FolderInUseError, match="being written by another run"):
            OutputFolder(str(tmp_path), overwrite=True).claim()
        write_report([synthetic_result()], str(tmp_path), folder=first)
    OutputFolder(str(tmp_path), overwrite=True).claim().release()  # free again once released


def test_a_reserved_folder_is_refused_as_a_claim_is_and_left_as_it_was(tmp_path):
    """`reserve` (a command's --out checked before its settings) refuses what `claim` refuses and
    changes nothing; `abandon` removes a folder it made, only while empty, and never a report."""
    from core.report.files import FolderInUseError, OutputFolder

    write_report([synthetic_result()], str(tmp_path / "old"))
    before = sorted(os.listdir(tmp_path / "old"))
    with pytest.raises(FolderInUseError, match="already holds a report .*--overwrite"):
        OutputFolder(str(tmp_path / "old")).reserve()
    kept = OutputFolder(str(tmp_path / "old"), overwrite=True).reserve()
    with pytest.raises(FolderInUseError, match="being written by another run"):
        OutputFolder(str(tmp_path / "old"), overwrite=True).reserve()  # locked while reserved
    kept.abandon()  # a refused setting: the earlier report stays whole
    assert sorted(os.listdir(tmp_path / "old")) == before and not kept.removed
    new = OutputFolder(str(tmp_path / "a" / "new")).reserve()
    assert new.created and os.listdir(tmp_path / "a" / "new") == []  # no manifest, no probe left
    new.abandon()
    assert not (tmp_path / "a").exists() and tmp_path.exists()  # every folder it made, only those
    made = OutputFolder(str(tmp_path / "b")).reserve()
    (tmp_path / "b" / "mine.txt").write_text("a user's file, put there meanwhile")
    made.abandon()
    assert (tmp_path / "b" / "mine.txt").exists()  # not empty: kept
    claimed = OutputFolder(str(tmp_path / "c")).reserve().claim()
    claimed.abandon()
    assert (tmp_path / "c").exists()  # claimed (its manifest written): a run's folder, not removed
    claimed = OutputFolder(str(tmp_path / "old"), overwrite=True).reserve().claim()
    assert claimed.removed and not (tmp_path / "old" / "report.json").exists()  # replaced once claimed
    claimed.release()


def test_a_folder_that_cannot_really_be_written_is_refused_before_work():
    from core.report.files import OutputFolder

    if not os.path.isdir("/proc/self"):
        pytest.skip("needs /proc")
    with pytest.raises(ReportError, match="cannot write to /proc"):
        OutputFolder("/proc").claim()


def test_report_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        write_report([synthetic_result()], str(tmp_path))
    finally:
        os.umask(old)
    assert (os.stat(tmp_path / "report.json").st_mode & 0o777) == 0o644


# ---------------------------------------------------------------- hostile reports


def _report_doc(tmp_path):
    write_report([synthetic_result()], str(tmp_path / "r"))
    return json.loads((tmp_path / "r" / "report.json").read_text())


@pytest.mark.parametrize(
    "path,value,message",
    [
        (("spec", "config", "backend"), 3, r"jobs\[0\]\.spec\.config\.backend must be text, not 3"),
        (("compile", "compile_time_s"), "fast", r"jobs\[0\]\.compile\.compile_time_s must be a number, not 'fast'"),
        (("samples", "latency_ms"), "AAAA", r"jobs\[0\]\.samples cannot be read"),
        (("graph_breaks",), [{"reason": 7}], r"jobs\[0\]\.graph_breaks\[0\]\.reason must be text"),
        (("status",), "exploded", r"jobs\[0\]\.status must be one of"),
        (("spec", "iters"), "many", r"jobs\[0\]\.spec\.iters must be a whole number"),
        (("cudagraph_skips",), [{"reason": ["<b>x</b>"]}], r"jobs\[0\]\.cudagraph_skips\[0\]\.reason must be text"),
        (("cudagraph_skips",), {"reason": "x"}, r"jobs\[0\]\.cudagraph_skips must be a list"),
        (("compile", "compile_time_s"), float("nan"), r"jobs\[0\]\.compile\.compile_time_s must be a number, not NaN"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(tmp_path, path, value, message):
    doc = _report_doc(tmp_path)
    target = doc["jobs"][0]
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ReportError, match=message):
        load_report(str(bad))


def test_version_1_samples_as_objects_still_open_with_a_warning(tmp_path):
    doc = _report_doc(tmp_path)
    doc["report_version"] = 1
    job = doc["jobs"][0]
    job["samples"] = [
        {"phase": "eager", "iteration": 0, "latency_ms": 2.0, "warmup": False},
        {"phase": "compiled", "iteration": 0, "latency_ms": 1.0, "warmup": False},
    ]
    job["graph_breaks"][0] = {k: v for k, v in job["graph_breaks"][0].items() if k not in ("logged", "per_call")}
    job["graph_breaks"][0]["count"] = 3
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    results, header = load_report(str(old))
    assert list(results[0].latencies("eager")) == [2.0] and results[0].graph_breaks[0].per_call == 3
    assert "older compile-profiler (report version 1)" in header["warnings"][0]


@pytest.mark.parametrize(
    "field,value,message",
    [
        ("latency_ms", float("nan"), r"samples\[1\]\.latency_ms must be a finite number, not nan"),
        ("iteration", float("nan"), r"samples\[1\]\.iteration must be a whole number from 0 to 4,294,967,295"),
        ("iteration", -1, r"samples\[1\]\.iteration must be a whole number from 0 to 4,294,967,295, not -1"),
        ("iteration", 2**40, r"samples\[1\]\.iteration must be a whole number"),
        ("process", 70000, r"samples\[1\]\.process must be a whole number from 0 to 65,535, not 70000"),
        ("warmup", float("nan"), r"samples\[1\]\.warmup must be true or false, not nan"),
        ("phase", "training", r"samples\[1\]\.side must be one of eager, compiled, not 'training'"),
    ],
)
def test_a_bad_value_in_a_version_1_sample_is_refused_naming_the_field(tmp_path, field, value, message):
    """The reported case: NaN in a version-1 report was refused with "Python integer ... out of
    bounds for uint32" (a negative iteration) and no field named, or read as a NaN latency."""
    doc = _report_doc(tmp_path)
    doc["report_version"] = 1
    sample = {"phase": "compiled", "iteration": 0, "latency_ms": 1.0, "warmup": False}
    doc["jobs"][0]["samples"] = [{**sample, "phase": "eager"}, {**sample, field: value}]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    with pytest.raises(ReportError, match=r"jobs\[0\]\.samples cannot be read: " + message):
        load_report(str(bad))


def test_a_newer_version_is_read_with_a_warning(tmp_path):
    doc = _report_doc(tmp_path)
    doc["report_version"] = 99
    doc["jobs"][0]["a_figure_from_the_future"] = 1
    new = tmp_path / "new.json"
    new.write_text(json.dumps(doc))
    results, header = load_report(str(new))
    assert len(results) == 1 and "newer compile-profiler (report version 99" in header["warnings"][0]
    doc["jobs"][0]["samples"] = "a new encoding"
    new.write_text(json.dumps(doc))
    with pytest.raises(ReportError, match="comes from a newer compile-profiler"):
        load_report(str(new))


def test_a_million_samples_are_stored_compactly(tmp_path):
    import numpy as np

    r = synthetic_result()
    n = 1_000_000
    r.samples.extend_columns(
        side=np.arange(n) % 2, iteration=np.arange(n) // 2, warmup=np.zeros(n, bool), latency_ms=np.linspace(1, 2, n)
    )
    write_report([r], str(tmp_path))
    assert os.path.getsize(tmp_path / "report.json") < 25 * n  # not one JSON object per sample
    loaded, _ = load_report(str(tmp_path))
    assert len(loaded[0].samples) == len(r.samples)
    assert np.array_equal(loaded[0].latencies("compiled"), r.latencies("compiled"))


def test_a_2_gb_report_json_is_refused_by_its_size_before_it_is_parsed(tmp_path):
    """The reported case: a 2 GB report.json was refused only after a 5.1 GB spike. A sparse file
    (truncate) of 2 GiB takes no disk; reading it would take seconds and gigabytes."""
    import time

    import psutil

    from core.vocab.limits import MAX_JSON_BYTES

    path = tmp_path / "report.json"
    with open(path, "w") as fh:
        fh.write('{"jobs": [')
        fh.truncate(2 << 30)
    rss, started = psutil.Process().memory_info().rss, time.monotonic()
    with pytest.raises(ReportError, match=r"report\.json is 2,048 MB; this machine reads a report\.json of at most "):
        load_report(str(tmp_path))
    assert time.monotonic() - started < 1 and psutil.Process().memory_info().rss - rss < 50 << 20
    assert MAX_JSON_BYTES < 2 << 30


def test_a_folders_report_json_that_links_elsewhere_is_not_followed(tmp_path):
    """A crafted report folder whose report.json is a symbolic link to a file outside it: opening
    the folder reads nothing from elsewhere and says why; the file named by its own path opens."""
    outside = tmp_path / "elsewhere"
    write_report([synthetic_result()], str(outside))
    crafted = tmp_path / "crafted"
    crafted.mkdir()
    os.symlink(outside / "report.json", crafted / "report.json")
    with pytest.raises(
        ReportError, match=r"report.json in .*crafted is a symbolic link \(to .*elsewhere.*nothing was read"
    ):
        load_report(str(crafted))
    results, _ = load_report(str(outside / "report.json"))
    assert len(results) == 1
