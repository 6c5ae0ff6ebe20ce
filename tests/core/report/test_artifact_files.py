"""Reading artifacts back (core.report.artifact_views): paths rebuilt from core.vocab.artifacts' rule and
refused outside the folder's own artifact folders."""

from __future__ import annotations

import os

import pytest

from core.report import artifact_views as af
from core.vocab.artifacts import JobArtifacts, write_text


def _job(tmp_path, label="inductor/dynamic=false"):
    a = JobArtifacts.for_label(label)
    root = str(tmp_path)
    write_text(root, a.graph_file("0/0", "code.py"), "def forward(self, x):\n    return x + 1\n")
    write_text(root, a.graph_file("0/0", "guards.txt"), "TREE_GUARD_MANAGER\n")
    write_text(root, a.compile_log, "I1130 06:07:44.123456 1 torch/_dynamo/x.py:10] [0/0] hello\n")
    write_text(root, a.trace("eager"), '{"traceEvents": []}')
    return root


def test_graph_texts_from_the_rule(tmp_path):
    root = _job(tmp_path)
    texts = af.graph_texts(root, "inductor/dynamic=false", "0/0")
    assert "return x + 1" in texts.code and "TREE_GUARD" in texts.guards and texts.output_code == ""
    assert af.graph_texts(root, "inductor/dynamic=false", "9/9") == af.GraphTexts()


def test_compile_log_and_traces(tmp_path):
    root = _job(tmp_path)
    entries = af.compile_log_entries(root, "inductor/dynamic=false")
    assert [(e.level, e.compile_id, e.text) for e in entries] == [("info", "0/0", "hello")]
    assert set(af.trace_files(root, "inductor/dynamic=false")) == {"eager"}
    assert af.traces_folder(root) == os.path.realpath(tmp_path / "traces")
    assert af.traces_folder(str(tmp_path / "nothing")) == ""


def test_paths_outside_the_artifact_folders_are_refused(tmp_path):
    root = _job(tmp_path / "report")
    (tmp_path / "secret.txt").write_text("secret")
    for rel in (
        "../secret.txt",
        "graphs/../../secret.txt",
        str(tmp_path / "secret.txt"),
        "report.json",
        "graphs//x",
        "",
    ):
        assert af.resolve(root, rel) is None, rel
        assert af.read_text(root, rel) == ""
    # a symbolic link inside graphs/ pointing out of the folder
    os.symlink(tmp_path / "secret.txt", os.path.join(root, "graphs", "link.txt"))
    assert af.read_text(root, "graphs/link.txt") == ""
    # a hostile label or graph id cannot climb out either
    assert af.graph_texts(root, "../../..", "../../secret") == af.GraphTexts()


def test_long_text_is_cut(tmp_path):
    write_text(str(tmp_path), "graphs/x/0_0.code.py", "a" * 100)
    text = af.read_text(str(tmp_path), "graphs/x/0_0.code.py", max_chars=10)
    assert text.startswith("a" * 10) and "cut at 10" in text


def test_copy_artifacts_leaves_a_users_own_folder_alone(tmp_path):
    from core.vocab.artifacts import copy_artifacts

    session = _job(tmp_path / "session")
    dest = tmp_path / "dest"
    (dest / "graphs").mkdir(parents=True)
    (dest / "graphs" / "mine.txt").write_text("mine")
    assert copy_artifacts(session, str(dest)) == ["graphs"]
    assert (dest / "graphs" / "mine.txt").read_text() == "mine"
    assert not (dest / "graphs" / "inductor_dynamic=false").exists()
    assert (dest / "traces" / "inductor_dynamic=false-eager.json").exists()
    assert copy_artifacts(session, str(dest)) == ["graphs"]  # ours now: traces/ replaced again


# ------------------------------------------------------------------ symbolic links and tlparse


def _outside(tmp_path):
    """A folder outside the report with a file in it (what a symlink in a crafted report points at)."""
    outside = tmp_path / "home" / "precious"
    outside.mkdir(parents=True)
    (outside / "keep.txt").write_text("the user's file")
    (outside / "eager.log").write_text("I1130 06:07:44.123456 1 torch/x.py:10] [0/0] a system log line\n")
    return outside


def test_symlinked_artifact_folders_are_refused(tmp_path):
    """A report whose compile_log/ (graphs/, traces/, torch_trace/) is a symbolic link to a folder
    elsewhere exposes nothing of that folder."""
    outside = _outside(tmp_path)
    root = tmp_path / "report"
    root.mkdir()
    for name in ("compile_log", "graphs", "traces", "torch_trace"):
        os.symlink(outside, root / name)
    (outside / "eager").mkdir()
    (outside / "eager" / "0_0.code.py").write_text("secret code")
    (outside / "eager-eager.json").write_text("{}")
    r = str(root)
    assert af.compile_log_entries(r, "eager") == [] and af.compile_log_path(r, "eager") == ""
    assert af.graph_texts(r, "eager", "0/0") == af.GraphTexts()
    assert af.trace_files(r, "eager") == {} and af.traces_folder(r) == ""
    assert af.resolve(r, "compile_log/eager.log") is None and af.resolve(r, "compile_log") is None
    # a linked sub-folder inside a real artifact folder, likewise
    real = tmp_path / "report2"
    write_text(str(real), "graphs/other/0_0.code.py", "x\n")
    os.symlink(outside / "eager", real / "graphs" / "eager")
    assert af.graph_texts(str(real), "eager", "0/0") == af.GraphTexts()


