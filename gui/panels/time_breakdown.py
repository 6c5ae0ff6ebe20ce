"""Time breakdown: where one call's time goes, eager against compiled, from the op profile a
job takes after its timed benchmark (core.measure.op_profile, core.analysis.time_breakdown).

For the chosen config: core's one-sentence verdict (`JobResult.time_verdict`), a stacked bar
per side split by core's TIME_CATEGORIES with a table of the same figures and shares
(core.report.explain_tables.time_rows), the operators and kernels each side launched per call (the
fusion effect), the time between compiled graphs with what the graph breaks cost, a sortable,
filterable table of the operators and kernels, the time per source line
(gui.panels.source_lines), and where the Chrome traces are, with their
folder one click away. Nothing is computed here: every figure comes from core.

Report text (config labels, operator names) is shown as plain text. The traces folder opened
is the session's own artifacts folder (the run's, or the folder of the report.json opened),
found by core.report.artifact_views, never a path the report names.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.report.artifact_views import trace_files, traces_folder
from core.report.explain_tables import time_rows
from core.vocab.formatting import count, fmt_ms, ms_fixed
from core.vocab.op_records import TIME_CATEGORIES, TIME_CATEGORY_LABELS
from core.vocab.records import SIDES
from gui.charts.plot_parts import PlotParts
from gui.panels.source_lines import SourceLinesView
from gui.widgets.config_picker import ConfigPicker
from gui.widgets.open_path import OpenedPath
from gui.widgets.safe_text import markup, plain, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.view import ResultsView

# One colour per time category (Okabe–Ito order): compiled work in blues/greens, the compiled
# code's overhead in orange/red, eager work outside graphs in greys and purple.
CATEGORY_COLORS = {
    "kernels": "#009E73",
    "operators_in_graphs": "#56B4E9",
    "runtime_wrappers": "#E69F00",
    "guard_checks": "#D55E00",
    "operators_outside_graphs": "#CC79A7",
    "python": "#999999",
    "other": "#F0E442",
}
NO_PROFILE = "No op profile for this config: the job ended before it, or it was turned off (--op-profile 0)."
TRACES_NOTE = "Perfetto (ui.perfetto.dev) and chrome://tracing open them."


def legend_html() -> str:
    """The chart's legend: a coloured square and core's label per time category."""
    return " &nbsp; ".join(
        f"<span style='color:{CATEGORY_COLORS[c]}'>&#9632;</span>&nbsp;{markup(label)}"
        for c, label in TIME_CATEGORY_LABELS.items()
    )


def _share(v) -> str:
    return "–" if v is None else f"{v:.0%}"


class CategoryModel(RowTableModel):
    """Rows: TIME_CATEGORIES; per side its ms per call and share (core's time_rows). GUI thread."""

    HEADERS = (
        ("Category", "Where the time of one call went (the categories add up to the call)"),
        ("Eager\nms / call", "Eager time in this category per profiled call"),
        ("Eager\nshare", "Share of an eager call"),
        ("Compiled\nms / call", "Compiled time in this category per profiled call"),
        ("Compiled\nshare", "Share of a compiled call"),
    )

    def set_result(self, result) -> None:
        self.beginResetModel()
        figures = {(row["side"], row["category"]): row for row in time_rows([result])} if result else {}
        self._rows = (
            [(c, figures.get(("eager", c)), figures.get(("compiled", c))) for c in TIME_CATEGORIES] if figures else []
        )
        self.endResetModel()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        category, eager, compiled = self._rows[index.row()]
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole):
            sort = role == Qt.ItemDataRole.UserRole
            values = (
                TIME_CATEGORY_LABELS[category],
                eager and eager["ms_per_call"],
                eager and eager["share"],
                compiled and compiled["ms_per_call"],
                compiled and compiled["share"],
            )
            value = values[column]
            if sort or column == 0:
                return value
            return ms_fixed(value) if column in (1, 3) else _share(value)
        if role == Qt.ItemDataRole.DecorationRole and column == 0:
            return QColor(CATEGORY_COLORS[category])
        if role == Qt.ItemDataRole.TextAlignmentRole and column > 0:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.HEADERS[column][1]
        return None


