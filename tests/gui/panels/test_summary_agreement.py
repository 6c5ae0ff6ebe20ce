"""The Summary says when its timed medians and the Time breakdown's profiled calls disagree,
and which figure is which (issue 19 item 11)."""

from __future__ import annotations

import dataclasses

from PySide6.QtGui import QTextDocument

from core.vocab import events as ev
from gui.run.session import ProfileSession
from tests.gui.panels.explain_fakes import explained_result


def _summary(qtbot, results):
    from gui.panels.summary import SummaryPanel

    session = ProfileSession()
    session.load(results, {})
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.bind(session)
    panel.show_results(session.results)
    return panel


def test_disagreeing_figures_are_named_and_flagged(qtbot, tmp_path):
    agree = explained_result(str(tmp_path), "agree")  # timed 2.2 / 1.1 ms, profiled 1.92 / 1.42 ms
    busy = explained_result(str(tmp_path / "b"), "busy")
    p = busy.op_profile
    slow = dataclasses.replace(
        p,
        eager=dataclasses.replace(p.eager, ms_per_call=0.1),
        compiled=dataclasses.replace(p.compiled, ms_per_call=0.2),
    )
    assert busy.apply(ev.OpProfileMeasured("busy", profile=slow))
    panel = _summary(qtbot, [agree])
    assert panel.disagreement.isHidden() and panel.disagreement.text() == ""
    panel = _summary(qtbot, [agree, busy])
    doc = QTextDocument()
    doc.setHtml(panel.disagreement.text())
    text = doc.toPlainText()
    assert not panel.disagreement.isHidden() and "\n" not in text  # one line: the busy config's
    assert "The timed medians (2.20 ms eager, 1.10 ms compiled: the benchmark" in text
    assert "profiled calls of the Time breakdown (0.10 ms eager, 0.20 ms compiled" in text
    assert "22.0× the eager profiled call" in text and "1.56× faster" not in text
    assert "the timed calls say compiled is 2.00× faster, the profiled calls that it is 2.00× slower" in text
    assert "The timing is graded" in text
