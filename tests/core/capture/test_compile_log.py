"""torch's compile log (--compile-log), the artifact layout and tlparse, without running a job."""

import os

import pytest

from core.capture.compile_log import CompileLogError, filter_log, parse_settings, read_job_log, read_log
from core.report.files import FolderInUseError, OutputFolder
from core.vocab import artifacts

LOG = """\
V1130 05:41:55.168000 28277 torch/_dynamo/symbolic_convert.py:5368] [0/0] [__graph_breaks] Graph break in user code at /m.py:15
V1130 05:41:55.168000 28277 torch/_dynamo/symbolic_convert.py:5368] [0/0] [__graph_breaks] Graph Break Reason: Data-dependent branching
I1130 05:41:56.000000 28277 torch/_dynamo/guards.py:100] [1/0] [__recompiles] Recompiling function forward in /m.py:14
W1130 05:41:57.000000 28277 torch/_inductor/utils.py:10] something odd
a line torch wrote without its prefix
"""


def test_settings_in_torch_logs_syntax():
    import logging

    assert parse_settings("graph_breaks,recompiles") == {"graph_breaks": True, "recompiles": True}
    assert parse_settings("+dynamo, inductor,-aot,output_code") == {
        "dynamo": logging.DEBUG,
        "inductor": logging.INFO,
        "aot": logging.ERROR,
        "output_code": True,
    }
    assert parse_settings("all") == {"torch": logging.INFO}
    with pytest.raises(CompileLogError, match="'dynamoo' is neither a torch log nor a log artifact.*graph_breaks"):
        parse_settings("dynamoo")
    with pytest.raises(CompileLogError, match="artifact"):
        parse_settings("+output_code")


def test_log_entries_joined_and_filtered(tmp_path):
    path = tmp_path / "x.log"
    path.write_text(LOG)
    entries = read_log(str(path))
    assert [(e.level, e.compile_id, e.artifact) for e in entries] == [
        ("debug", "0/0", "graph_breaks"),
        ("info", "1/0", "recompiles"),
        ("warning", "", ""),
    ]
    assert entries[0].text.splitlines() == [
        "Graph break in user code at /m.py:15",
        "Graph Break Reason: Data-dependent branching",
    ]
    assert entries[2].text.endswith("a line torch wrote without its prefix")
    assert [e.level for e in filter_log(entries, "info")] == ["info", "warning"]
    assert [e.artifact for e in filter_log(entries, text="RECOMPIL")] == ["recompiles"]
    assert read_log(str(tmp_path / "missing.log")) == []
    artifacts.write_text(str(tmp_path), "compile_log/eager.log", LOG)
    assert read_job_log(str(tmp_path), "eager") == entries and read_job_log(str(tmp_path), "inductor") == []


def test_artifact_names_and_paths():
    assert artifacts.artifact_name("inductor/max-autotune/dynamic=false") == "inductor_max-autotune_dynamic=false"
    odd = artifacts.artifact_name("inductor/some_path=/tmp/a b")
    assert " " not in odd and odd != artifacts.artifact_name("inductor/some_path=/tmp/a_b")
    a = artifacts.JobArtifacts.for_label("eager/fullgraph")
    assert a.trace("compiled") == "traces/eager_fullgraph-compiled.json"
    assert a.graph_file("0/1", "guards.txt") == "graphs/eager_fullgraph/0_1.guards.txt"
    assert (a.compile_log, a.torch_trace_dir) == ("compile_log/eager_fullgraph.log", "torch_trace/eager_fullgraph")


def test_overwrite_removes_only_what_the_manifest_lists_and_says_what(tmp_path):
    """--overwrite removes what a run wrote (the folder's manifest lists it), never a user's own
    folder named like an artifact folder: a run would write into it, so the claim is refused,
    naming it, and nothing is removed."""
    from core.vocab.artifacts import MANIFEST, read_manifest

    with OutputFolder(str(tmp_path)):
        artifacts.write_text(str(tmp_path), "graphs/eager/0_0.code.py", "x")
        artifacts.write_text(str(tmp_path), "traces/eager-eager.json", "{}")
    assert read_manifest(str(tmp_path)).folders == {"graphs", "traces"}  # the reserved, never made, dropped
    with pytest.raises(FolderInUseError, match="already holds a report.*graphs/"):
        OutputFolder(str(tmp_path)).claim()
    os.makedirs(tmp_path / "torch_trace")  # the user's own, made after the run: no manifest lists it
    (tmp_path / "torch_trace" / "mine.txt").write_text("keep")
    with pytest.raises(FolderInUseError, match="torch_trace/, which no run of compile-profiler wrote"):
        OutputFolder(str(tmp_path), overwrite=True).claim()
    assert (tmp_path / "graphs" / "eager" / "0_0.code.py").exists()  # a refused claim removes nothing
    os.rename(tmp_path / "torch_trace", tmp_path / "elsewhere")
    folder = OutputFolder(str(tmp_path), overwrite=True).claim()
    try:
        assert sorted(folder.removed) == ["graphs/ (1 file)", "traces/ (1 file)"]
        assert "removed the earlier run's" in folder.removed_text()
    finally:
        folder.release()
    assert not (tmp_path / "graphs").exists() and not (tmp_path / "traces").exists()
    assert (tmp_path / "elsewhere" / "mine.txt").read_text() == "keep" and (tmp_path / MANIFEST).is_file()


