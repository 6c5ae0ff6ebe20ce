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
from PySide6.QtWidgets import QLabel, QTabWidget, QVBoxLayout, QWidget

from core.analysis.compile_stages import nested_figures, stages_summary
from gui.charts.compile_stages import CompileStagesChart
from gui.widgets.safe_text import tooltip
from gui.widgets.table_model import ElideMiddleDelegate, ElideStartDelegate, RowTableModel, cap_column, make_table
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
COMPILE_TAB = "Where the compile time went"


def recompiles_tab(n: int) -> str:
    """The recompiles' tab title: their count."""
    return f"Recompiles ({n})" if n else "Recompiles (none)"


def recompiles_heading(n: int) -> str:
    """The line above the recompile table."""
    if not n:
        return "No recompilation in the results on screen."
    return f"{n} recompilation{'s' if n != 1 else ''}, each with the guard failures that triggered it"


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
                return tooltip(f"{label}\n{r.compile.coverage or column[2]}")
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
    """The compile breakdown (chart and table) and the recompile table, a tab each. GUI thread only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.breakdown_model = CompileBreakdownModel(self)
        self.recompile_model = RecompileModel(self)
        self.breakdown = make_table(self.breakdown_model, "Each config's compile, per config", stretch_last=False)
        self.recompiles = make_table(self.recompile_model, "Recompilations and the guard failures behind them")
        self.recompile_title = QLabel(recompiles_heading(0))  # before any results
        self.stages = CompileStagesChart()
        self.stages.setToolTip(
            "Each config's first compiled call split into stages that add up (tracing, AOTAutograd, inductor "
            "lowering, code generation, the C++/Triton kernel compile, autotuning); hover a segment for its "
            "seconds and torch's own nested, cumulative figures"
        )
        # Two tabs, each the panel's whole width and height: side by side, the recompiles got 170
        # of 960 px at a 1400 px window and every column after "Config" (the guard failures, what
        # a user reads them for) was behind a scroll bar; stacked, neither part had room for its
        # rows at a 900 px window. The tab's title counts the recompiles. Config labels and paths
        # are capped (cap_column), labels elided in the middle, paths at the start; the whole text on hover.
        self.tabs = QTabWidget()
        self.tabs.setDocumentMode(True)
        breakdown_box = QWidget()
        box_layout = QVBoxLayout(breakdown_box)
        box_layout.setContentsMargins(0, 2, 0, 0)
        box_layout.addWidget(QLabel("Each config's compile split into stages (each stage's own time)"))
        box_layout.addWidget(self.stages)
        box_layout.addWidget(self.breakdown, 1)
        recompile_box = QWidget()
        box_layout = QVBoxLayout(recompile_box)
        box_layout.setContentsMargins(0, 2, 0, 0)
        box_layout.addWidget(self.recompile_title)
        box_layout.addWidget(self.recompiles, 1)
        self.tabs.addTab(breakdown_box, COMPILE_TAB)
        self.tabs.addTab(recompile_box, recompiles_tab(0))
        # config labels in their middle: "…alar_outputs=True" hid eager and aot_eager alike
        self.breakdown.setItemDelegateForColumn(0, ElideMiddleDelegate(self.breakdown))
        self.recompiles.setItemDelegateForColumn(0, ElideMiddleDelegate(self.recompiles))
        self.recompiles.setItemDelegateForColumn(2, ElideStartDelegate(self.recompiles))
        self._capped_for: tuple | None = None
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)

    def set_results(self, results) -> None:
        self.stages.set_results(results)
        self.breakdown_model.set_results(results)
        self.recompile_model.set_results(results)
        n = self.recompile_model.rowCount()
        self.tabs.setTabText(1, recompiles_tab(n))
        self.recompile_title.setText(recompiles_heading(n))
        shape = (tuple(r.config.label for r in results), self.breakdown_model.rowCount(), n)
        if shape != self._capped_for:  # new rows: a width the user dragged stays while a run's figures change
            self._capped_for = shape
            cap_column(self.breakdown, 0, CONFIG_COLUMN_PX)
            cap_column(self.recompiles, 0, CONFIG_COLUMN_PX)
            cap_column(self.recompiles, 2, LOCATION_COLUMN_PX)
