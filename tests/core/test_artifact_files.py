"""Reading artifacts back (core.artifact_files): paths rebuilt from core.artifacts' rule and
refused outside the folder's own artifact folders."""
from __future__ import annotations

import os

from core import artifact_files as af
from core.artifacts import JobArtifacts, write_text


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
    for rel in ("../secret.txt", "graphs/../../secret.txt", str(tmp_path / "secret.txt"), "report.json",
                "graphs//x", ""):
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
    from core.artifacts import copy_artifacts

    session = _job(tmp_path / "session")
    dest = tmp_path / "dest"
    (dest / "graphs").mkdir(parents=True)
    (dest / "graphs" / "mine.txt").write_text("mine")
    assert copy_artifacts(session, str(dest)) == ["graphs"]
    assert (dest / "graphs" / "mine.txt").read_text() == "mine"
    assert not (dest / "graphs" / "inductor_dynamic=false").exists()
    assert (dest / "traces" / "inductor_dynamic=false-eager.json").exists()
    assert copy_artifacts(session, str(dest)) == ["graphs"]  # ours now: traces/ replaced again
