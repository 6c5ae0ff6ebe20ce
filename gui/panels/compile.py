"""What the compile cost and what made it compile again: where the compile time went (one bar
per config split into exclusive stages, core.analysis.compile_stages, torch's nested figures
on hover), a table of each config's compile (over `CompileResult`, and whether CUDA graphs were
recorded) and a recompile table (over `Recompile`).

torch's compilation metrics are cumulative (dynamo's time includes the backend's, AOTAutograd's
includes inductor's): read as phases they mislead, so they are shown only on hover, and the
bars show each stage's own time.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from core.analysis.compile_stages import nested_figures, stages_summary
from gui.charts.compile_stages import CompileStagesChart
from gui.widgets.safe_text import tooltip
from gui.widgets.table_model import ElideStartDelegate, RowTableModel, cap_column, make_table
from gui.widgets.theme import config_text_color

BREAKDOWN = (
    ("Config", lambda c: "", "The config"),
    (
        "Compile s",
        lambda c: f"{c.compile_time_s:.2f}",
        "Wall time of the first compiled call; hover for its stages and torch's nested figures (the bars above)",
    ),
    (
        "Fwd / bwd s",
        lambda c: (
            "–" if c.backward_compile_s is None else f"{c.forward_compile_s or 0:.2f} / {c.backward_compile_s:.2f}"
        ),
        "Training steps: the forward graphs' compile and the backward graphs' (AOTAutograd compiles them at the "
        "first backward), from torch's compilation metrics; – for inference",
    ),
    ("Cache", lambda c: c.cache_state, "Inductor FX graph cache: hit, miss, partial, or n/a for other backends"),
    (
        "Graphs",
        lambda c: str(c.graph_count),
        "FX graphs torch compiled over the job (recompiles included), as graphs.csv lists them",
    ),
    ("Ops", lambda c: str(c.op_count), "Operations in those graphs"),
    ("Guards", lambda c: str(c.guard_count), "Guards checked before each compiled call"),
    (
        "Frames\ncomp. / skip.",
        lambda c: f"{c.frames_compiled} / {c.frames_skipped}",
        "Python frames dynamo compiled / gave up on over the job (these run eagerly; a compile that made torch "
        "raise is neither)",
    ),
)
CUDAGRAPH_COLUMN = (
    "CUDA graphs",
    None,
    "CUDA-graph configs: no skip reported, how many times torch skipped CUDA graphs (hover for "
    "torch's reasons), or none on the CPU; – for configs that record none",
)
# The table's columns: the breakdown with the CUDA-graph state (over the whole JobResult, not
# the CompileResult) right after the compile time, where it is seen without scrolling.
COLUMNS = BREAKDOWN[:2] + (CUDAGRAPH_COLUMN,) + BREAKDOWN[2:]
CONFIG_COLUMN_PX = 130  # the widest a config label's column starts (cap_column)
LOCATION_COLUMN_PX = 120  # and a recompiled function's path ("…utils.py:67")
RECOMPILE_COLUMNS = (
    ("Config", "The config"),
    ("Function", "The function compiled again"),
    ("Location", "Where it is defined"),
    ("Reasons", "The guard failures that triggered it"),
)


class CompileBreakdownModel(RowTableModel):
    """Rows: (config index, label, JobResult) for jobs that compiled. GUI thread only."""

    HEADERS = tuple((name, tip) for name, _, tip in COLUMNS)

    def __init__(self, parent=None):
        super().__init__(parent)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [(i, r.config.label, r) for i, r in enumerate(results) if r.compile is not None]
        self.endResetModel()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        i, label, r = self._rows[index.row()]
        column = COLUMNS[index.column()]
        cudagraphs = column is CUDAGRAPH_COLUMN
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return label
            return (r.cudagraph_state()[0] or "–") if cudagraphs else column[1](r.compile)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 0:  # the label may be elided in its cell
                return tooltip(label + (f"\n{r.compile.coverage}" if r.compile.coverage else ""))
            if index.column() == 1:
                stages = stages_summary(r.compile)
                return tooltip((f"Stages: {stages}.\n" if stages else "") + nested_figures(r.compile))
            if cudagraphs and r.cudagraph_state()[1]:
                return tooltip(r.cudagraph_state()[1])
            return column[2]
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 0:
            return QBrush(config_text_color(i))
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class RecompileModel(RowTableModel):
    """Rows: (config index, label, Recompile) for every recompile. GUI thread only."""

    HEADERS = RECOMPILE_COLUMNS

    def __init__(self, parent=None):
        super().__init__(parent)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [(i, r.config.label, rc) for i, r in enumerate(results) for rc in r.recompiles]
        self.endResetModel()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        i, label, rc = self._rows[index.row()]
        values = (label, rc.function, rc.location, "; ".join(rc.reasons))
        if role == Qt.ItemDataRole.DisplayRole:
            return values[index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 3 and rc.reasons:
                return tooltip("\n".join(rc.reasons))
            if index.column() == 2 and rc.location:
                return tooltip(rc.location)
            if index.column() == 0:  # the label may be elided in its cell
                return tooltip(label)
            return RECOMPILE_COLUMNS[index.column()][1]
        if role == Qt.ItemDataRole.ForegroundRole and index.column() == 0:
            return QBrush(config_text_color(i))
        return None


class CompilePanel(QWidget):
    """The compile breakdown (chart and table) above the recompile table. GUI thread only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.breakdown_model = CompileBreakdownModel(self)
        self.recompile_model = RecompileModel(self)
        self.breakdown = make_table(self.breakdown_model, "Each config's compile, per config", stretch_last=False)
        self.recompiles = make_table(self.recompile_model, "Recompilations and the guard failures behind them")
        self.recompile_title = QLabel("<b>Recompiles</b>")
        self.stages = CompileStagesChart()
        self.stages.setToolTip(
            "Each config's first compiled call split into stages that add up (tracing, AOTAutograd, inductor "
            "lowering, code generation, the C++/Triton kernel compile, autotuning); hover a segment for its "
            "seconds and torch's own nested, cumulative figures"
        )
        splitter = QSplitter(Qt.Orientation.Vertical)
        for title, parts in (
            (QLabel("<b>Where the compile time went</b> (each stage's own time)"), (self.stages, self.breakdown)),
            (self.recompile_title, (self.recompiles,)),
        ):
            box = QWidget()
            box_layout = QVBoxLayout(box)
            box_layout.setContentsMargins(0, 0, 0, 0)
            box_layout.addWidget(title)
            for part in parts:
                box_layout.addWidget(part, 1 if part is parts[-1] else 0)
            splitter.addWidget(box)
        # The recompiles below the breakdown, both the panel's whole width: side by side, the
        # recompiles got 170 of 960 px at a 1400 px window, and every column after "Config" (the
        # guard failures, what a user reads them for) was behind a scroll bar. Config labels and
        # paths are capped (cap_column), elided in the middle and at the start; the whole text is
        # in their tooltips.
        splitter.setStretchFactor(0, 1)
        splitter.setStretchFactor(1, 1)
        splitter.setSizes([1000, 1000])  # proportions: scaled to the height the panel gets
        for table in (self.breakdown, self.recompiles):
            table.setTextElideMode(Qt.TextElideMode.ElideMiddle)  # a label's both ends differ
        self.recompiles.setItemDelegateForColumn(2, ElideStartDelegate(self.recompiles))
        self.splitter = splitter
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(splitter)

    def set_results(self, results) -> None:
        self.stages.set_results(results)
        self.breakdown_model.set_results(results)
        self.recompile_model.set_results(results)
        cap_column(self.breakdown, 0, CONFIG_COLUMN_PX)
        cap_column(self.recompiles, 0, CONFIG_COLUMN_PX)
        cap_column(self.recompiles, 2, LOCATION_COLUMN_PX)
        n = self.recompile_model.rowCount()
        self.recompile_title.setText(f"<b>Recompiles</b> ({n})" if n else "<b>Recompiles</b> (none)")
