"""The sweep chart's key sits under the plot, not on it, in colours that read as text (issue 19
item 9: the legend covered half the plot and its yellow labels were hard to read)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from gui.widgets.theme import TEXT_CONTRAST, contrast
from tests.gui.helpers import fake_sweep_result


def test_the_key_is_outside_the_plot_and_readable(qtbot):
    from gui.charts.sweep import SweepChart

    chart = SweepChart()
    qtbot.addWidget(chart)
    results = [fake_sweep_result(j, "false") for j in "abcdefg"]  # the 7th config takes the palette's yellow
    chart.reset(results)
    assert chart.plot.legend is None  # nothing drawn over the curves
    key = chart.key.text()
    assert key.count("eager, ━ compiled") == 7
    base = QApplication.palette().color(QPalette.ColorRole.Base)
    colours = [part.split(";")[0] for part in key.split("color:")[1:]]
    assert len(colours) == 7 and all(contrast(QColor(c), base) >= TEXT_CONTRAST for c in colours)
    line = chart._jobs["g"].limit_line  # yellow
    assert line is not None and contrast(line.label.color, base) >= TEXT_CONTRAST
