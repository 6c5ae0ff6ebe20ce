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


def test_updates_with_every_batch_of_samples_make_one_paint_and_the_last_word_is_now(qtbot, monkeypatch):
    """QProgressBar.setValue paints the bar at once; a run's samples arrive many times a second,
    so `soon=True` (the window's per-batch update) shows the latest results within COALESCE_MS,
    once, and a plain call (a phase change, the run's end) shows at once and drops what was due."""
    from gui.widgets import progress

    seen = []

    def describe(results):
        seen.append(list(results))
        return results[-1] / 10, f"step {results[-1]}"

    monkeypatch.setattr("gui.widgets.progress.describe", describe)
    bar = RunProgressBar()
    qtbot.addWidget(bar)
    for step in range(1, 6):
        bar.show_results([step], soon=True)
    assert seen == [] and bar.full_text() == "idle"
    qtbot.waitUntil(lambda: bar.full_text() == "step 5", timeout=2000)
    assert seen == [[5]]  # five updates, one description and paint: the latest
    bar.show_results([6], soon=True)
    bar.show_results([7])  # the run's end: now, and the pending update is dropped
    assert bar.full_text() == "step 7"
    qtbot.wait(progress.COALESCE_MS * 3)
    assert bar.full_text() == "step 7" and seen == [[5], [7]]


def test_showing_progress_paints_with_the_window_not_at_once(qtbot, monkeypatch):
    """QProgressBar.setValue repaints (and flushes) the bar synchronously; the bar now paints
    in the window's next paint, once, with the new value and text."""
    from PySide6.QtCore import QEvent, QObject

    class Paints(QObject):
        count = 0

        def eventFilter(self, watched, event):
            if event.type() == QEvent.Type.Paint:
                Paints.count += 1
            return False

    monkeypatch.setattr("gui.widgets.progress.describe", lambda results: (0.5, "job 1/1 · benchmark 15/30"))
    bar = RunProgressBar()
    qtbot.addWidget(bar)
    bar.resize(400, 24)
    bar.show()
    qtbot.waitExposed(bar)
    qtbot.wait(20)
    paints = Paints()
    bar.installEventFilter(paints)
    bar.show_results([])
    assert Paints.count == 0  # nothing painted inside the call
    qtbot.waitUntil(lambda: Paints.count >= 1, timeout=2000)
    assert bar.value() == 500 and bar.text().startswith("job 1/1")