OP_COLUMNS = (
    ("Side", "eager or compiled"),
    ("Name", "The operator (aten::...) or the kernel the compiler generated (cpp_fused_..., triton_...)"),
    ("Category", "operator: a dispatched operator; kernel: a generated kernel"),
    ("Graph", "The compiled graph it ran in (frame/compile id; empty: outside any graph)"),
    ("Calls / call", "How often it ran per profiled call"),
    ("Self ms / call", "Time in it per call, excluding what it called"),
    ("Total ms / call", "Time in it per call, including what it called"),
    ("Device ms / call", "GPU time of the kernels it launched per call (CUDA only)"),
)
SELF_COLUMN = 5


class OpsModel(RowTableModel):
    """Rows: (side, OpStat), the operators and kernels of each side (core's `top_ops`). GUI thread."""

    HEADERS = OP_COLUMNS
    MAX_ROWS = 2000

    def set_result(self, result, side: str = "") -> None:
        self.beginResetModel()
        profile = result.op_profile if result is not None else None
        self._rows = []
        for name in SIDES:
            data = getattr(profile, name, None) if profile else None
            if data is not None and side in ("", name):
                self._rows += [(name, op) for op in data.top_ops(self.MAX_ROWS)]
        self.endResetModel()

    def has_device_time(self) -> bool:
        return any(op.device_ms_per_call is not None for _, op in self._rows)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        side, op = self._rows[index.row()]
        column = index.column()
        values = (
            side,
            op.name,
            op.category,
            op.graph,
            op.calls_per_call,
            op.self_ms_per_call,
            op.total_ms_per_call,
            op.device_ms_per_call,
        )
        if role == Qt.ItemDataRole.UserRole:
            return values[column] if values[column] is not None else -1.0
        if role == Qt.ItemDataRole.DisplayRole:
            value = values[column]
            if column == 4:
                return f"{value:g}"
            return ms_fixed(value) if column >= SELF_COLUMN else (value or ("–" if column == 3 else ""))
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(op.name) if column == 1 else OP_COLUMNS[column][1]
        if role == Qt.ItemDataRole.TextAlignmentRole and column >= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and column == 0 and side == "eager":
            return QBrush(QColor("#808080"))
        return None


class CategoryChart(pg.PlotWidget):
    """Two horizontal bars, eager above compiled, each stacked by time category (ms per call). GUI thread."""

    def __init__(self, parent=None, plot_item: pg.PlotItem | None = None):
        """`plot_item`: the plot, made in steps (gui.charts.plot_parts); else made here."""
        super().__init__(parent, plotItem=plot_item)
        self.plot = self.getPlotItem()
        self.plot.setLabel("bottom", "ms per profiled call")
        self.plot.getAxis("bottom").enableAutoSIPrefix(False)
        self.plot.getAxis("left").setTicks([[(1, "eager"), (0, "compiled")]])
        self.plot.setMouseEnabled(x=False, y=False)
        self.plot.hideButtons()
        self.plot.setMenuEnabled(False)
        self.setMinimumHeight(110)
        self.setToolTip(
            "Where one call's time goes, per side: each colour is a category (see the table beside); "
            "the bars' lengths are the calls' wall time under the profiler"
        )
        self.bars: list[pg.BarGraphItem] = []
        self.labels: list[pg.TextItem] = []

    def set_profile(self, profile) -> None:
        for item in self.bars + self.labels:
            self.plot.removeItem(item)
        self.bars, self.labels = [], []
        sides = [(1, getattr(profile, "eager", None)), (0, getattr(profile, "compiled", None))] if profile else []
        sides = [(y, s) for y, s in sides if s is not None]
        left = {y: 0.0 for y, _ in sides}
        for category in TIME_CATEGORIES:
            ys, x0, widths = [], [], []
            for y, side in sides:
                ms = side.time_by_category()[category]
                ys.append(y)
                x0.append(left[y])
                widths.append(ms)
                left[y] += ms
            if ys:
                bar = pg.BarGraphItem(
                    x0=x0, y=ys, width=widths, height=0.6, brush=CATEGORY_COLORS[category], pen=pg.mkPen(None)
                )
                self.plot.addItem(bar)
                self.bars.append(bar)
        longest = max((s.ms_per_call for _, s in sides), default=0.0)
        for y, side in sides:
            label = pg.TextItem(fmt_ms(side.ms_per_call), anchor=(0, 0.5))
            label.setPos(side.ms_per_call, y)
            self.plot.addItem(label)
            self.labels.append(label)
        self.plot.setYRange(-0.6, 1.6, padding=0)
        self.plot.setXRange(0, longest * 1.18 if longest else 1, padding=0)


