"""The notice before a Python model file's content runs for the first time."""

from __future__ import annotations

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QMessageBox

from gui.form import trust


def _settings(tmp_path) -> QSettings:
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


def test_notice_follows_the_content_not_the_name(tmp_path):
    settings = _settings(tmp_path)
    model = tmp_path / "m.py"
    model.write_text("x = 1\n")
    assert trust.needs_notice(settings, str(model))
    trust.remember(settings, str(model))
    assert not trust.needs_notice(settings, str(model))
    model.write_text("import os; os.remove('/tmp/nothing')\n")  # changed: asked again
    assert trust.needs_notice(settings, str(model))
    assert not trust.needs_notice(settings, str(tmp_path / "w.pt2"))  # not Python: never asked
    assert not trust.needs_notice(settings, str(tmp_path / "missing.py"))  # unreadable: the job says why


def test_remembered_hashes_are_bounded(tmp_path):
    settings = _settings(tmp_path)
    for i in range(trust.MAX_REMEMBERED + 20):
        path = tmp_path / f"m{i}.py"
        path.write_text(f"x = {i}\n")
        trust.remember(settings, str(path))
    assert len(trust._known(settings)) == trust.MAX_REMEMBERED
    assert not trust.needs_notice(settings, str(tmp_path / f"m{trust.MAX_REMEMBERED + 19}.py"))
    assert trust.needs_notice(settings, str(tmp_path / "m0.py"))  # the oldest was forgotten


def test_confirm_runs_only_on_trust(qtbot, tmp_path, monkeypatch):
    settings = _settings(tmp_path)
    model = tmp_path / "<b>m<i>.py"
    model.write_text("x = 1\n")
    shown = []

    def answer(button_text):
        def exec_(box):
            shown.append((box.text(), box.informativeText()))
            for button in box.buttons():
                if button.text() == button_text or (
                    button_text is None and box.standardButton(button) == QMessageBox.StandardButton.Cancel
                ):
                    box.setProperty("clicked", True)
                    button.click()
                    return 0
            raise AssertionError("button not found")

        return exec_

    monkeypatch.setattr(QMessageBox, "exec", answer(None))
    assert not trust.confirm_python_file(None, settings, str(model))
    assert trust.needs_notice(settings, str(model))  # cancelled: not remembered
    assert "&lt;b&gt;m&lt;i&gt;.py" in shown[0][0]  # the file's name is shown as text, not markup
    monkeypatch.setattr(QMessageBox, "exec", answer("Trust and use"))
    assert trust.confirm_python_file(None, settings, str(model))
    assert not trust.needs_notice(settings, str(model))
    assert trust.confirm_python_file(None, settings, str(model)) and len(shown) == 2  # not asked again
