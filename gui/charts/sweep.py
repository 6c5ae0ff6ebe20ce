"""Median latency against input shape for every config of a shape sweep: eager dashed
(faded), compiled solid, in the config's colour; markers on the variants that recompiled
(circle), where the recompile limit was hit (star, with a dotted line) and on the new shapes
torch then ran eagerly (cross). x is the variant index, labelled with the varying
dimension (an LSTM's sequence length) or the full shapes.

One persistent set of items per job, updated with `setData` as variants arrive (a few per
second at most: no throttling needed). GUI thread only.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QCheckBox, QHBoxLayout, QLabel, QVBoxLayout, QWidget

from core.analysis.variants import medians, shape_ticks
from core.vocab.records import VariantOutcome
from gui.charts.axes import LogAxis
from gui.charts.buffers import suggests_log
from gui.charts.plot_parts import PlotParts
from gui.widgets.fitting_label import FittingLabel
from gui.widgets.safe_text import legend_text, line_label, markup
from gui.widgets.theme import config_color, config_text_color, error_color, readable

MARKERS = {  # kind -> (symbol, size, what it means)
    "recompiled": ("o", 9, "recompiled"),
    "limit": ("star", 16, "recompile limit hit"),
    "eager": ("x", 11, "ran eagerly (after the limit)"),
}


class _JobItems:
    def __init__(self, plot, color: QColor, label: str):
        faded = QColor(color)
        faded.setAlpha(150)
        self.eager = plot.plot(
            [],
            [],
            pen=pg.mkPen(faded, width=1.5, style=Qt.PenStyle.DashLine),
            symbol="s",
            symbolSize=4,
            symbolBrush=faded,
            symbolPen=None,
            name=f"eager · {legend_text(label)}",
        )
        self.compiled = plot.plot(
            [],
            [],
            pen=pg.mkPen(color, width=2),
            symbol="o",
            symbolSize=4,
            symbolBrush=color,
            symbolPen=None,
            name=f"compiled · {legend_text(label)}",
        )
        # Markers are PlotDataItems without a line, not bare ScatterPlotItems: only items with
        # setLogMode follow the plot's log axis (pyqtgraph draws a bare item's raw y on the
        # log10 scale, so a marker at 40 ms sat far above its curve).
        self.markers: dict[str, pg.PlotDataItem] = {}
        for kind, (symbol, size, _) in MARKERS.items():
            pen = pg.mkPen(error_color() if kind != "recompiled" else color, width=2)
            brush = QColor(color) if kind == "limit" else None
            item = pg.PlotDataItem(
                [],
                [],
                pen=None,
                symbol=symbol,
                symbolSize=size,
                symbolPen=pen,
                symbolBrush=brush if brush is not None else pg.mkBrush(None),
            )
            item.setZValue(5)
            plot.addItem(item)
            self.markers[kind] = item
        self.limit_line: pg.InfiniteLine | None = None
        self.indices: dict[str, list[int]] = {kind: [] for kind in MARKERS}

    def items(self):
        yield from (self.eager, self.compiled, *self.markers.values())
        if self.limit_line is not None:
            yield self.limit_line


class SweepChart(QWidget):
    """The sweep's latency-against-shape chart. GUI thread only."""

    @staticmethod
    def plot_parts() -> PlotParts:
        """The chart's plot, to be made in steps (gui.charts.plot_parts) before the chart."""
        return PlotParts(axes={"left": LogAxis})

    def __init__(self, parent: QWidget | None = None, plot_item: pg.PlotItem | None = None):
        """`plot_item`: the plot made by `plot_parts()`'s steps; else made here."""
        super().__init__(parent)
        self.plot_widget = pg.PlotWidget(plotItem=plot_item or self.plot_parts().make())
        self.plot = self.plot_widget.getPlotItem()
        self.plot.setLabel("left", "median latency", units="ms")
        self.plot.setLabel("bottom", "variant")
        self.plot.getAxis("left").enableAutoSIPrefix(False)
        self.plot.showGrid(x=True, y=True, alpha=0.15)
        # The key is a line of text under the plot, in colours that read as text: pyqtgraph's
        # legend inside the plot covered half of it with three configs.
        self.key = QLabel("")
        self.key.setTextFormat(Qt.TextFormat.RichText)  # our markup; config labels inside are escaped
        self.key.setWordWrap(True)
        self.key.setToolTip("Each config's colour: its eager curve dashed, its compiled curve solid")
        self.plot_widget.setToolTip(
            "Median latency of each input variant, eager (dashed) against compiled "
            "(solid), per config. Circle: recompiled for this shape; star: the recompile "
            "limit was hit; cross: a new shape torch ran eagerly after the limit."
        )
        self.log_box = QCheckBox("Log scale")
        self.log_box.setToolTip("Logarithmic latency axis (on by default when latencies span more than 10×)")
        self.log_box.toggled.connect(self._on_log_toggled)
        self._log_chosen = False
        self.log_box.clicked.connect(self._on_log_clicked)
        # One line, whatever the width (as the latency chart's): its whole text, unwrapped,
        # would keep the chart from narrowing and be cut at the window's edge; it drops its key
        # instead (whole on hover).
        self.title = FittingLabel(
            [
                "<b>Latency against input shape</b> (dashed: eager, solid: compiled; ○ recompiled, "
                "★ recompile limit hit, × ran eagerly)",
                "<b>Latency against input shape</b> (dashed: eager, solid: compiled)",
                "<b>Latency against input shape</b>",
                "<b>Latency</b>",
            ]
        )
        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)  # all the room the box leaves
        bar.addWidget(self.log_box)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(bar)
        layout.addWidget(self.plot_widget, 1)
        layout.addWidget(self.key)
        self._jobs: dict[str, _JobItems] = {}
        self._ticks: list[str] = []

    # ---------------------------------------------------------------- data in
    def reset(self, results) -> None:
        """Draw the sweep jobs of `results` (JobResults) from scratch."""
        for job in self._jobs.values():
            for item in job.items():
                self.plot.removeItem(item)
        self._jobs.clear()
        self._ticks = []
        self.plot.setLabel("bottom", "variant")
        self.plot.getAxis("bottom").setTicks(None)
        if not self._log_chosen:  # the new results choose (update_job), not the last ones
            self.log_box.setChecked(False)
        # no item: pyqtgraph keeps the last range, and a new sweep's empty chart showed the
        # previous one's axes; the new variants are fitted as they come
        self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.plot.enableAutoRange()
        key = []
        for index, result in enumerate(results):
            if result.spec.sweep_shapes:
                self._jobs[result.job_id] = _JobItems(self.plot, config_color(index), result.config.label)
                self.update_job(result)
                color = config_text_color(index).name()
                key.append(
                    f"<span style='color:{color}; white-space:nowrap'><b>{markup(result.config.label)}</b>: "
                    "╌ eager, ━ compiled</span>"
                )
        self.key.setText("&nbsp;&nbsp; ".join(key))

    def update_job(self, result) -> None:
        """Redraw one job from its variants (after a VariantMeasured)."""
        job = self._jobs.get(result.job_id)
        if job is None:
            return
        variants = result.variants
        x = np.array([v.index for v in variants], dtype=float)
        pairs = [medians(v) for v in variants]
        eager = np.array([np.nan if e is None else e for e, _ in pairs], dtype=float)
        compiled = np.array([np.nan if c is None else c for _, c in pairs], dtype=float)
        job.eager.setData(x, eager, connect="finite")
        job.compiled.setData(x, compiled, connect="finite")
        marker_of = {
            VariantOutcome.RECOMPILED: "recompiled",
            VariantOutcome.LIMIT_HIT: "limit",
            VariantOutcome.RAN_EAGERLY: "eager",
        }  # core's outcome of each variant
        picks = {
            kind: [marker_of.get(v.outcome) == kind for v in variants] for kind in ("recompiled", "limit", "eager")
        }
        for kind, keep in picks.items():
            keep = np.array(keep, dtype=bool)
            job.indices[kind] = [int(i) for i in x[keep]]
            job.markers[kind].setData(x[keep], compiled[keep])
        hit = job.indices["limit"]
        if hit and job.limit_line is None:
            color = job.compiled.opts["pen"].color()
            job.limit_line = pg.InfiniteLine(
                pos=hit[0],
                angle=90,
                movable=False,
                pen=pg.mkPen(color, width=1, style=Qt.PenStyle.DotLine),
                label=line_label("recompile limit hit"),
                # as text, the config's colour made readable (the palette's yellow and orange on white were not)
                labelOpts={"position": 0.9, "color": readable(color), "anchors": [(1, 0.5), (1, 0.5)]},
            )
            self.plot.addItem(job.limit_line, ignoreBounds=True)
        self._update_ticks(result)
        if not self._log_chosen:
            values = np.concatenate(
                [np.asarray(j.compiled.yData if j.compiled.yData is not None else []) for j in self._jobs.values()]
                + [eager]
            )
            self.log_box.setChecked(suggests_log(values[np.isfinite(values)]))

    def _update_ticks(self, result) -> None:
        label, ticks = shape_ticks(result.variants)
        if len(ticks) > len(self._ticks):  # every config sweeps the same variants: the longest list wins
            self._ticks = ticks
            step = max(1, int(np.ceil(sum(len(t) for t in ticks) / 90)))  # keep long shapes from overlapping
            self.plot.getAxis("bottom").setTicks([[(i, t) for i, t in enumerate(ticks) if i % step == 0]])
            self.plot.setLabel("bottom", f"variant: {legend_text(label)}")

    # ---------------------------------------------------------------- inspection (tests)
    def marker_indices(self, job_id: str, kind: str) -> list[int]:
        """The variant indices that carry a marker of `kind` (recompiled, limit, eager)."""
        job = self._jobs.get(job_id)
        return list(job.indices[kind]) if job else []

    def marker_points(self, job_id: str, kind: str) -> tuple[np.ndarray, np.ndarray]:
        """(x, y) where the markers of `kind` are drawn, in the plot's coordinates (log10 of
        the latency when the axis is logarithmic)."""
        job = self._jobs.get(job_id)
        x, y = job.markers[kind].getData() if job else (None, None)
        return (np.asarray([] if x is None else x, dtype=float), np.asarray([] if y is None else y, dtype=float))

    def curve_points(self, job_id: str, side: str) -> int:
        job = self._jobs.get(job_id)
        curve = getattr(job, side, None) if job else None
        return 0 if curve is None or curve.xData is None else len(curve.xData)

    # ---------------------------------------------------------------- slots
    def _on_log_clicked(self, checked: bool) -> None:
        self._log_chosen = True  # the user decided: stop choosing for them

    def _on_log_toggled(self, on: bool) -> None:
        self.plot.setLogMode(y=on)
        if not self._jobs:  # no curve: pyqtgraph would read the linear range as powers of ten
            self.plot.setRange(xRange=(0, 1), yRange=(0, 1), padding=0)
        self.plot.enableAutoRange()
