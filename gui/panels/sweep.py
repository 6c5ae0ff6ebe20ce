"""The "Shape sweep" tab: for every config of a sweep run (typically dynamic false / auto /
true), one sentence with the sweep's compile time, recompiles and the recompile limit; the
chart of latency against input shape (`SweepChart`); and a table of every variant with its
recompile, guard-failure reason and medians (`SweepModel`, over `core.vocab.events.VariantResult`).

Figures come from core (`JobResult.summary`, `VariantResult`); `core.analysis.variants` words them.
GUI thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QLabel, QSplitter, QVBoxLayout, QWidget

from core.analysis.variants import OUTCOME_WORDS, medians, sweep_sentence, variant_outcome
from core.vocab.formatting import ms_cell
from gui.charts.sweep import SweepChart
from gui.widgets.safe_text import markup, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import config_text_color, error_color
from gui.widgets.view import ResultsView

if TYPE_CHECKING:
    import pyqtgraph as pg

EMPTY_TEXT = (
    "No shape sweep yet. Choose a model file that defines get_input_variants() (e.g. the "
    'lstm_variable_length.py example), tick "Sweep input shapes", queue dynamic false/auto/true and run.'
)


COLUMNS = (  # header, tooltip
    ("Config", "The config (one per dynamic setting, typically)"),
    ("Variant", "Index of the input in get_input_variants()"),
    ("Input shapes", "dtype[shape] of each input of this variant"),
    (
        "Outcome",
        "compiled (first), recompiled (a guard failed), reused (the compiled code fitted), limit hit → "
        "eager (torch gave up compiling new shapes), ran eagerly (a new shape after the limit)",
    ),
    ("Compiles", "Compile attempts this variant triggered"),
    ("Compile s", "Time of this variant's compile or recompile (first call)"),
    ("Guard failure", "Why the compiled code did not fit this shape: torch's guard-failure reason"),
    ("Eager ms", "Median eager latency for this shape"),
    ("Compiled ms", "Median compiled latency for this shape"),
)

WHOLE_ON_HOVER = (0, 2, 3)  # config, input shapes, outcome: texts of any length, shown whole on hover


class SweepModel(RowTableModel):
    """Rows: (config index, config label, VariantResult) for every variant of every sweep
    job, in arrival order. GUI thread only."""

    HEADERS = COLUMNS

    def __init__(self, parent=None):
        super().__init__(parent)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [(i, r.config.label, v) for i, r in enumerate(results) for v in r.variants]
        self.endResetModel()

    def append(self, config_index: int, label: str, variant) -> None:
        row = len(self._rows)
        self.beginInsertRows(QModelIndex(), row, row)
        self._rows.append((config_index, label, variant))
        self.endInsertRows()

    def variant(self, row: int):
        return self._rows[row][2]

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        config_index, label, v = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            eager, compiled = medians(v)
            return (
                label,
                str(v.index),
                ", ".join(v.input_shapes),
                variant_outcome(v),
                str(v.compiles),
                f"{v.compile_time_s:.3f}" if v.compiles else "–",
                "; ".join(v.recompile_reasons) or "–",
                ms_cell(eager),
                ms_cell(compiled),
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 6 and v.recompile_reasons:
                return tooltip("\n".join(v.recompile_reasons))
            if column in WHOLE_ON_HOVER:  # a cell its column may cut ("…"): its whole text first
                return tooltip(f"{self.data(index)}\n\n{COLUMNS[column][1]}")
            return COLUMNS[column][1]
        if role == Qt.ItemDataRole.ForegroundRole:
            if column == 0:
                return QBrush(config_text_color(config_index))
            if column == 3 and (v.recompile_limit_hit or v.ran_eagerly):
                return QBrush(QColor(error_color()))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (1, 4, 5, 7, 8):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SweepPanel(QWidget, ResultsView):
    """Sentences, chart and table of a shape sweep. GUI thread only."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the chart (a pyqtgraph plot, about half of the ~40 ms this panel takes to
        build) is left to `construction_steps()`, which the caller runs (gui.window.view_slot:
        one per event-loop turn after the window's show); else it is built here."""
        super().__init__(parent)
        self.dynamo_defaults: dict | None = None
        self._results: list = []
        self.header = QLabel(EMPTY_TEXT)
        self.header.setWordWrap(True)
        self.header.setTextFormat(Qt.TextFormat.RichText)
        self.header.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.header.setToolTip(
            "Per config: the sweep's total compile time, its recompiles and, when it was hit, "
            "the recompile limit and what torch did then"
        )
        self.chart: SweepChart | None = None
        self.model = SweepModel(self)
        self.table = make_table(
            self.model,
            "Every variant of every config; hover the guard failure for torch's full reason",
            stretch_last=False,
        )
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(6, QHeaderView.ResizeMode.Stretch)
        # Sized for the longest outcome: ResizeToContents only measures the rows in view, and
        # "recompile limit hit" arrives late in a sweep, below the first screenful.
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Fixed)
        header.resizeSection(3, max(self.table.fontMetrics().horizontalAdvance(w) for w in OUTCOME_WORDS.values()) + 24)
        header.setStretchLastSection(False)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(QWidget())  # where the chart goes (construction_steps)
        self.splitter.addWidget(self.table)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.splitter, 1)
        self.splitter.setVisible(False)  # until a sweep is shown (_update_header)
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The chart's plot in pieces of a few ms (gui.charts.plot_parts), then the chart and its
        place, each a step of its own (gui.window.view_slot.ViewSlot runs them)."""
        return SweepChart.plot_parts().steps(then=self._add_chart)

    def _add_chart(self, plot: pg.PlotItem) -> None:
        self.chart = SweepChart(plot_item=plot)
        self.splitter.replaceWidget(0, self.chart).deleteLater()
        self.splitter.setStretchFactor(0, 1)  # a stretch is the widget's own (its size policy)

    def set_dynamo_defaults(self, defaults: dict | None) -> None:
        """torch._dynamo.config's settings (for the recompile limit's value)."""
        self.dynamo_defaults = defaults
        self._update_header()

    def set_results(self, results) -> None:
        """Show the sweeps of `results` (JobResults); jobs that are not sweeps are left out."""
        self._results = list(results)
        self.model.set_results(self._results)
        self.chart.reset(self._results)
        self._update_header()

    def add_variant(self, job_id: str, variant) -> None:
        """A VariantMeasured was folded into job `job_id` (its result already holds it)."""
        for index, result in enumerate(self._results):
            if result.job_id == job_id:
                self.model.append(index, result.config.label, variant)
                self.chart.update_job(result)
                self._update_header()
                return

    def bind(self, session) -> None:
        super().bind(session)
        session.sig_variant_measured.connect(self.add_variant)

    def show_results(self, results: list) -> None:
        self.set_results(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        """A job's status changed (ended, failed): reword its sentence."""
        if ended:
            self._update_header()

    def set_torch_info(self, catalog) -> None:
        self.set_dynamo_defaults(catalog.dynamo_defaults or None)

    def show_first_limit_hit(self) -> bool:
        """Select and scroll to the first variant that hit the recompile limit (if any)."""
        for row in range(self.model.rowCount()):
            if self.model.variant(row).recompile_limit_hit:
                self.table.selectRow(row)
                self.table.scrollTo(self.model.index(row, 0), QAbstractItemView.ScrollHint.PositionAtCenter)
                return True
        return False

    def sentences(self) -> list[str]:
        return [sweep_sentence(r, self.dynamo_defaults) for r in self._results if r.spec.sweep_shapes]

    def _update_header(self) -> None:
        lines = []
        for index, result in enumerate(self._results):
            if not result.spec.sweep_shapes:
                continue
            color = config_text_color(index).name()
            text = markup(sweep_sentence(result, self.dynamo_defaults))
            lines.append(f"<span style='color:{color}'><b>{markup(result.config.label)}</b></span>: {text}")
        self.header.setText("<br>".join(lines) if lines else EMPTY_TEXT)
        # no sweep: the sentence that says how to make one, not an empty chart's bare axes
        self.splitter.setVisible(bool(lines))
