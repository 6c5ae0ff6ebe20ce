"""The run's progress text stays on one line (issue 19 item 9: it wrapped onto two, cut)."""

from __future__ import annotations

from gui.widgets.progress import RunProgressBar


def test_a_long_progress_text_is_cut_to_one_line_and_whole_on_hover(qtbot, monkeypatch):
    long = "job 3/12 · inductor / max-autotune-no-cudagraphs / dynamic=true · benchmark (process 2/3) 140/200 · %p"
    monkeypatch.setattr("gui.widgets.progress.describe", lambda results: (0.5, long))
    bar = RunProgressBar()
    qtbot.addWidget(bar)
    bar.resize(360, 24)
    bar.show()
    bar.show_results([])
    shown = bar.text()
    assert "\n" not in shown and shown.endswith("…") and shown.startswith("job 3/12")
    assert bar.fontMetrics().horizontalAdvance(shown) <= bar.width()
    assert bar.full_text() == long and "max-autotune-no-cudagraphs" in bar.toolTip()
    bar.resize(1400, 24)  # room again: the whole text, a label's %p left as it is
    qtbot.wait(10)
    assert bar.text().replace("\u200b", "") == long
