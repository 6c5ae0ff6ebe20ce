"""Distribution of the timed latencies, eager against compiled, per config: step
histograms on shared bins (eager dashed outline, compiled filled). The range runs from the
1st to the 99th percentile of all calls, so a few slow calls (common with tiny models)
do not squash the rest into one bin; the title says how many calls fell outside.

Warm-up calls are left out, as in every statistic. The histograms are redrawn at most
twice a second; the samples come from the session's JobResults.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from gui.widgets.safe_text import legend_text
from gui.widgets.theme import config_color
from gui.widgets.view import ResultsView

REDRAW_INTERVAL_MS = 500
MAX_BINS = 60
PERCENTILES = (1, 99)
TITLE = "Latency distribution <span style='font-weight:normal'>(dashed: eager, filled: compiled{})</span>"


class DistributionChart(QWidget, ResultsView):
    """Histograms of eager and compiled latency for every job. GUI thread only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget()
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setLabel("bottom", "latency", units="ms")
        self.plot.setLabel("left", "calls")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.2)
        self.plot_widget.setToolTip("How the timed latencies spread: eager (dashed outline) against compiled "
                                    "(filled), per config. The range runs from the 1st to the 99th percentile "
                                    "of all calls so a few outliers do not flatten the rest; calls outside it "
                                    "are counted in the title, not drawn.")
        self.title = title = QLabel(TITLE.format(""))
        title.setStyleSheet("font-weight: bold")
        title.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.plot_widget, 1)
        self._results: list = []
        self._curves: list[pg.PlotDataItem] = []
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(REDRAW_INTERVAL_MS)
        self._timer.timeout.connect(self._on_redraw)

    def bind(self, session) -> None:
        super().bind(session)
        session.sig_samples_added.connect(lambda job_id, samples: self.schedule_redraw())

    def show_results(self, results: list) -> None:
        self.reset(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if ended:
            self.schedule_redraw()

    def reset(self, results) -> None:
        self._results = list(results)
        self._on_redraw()

    def schedule_redraw(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _on_redraw(self) -> None:
        for curve in self._curves:
            self.plot.removeItem(curve)
        self._curves.clear()
        series = []
        for index, result in enumerate(self._results):
            for phase in ("eager", "compiled"):
                values = np.asarray(result.latencies(phase), dtype=float)
                if values.size:
                    series.append((index, result.config.label, phase, values))
        if not series:
            self.title.setText(TITLE.format(""))
            return
        every = np.concatenate([s[3] for s in series])
        low, high = (float(v) for v in np.percentile(every, PERCENTILES))
        if high <= low:
            high = low + max(low * 0.01, 1e-3)
        outside = int(np.count_nonzero((every < low) | (every > high)))
        self.title.setText(TITLE.format(f"; 1st–99th percentile, {outside} call{'s' if outside != 1 else ''} "
                                        "outside not shown" if outside else ""))
        bins = np.linspace(low, high, min(MAX_BINS, max(10, int(np.sqrt(every.size)))) + 1)
        for index, label, phase, values in series:
            counts, edges = np.histogram(values[(values >= low) & (values <= high)], bins=bins)
            color = config_color(index)
            if phase == "eager":
                pen = pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine)
                brush = None
            else:
                pen = pg.mkPen(color, width=2)
                fill = QColor(color)
                fill.setAlpha(70)
                brush = fill
            curve = self.plot.plot(edges, counts, stepMode="center", pen=pen, fillLevel=0 if brush else None,
                                   brush=brush, name=f"{phase} · {legend_text(label)}")
            self._curves.append(curve)
