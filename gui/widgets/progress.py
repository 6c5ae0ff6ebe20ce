"""The run's progress bar: which job, which phase, which iteration (core.run.progress says
how far and in which words). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtWidgets import QProgressBar

from core.run.progress import describe

STEPS = 1000


class RunProgressBar(QProgressBar):
    """GUI thread only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRange(0, STEPS)
        self.setValue(0)
        self.setTextVisible(True)
        self.setFormat("idle")
        self.setMinimumWidth(360)
        self.setToolTip(
            "Progress of the run: job, phase (load, eager, compile, compiled, benchmark or sweep) and "
            "iteration or shape"
        )

    def show_results(self, results) -> None:
        fraction, text = describe(results)
        self.setValue(int(fraction * STEPS))
        self.setFormat(text or "idle")
