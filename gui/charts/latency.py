"""Live per-iteration latency of every config: eager faded, compiled in full, in the config's
colour; warm-up calls at negative iterations; the compile (first compiled call) marked by a
vertical line with its time instead of a point, so it never squashes the chart.

Data goes into growing numpy buffers as it arrives; the curves are redrawn by a single-shot
timer at most ~15 times a second. Samples are throttled in drawing only, never dropped.
The latency axis turns logarithmic by itself when the slowest call is over 10× the median
(a tiny model's few slow calls would otherwise flatten the rest), unless the user chose.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QVBoxLayout, QWidget

from core.vocab.records import SIDES
from core.vocab.samples import SampleStore
from gui.charts.axes import LogAxis
from gui.charts.buffers import GrowingSeries, nice_bound, round_out, suggests_log
from gui.charts.compile_markers import (
    CROWDED_CONFIGS,
    CompileMarkers,
    compile_text,
    legend_names,
    legend_rows,
    marker_label_positions,
    more_compiles_text,
    more_configs_text,
    text_backdrop,
)
from gui.charts.live_range import LiveRange
from gui.charts.plot_parts import PlotParts
from gui.widgets.fitting_label import FittingLabel
from gui.widgets.safe_text import legend_text
from gui.widgets.theme import config_color, over_chart_background
from gui.widgets.turns import piece_timer
from gui.widgets.view import ResultsView

REDRAW_INTERVAL_MS = 66  # ~15 Hz
PEAK_BINS_PER_PIXEL = 1.0  # pyqtgraph's autoDownsampleFactor for the peak downsampling
# the compile markers' words, also read from here (tests)
__all__ = ["LatencyChart", "CROWDED_CONFIGS", "marker_label_positions", "more_compiles_text", "more_configs_text"]


class _Series:
    def __init__(self, curve: pg.PlotDataItem):
        self.data = GrowingSeries()
        self.curve = curve
        self.dirty = False


class LatencyChart(QWidget, ResultsView):
    """The latency chart. GUI thread only."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the plot is left to `construction_steps()`, which the caller runs
        (gui.window.view_slot: one per event-loop turn after the window's show); else it is built
        here."""
        super().__init__(parent)
        self.plot_widget = self.plot = self.legend = None
        self._warmup_region = self._range = None
        self._plot_place = QWidget()  # where the plot goes (construction_steps)
        self._live = False

        self.log_box = QCheckBox("Log scale")
        self.log_box.setToolTip("Logarithmic latency axis: shows slow outliers without flattening the rest.")
        self.log_box.toggled.connect(self._on_log_toggled)
        self.log_box.clicked.connect(self._on_log_clicked)
        self._log_chosen = False  # the user ticked or unticked it: stop choosing for them
        self.warmup_box = QCheckBox("Show warm-up")
        self.warmup_box.setChecked(True)
        self.warmup_box.setToolTip("Show the warm-up calls (before iteration 0); they are not in the statistics.")
        self.warmup_box.toggled.connect(self._on_warmup_toggled)
        # One line, whatever the width: in a narrow window it wrapped into a five-line column
        # and the chart lost that height; it drops its parenthetical instead (in the tooltip).
        self.title = FittingLabel(
            [
                "<b>Latency per iteration</b> (faded: eager, full colour: compiled)",
                "<b>Latency per iteration</b>",
                "<b>Latency</b>",
            ]
        )
        self.title.setToolTip("Latency per iteration: faded lines eager, full colour compiled, one colour a config.")

        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)  # all the room the boxes leave
        bar.addWidget(self.warmup_box)
        bar.addWidget(self.log_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self._plot_place, 1)
        self._layout = layout

        self._series: dict[tuple[str, str], _Series] = {}
        self._specs: dict[str, object] = {}
        self._offsets: dict[tuple, int] = {}  # (job, side, process) → where its calls start on the x axis
        self._timed: dict[tuple, int] = {}  # (job, side) → timed calls drawn so far
        self._compiles: CompileMarkers | None = None  # the compile markers (gui.charts.compile_markers)
        # The legend (_fit_legend): one entry a config, and a curve-less item for the line that
        # counts the configs it has no room for.
        self._legend_key: tuple = ((), 0)  # (the names shown, how many more): what the legend holds
        self._more_configs = pg.PlotDataItem([], [], pen=None)
        self._redraw = piece_timer(self, REDRAW_INTERVAL_MS, self._on_redraw)  # a turn of its own (gui.widgets.turns)
        self.redraw_count = 0
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The latency plot made in steps (gui.charts.plot_parts), then set up and placed."""
        return PlotParts(axes={"left": LogAxis}).steps(then=self._add_plot)

    def _add_plot(self, plot: pg.PlotItem) -> None:
        self.plot_widget, self.plot = pg.PlotWidget(plotItem=plot), plot
        self.plot.setLabel("left", "latency", units="ms")
        self.plot.setLabel("bottom", "iteration (negative: warm-up)")
        # No grid: with 16 curves of 10,000 points, grid lines cost ~40% of each frame here.
        self.plot.setClipToView(True)
        self.plot.setDownsampling(auto=True, mode="peak")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        # iterations read as counts; and no axis label re-laid out (setHtml) at every range change
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        # On a backdrop when crowded (_backdrop): over eleven curves the text was unreadable.
        self.legend = self.plot.addLegend(offset=(-10, 10), colCount=1)
        self.plot_widget.setToolTip(
            "Latency of every timed call as it arrives. Faded: eager; full colour: compiled. "
            "The dashed vertical line marks the compile (first compiled call) and its time."
        )
        self._warmup_region = pg.LinearRegionItem(
            movable=False, brush=over_chart_background(QColor(128, 128, 128, 30)), pen=pg.mkPen(None)
        )
        self._warmup_region.setZValue(-10)
        self.plot.addItem(self._warmup_region, ignoreBounds=True)
        self._warmup_region.hide()
        # While calls stream in, the chart sets the view itself (gui.charts.live_range), to the
        # data's extent held in round steps (`_hold_extent`): at every redraw the view range had
        # grown and pyqtgraph rebuilt both axes' ticks, the largest part of a paint during a run
        # (py-spy, issue 22). Not for a whole set of results (a report): pyqtgraph's auto-range
        # fits it exactly. At a run's end the held view stays.
        self._range = LiveRange(self.plot)
        self.plot.getViewBox().sigResized.connect(self._fit_legend)
        self._compiles = CompileMarkers(self.plot, self.legend)  # placed after the legend fits
        self._layout.replaceWidget(self._plot_place, self.plot_widget)
        self._plot_place.deleteLater()

    # ---------------------------------------------------------------- data in
    def bind(self, session) -> None:
        super().bind(session)
        session.sig_samples_added.connect(self.add_samples)

    def show_results(self, results: list) -> None:
        self.reset(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        result = next((r for r in results if r.job_id == job_id), None)
        if result is not None and result.compile is not None:
            self.mark_compile(job_id, result.compile)
        if ended and results and all(r.ended for r in results):
            # the run is over: the view stays (within a round step of the calls, and fitting it
            # anew rebuilt both axes at the run's end); a toggle or the next results fit it
            self._live = False

    def reset(self, results) -> None:
        """Forget every series and draw `results` (JobResults) from scratch."""
        self._redraw.stop()
        for series in self._series.values():
            self.plot.removeItem(series.curve)
        self._compiles.clear()
        self.legend.clear()
        self._legend_key = ((), 0)
        self._series.clear()
        self._specs.clear()
        self._offsets.clear()
        self._timed.clear()
        self._live = False
        self._range.forget((-1, 10))  # nothing of the last run's view (a zoom included) stays
        self._warmup_region.hide()
        if not self._log_chosen:
            self.log_box.setChecked(False)
        for index, result in enumerate(results):
            self.add_job(result.spec, index)
            if result.samples:
                self.add_samples(result.job_id, result.samples, live=False)
            if result.compile is not None:
                self.mark_compile(result.job_id, result.compile)
        self._on_redraw()
        self._fit_view()

    def _fit_view(self) -> None:
        """Fit the view to the curves; with none, a small default range. Without curves
        pyqtgraph keeps the last range, which in log mode reads as powers of ten: a 2,500 ms
        linear range became 10^2500 ms (the old axis then overflowed)."""
        if not any(series.data.n for series in self._series.values()):
            self.plot.setRange(xRange=(-1, 10), yRange=(0, 1), padding=0)
        self.plot.enableAutoRange()

    def add_job(self, spec, index: int) -> None:
        """Create the two curves of a job (eager, compiled) in the job's colour."""
        self._specs[spec.job_id] = spec
        self._compiles.order.append(spec.job_id)
        color = config_color(index)
        eager_color = QColor(color)
        eager_color.setAlpha(110)
        # Eager: the config's colour, faded; compiled: full colour. Both solid and 1 px wide on
        # purpose: dashed or wider pens leave pyqtgraph's drawLines path for Qt's stroker,
        # measured here at 5-8x the paint time with 16 curves of 10,000 points.
        for phase, pen in (("eager", pg.mkPen(eager_color, width=1)), ("compiled", pg.mkPen(color, width=1))):
            # One legend entry per config (its compiled curve): the title says which line is which side.
            curve = self.plot.plot([], [], pen=pen, skipFiniteCheck=True)
            curve.setClipToView(True)
            # Peak mode keeps each bin's min and max, so one bin a pixel draws the same envelope
            # as every point; pyqtgraph's default (5 points a pixel before it downsamples at
            # all) drew all 10,000 points of each curve in a 1,100-pixel plot: ~40% of a frame.
            curve.opts["autoDownsampleFactor"] = PEAK_BINS_PER_PIXEL
            curve.setDownsampling(auto=True, method="peak")
            self._series[(spec.job_id, phase)] = _Series(curve)
        self._fit_legend()
        warm = max(spec.warmup, 1)
        self._warmup_region.setRegion((-warm - 1, -0.5))
        self._warmup_region.setVisible(self.warmup_box.isChecked() and spec.warmup > 0)

    def add_samples(self, job_id: str, samples, live: bool = True) -> None:
        """Append LatencySamples of a job (any order of phases); redraw soon. `live`: calls of
        a run as they come (the view's range then moves in round steps)."""
        spec = self._specs.get(job_id)
        if spec is None:
            return
        self._live = self._live or live
        if not isinstance(samples, SampleStore):
            samples = SampleStore(samples)
        by_phase = {}
        for side in SIDES:  # warm-up calls sit before iteration 0, as the job made them
            warm_it, warm_ms, warm_p = samples.select_processes(side, warmup=True)
            it, ms, procs = samples.select_processes(side, warmup=False)
            first = warm_p == 0  # the further processes' warm-ups would sit on the first's
            # a further process's calls continue after the calls of the processes before it, also
            # when they all come at once (a report: every process drawn from 0 had joined one
            # process's last call to the next one's first with a line across the chart)
            x = it.astype(float)
            timed = self._timed.get((job_id, side), 0)
            for p in np.unique(procs):
                key, mine = (job_id, side, int(p)), procs == p
                if key not in self._offsets:
                    self._offsets[key] = timed
                x[mine] += self._offsets[key]
                timed += int(mine.sum())
            self._timed[(job_id, side)] = timed
            by_phase[side] = (
                np.concatenate([warm_it[first].astype(float) - spec.warmup_calls(side), x]),
                np.concatenate([warm_ms[first], ms]),
            )
        for phase, (xs, ys) in by_phase.items():
            if not len(xs):
                continue
            series = self._series.get((job_id, phase))
            if series is not None:
                series.data.extend(xs, ys)
                series.dirty = True
        if not self._redraw.isActive():
            self._redraw.start()

    @property
    def _markers(self) -> dict[str, pg.InfiniteLine]:
        """Job → its compile marker (gui.charts.compile_markers)."""
        return self._compiles.lines

    @property
    def _more(self) -> pg.InfiniteLine | None:
        """The line that counts the compile labels with no room."""
        return self._compiles.more

    def mark_compile(self, job_id: str, compile_result) -> None:
        """Mark a job's compile (its first compiled call) with its wall time and cache state."""
        spec = self._specs.get(job_id)
        if spec is None or compile_result is None:
            return
        index = list(self._specs).index(job_id)
        x = -spec.warmup_calls("compiled") - 1 + 0.15 * index
        self._compiles.mark(job_id, index, x, compile_text(spec.config.label, compile_result))
        self._compiles.lines[job_id].setVisible(self.warmup_box.isChecked())

    def _fit_legend(self, *args) -> None:
        """The legend: each config's compiled curve, as many as fit one above the other in the
        view's height; past that, the last line counts the rest (more columns covered the
        curves of a short chart, eleven entries in one ran below it)."""
        labels = [spec.config.label for spec in self._specs.values()]
        names = legend_names(labels, self.plot.getViewBox().width())  # shortened to the view's width
        entries = [
            (self._series[(job_id, "compiled")].curve, legend_text(name)) for job_id, name in zip(self._specs, names)
        ]
        self.legend.setToolTip("\n".join(labels) if names != labels else "")  # the whole labels
        rows = legend_rows(self.plot.getViewBox().height())
        shown = entries if len(entries) <= rows else entries[: rows - 1]
        hidden = len(entries) - len(shown)
        key = (tuple(name for _, name in shown), hidden)
        if key == self._legend_key:
            return
        before = self._legend_key
        self._legend_key = key
        if not before[1] and not hidden and key[0][: len(before[0])] == before[0]:
            # one more config, room for it: add its entry (rebuilding all of them at each job
            # of an opened report took a third of its first draw, 8 configs)
            for curve, name in shown[len(before[0]) :]:
                self.legend.addItem(curve, name)
        else:
            self.legend.clear()
            for curve, name in shown:
                self.legend.addItem(curve, name)
        if hidden:
            self.legend.addItem(self._more_configs, more_configs_text(hidden))
        self.legend.setBrush(self._backdrop())
        # the compile labels always have one: stacked down the view's left, clear of the legend,
        # they sit among the curves (two configs' 2,000 calls each hid the second's label)
        self._compiles.set_fill(pg.mkBrush(text_backdrop()))  # and placed clear of the legend as it is now

    def _backdrop(self) -> QBrush:
        """What the legend is drawn on: nothing while a few configs leave the curves readable
        through it (it sits in the view's top corner); with more (CROWDED_CONFIGS), the charts'
        background, mostly opaque."""
        return pg.mkBrush(text_backdrop() if len(self._specs) > CROWDED_CONFIGS else None)

    # ---------------------------------------------------------------- inspection (tests)
    def point_count(self, job_id: str, phase: str) -> int:
        series = self._series.get((job_id, phase))
        return series.data.n if series else 0

    def drawn_count(self, job_id: str, phase: str) -> int:
        """Points handed to the curve at the last redraw (before any view clipping)."""
        series = self._series.get((job_id, phase))
        if series is None or series.curve.xData is None:
            return 0
        return len(series.curve.xData)

    # ---------------------------------------------------------------- slots
    def _on_redraw(self) -> None:
        self.redraw_count += 1
        show_warmup = self.warmup_box.isChecked()
        for series in self._series.values():
            if not series.dirty:
                continue
            series.dirty = False
            x, y = series.data.x, series.data.y
            if not show_warmup:
                keep = x >= 0
                x, y = x[keep], y[keep]
            series.curve.setData(x, y)
        self._hold_extent()
        if not self._log_chosen and not self.log_box.isChecked():
            timed = [s.data.y[s.data.x >= 0] for s in self._series.values() if s.data.n]
            if timed and suggests_log(np.concatenate(timed)):
                self.log_box.setChecked(True)

    def _hold_extent(self) -> None:
        """While live: the drawn data's extent, its last iteration the run's last (or one up to
        a round number: `_last_iteration`; they grow at every redraw) and its latency ends out
        to a round step of their span (round_out: a new slowest or fastest call moved them by a
        hair, and the axes' ticks were rebuilt; the curves still fill ~90% of the height)."""
        drawn = [s.curve for s in self._series.values() if s.curve.xData is not None and len(s.curve.xData)]
        if not self._live or not drawn:
            return
        x_high = max(float(np.max(c.xData)) for c in drawn)
        # the compile markers too (left of the warm-up calls): outside the view, a line was
        # not drawn and its label had nowhere to be
        shown = [m.value() for m in self._markers.values() if m.isVisible()]
        x_low = min([float(np.min(c.xData)) for c in drawn] + shown)
        y_low = min(float(np.min(c.yData)) for c in drawn)
        y_high = max(float(np.max(c.yData)) for c in drawn)
        log = self.log_box.isChecked()
        self._range.show((x_low, self._last_iteration(x_high)), round_out(y_low, y_high, log=log), log_y=log)

    def _last_iteration(self, drawn: float) -> float:
        """Where a live chart's iteration axis ends: at the run's last call where every job's
        calls are planned (a fixed number a side in each of its processes), so that axis stays
        put for the whole run and shows how far it is; else (--iters auto) the last call drawn
        rounded up to a round number."""
        planned = [spec.planned_calls() for spec in self._specs.values()]
        if not planned or None in planned:
            return nice_bound(drawn, up=True)
        last = max(calls * spec.timed_processes() - 1 for calls, spec in zip(planned, self._specs.values()))
        return float(max(last, drawn))

    def set_log(self, on: bool) -> None:
        """Log axis by choice (the View menu): no automatic switching afterwards."""
        self._log_chosen = True
        self.log_box.setChecked(on)

    def _on_log_clicked(self, checked: bool) -> None:
        self._log_chosen = True

    def _on_log_toggled(self, on: bool) -> None:
        self.plot.setLogMode(y=on)
        self._fit_view()
        self._hold_extent()  # while live: its latency ends round out in steps of the axis now shown

    def _on_warmup_toggled(self, on: bool) -> None:
        self._warmup_region.setVisible(on and bool(self._specs))
        self._compiles.set_visible(on)
        for series in self._series.values():
            series.dirty = True
        self._on_redraw()
        self.plot.enableAutoRange()
