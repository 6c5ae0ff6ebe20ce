"""Distribution of the timed latencies, eager against compiled, per config: step
histograms on shared bins (eager dashed outline, compiled filled). The range runs from the
1st to the 99th percentile of all calls, so a few slow calls (common with tiny models)
do not squash the rest into one bin; the title says how many calls fell outside.

Warm-up calls are left out, as in every statistic. The histograms are redrawn at most
twice a second; the samples come from the session's JobResults. A baseline report's results
(`set_baseline`, File → Compare with report…) are drawn under them as grey outlines on the
same bins.
"""

from __future__ import annotations

from functools import partial

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from core.analysis.stats import SortedSeries, histograms
from core.vocab.records import SIDES
from gui.charts.buffers import COARSE_STEPS, HeldRange, nice_bound
from gui.charts.live_range import LiveRange
from gui.charts.plot_parts import PlotParts
from gui.widgets.safe_text import legend_text, markup
from gui.widgets.theme import config_color
from gui.widgets.turns import piece_timer
from gui.widgets.view import ResultsView

REDRAW_INTERVAL_MS = 500
BASELINE = "baseline:"  # prefix of a baseline result's job id in the curve keys
BASELINE_GREY = "#8a8a8a"
TITLE = "Latency distribution <span style='font-weight:normal'>(dashed: eager, filled: compiled{})</span>"