def test_a_folder_without_a_manifest_is_never_removed_and_a_link_never_followed(tmp_path):
    from core.report.files import write_report

    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "precious.txt").write_text("mine")
    report = tmp_path / "report"
    report.mkdir()
    os.symlink(outside, report / "graphs")  # a crafted report folder: graphs/ links out
    for overwrite in (False, True):
        with pytest.raises(FolderInUseError, match="graphs/"):
            OutputFolder(str(report), overwrite=overwrite).claim()
    # a manifest that lists the link as ours: removing refuses the link, never follows it
    from core.vocab.artifacts import Manifest, write_manifest

    write_manifest(str(report), Manifest(set(), {"graphs"}))
    with pytest.raises(Exception, match="symbolic link"):
        OutputFolder(str(report), overwrite=True).claim()
    assert (outside / "precious.txt").read_text() == "mine"
    os.unlink(report / "graphs")
    write_report([], str(report), {}, overwrite=True)
    assert (report / "summary.csv").exists()


def test_a_session_folder_is_copied_into_a_report_and_listed(tmp_path):
    from core.vocab.artifacts import read_manifest

    dest = tmp_path / "copy"
    dest.mkdir()
    artifacts.write_text(str(tmp_path / "session"), "graphs/eager/0_0.code.py", "y")
    (dest / "traces").mkdir()  # the user's own
    assert artifacts.copy_artifacts(str(tmp_path / "session"), str(dest)) == []
    assert (dest / "graphs" / "eager" / "0_0.code.py").read_text() == "y"
    assert read_manifest(str(dest)).folders == {"graphs"}
    artifacts.write_text(str(tmp_path / "session"), "traces/a.json", "{}")
    assert artifacts.copy_artifacts(str(tmp_path / "session"), str(dest)) == ["traces"]  # never over the user's


def test_bad_level_is_refused_before_any_work_and_verbose_points_here(tmp_path):
    from tests.core.helpers import profile_command as profile

    out = tmp_path / "out"
    proc = profile("resnet18", "--compile-log", "+dynamo,grpah_breaks", "--out", str(out))
    assert proc.returncode == 2 and "'grpah_breaks' is neither a torch log" in proc.stderr, proc.stderr
    assert not out.exists()
    proc = profile("resnet18", "--verbose", "--out", str(out))
    assert proc.returncode == 2 and "--compile-log" in proc.stderr


def test_a_cancelled_job_keeps_the_files_it_wrote(tmp_path, write_model):
    from core.run.runner import JobRunner, RunListener
    from core.vocab import events as ev
    from tests.core.helpers import BREAKS_MODEL, make_spec

    class CancelInBenchmark(RunListener):
        def on_event(self, event):
            if isinstance(event, ev.PhaseChanged) and event.phase == "benchmark":
                runner.cancel()

    runner = JobRunner(listener=CancelInBenchmark())
    spec = make_spec(
        write_model(BREAKS_MODEL, "breaks.py"),
        iters=1_000_000,
        artifacts_dir=str(tmp_path),
        compile_log="graph_breaks,recompiles,graph_code",
    )
    result = runner.run(spec)
    assert result.status == "cancelled" and len(result.graphs) >= 3
    a = artifacts.JobArtifacts.for_label("eager")
    for g in result.graphs:
        assert (tmp_path / g.code_file).is_file() and (tmp_path / g.guards_file).is_file()
    log = (tmp_path / a.compile_log).read_text()
    assert "[__graph_code]" in log and "Graph break in user code" in log
    assert os.listdir(tmp_path / a.torch_trace_dir)


def test_views_read_only_inside_the_report_folder(tmp_path):
    from core.capture.graphs import read_graph_texts

    root = tmp_path / "report"
    artifacts.write_text(str(root), "graphs/eager/0_0.code.py", "class GraphModule: ...\n")
    (tmp_path / "secret.txt").write_text("secret")
    os.symlink(tmp_path / "secret.txt", root / "graphs" / "eager" / "0_0.guards.txt")
    texts = read_graph_texts(str(root), "eager", "0/0")
    assert texts == {"code.py": "class GraphModule: ...\n", "guards.txt": "", "output_code.py": ""}
    assert artifacts.resolve(str(root), "../secret.txt") is None
    assert artifacts.resolve(str(root), "/etc/passwd") is None
    assert read_graph_texts(str(root), "../..", "../../secret") == {k: "" for k in texts}
    (root / "graphs" / "big.txt").write_text("x" * 100)  # artifacts live in the artifact folders
    assert artifacts.read_text(str(root), "graphs/big.txt", max_chars=10).startswith("x" * 10 + "\n\n[... cut at 10")


def test_a_huge_compile_log_is_read_only_so_far(tmp_path):
    """The reported case: a 2 GB compile log aborted the app. The view reads a bounded part and says so;
    a line without a break is cut."""
    path = tmp_path / "big.log"
    with open(path, "w") as fh:
        fh.write(LOG)
        fh.write("x" * 300_000)  # one line longer than any view shows
        fh.write("\n" + LOG * 2000)
    entries = read_log(str(path), max_bytes=200_000, tail_bytes=0)
    assert entries[-1].level == "warning" and "shown are its first 196 KB and its last 0 KB" in entries[-1].text
    assert max(len(e.text) for e in entries) < 120_000 and any("[line cut]" in e.text for e in entries)
    assert len(entries) < 2000


def test_a_report_json_too_big_or_not_a_file_is_refused_before_reading(tmp_path, monkeypatch):
    from core.report import files as report
    from core.report.files import ReportError, load_report

    (tmp_path / "report.json").write_text('{"jobs": []}' + " " * 5000)
    monkeypatch.setattr(report, "max_json_bytes", lambda: 1000)
    with pytest.raises(ReportError, match=r"report.json is 0 MB; this machine reads a report.json of at most 0 MB"):
        load_report(str(tmp_path))
    monkeypatch.undo()
    fifo = tmp_path / "fifo"
    fifo.mkdir()
    os.mkfifo(fifo / "report.json")
    with pytest.raises(ReportError, match="not a regular file"):
        load_report(str(fifo))