def test_nothing_is_written_through_a_symlinked_folder(tmp_path):
    from core.vocab.artifacts import ArtifactPathError, make_dirs

    outside = _outside(tmp_path)
    root = tmp_path / "report"
    root.mkdir()
    os.symlink(outside, root / "graphs")
    with pytest.raises(ArtifactPathError):
        write_text(str(root), "graphs/eager/0_0.code.py", "x")
    with pytest.raises(ArtifactPathError):
        make_dirs(str(root), "../escape/x")
    assert sorted(os.listdir(outside)) == ["eager.log", "keep.txt"]


@pytest.fixture
def fake_tlparse(tmp_path, monkeypatch):
    """A stand-in tlparse that records its arguments and, like the real one, refuses an existing
    output folder without --overwrite (and deletes it with it)."""
    import shutil
    import sys

    from core.report import tlparse

    calls = []

    def run(argv, **kw):
        import subprocess

        calls.append(argv)
        out = argv[argv.index("-o") + 1]
        if os.path.exists(out):
            if "--overwrite" not in argv:
                return subprocess.CompletedProcess(argv, 1, "", "Directory already exists")
            shutil.rmtree(out)
        os.makedirs(out)
        with open(os.path.join(out, "index.html"), "w") as fh:
            fh.write("<html>generated</html>")
        return subprocess.CompletedProcess(argv, 0, "", "")

    monkeypatch.setattr(tlparse, "tlparse_executable", lambda: sys.executable)
    monkeypatch.setattr(tlparse.subprocess, "run", run)
    monkeypatch.setattr(tlparse, "_tlparse_made", {})
    return calls


def _report_with_trace(root, label="eager"):
    write_text(str(root), JobArtifacts.for_label(label).torch_trace_dir + "/dedicated_log_torch_trace_1.log", "{}\n")
    return str(root)


def test_open_in_tlparse_never_deletes_or_opens_what_a_report_holds(tmp_path, fake_tlparse):
    """The reported attack: a report whose tlparse/ is a symbolic link to a folder in the user's
    home made 'Open in tlparse' delete that folder (tlparse --overwrite). And a report's own
    tlparse/<config>/index.html (a script, a link to a system file) must not be opened."""
    from core.report.tlparse import TLPARSE_PREFIX, tlparse_job

    outside = _outside(tmp_path)
    root = tmp_path / "report"
    _report_with_trace(root)
    os.symlink(outside, root / "tlparse")
    os.mkdir(outside / "eager")
    (outside / "eager" / "index.html").write_text("<script>crafted</script>")
    index, problem = tlparse_job(str(root), "eager")
    assert problem == "" and os.path.isfile(index)
    assert os.path.basename(os.path.dirname(os.path.dirname(index))).startswith(TLPARSE_PREFIX)
    assert not index.startswith(str(tmp_path)) and open(index).read() == "<html>generated</html>"
    assert (outside / "keep.txt").read_text() == "the user's file"
    assert (outside / "eager" / "index.html").read_text() == "<script>crafted</script>"
    assert all("--overwrite" not in argv for argv in fake_tlparse)
    assert tlparse_job(str(root), "eager") == (index, "") and len(fake_tlparse) == 1  # made once per trace


def test_tlparse_reads_no_trace_through_a_symlink(tmp_path, fake_tlparse):
    from core.report.tlparse import tlparse_job

    outside = _outside(tmp_path)
    root = tmp_path / "report"
    root.mkdir()
    os.symlink(outside, root / "torch_trace")
    index, problem = tlparse_job(str(root), "eager")
    assert index == "" and "no structured trace" in problem and fake_tlparse == []
    write_text(str(root / "r2"), "torch_trace/eager/.keep", "")
    os.symlink(outside / "eager.log", root / "r2" / "torch_trace" / "eager" / "trace.log")
    assert tlparse_job(str(root / "r2"), "eager")[0] == "" and fake_tlparse == []


def test_tlparse_into_the_report_writes_only_a_folder_of_its_own(tmp_path, fake_tlparse):
    from core.report.tlparse import tlparse_into_report

    outside = _outside(tmp_path)
    root = tmp_path / "report"
    _report_with_trace(root)
    index, problem = tlparse_into_report(str(root), "eager")
    assert problem == "" and index == str(root / "tlparse" / "eager" / "index.html")
    assert tlparse_into_report(str(root), "eager")[1].endswith("tlparse writes only into a new folder")
    assert os.path.isfile(index)  # the second call deleted nothing
    linked = tmp_path / "linked"
    _report_with_trace(linked)
    os.symlink(outside, linked / "tlparse")
    index, problem = tlparse_into_report(str(linked), "eager")
    assert index == "" and "symbolic link" in problem
    assert sorted(os.listdir(outside)) == ["eager.log", "keep.txt"]
    assert all("--overwrite" not in argv for argv in fake_tlparse)
