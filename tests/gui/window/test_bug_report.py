"""File → Save bug report… and the localization line, on a real report: a tiny model whose
compiled outputs differ (torch.compiler.is_compiling()), profiled with the eager backend and
--localize by the command line; the bundle is built by the helper process and opened here."""

from __future__ import annotations

import json
import os
import sys
import tempfile
import zipfile

import pytest
from PySide6.QtWidgets import QMessageBox

from core.report.report_contents import report_json
from gui.window import bug_report
from tests.core.helpers import SCALED_WHEN_COMPILED, profile_command
from tests.gui.helpers import fake_result

HELPER_TIMEOUT_MS = 240_000


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory):
    """A real report folder whose only config fails the accuracy check, localized."""
    folder = tmp_path_factory.mktemp("bug")
    model = folder / "scaled.py"
    model.write_text(SCALED_WHEN_COMPILED)
    out = folder / "report"
    proc = profile_command(
        str(model), "--backend", "eager", "--iters", "5", "--warmup", "1", "--op-profile", "0", "--localize",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


def _box(window, name: str) -> QMessageBox | None:
    return next((b for b in window.findChildren(QMessageBox, name) if b.isVisible()), None)


def _answer(qtbot, window, name: str, button) -> QMessageBox:
    qtbot.waitUntil(lambda: _box(window, name) is not None)
    box = _box(window, name)
    text = box.text()
    box.button(button).click()
    box.text = lambda: text  # noqa: B023 - what it said, for the test to read after it closed
    return box


def test_a_localized_failure_shows_its_sentence_and_one_without_says_how(window, report_dir):
    assert window.open_session(os.path.join(report_dir, "report.json"))
    sentence = json.load(open(os.path.join(report_dir, "report.json")))["localization"][0]["sentence"]
    note = window.summary_panel.localization
    assert not note.isHidden() and [line[2] for line in note.lines] == [
        f"where the outputs diverge (profile --localize): {sentence}"
    ]
    assert "dynamo's graph capture" in sentence  # the real finding: is_compiling() differs while dynamo traces

    doc = json.load(open(os.path.join(report_dir, "report.json")))
    del doc["localization"]
    plain = os.path.join(tempfile.mkdtemp(dir=os.path.dirname(report_dir)), "report.json")
    with open(plain, "w") as f:
        json.dump(doc, f)
    assert window.open_session(plain)
    assert [line[1] for line in note.lines] == ["eager"] and note.lines[0][2].endswith("--localize)")
    window.session.start([])  # a new run: no failed check on screen
    assert note.isHidden()


def test_save_bug_report_builds_a_zip_in_a_helper_process(window, qtbot, report_dir, tmp_path, monkeypatch):
    assert not window.actions.save_bug_report.isEnabled()  # nothing on screen
    assert window.open_session(os.path.join(report_dir, "report.json"))
    assert window.actions.save_bug_report.isEnabled()
    asked = []
    (tmp_path / "out").mkdir()
    target = str(tmp_path / "out" / "bug")
    monkeypatch.setattr(bug_report, "ask_bundle_path", lambda parent, start: asked.append(start) or target)
    assert window.save_bug_report()
    notice = _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Save)
    assert notice.text().startswith("Config eager: compiled outputs differ from eager's")
    assert "the model's code (" in notice.text() and "Nothing else goes in." in notice.text()
    assert asked == [os.path.join(os.path.expanduser("~"), "bundle-eager.zip")]  # home, never the checkout
    assert window.bug_report.busy and not window.actions.save_bug_report.isEnabled()  # the GUI thread goes on
    with qtbot.waitSignal(window.bug_report.sig_saved, timeout=HELPER_TIMEOUT_MS) as saved:
        pass
    assert saved.args == [target + ".zip"] and window.actions.save_bug_report.isEnabled()
    names = zipfile.ZipFile(target + ".zip").namelist()
    assert {"repro.py", "scaled.py", "report.json", "env.txt", "README.md"} <= set(names)
    assert "compile_log/eager.log" in names and any(n.startswith("torch_trace/eager/") for n in names)
    assert "Bug report saved to " + target + ".zip" in window.status_label.text()
    readme = zipfile.ZipFile(target + ".zip").read("README.md").decode()
    assert "Finding: compiled outputs differ from eager's" in readme

    # the same file again: asked first; no leaves it alone, yes replaces it once the new one is whole
    before = os.path.getmtime(target + ".zip")
    monkeypatch.setattr(bug_report, "ask_bundle_path", lambda parent, start: asked.append(start) or target + ".zip")
    window.save_bug_report()
    _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Save)
    assert asked[-1] == os.path.join(str(tmp_path / "out"), "bundle-eager.zip")  # the last folder used
    _answer(qtbot, window, "bug_report_replace", QMessageBox.StandardButton.Cancel)
    assert not window.bug_report.busy and os.path.getmtime(target + ".zip") == before
    window.save_bug_report()
    _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Save)
    _answer(qtbot, window, "bug_report_replace", QMessageBox.StandardButton.Yes)
    with qtbot.waitSignal(window.bug_report.sig_saved, timeout=HELPER_TIMEOUT_MS):
        pass
    assert sorted(os.listdir(tmp_path / "out")) == ["bug.zip"]  # replaced: no new or .part file left beside it
    assert "repro.py" in zipfile.ZipFile(target + ".zip").namelist()


