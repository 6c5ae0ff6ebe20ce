"""Graph breaks: a sortable, filterable table over the core's `GraphBreak` dataclasses and,
for the selected break, torch's explanation, every hint, the surrounding source lines with
the break highlighted, and the documentation link.

Below it (the same area, as the questions go together): the compile-time breakdown and the
recompiles of each config (`CompilePanel`).
"""
from __future__ import annotations

import html
import linecache
import os

from PySide6.QtCore import (QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt,
                            Signal)
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import (QAbstractItemView, QHeaderView, QLabel, QLineEdit, QSplitter, QTextBrowser,
                               QVBoxLayout, QWidget)

from gui.table_model import RowTableModel, make_table
from gui.compile_panel import CompilePanel
from gui.theme import config_color, is_dark

CONTEXT_LINES = 4
COLUMNS = ("Config", "Reason", "GB code", "Location", "Count", "First hint")
TOOLTIPS = (
    "The config whose compile reported this break",
    "torch's graph-break type (gb_type)",
    "The id in torch's graph-break registry; the details link to its documentation page",
    "file:line of the user code that broke the graph; 'whole frame skipped' when dynamo gave up on the frame, "
    "which then runs eagerly",
    "How many times this break was reported",
    "torch's first suggestion; select the row for all of them",
)


def location(gb) -> str:
    return f"{os.path.basename(gb.file)}:{gb.line}" if gb.file else "–"


