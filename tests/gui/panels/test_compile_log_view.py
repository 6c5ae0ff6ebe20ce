"""The compile-log dialog over a huge log: its start and its end, with a note naming the file
and its size (issue 18 item 8)."""

from __future__ import annotations

from core.vocab.artifacts import JobArtifacts, write_text
from tests.core.helpers import sparse_log


def test_the_view_shows_both_ends_of_a_huge_log_and_says_so(qtbot, tmp_path):
    from gui.panels.compile_log import CompileLogDialog

    relative = JobArtifacts.for_label("inductor").compile_log
    write_text(str(tmp_path), relative, "")
    path = tmp_path / relative
    sparse_log(path, 2 * 2**30)
    dialog = CompileLogDialog(str(tmp_path), "inductor")
    qtbot.addWidget(dialog)
    view = dialog.view
    text = view.text.toPlainText()
    assert "compiling forward (the first message)" in text and "the last message: compile failed at the end" in text
    assert not view.cut.isHidden()
    assert view.cut.text().startswith(f"Only part of this log is shown: {path} is 2.0 GB: shown are its first 64 MB")
    view.level_box.setCurrentText("error")  # the filter keeps the end's error; the note stays
    assert "compile failed at the end" in view.text.toPlainText() and not view.cut.isHidden()
