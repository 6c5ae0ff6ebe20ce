"""Graph breaks: a sortable, filterable table over the core's `GraphBreak` dataclasses and,
for the selected break, torch's explanation, every hint, the source lines around it (from
the report: `GraphBreak.context`, recorded while profiling) with the break highlighted, and
the documentation link.

Everything shown comes from a report or a job and is treated as untrusted: it is escaped,
no file it names is ever read, and a link opens only when `core.report.safety.is_documentation_url`
accepts it (the PyTorch documentation); any other is shown as text.

Below it (the same area, as the questions go together): the compile-time breakdown and the
recompiles of each config (`CompilePanel`).
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, QUrl, Signal
from PySide6.QtGui import QBrush, QDesktopServices
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSplitter,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from core.report.safety import is_documentation_url
from core.vocab.source_paths import display_path
from gui.panels.break_detail import GRAPH_LINK, cost_text, detail_html
from gui.panels.compile import CompilePanel
from gui.widgets.safe_text import markup, tooltip
from gui.widgets.table_model import ElideStartDelegate, RowTableModel, make_table
from gui.widgets.theme import config_text_color
from gui.widgets.view import ResultsView

# Two-line headers where the figures are short: the first hint keeps a readable width.
COLUMNS = ("Config", "Reason", "GB code", "Location", "Your code", "Per\ncall", "Cost /\ncall", "First hint")
PER_CALL_COLUMN = COLUMNS.index("Per\ncall")
COST_COLUMN = COLUMNS.index("Cost /\ncall")
HINT_COLUMN = COLUMNS.index("First hint")
TOOLTIPS = (
    "The config whose compile reported this break",
    "torch's graph-break type (gb_type)",
    "The id in torch's graph-break registry; the details link to its documentation page",
    "file:line where the graph broke (hover for the full path)",
    "The nearest line in your own code (not torch, not site-packages) when the break lies in a library",
    "Times one compiled call passes this break, counted in the op profile's calls (a frame run again from "
    "dynamo's cache, in a loop, passes it again); '(compile)': no op profile counted it, so the figure is the "
    "compile's, which counts a frame run from the cache once. 'frame skipped': dynamo gave up on the whole "
    "frame, which ran eagerly; 'compile failed': torch raised compiling it and the job ended. torch logs a "
    "break more often while compiling (dynamo restarts the analysis after a break): that logged count is in "
    "the details",
    "What this break costs per compiled call: the eager time between the compiled graphs it splits, from the op "
    "profile (– when not profiled); fix the costliest first",
    "torch's first suggestion; select the row for all of them",
)
NO_SELECTION = "<p style='color:gray'>Select a graph break to see why it happened and what to do.</p>"
NO_BREAKS = "<p style='color:gray'>No graph breaks in the results on screen.</p>"


def location(gb) -> str:
    """The break's place as the table shows it: a short path and the line."""
    if not gb.file:
        return "whole frame skipped" if gb.frame_skipped else "–"
    return f"{display_path(gb.file)}:{gb.line}"


def per_call(gb, counted: bool = True) -> str:
    """Breaks per compiled call (`counted`: in the op profile's calls; else marked as the
    compile's figure); a skipped frame is no break (the whole frame ran eagerly), nor a compile
    that made torch raise."""
    if gb.compile_failed:
        return "compile failed"
    if gb.frame_skipped:
        return "frame skipped"
    return str(gb.per_call) if counted else f"{gb.per_call} (compile)"


def user_location(gb) -> str:
    if not gb.user_file:
        return "–"
    return f"{display_path(gb.user_file)}:{gb.user_line}" if gb.user_line else display_path(gb.user_file)


def break_counts(summary: dict) -> tuple[int | None, int | None]:
    """(sites, breaks per call) of one config, from `JobResult.summary()`: sites are the
    distinct places the graph broke, per call the breaks one compiled call passes."""
    return summary.get("graph_break_sites"), summary.get("graph_break_per_call")


