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
    assert window.open_session(os.path.join(report_dir, "report.json"))
    panel = window.summary_panel
    assert not panel.localize_button.isHidden() and panel.unlocalized() == ["eager"]
    with qtbot.waitSignal(panel.sig_localize_requested) as asked:
        panel.localize_button.click()
    assert asked.args == ["eager"]
    qtbot.waitUntil(lambda: window.localizer.box is not None and window.localizer.box.isVisible())
    assert "a job in a fresh process" in window.localizer.box.text()
    window.localizer.box.button(QMessageBox.StandardButton.Yes).click()
    assert window.localizer.busy
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