def test_a_failing_helper_is_shown_and_the_app_goes_on(window, qtbot, report_dir, tmp_path, monkeypatch):
    assert window.open_session(os.path.join(report_dir, "report.json"))
    target = str(tmp_path / "missing folder" / "bug.zip")  # the helper cannot write there
    monkeypatch.setattr(bug_report, "ask_bundle_path", lambda parent, start: target)
    window.save_bug_report()
    _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Save)
    with qtbot.waitSignal(window.bug_report.sig_failed, timeout=HELPER_TIMEOUT_MS) as failed:
        pass
    assert "No such file or directory" in failed.args[0] and "results on screen are as they were" in failed.args[0]
    assert _box(window, "error_box") is not None and "No such file" in window.last_error
    assert len(window.session.results) == 1 and window.actions.save_bug_report.isEnabled()

    # a helper that dies without a word
    monkeypatch.setattr(bug_report, "bundle_command", lambda *a: [sys.executable, "-c", "import sys; sys.exit(3)"])
    monkeypatch.setattr(bug_report, "ask_bundle_path", lambda parent, start: str(tmp_path / "b.zip"))
    window.save_bug_report()
    _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Save)
    with qtbot.waitSignal(window.bug_report.sig_failed, timeout=HELPER_TIMEOUT_MS) as failed:
        pass
    assert failed.args[0].startswith("the helper process failed: it ended with code 3")
    assert not os.path.exists(tmp_path / "b.zip") and window.isVisible()


def test_a_finished_run_is_bundled_from_its_own_folder(window, qtbot, tmp_path):
    run = tempfile.TemporaryDirectory(dir=tmp_path)
    window.run_folder = run  # as gui.window.run_start makes it; removed when the window closes
    from core.measure.environment import file_sha256, model_file

    ran = fake_result("ran")
    ran.environment["model_file_sha256"] = file_sha256(model_file(ran.spec.model.source))  # as its job records it
    window.session.start([], {}, run.name, keep=[ran])
    assert bug_report.report_folder(window) == run.name and window.actions.save_bug_report.isEnabled()
    assert window.save_bug_report()
    assert json.load(open(os.path.join(run.name, "report.json")))["jobs"][0]["spec"]["job_id"] == "ran"
    _answer(qtbot, window, "bug_report_notice", QMessageBox.StandardButton.Cancel)
    assert window.status_label.text() == "Bug report not saved."

    saved = os.path.join(tmp_path, "elsewhere.json")  # a session not saved as a report folder's report.json
    with open(saved, "w") as f:
        f.write(report_json([fake_result("x")]))
    assert window.open_session(saved)
    assert bug_report.report_folder(window) == "" and not window.actions.save_bug_report.isEnabled()


def test_a_report_naming_another_file_as_the_model_s_code_is_refused_before_the_notice(window, tmp_path, monkeypatch):
    """A crafted report.json whose model source is a private file: the app says why, no notice, no zip."""
    errors = []
    monkeypatch.setattr(window, "show_error", lambda title, text: errors.append((title, text)))
    secret = tmp_path / "id_rsa.py"
    secret.write_text("PRIVATE KEY")
    result = fake_result("x")
    doc = json.loads(report_json([result]))
    doc["jobs"][0]["spec"]["model"]["source"] = str(secret)
    doc["jobs"][0]["environment"]["model_file_sha256"] = "ab" * 32  # a fingerprint from some real report
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "report.json").write_text(json.dumps(doc))
    assert window.open_session(str(folder / "report.json"))
    assert not window.save_bug_report() and _box(window, "bug_report_notice") is None
    assert errors and "is not the model file the run loaded" in errors[0][1]