class GraphBreakModel(RowTableModel):
    """Rows: (config index, config label, GraphBreak, BreakCost or None) for every break of
    every job. GUI thread."""

    HEADERS = tuple(zip(COLUMNS, TOOLTIPS))

    def __init__(self, parent=None):
        super().__init__(parent)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [
            (i, r.config.label, gb, r.break_cost(gb), r.per_call_counted(gb))
            for i, r in enumerate(results)
            for gb in r.graph_breaks
        ]
        self.endResetModel()

    def graph_break(self, row: int):
        return self._rows[row][2]

    def break_cost(self, row: int):
        """The BreakCost of the row-th break (None: not profiled, or it split no graphs)."""
        return self._rows[row][3]

    def config_label(self, row: int) -> str:
        return self._rows[row][1]

    def per_call_counted(self, row: int) -> bool:
        """Whether the row-th break's per_call was counted in the op profile's calls."""
        return self._rows[row][4]

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        config_index, label, gb, cost, counted = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.UserRole:  # sort keys
            if column == PER_CALL_COLUMN:
                return gb.per_call
            if column == COST_COLUMN:
                return -1.0 if cost is None else cost.cost_ms_per_call
            if column == 3:
                return f"{gb.file}:{gb.line:08d}"
            if column == 4:
                return f"{gb.user_file}:{gb.user_line:08d}"
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole):
            first_hint = gb.hints[0] if gb.hints else ""
            return (
                label,
                gb.reason,
                gb.gb_code or "–",
                location(gb),
                user_location(gb),
                per_call(gb, counted),
                cost_text(cost),
                first_hint,
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == HINT_COLUMN and gb.hints:
                return tooltip("\n\n".join(gb.hints))
            if column == 3 and gb.file:
                return tooltip(f"{gb.file}:{gb.line}" + (f"\n{gb.source}" if gb.source else ""))
            if column == 4 and gb.user_file:
                return tooltip(f"{gb.user_file}:{gb.user_line}")
            if column == 1:
                return tooltip(gb.explanation or gb.reason)
            if column == PER_CALL_COLUMN and gb.compile_failed:
                return "torch raised compiling this frame and the job ended: nothing ran eagerly"
            if column == PER_CALL_COLUMN and gb.frame_skipped:
                return "Dynamo gave up on this whole frame: it ran eagerly, with no graph to break"
            if column == PER_CALL_COLUMN and not counted:
                return (
                    "From the compile alone (no op profile counted the calls): a frame run again from dynamo's "
                    "cache, in a loop, is counted once"
                )
            return TOOLTIPS[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 0:
            return QBrush(config_text_color(config_index))
        if role == Qt.ItemDataRole.TextAlignmentRole and column in (PER_CALL_COLUMN, COST_COLUMN):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class GraphBreaksPanel(QWidget, ResultsView):
    """GUI thread only."""

    refresh_when_shown = True  # the breaks, recompiles and compile breakdown, at every job's end

    sig_link_refused = Signal(str)
    """A link in the details was clicked that is not PyTorch documentation; it was not opened."""

    sig_graph_requested = Signal(str, str)
    """(config label, graph id): the user asked for a graph on either side of a break."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the detail and the compile tables are left to `construction_steps()`,
        which the caller runs (gui.window.view_slot: one per event-loop turn after the
        window's show); else they are made here."""
        super().__init__(parent)
        self.model = GraphBreakModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)

        self.header = QLabel("No graph breaks yet.")
        self.header.setTextFormat(Qt.TextFormat.RichText)  # our markup; report text inside is escaped
        self.header.setWordWrap(True)
        self.header.setToolTip(
            "Per config: graph-break sites (distinct places in the code where the graph "
            "broke) and breaks per compiled call, and how much of the model runs compiled"
        )
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter breaks (reason, code, file, hint)…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only the breaks whose columns contain this text")
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)

        self.table = make_table(
            self.proxy,
            "Every graph break torch reported; click a header to sort, select a row for details",
            stretch_last=False,
        )
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(PER_CALL_COLUMN, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()
        metrics = self.table.fontMetrics()
        # Long reasons elide at the end, paths at the start (the file name and line stay in
        # view; the full path is in the tooltip), so "Per call" and the hint keep their room.
        for column, sample in ((1, "Data-dependent bra…"), (3, "…_execution.py:150"), (4, "…/my_model.py:120")):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, metrics.horizontalAdvance(sample) + 16)
        self._path_delegate = ElideStartDelegate(self.table)
        self.table.setItemDelegateForColumn(3, self._path_delegate)
        self.table.setItemDelegateForColumn(4, self._path_delegate)
        header.setMinimumSectionSize(40)
        header.setSectionResizeMode(HINT_COLUMN, QHeaderView.ResizeMode.Stretch)  # what is left: the splitter below
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.filter_edit)
        left_layout.addWidget(self.table, 1)
        self._top = QSplitter(Qt.Orientation.Horizontal)
        self._top.addWidget(left)
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(self._top)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.splitter, 1)
        self.build_unless_staged(staged)

    def show_functions(self) -> None:
        """Rows that are a script's compiled functions, not configs (gui.panels.script_view): the
        first columns say so, and what a script run has no figure for is hidden (a break's cost
        comes from the op profile; the compile breakdown per config from a job's compile record),
        the recompiles in sight."""
        function = ("Function", "The compiled function (and the script's line that compiled it)")
        self.model.HEADERS = (function, *self.model.HEADERS[1:])
        self.compile_panel.recompile_model.HEADERS = (function, *self.compile_panel.recompile_model.HEADERS[1:])
        self.header.setToolTip("Per compiled function: graph-break sites (distinct places where the graph broke)")
        self.table.setColumnHidden(COST_COLUMN, True)
        tabs = self.compile_panel.tabs
        tabs.setTabVisible(0, False)
        tabs.setCurrentIndex(1)

    def construction_steps(self) -> list:
        """The selected break's detail, then the compile tables, each a step of its own: built
        in one turn, the panel held the GUI thread 15-24 ms at launch."""
        return [self._add_detail, self._add_compile_panel]

    def _add_detail(self) -> None:
        self.detail = QTextBrowser()
        # Links are never followed by the browser itself: a report could name file:///etc/...
        self.detail.setOpenLinks(False)
        self.detail.setOpenExternalLinks(False)
        self.detail.anchorClicked.connect(self._on_anchor_clicked)
        self.detail.setToolTip(
            "The selected break: torch's explanation, hints, the source around it and its documentation page"
        )
        self.detail.setHtml(NO_BREAKS)
        top = self._top
        top.addWidget(self.detail)
        # The table's eight columns need about 70% of the width to show the first hint's start
        # (at 1400 px it was cut to "For th…"); the detail wraps its text in the rest.
        top.setStretchFactor(0, 5)
        top.setStretchFactor(1, 2)
        top.setSizes([5000, 2000])  # proportions: scaled to the width the panel gets

    def _add_compile_panel(self) -> None:
        self.compile_panel = CompilePanel()
        self.splitter.addWidget(self.compile_panel)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

    def bind(self, session) -> None:
        super().bind(session)
        # every table, now or (hidden) when the tab is next shown
        session.sig_graph_breaks_changed.connect(lambda: self.request_refresh(session.results, "", ended=True))

    def show_results(self, results: list) -> None:
        self.set_results(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if ended:
            self.set_results(results)
        else:
            self.compile_panel.set_results(results)

    def set_results(self, results) -> None:
        """Show the breaks, recompiles and compile breakdown of `results`."""
        selected = self.selected_break()
        self.model.set_results(results)
        self.compile_panel.set_results(results)
        # "Your code" only says something for breaks inside libraries; without any, its room
        # goes to the other columns.
        self.table.setColumnHidden(4, not any(gb.user_file for r in results for gb in r.graph_breaks))
        # One config: its name is in the line above the table; the column's room goes to the hint.
        self.table.setColumnHidden(0, len(results) <= 1)
        lines = []
        for i, r in enumerate(results):
            sites, per_call = break_counts(r.summary(ci=False))
            if sites is None:
                counts = "not compiled yet" if not r.ended else r.status
            else:
                counts = f"{sites} graph-break site{'s' if sites != 1 else ''}"
                if per_call is not None:
                    counts += f", {per_call} break{'s' if per_call != 1 else ''} per call"
            cov = r.compile.coverage if r.compile else ""
            cudagraphs = r.cudagraph_state()[0]
            lines.append(
                f"<span style='color:{config_text_color(i).name()}'><b>{markup(r.config.label)}</b></span>: "
                f"{markup(counts)}"
                + (f"; {markup(cov)}" if cov else "")
                + ((" " if cov else "; ") + f"CUDA graphs: {markup(cudagraphs)}." if cudagraphs else "")
            )
        self.header.setText("<br>".join(lines) if results else "No graph breaks yet.")
        # The details follow the results on screen: the same break when it is still there,
        # else the first row of the new results, else nothing (a model reset moves the
        # current row without a signal, so the pane is redrawn here, never left stale).
        if selected is None or not self.select_break(selected.key):
            self.select_row(0)
        self._show_detail(self.table.currentIndex())

    def select_row(self, row: int) -> bool:
        """Select the row-th visible row (sorted, filtered); False when there is none."""
        index = self.proxy.index(row, 0)
        if not index.isValid():
            return False
        self.table.selectRow(row)
        self.table.setCurrentIndex(index)
        return True

    def select_break(self, key) -> bool:
        """Select the break with this key; False when the results on screen have none."""
        for row in range(self.proxy.rowCount()):
            source = self.proxy.mapToSource(self.proxy.index(row, 0))
            if self.model.graph_break(source.row()).key == key:
                return self.select_row(row)
        return False

    def selected_break(self):
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.graph_break(self.proxy.mapToSource(index).row())

    def open_link(self, url: str) -> bool:
        """Open `url` in the browser if it is PyTorch documentation; True when opened."""
        if not is_documentation_url(url):
            self.sig_link_refused.emit(url)
            return False
        return bool(QDesktopServices.openUrl(QUrl(url, QUrl.ParsingMode.StrictMode)))

    def _on_anchor_clicked(self, url: QUrl) -> None:
        if url.scheme() == GRAPH_LINK:
            self.request_graph(*url.path().split(":")[:2])
            return
        self.open_link(url.toString(QUrl.ComponentFormattingOption.FullyEncoded))

    def request_graph(self, side: str, n: str = "0") -> bool:
        """Ask for the graph before/after the selected break (`n`: which of them); False when none."""
        index = self.table.currentIndex()
        if not index.isValid():
            return False
        row = self.proxy.mapToSource(index).row()
        cost = self.model.break_cost(row)
        graphs = (cost.graphs_before if side == "before" else cost.graphs_after) if cost is not None else ()
        if not n.isdigit() or int(n) >= len(graphs):
            return False
        self.sig_graph_requested.emit(self.model.config_label(row), graphs[int(n)])
        return True

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._show_detail(current)

    def _show_detail(self, current: QModelIndex) -> None:
        if not current.isValid():
            self.detail.setHtml(NO_SELECTION if self.proxy.rowCount() else NO_BREAKS)
            return
        row = self.proxy.mapToSource(current).row()
        self.detail.setHtml(
            detail_html(self.model.graph_break(row), self.model.break_cost(row), self.model.per_call_counted(row))
        )
