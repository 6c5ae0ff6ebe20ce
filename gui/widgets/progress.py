"""The run's progress bar: which job, which phase, which iteration (core.run.progress says
how far and in which words). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar

from core.run.progress import describe
from gui.widgets.safe_text import tooltip
from gui.widgets.turns import piece_timer

STEPS = 1000
# What arrives with every batch of timed calls shows at most this often: QProgressBar.setValue
# repaints the bar at once (a synchronous paint, not a queued update), and a run's samples
# arrive many times a second.
COALESCE_MS = 100


class RunProgressBar(QProgressBar):
    """GUI thread only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRange(0, STEPS)
        self.setValue(0)
        self.setTextVisible(True)
        self.setMinimumWidth(360)
        self._text = "idle"  # the whole text; the bar shows it on one line, cut at the end to fit
        self._results = None
        self._timer = piece_timer(self, COALESCE_MS, self._show_pending)  # a turn of its own (gui.widgets.turns)
        self._show_text()

    def show_results(self, results, soon: bool = False) -> None:
        """Show how far `results` are, now, or with `soon` within COALESCE_MS (the latest
        results then: many calls in that time make one paint)."""
        if soon:
            self._results = results
            if not self._timer.isActive():
                self._timer.start()
            return
        self._timer.stop()
        self._results = None
        fraction, text = describe(results)
        # setValue repaints the bar at once, and flushes it to the screen on its own, whenever
        # its text or a pixel of it changes; with updates off it schedules nothing, and the
        # update() below paints it with the rest of the window in the next paint (~1-4 ms of
        # the GUI thread each time during a run)
        self.setUpdatesEnabled(False)
        try:
            self.setValue(int(fraction * STEPS))
            self._text = text or "idle"
            self._show_text()
        finally:
            self.setUpdatesEnabled(True)
        self.update()

    def _show_pending(self) -> None:
        if self._results is not None:
            self.show_results(self._results)

    def full_text(self) -> str:
        """The progress text in whole (the bar may show it cut)."""
        return self._text

    def _show_text(self) -> None:
        """One line (a long text wrapped onto two and was cut): elided to the bar's width, whole
        in the tooltip. A zero-width space follows each '%': QProgressBar's format would read a
        config label's %p, %v or %m as its own."""
        room = max(40, self.width() - 16)
        shown = self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, room)
        self.setFormat(shown.replace("%", "%\u200b"))
        self.setToolTip(
            tooltip(
                f"{self._text}\n\nProgress of the run: job, phase (load, eager, compile, compiled, benchmark or "
                "sweep) and iteration or shape"
            )
        )

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._show_text()