class TimeBreakdownPanel(QWidget, ResultsView):
    """GUI thread only."""

    refresh_when_shown = True  # a refresh re-shows the chosen config: ~0.3 s at a run's end

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the tables and the chart are left to `construction_steps()`, which the
        caller runs (gui.window.view_slot: one per event-loop turn after the window's show);
        else they are built here."""
        super().__init__(parent)
        self._session = None
        self.picker = ConfigPicker("The config whose op profile is shown")
        self.picker.sig_config_chosen.connect(self._on_config_chosen)
        self.verdict = QLabel("Run a profile to see where the time goes.")
        self.verdict.setTextFormat(Qt.TextFormat.RichText)  # our markup; core's sentence inside is escaped
        self.verdict.setWordWrap(True)
        self.verdict.setToolTip("Why compiled is faster or slower, from the op profile (computed by the profiler)")
        top = QHBoxLayout()
        top.addWidget(QLabel("Config:"))
        top.addWidget(self.picker)
        top.addWidget(self.verdict, 1)

        self.chart: CategoryChart | None = None
        self._chart_place = QWidget()  # where the chart goes (construction_steps)
        self.counts = plain(QLabel(""))
        self.counts.setWordWrap(True)
        self.counts.setToolTip(
            "Operators and kernels launched per call on each side (fusion: many eager operators "
            "become few generated kernels), and the time between compiled graphs"
        )
        self.legend = QLabel(legend_html())
        self.legend.setTextFormat(Qt.TextFormat.RichText)  # our own labels and colours
        self.legend.setWordWrap(True)
        self.legend.setToolTip("The chart's colours: where the time of a call goes (they add up to the call)")
        upper = QWidget()
        chart_layout = QVBoxLayout(upper)
        chart_layout.setContentsMargins(0, 0, 0, 0)
        chart_layout.addWidget(self._chart_place, 1)
        self._chart_layout = chart_layout
        chart_layout.addWidget(self.legend)
        chart_layout.addWidget(self.counts)
        # the tables' tabs, each made in a step of its own (construction_steps); the tab widget
        # joins the splitter once they are in (empty, it left the tables ~20 px less room)
        self.tables = QTabWidget()
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(upper)

        self.traces = plain(QLabel(""))
        self.traces.setWordWrap(True)
        self.traces.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.open_traces = QPushButton("Open traces folder")
        self.open_traces.setToolTip("Show the Chrome traces of the profiled calls in the file manager; " + TRACES_NOTE)
        self.open_traces.clicked.connect(self.open_traces_folder)
        bottom = QHBoxLayout()
        bottom.addWidget(self.traces, 1)
        bottom.addWidget(self.open_traces)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.splitter, 1)
        layout.addLayout(bottom)
        self.opened = OpenedPath()  # where the traces folder is, opened or not
        layout.addWidget(self.opened)
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The tables' three tabs, then the chart's plot in pieces of a few ms
        (gui.charts.plot_parts) and the chart in its place, each a step of its own
        (gui.window.view_slot.ViewSlot runs them): built in one turn, the panel held the GUI
        thread 25–38 ms at launch."""
        return [
            self._add_ops_table,
            self._add_category_table,
            self._add_source_lines,
            *PlotParts(enableMenu=False).steps(then=self._add_chart),  # the chart has no context menu
        ]

    def _add_ops_table(self) -> None:
        self.ops_model = OpsModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.ops_model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter operators and kernels (name, category, graph)…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.side_box = QComboBox()
        self.side_box.addItems(["both sides", "eager", "compiled"])
        self.side_box.setToolTip("Show the operators and kernels of one side, or of both")
        self.side_box.currentIndexChanged.connect(lambda _: self._show_ops())
        filters = QHBoxLayout()
        filters.addWidget(self.filter_edit, 1)
        filters.addWidget(self.side_box)
        self.ops_table = make_table(
            self.proxy, "The operators and kernels of the profiled calls; click a header to sort", stretch_last=False
        )
        self.ops_table.setSortingEnabled(True)
        self.ops_table.sortByColumn(SELF_COLUMN, Qt.SortOrder.DescendingOrder)
        header = self.ops_table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        self.ops_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        lower = QWidget()
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addLayout(filters)
        lower_layout.addWidget(self.ops_table, 1)
        self.tables.addTab(lower, "Operators and kernels")

    def _add_category_table(self) -> None:
        self.category_model = CategoryModel(self)
        self.category_table = make_table(
            self.category_model, "Each side's call split by category; the colours are the chart's", stretch_last=False
        )
        self.category_table.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.tables.addTab(self.category_table, "Time by category")

    def _add_source_lines(self) -> None:
        self.source_lines = SourceLinesView()
        self.tables.addTab(self.source_lines, "By source line")
        self.tables.setTabToolTip(2, "Each line of the model's code with its time per call, eager against compiled")
        self.splitter.addWidget(self.tables)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)

    def _add_chart(self, plot: pg.PlotItem) -> None:
        self.chart = CategoryChart(plot_item=plot)
        self._chart_layout.replaceWidget(self._chart_place, self.chart)
        self._chart_place.deleteLater()
        self._show(None)

    # ---------------------------------------------------------------- view protocol
    def bind(self, session) -> None:
        super().bind(session)
        self._session = session

    @property
    def artifacts_dir(self) -> str:
        return self._session.artifacts_dir if self._session is not None else ""

    def show_results(self, results: list) -> None:
        self.picker.set_results(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if ended:
            self.picker.set_results(results)

    # ---------------------------------------------------------------- showing one config
    def _on_config_chosen(self) -> None:
        self._show(self.picker.current())

    def _show(self, result) -> None:
        profile = result.op_profile if result is not None else None
        self.chart.set_profile(profile)
        self.category_model.set_result(result if profile else None)
        self._show_ops()
        self.source_lines.set_result(result)
        if result is None:
            self.verdict.setText("Run a profile to see where the time goes.")
        elif profile is None:
            self.verdict.setText(markup(NO_PROFILE if result.ended else "The op profile comes after the benchmark…"))
        else:
            sentence = result.time_verdict() or "The compiled side was not profiled."
            note = f"<br><i>{markup('Note: ' + profile.note)}</i>" if profile.note else ""
            self.verdict.setText(f"<b>{markup(sentence)}</b>{note}")
        self.counts.setText(self._counts_text(profile))
        self._show_traces(result)

    def _show_ops(self) -> None:
        side = ("", "eager", "compiled")[self.side_box.currentIndex()]
        self.ops_model.set_result(self.picker.current(), side)
        self.ops_table.setColumnHidden(len(OP_COLUMNS) - 1, not self.ops_model.has_device_time())

    @staticmethod
    def _counts_text(profile) -> str:
        if profile is None:
            return ""
        lines = []
        e, c = profile.eager, profile.compiled
        if e is not None:
            lines.append(f"Eager, per call: {count(e.operators_per_call, 'operator')} in {fmt_ms(e.ms_per_call)}.")
        if c is not None:
            lines.append(
                f"Compiled, per call: {count(c.kernels_per_call, 'generated kernel')}, "
                f"{count(c.operators_per_call, 'operator')}, {count(c.graphs_per_call, 'graph')} "
                f"in {fmt_ms(c.ms_per_call)}: {fmt_ms(c.in_graphs_ms)} inside graphs, "
                f"{fmt_ms(c.outside_graphs_ms)} outside."
            )
            lines.append(
                f"Outside graphs: {fmt_ms(profile.between_graphs_ms)} between graphs "
                f"({count(len(profile.break_costs), 'graph-break site')} priced in the Graph breaks tab; "
                f"{fmt_ms(profile.unattributed_ms)} with no break logged), "
                f"{fmt_ms(profile.entry_exit_ms)} entering and leaving compiled code."
            )
        lines.append(
            f"{profile.calls} profiled calls per side, after the timed benchmark (the profiler slows calls "
            "down; the timed medians are in the Summary)."
        )
        return "\n".join(lines)

    def _show_traces(self, result) -> None:
        files = trace_files(self.artifacts_dir, result.config.label) if result is not None else {}
        folder = traces_folder(self.artifacts_dir)
        self.open_traces.setEnabled(bool(folder))
        if files:
            names = ", ".join(f.rsplit("/", 1)[-1] for f in files.values())
            self.traces.setText(f"Chrome traces: {names} in {folder}. {TRACES_NOTE}")
        elif result is not None and result.op_profile is not None:
            self.traces.setText("No Chrome traces beside these results (a report saved without its traces/ folder).")
        else:
            self.traces.setText("")

    def open_traces_folder(self) -> bool:
        """Open the session's own traces/ folder in the file manager; False when there is none."""
        folder = traces_folder(self.artifacts_dir)
        if not folder:
            return False
        return self.opened.open(folder, "the traces folder", "file manager")
