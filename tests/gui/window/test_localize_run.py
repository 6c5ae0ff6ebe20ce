"""Summary → Find where outputs diverge…: on a real report whose config fails the accuracy
check (a model that differs under torch.compiler.is_compiling(), eager backend), the app asks,
runs `main.py localize` in a QProcess, and shows the finding; a failing command is shown as an
error with its own message, nothing on screen lost."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtWidgets import QMessageBox

from tests.core.helpers import SCALED_WHEN_COMPILED, profile_command

TIMEOUT_MS = 240_000


@pytest.fixture
def report_dir(tmp_path):
    model = tmp_path / "scaled.py"
    model.write_text(SCALED_WHEN_COMPILED)
    out = tmp_path / "report"
    proc = profile_command(
        str(model), "--backend", "eager", "--iters", "5", "--warmup", "1", "--op-profile", "0", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return str(out)


def test_the_summary_finds_where_outputs_diverge_in_a_helper_process(window, qtbot, report_dir, monkeypatch):
    from gui.form import trust

    trust.remember(window.settings, os.path.join(os.path.dirname(report_dir), "scaled.py"))  # trusted before
    assert window.open_session(os.path.join(report_dir, "report.json"))
    panel = window.summary_panel
    assert not panel.localize_button.isHidden() and panel.unlocalized() == ["eager"]
    with qtbot.waitSignal(panel.sig_localize_requested) as asked:
        panel.localize_button.click()
    assert asked.args == ["eager"]
    qtbot.waitUntil(lambda: window.localizer.box is not None and window.localizer.box.isVisible())
    assert "a job in a fresh process" in window.localizer.box.text()
    window.localizer.box.button(QMessageBox.StandardButton.Yes).click()
    assert window.localizer.busy and window.localizer.flags == ["--trust-report"]  # the file was trusted
    with qtbot.waitSignal(window.localizer.sig_done, timeout=TIMEOUT_MS) as done:
        pass
    assert done.args[0].startswith("where eager diverges: outputs diverge in dynamo's graph capture")
    assert panel.localize_button.isHidden() and not window.localizer.busy
    assert "dynamo's graph capture" in panel.localization.lines[0][2]
    section = json.load(open(os.path.join(report_dir, "report.json")))["localization"]
    assert [e["config"] for e in section] == ["eager"]


def test_a_command_that_fails_is_shown_and_nothing_is_lost(window, qtbot, report_dir, monkeypatch):
    errors = []
    monkeypatch.setattr(window, "show_error", lambda title, text: errors.append((title, text)))
    assert window.open_session(os.path.join(report_dir, "report.json"))
    results = list(window.session.results)
    window.localizer.folder, window.localizer.label = report_dir, "no such config"
    with qtbot.waitSignal(window.localizer.sig_done, timeout=TIMEOUT_MS):
        window.localizer.run()
    assert errors and "has no config 'no such config'" in errors[0][1]
    assert window.session.results == results and not window.localizer.busy


def test_a_fix_the_summary_offers_is_applied_as_apply_and_re_run(window, monkeypatch):
    from core.decide.localize import fix_changes
    from gui.window import decide

    asked = []
    monkeypatch.setattr(decide, "apply_and_rerun", lambda w, label, change: asked.append((w, label, change)))
    (change,) = fix_changes({"fixes": [["fallback_random", True]]})
    window.summary_panel.sig_apply_requested.emit("inductor", change)
    assert asked == [(window, "inductor", change)]


# ---------------------------------------------------------------- what only the report says


@pytest.fixture
def crafted(tmp_path):
    """A report (resnet18, no model file) whose config failed the accuracy check and whose
    inductor option cpp.cxx is a shell command."""
    from core.report.files import write_report
    from core.vocab.config import CompileConfig
    from tests.core.fakes import fake_result

    config = CompileConfig("inductor", inductor_options=(("cpp.cxx", f"touch {tmp_path / 'pwned'}; g++"),))
    write_report([fake_result(config, accuracy="fail")], str(tmp_path / "r"), {})
    return str(tmp_path / "r" / "report.json"), config.label


def _answer_yes(window, qtbot, label):
    ran = []
    window.localizer.run = lambda: ran.append(list(window.localizer.flags))
    assert window.localizer.start(label)
    window.localizer.box.button(QMessageBox.StandardButton.Yes).click()
    return ran


@pytest.mark.parametrize(
    "answer, flags",
    [("cancel", None), ("run without", ["--without-risky-settings"]), ("run", ["--trust-report"])],
)
def test_a_report_s_risky_settings_are_asked_about_before_the_command_starts(
    window, qtbot, crafted, monkeypatch, answer, flags
):
    from gui.window import localize_run

    shown = []
    monkeypatch.setattr(localize_run, "confirm_config_from_file", lambda *a: shown.append(a) or answer)
    path, label = crafted
    assert window.open_session(path)
    ran = _answer_yes(window, qtbot, label)
    ((_, origin, to_run, risky),) = shown
    assert origin == path and "cpp.cxx" in to_run and [r.key for r in risky] == ["cpp.cxx"]
    assert ran == ([] if flags is None else [flags])


def test_a_python_file_only_the_report_names_is_asked_about_like_opening_it(window, qtbot, tmp_path, monkeypatch):
    from core.report.files import write_report
    from gui.window import localize_run
    from tests.core.fakes import fake_result
    from tests.core.helpers import MLP_MODEL

    model = str(tmp_path / "mlp.py")
    (tmp_path / "mlp.py").write_text(MLP_MODEL)
    write_report([fake_result("eager", accuracy="fail", model=model)], str(tmp_path / "r"), {})
    asked = []
    monkeypatch.setattr(localize_run, "confirm_python_file", lambda w, settings, p: asked.append(p) or False)
    assert window.open_session(str(tmp_path / "r" / "report.json"))
    assert _answer_yes(window, qtbot, "eager") == [] and asked == [model]  # not trusted: nothing ran
    monkeypatch.setattr(localize_run, "confirm_python_file", lambda w, settings, p: asked.append(p) or True)
    assert _answer_yes(window, qtbot, "eager") == [["--trust-report"]]


def test_a_run_of_this_window_holds_the_user_s_own_settings(window, monkeypatch):
    monkeypatch.setattr(window.session, "origin", "")
    assert window.localizer.ask_trust() == ["--trust-report"]