class GraphBreakModel(RowTableModel):
    """Rows: (config index, config label, GraphBreak) for every break of every job. GUI thread."""

    HEADERS = tuple(zip(COLUMNS, TOOLTIPS))

    def __init__(self, parent=None):
        super().__init__(parent)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._rows = [(i, r.config.label, gb) for i, r in enumerate(results) for gb in r.graph_breaks]
        self.endResetModel()

    def graph_break(self, row: int):
        return self._rows[row][2]

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        config_index, label, gb = self._rows[index.row()]
        column = index.column()
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.UserRole):
            if column == 4 and role == Qt.ItemDataRole.UserRole:
                return gb.per_call
            if column == 3 and role == Qt.ItemDataRole.UserRole:
                return f"{gb.file}:{gb.line:08d}"
            where = location(gb)
            if gb.frame_skipped:
                where = f"{where}, frame skipped" if gb.file else "whole frame skipped"
            first_hint = gb.hints[0] if gb.hints else ""
            return (label, gb.reason, gb.gb_code or "–", where, str(gb.per_call), first_hint)[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 5 and gb.hints:
                return "\n\n".join(gb.hints)
            if column == 3 and gb.file:
                return f"{gb.file}:{gb.line}\n{gb.source}"
            if column == 1:
                return gb.explanation or gb.reason
            return TOOLTIPS[column]
        if role == Qt.ItemDataRole.ForegroundRole and column == 0:
            return QBrush(config_color(config_index))
        return None


def source_excerpt(gb, context: int = CONTEXT_LINES) -> list[tuple[int, str, bool]]:
    """(line number, text, is the break line) around the break, read from the file when it
    is still there; else the one line torch reported."""
    if gb.file and gb.line and os.path.exists(gb.file):
        linecache.checkcache(gb.file)
        lines = [(n, linecache.getline(gb.file, n).rstrip("\n"), n == gb.line)
                 for n in range(max(1, gb.line - context), gb.line + context + 1)]
        while lines and not lines[-1][1] and not lines[-1][2]:
            lines.pop()
        if any(text for _, text, _ in lines):
            return lines
    return [(gb.line, gb.source, True)] if gb.source else []


def detail_html(gb) -> str:
    """The detail view's HTML for one break."""
    esc = html.escape
    highlight = "#5c4b00" if is_dark() else "#fff2a8"
    parts = [f"<h3 style='margin:0'>{esc(gb.reason)}"
             + (f" <small>({esc(gb.gb_code)})</small>" if gb.gb_code else "") + "</h3>"]
    if gb.frame_skipped:
        parts.append("<p><b>Dynamo skipped this whole frame: it runs eagerly.</b></p>")
    if gb.file:
        parts.append(f"<p><code>{esc(gb.file)}:{gb.line}</code> · reported {gb.per_call}×</p>")
    excerpt = source_excerpt(gb)
    if excerpt:
        width = len(str(excerpt[-1][0]))
        rows = []
        for n, text, hit in excerpt:
            line = f"{n:>{width}}  {esc(text)}"
            rows.append(f"<span style='background:{highlight}; font-weight:bold'>{line}</span>" if hit
                        else f"<span style='color:gray'>{line[:width]}</span>{line[width:]}")
        parts.append("<pre style='margin:4px 0'>" + "\n".join(rows) + "</pre>")
    if gb.explanation:
        parts.append("<p><b>Explanation</b><br>" + esc(gb.explanation).replace("\n", "<br>") + "</p>")
    if gb.hints:
        parts.append("<p><b>Hints</b></p><ul>" + "".join(f"<li>{esc(h)}</li>" for h in gb.hints) + "</ul>")
    if gb.doc_url:
        parts.append(f"<p>Documentation: <a href='{esc(gb.doc_url)}'>{esc(gb.doc_url)}</a></p>")
    return "".join(parts)


class GraphBreaksPanel(QWidget):
    """GUI thread only."""

    sig_break_selected = Signal(object)
    """A graph break (GraphBreak) was selected in the table, or None."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = GraphBreakModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)

        self.header = QLabel("No graph breaks yet.")
        self.header.setWordWrap(True)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter breaks (reason, code, file, hint)…")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.setToolTip("Show only the breaks whose columns contain this text")
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)

        self.table = make_table(self.proxy, "Every graph break torch reported; click a header to sort, select a "
                                            "row for details", stretch_last=False)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        header = self.table.horizontalHeader()  # Location (column 3) keeps its full file:line
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)  # long reasons elide
        header.resizeSection(1, 150)
        header.setMinimumSectionSize(70)  # keeps the stretched "First hint" header readable
        header.setSectionResizeMode(len(COLUMNS) - 1, QHeaderView.ResizeMode.Stretch)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)

        self.detail = QTextBrowser()
        self.detail.setOpenExternalLinks(True)  # the doc link opens in the browser
        self.detail.setToolTip("The selected break: torch's explanation, hints, the source around it and its "
                               "documentation page")
        self.detail.setHtml("<p style='color:gray'>Select a graph break to see why it happened and what to do.</p>")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.filter_edit)
        left_layout.addWidget(self.table, 1)
        top = QSplitter(Qt.Orientation.Horizontal)
        top.addWidget(left)
        top.addWidget(self.detail)
        top.setStretchFactor(0, 3)
        top.setStretchFactor(1, 2)

        self.compile_panel = CompilePanel()
        self.splitter = QSplitter(Qt.Orientation.Vertical)
        self.splitter.addWidget(top)
        self.splitter.addWidget(self.compile_panel)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 2)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.header)
        layout.addWidget(self.splitter, 1)

    def set_results(self, results) -> None:
        """Show the breaks, recompiles and compile breakdown of `results`."""
        selected = self.selected_break()
        self.model.set_results(results)
        self.compile_panel.set_results(results)
        total = sum(gb.per_call for r in results for gb in r.graph_breaks)
        parts = []
        for i, r in enumerate(results):
            n = sum(gb.per_call for gb in r.graph_breaks)
            cov = r.compile.coverage if r.compile else ("not compiled yet" if not r.finished else r.status)
            parts.append(f"<span style='color:{config_color(i).name()}'><b>{html.escape(r.config.label)}</b></span>"
                         f": {n} break{'s' if n != 1 else ''}; {html.escape(cov)}")
        self.header.setText(f"<b>{total} graph break{'s' if total != 1 else ''}</b><br>" + "<br>".join(parts)
                            if results else "No graph breaks yet.")
        if selected is not None:
            self.select_break(selected.key)

    def select_row(self, row: int) -> None:
        """Select the row-th visible row (sorted, filtered)."""
        index = self.proxy.index(row, 0)
        if index.isValid():
            self.table.selectRow(row)
            self.table.setCurrentIndex(index)

    def select_break(self, key) -> None:
        for row in range(self.proxy.rowCount()):
            source = self.proxy.mapToSource(self.proxy.index(row, 0))
            if self.model.graph_break(source.row()).key == key:
                self.select_row(row)
                return

    def selected_break(self):
        index = self.table.currentIndex()
        if not index.isValid():
            return None
        return self.model.graph_break(self.proxy.mapToSource(index).row())

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if not current.isValid():
            self.detail.setHtml("<p style='color:gray'>Select a graph break to see why it happened.</p>")
            self.sig_break_selected.emit(None)
            return
        gb = self.model.graph_break(self.proxy.mapToSource(current).row())
        self.detail.setHtml(detail_html(gb))
        self.sig_break_selected.emit(gb)
