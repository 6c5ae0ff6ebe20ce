"""The "Throughput" tab: a batch sweep (`--sweep-batch`, "Sweep batch" in the form) as items per
second against batch size, eager (dashed) and compiled (solid) per config, the headline (the
batch size with the best compiled throughput and the speedup there) and a table of every batch
size: latency per batch, items per second, speedup, peak memory, what torch did (a recompile),
and an out-of-memory size.

Figures come from core (`core.analysis.variants.throughput_rows`, `best_batch`). GUI thread only.
"""

from __future__ import annotations

import math

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from core.analysis.variants import best_batch, throughput_rows
from core.vocab.formatting import cell
from gui.charts.plot_parts import PlotParts
from gui.widgets.safe_text import markup, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import config_color
from gui.widgets.view import ResultsView

EMPTY_TEXT = (
    'No batch sweep yet. Type batch sizes into "Sweep batch" (e.g. 1,8,32) and run: each config is '
    "profiled at each size against one compiled model."
)


COLUMNS = (
    ("Config", "The compile config"),
    ("Batch", "Batch size"),
    ("Eager ms", "Median eager latency per batch"),
    ("Compiled ms", "Median compiled latency per batch"),
    ("Eager items/s", "Batch size × 1000 / eager median"),
    ("Compiled items/s", "Batch size × 1000 / compiled median"),
    ("Speedup", "Compiled items per second / eager items per second"),
    ("Peak MB", "Peak memory while this batch size ran (RSS; GPU max allocated on CUDA)"),
    (
        "What torch did",
        "compiled, recompiled (a new batch size failed a guard), reused compiled code, or the "
        "out-of-memory error that ended this size",
    ),
)
KEYS = (
    None,
    "batch_size",
    "eager_median_ms",
    "compiled_median_ms",
    "eager_items_per_s",
    "compiled_items_per_s",
    "speedup",
    "peak_mb",
    None,
)
FORMATS = (None, "d", ".3f", ".3f", ",.1f", ",.1f", ".2f", ",.0f", None)


class ThroughputModel(RowTableModel):
    """Rows: (config label, core.analysis.variants.throughput_rows row). GUI thread only."""

    HEADERS = COLUMNS

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [(r.config.label, row) for r in results for row in throughput_rows(r.variants)]
        self.endResetModel()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.ToolTipRole:
            # the config and what torch did (an out-of-memory error) may be cut ("…"): whole here
            text = self.data(index) if index.column() in (0, len(COLUMNS) - 1) else ""
            return tooltip("\n\n".join(t for t in (text, COLUMNS[index.column()][1]) if t))
        if role != Qt.ItemDataRole.DisplayRole:
            return None
        label, row = self._rows[index.row()]
        col = index.column()
        if col == 0:
            return label
        if col == len(COLUMNS) - 1:
            return row["error"] or row["outcome"]
        return cell(row[KEYS[col]], FORMATS[col], missing="–")


class ThroughputPanel(QWidget, ResultsView):
    """Items per second against batch size per config, the best batch size, and the table."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the plot (~20 ms of the ~40 this panel takes to build) is left to
        `construction_steps()`, which the caller runs (gui.window.view_slot: one per event-loop
        turn after the window's show); else it is built here."""
        super().__init__(parent)
        self.header = QLabel(EMPTY_TEXT)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.plot = self.legend = None
        self.model = ThroughputModel(self)
        self.table = make_table(self.model, "Every batch size of every config")
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(QWidget())  # where the plot goes (construction_steps)
        self.splitter.addWidget(self.table)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.splitter, 1)
        self.splitter.setVisible(False)  # until a batch sweep is shown (_draw)
        self._results: list = []
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The plot in pieces of a few ms (gui.charts.plot_parts), then its settings and place,
        each a step of its own (gui.window.view_slot.ViewSlot runs them)."""
        return PlotParts().steps(then=self._add_plot)

    def _add_plot(self, plot: pg.PlotItem) -> None:
        self.plot = pg.PlotWidget(plotItem=plot)
        self.plot.setBackground("w")
        self.plot.setLogMode(x=True, y=False)
        self.plot.setLabel("bottom", "batch size (log scale)")
        self.plot.setLabel("left", "items per second")
        self.plot.showGrid(x=True, y=True, alpha=0.3)
        self.legend = self.plot.addLegend(offset=(10, 10))
        self.splitter.replaceWidget(0, self.plot).deleteLater()

    def show_results(self, results: list) -> None:
        self._results = [r for r in results if r.spec.sweep_batch]
        self.model.set_results(self._results)
        self._draw()

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        self.show_results(results)

    def sentences(self) -> list[str]:
        """The headline per config: the best compiled throughput and the speedup there."""
        out = []
        for r in self._results:
            best = best_batch(r.variants)
            if best:
                speedup = f", {best['speedup']:.2f}× eager" if best["speedup"] else ""
                out.append(
                    f"{r.config.label}: best compiled throughput at batch size {best['batch_size']}: "
                    f"{best['compiled_items_per_s']:,.1f} items/s{speedup}"
                )
        return out

    def _draw(self) -> None:
        self.plot.clear()
        self.legend.clear()
        for i, r in enumerate(self._results):
            rows = [row for row in throughput_rows(r.variants) if not row["error"]]
            color = config_color(i)
            for side, style in (("compiled", Qt.PenStyle.SolidLine), ("eager", Qt.PenStyle.DashLine)):
                points = [(row["batch_size"], row[f"{side}_items_per_s"]) for row in rows if row[f"{side}_items_per_s"]]
                if points:
                    xs, ys = zip(*points)
                    self.plot.plot(
                        list(xs),
                        list(ys),
                        pen=pg.mkPen(color, width=2, style=style),
                        symbol="o",
                        symbolBrush=color,
                        symbolSize=7,
                        name=f"{r.config.label} {side}",
                    )
        sizes = sorted({row["batch_size"] for r in self._results for row in throughput_rows(r.variants)})
        # in log mode the axis is in log10 units: one labelled tick per batch size measured
        self.plot.getAxis("bottom").setTicks([[(math.log10(b), str(b)) for b in sizes]] if sizes else None)
        lines = self.sentences()
        self.header.setText("<br>".join(markup(s) for s in lines) if lines else EMPTY_TEXT)
        # no batch sweep: the sentence that says how to make one, not an empty chart's bare axes
        self.splitter.setVisible(bool(self._results))