class DistributionChart(QWidget, ResultsView):
    """Histograms of eager and compiled latency for every job. GUI thread only."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the plot is left to `construction_steps()`, which the caller runs
        (gui.window.view_slot: one per event-loop turn after the window's show); else it is built
        here."""
        super().__init__(parent)
        self.plot_widget = self.plot = self._range = None
        self._plot_place = QWidget()  # where the plot goes (construction_steps)
        self.title = title = QLabel(TITLE.format(""))
        title.setStyleSheet("font-weight: bold")
        title.setWordWrap(True)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self._plot_place, 1)
        self._layout = layout
        self._results: list = []
        self._baseline: list = []
        self._baseline_name = ""
        # (job id, side) → its curve: a PlotCurveItem, not the PlotDataItem that `plot.plot` makes
        # (downsampling, clipping and symbols it adds are nothing to 60 bins; its setData took
        # ~0.3 ms against ~0.06: 5 ms of a frame of 16 curves)
        self._curves: dict[tuple[str, str], pg.PlotCurveItem] = {}
        # each series kept sorted between redraws (core.analysis.stats.SortedSeries): only the
        # running job's is sorted again; percentiles and counts are read from sorted values
        self._sorted = SortedSeries()
        self._drawn: dict[tuple[str, str], tuple] = {}  # key → the (edges, counts) its curve has
        self._held_bins, self._held_top = HeldRange(), 0.0
        self._live = False
        self._timer = piece_timer(self, REDRAW_INTERVAL_MS, self._on_redraw)  # a turn of its own (gui.widgets.turns)
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The histograms' plot made in steps (gui.charts.plot_parts), then set up and placed."""
        return PlotParts().steps(then=self._add_plot)

    def _add_plot(self, plot: pg.PlotItem) -> None:
        self.plot_widget, self.plot = pg.PlotWidget(plotItem=plot), plot
        self.plot.setLabel("bottom", "latency", units="ms")
        self.plot.setLabel("left", "calls")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        # No grid: with 16 histograms its lines cost ~90% of a paint here (16.7 ms against 1.9 ms
        # without, 8 configs x 10,000 calls: python -m tests.bench charts)
        self.plot_widget.setToolTip(
            "How the timed latencies spread: eager (dashed outline) against compiled "
            "(filled), per config. The range runs from the 1st to the 99th percentile "
            "of all calls so a few outliers do not flatten the rest; calls outside it "
            "are counted in the title, not drawn."
        )
        # While a run's calls come, the chart sets the view itself (gui.charts.live_range): the
        # bins' range (growing only, out to a round step of its span: gui.charts.buffers.HeldRange)
        # and the tallest count (growing only, up to a round number: COARSE_STEPS), so that the
        # view, and with it both axes' ticks, change only when the data passes one, not at every
        # redraw (as the latency chart); once every job has ended, and for a report, pyqtgraph's
        # auto-range fits the data exactly.
        self._range = LiveRange(self.plot)
        self._layout.replaceWidget(self._plot_place, self.plot_widget)
        self._plot_place.deleteLater()

    def bind(self, session) -> None:
        super().bind(session)
        session.sig_samples_added.connect(self._on_samples_added)

    def _on_samples_added(self, job_id: str, samples) -> None:
        self._live = True
        self.schedule_redraw()

    def show_results(self, results: list) -> None:
        self.reset(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if ended:
            self.schedule_redraw()

    def reset(self, results) -> None:
        self._results = list(results)
        self._live = False
        for curve in self._curves.values():  # another run: other jobs, other legend entries
            self.plot.removeItem(curve)
        self._curves.clear()
        self._drawn.clear()
        self._sorted.clear()
        # nothing held of the last run's view: its bins' range and tallest count had stayed, and
        # the next run's histograms were drawn on them (and an empty chart showed its axes)
        self._held_bins.clear()
        self._held_top = 0.0
        self._range.forget()
        self._on_redraw()

    def set_baseline(self, results, name: str = "baseline") -> None:
        """Draw `results` (a baseline report's JobResults) under the current ones as grey
        outlines, eager dashed, compiled solid; an empty list removes them."""
        self._baseline, self._baseline_name = list(results), name if results else ""
        self._on_redraw()

    def schedule_redraw(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _on_redraw(self) -> None:
        """Bins and counts come from core.analysis.stats.histograms; each (job, side) curve is created
        once and then only given new data, as pyqtgraph's examples keep their items."""
        series, labels = {}, {}
        # a result's calls are only ever added to: their count stands for its series, which is
        # read and sorted again only when it changed (core.analysis.stats.SortedSeries)
        for index, result in enumerate(self._results):
            for side in SIDES:
                series[(result.job_id, side)] = (len(result.samples), partial(result.latencies, side))
                labels[(result.job_id, side)] = (index, result.config.label)
        for result in self._baseline:
            for side in SIDES:
                series[(BASELINE + result.job_id, side)] = (len(result.samples), partial(result.latencies, side))
                labels[(BASELINE + result.job_id, side)] = (-1, result.config.label)
        self._sorted.keep_only(series)
        if self._results and all(r.ended for r in self._results):
            self._live = False  # the run is over: fitted to its data, as a report
        # while calls come, the bins span the held view range (growing only, in round steps):
        # the ended jobs' counts stay as they are and only the running job's curves change
        hist = histograms(series, kept=self._sorted, hold=self._held_bins.hold if self._live else None)
        for key in [k for k in self._curves if hist is None or k not in hist.counts]:
            self.plot.removeItem(self._curves.pop(key))
            self._drawn.pop(key, None)
        if hist is None:
            self.title.setText(TITLE.format(""))
            return
        outside = hist.outside
        calls = f"{outside} call{'s' if outside != 1 else ''} outside not shown"
        if self._live:
            # the same words at every redraw while calls come: a new text re-lays out the chart
            # (the word-wrapped title's height for its width, then the plot's: 6-7 ms a redraw
            # in a run of the app, /tmp attribution script of issue 22's seventh session)
            shown = "; 1st–99th percentile, rounded out while calls come"
        else:
            shown = f"; 1st–99th percentile, {calls}" if outside else ""
        baseline = f"; grey: baseline {markup(self._baseline_name)}" if self._baseline else ""
        self.title.setText(TITLE.format(baseline + shown))
        for key, counts in hist.counts.items():
            curve = self._curves.get(key)
            drawn = self._drawn.get(key)
            if curve is None:
                self._curves[key] = self._make_curve(*labels[key], key[1], hist.edges, counts)
            elif drawn is None or not (np.array_equal(drawn[0], hist.edges) and np.array_equal(drawn[1], counts)):
                curve.setData(hist.edges, counts)  # (a curve given new data makes its paths and bounds anew)
            self._drawn[key] = (hist.edges, counts)
        tallest = max((float(np.max(c)) for c in hist.counts.values() if len(c)), default=0.0)
        if self._live and len(hist.edges) and tallest > 0:
            # 1, 1.5, 2, 3, 4 or 6 times a power of ten: a run's tallest bar grows at nearly every
            # redraw, and each new top rebuilt the count axis (3-4 ms a paint here, ~10 ms during
            # a run); 1, 2, 5 rebuilt it less often but left the tallest bar at 40-50% of the height
            self._held_top = max(self._held_top, nice_bound(tallest, up=True, steps=COARSE_STEPS))
            self._range.show((float(hist.edges[0]), float(hist.edges[-1])), (0.0, self._held_top))
        elif not self._live:
            self._held_bins.clear()
            self._held_top = 0.0
            self._range.release()

    def _make_curve(self, index: int, label: str, side: str, edges, counts) -> pg.PlotCurveItem:
        if index < 0:  # the baseline's: grey outlines, under the current run's
            style = Qt.PenStyle.DashLine if side == "eager" else Qt.PenStyle.SolidLine
            curve = self._add_curve(
                edges,
                counts,
                pen=pg.mkPen(BASELINE_GREY, width=1.5, style=style),
                name=f"baseline {side} · {legend_text(label)}",
            )
            curve.setZValue(-10)
            return curve
        color = config_color(index)
        if side == "eager":
            return self._add_curve(
                edges,
                counts,
                pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DashLine),
                name=f"{side} · {legend_text(label)}",
            )
        fill = QColor(color)
        fill.setAlpha(70)
        return self._add_curve(
            edges,
            counts,
            pen=pg.mkPen(color, width=2),
            fillLevel=0,
            brush=fill,
            name=f"{side} · {legend_text(label)}",
        )

    def _add_curve(self, edges, counts, **options) -> pg.PlotCurveItem:
        """A step curve (`stepMode="center"`: the edges one longer than the counts), in the legend."""
        curve = pg.PlotCurveItem(x=edges, y=counts, stepMode="center", **options)
        self.plot.addItem(curve)
        return curve
