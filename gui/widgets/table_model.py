"""The shared shape of the app's tables: a QAbstractTableModel over a plain list of rows,
and the read-only row-selecting view that shows one.

Subclasses keep their rows in `self._rows`, declare `HEADERS` as (header, tooltip) pairs and
implement `data()`. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QStyledItemDelegate, QTableView


class RowTableModel(QAbstractTableModel):
    HEADERS: tuple[tuple[str, str], ...] = ()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._rows: list = []

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.HEADERS)

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(self.HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self.HEADERS[section][0]
        if role == Qt.ItemDataRole.ToolTipRole:
            return self.HEADERS[section][1]
        return None


FOCUS_FRAME = "QTableView:focus { border: 2px solid palette(highlight); }"
"""A table with the keyboard focus says so plainly (the default frame was barely visible)."""


def keyboard_friendly(table: QTableView) -> QTableView:
    """Tab and Shift+Tab leave the table (arrows move between its cells): with Qt's default, Tab
    walked every cell and a user needed 27 presses to leave a queue of configs; and a focus frame."""
    table.setTabKeyNavigation(False)
    table.setStyleSheet(FOCUS_FRAME)
    return table


def make_table(model, tooltip: str, stretch_last: bool = True) -> QTableView:
    """A view selecting whole rows, alternating colours, no row numbers, no wrapping, columns
    sized to their contents, keyboard friendly; callers adjust individual columns afterwards."""
    table = keyboard_friendly(QTableView())
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    table.setWordWrap(False)
    table.setToolTip(tooltip)
    header = table.horizontalHeader()
    header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    header.setStretchLastSection(stretch_last)
    return table


class ElideStartDelegate(QStyledItemDelegate):
    """Draws a cell elided at its start ("…/models/file.py:15"): for paths. GUI thread."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideLeft


class ElideMiddleDelegate(QStyledItemDelegate):
    """Draws a cell elided in its middle ("eager/ca…outputs=True"): for config labels, whose
    start (the backend) and end (the last setting) both tell configs apart. GUI thread."""

    def initStyleOption(self, option, index) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle


def cap_column(table: QTableView, column: int, max_px: int) -> None:
    """Size `column` to its contents, up to `max_px` (its text elided beyond; the user can drag it
    wider): for config labels and paths that would push the columns after them out of sight.
    Call after the rows changed."""
    header = table.horizontalHeader()
    header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
    table.resizeColumnToContents(column)
    if header.sectionSize(column) > max_px:
        header.resizeSection(column, max_px)
