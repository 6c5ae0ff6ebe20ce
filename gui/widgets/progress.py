"""The run's progress bar: which job, which phase, which iteration (core.run.progress says
how far and in which words). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QProgressBar

from core.run.progress import describe
from gui.widgets.safe_text import tooltip

STEPS = 1000


class RunProgressBar(QProgressBar):
    """GUI thread only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRange(0, STEPS)
        self.setValue(0)
        self.setTextVisible(True)
        self.setMinimumWidth(360)
        self._text = "idle"  # the whole text; the bar shows it on one line, cut at the end to fit
        self._show_text()

    def show_results(self, results) -> None:
        fraction, text = describe(results)
        self.setValue(int(fraction * STEPS))
        self._text = text or "idle"
        self._show_text()

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
