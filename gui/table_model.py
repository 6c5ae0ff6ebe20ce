"""The shared shape of the app's tables: a QAbstractTableModel over a plain list of rows.

Subclasses keep their rows in `self._rows`, declare `HEADERS` as (header, tooltip) pairs and
implement `data()`. GUI thread only.
"""
from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt


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
