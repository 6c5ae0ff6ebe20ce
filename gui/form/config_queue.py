"""The queue of compile configs to compare in one run, with the status of each config's last
job. After a run of the edited config alone (an empty queue), that config is shown too, as
"last run", so its status stays visible; such an entry is not queued (the next Run still
profiles the edited config) and is replaced by the next run or by queuing a config.
GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from core.vocab.config import CompileConfig
from core.vocab.records import JobStatus
from gui.widgets.safe_text import tooltip
from gui.widgets.theme import config_text_color, error_color

STATUS_CHARS = 28  # a status cell's longest text; the whole reason is in its tooltip


def status_text(entry) -> str:
    """The status cell: the status, with the start of a failure's reason."""
    text = f"{entry.status}: {entry.reason}" if entry.reason else entry.status
    return text if len(text) <= STATUS_CHARS else text[: STATUS_CHARS - 1].rstrip() + "…"


@dataclass
class QueueEntry:
    config: CompileConfig
    status: JobStatus | str = JobStatus.PENDING  # or, while it runs, the phase ("compile", "benchmark")
    reason: str = ""
    detail: str = ""
    last_run: bool = False  # shown for its status only, not part of the queue


class QueueModel(QAbstractTableModel):
    """Rows: the queued CompileConfigs and the status of their last job."""

    HEADERS = ("Config", "Status")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._entries: list[QueueEntry] = []

    @property
    def configs(self) -> list[CompileConfig]:
        """The queued configs (a "last run" entry is not queued)."""
        return [e.config for e in self._entries if not e.last_run]

    def add(self, config: CompileConfig) -> bool:
        """Queue a config; False when it is queued already."""
        if config in self.configs:
            return False
        self._drop_last_run()
        row = len(self._entries)
        self.beginInsertRows(QModelIndex(), row, row)
        self._entries.append(QueueEntry(config))
        self.endInsertRows()
        return True

    def show_last_run(self, configs: list[CompileConfig], status: JobStatus | str = JobStatus.PENDING) -> None:
        """Show the configs a run without a queue profiles (replacing earlier ones): the one being
        edited, and what the default adds to it (core.vocab.config.default_configs)."""
        self._drop_last_run()
        if not configs:
            return
        row = len(self._entries)
        self.beginInsertRows(QModelIndex(), row, row + len(configs) - 1)
        self._entries += [QueueEntry(config, status, last_run=True) for config in configs]
        self.endInsertRows()

    def _drop_last_run(self) -> None:
        for row in reversed(range(len(self._entries))):
            if self._entries[row].last_run:
                self.remove(row)

    def remove(self, row: int) -> None:
        if 0 <= row < len(self._entries):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._entries[row]
            self.endRemoveRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._entries.clear()
        self.endResetModel()

    def set_status(self, config: CompileConfig, status: JobStatus | str, reason: str = "", detail: str = "") -> None:
        for row, entry in enumerate(self._entries):
            if entry.config == config:
                entry.status, entry.reason, entry.detail = status, reason, detail
                self.dataChanged.emit(self.index(row, 0), self.index(row, 1))

    def entry(self, row: int) -> QueueEntry:
        return self._entries[row]

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._entries)

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else 2

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        entry = self._entries[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            if index.column() == 0:
                return entry.config.label + (" (last run)" if entry.last_run else "")
            return status_text(entry)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 1 and entry.reason:
                return tooltip(entry.reason + ("\n\n" + entry.detail[-1500:] if entry.detail else ""))
            if entry.last_run:
                return "The config the last run profiled (the queue was empty); Run profiles the edited config"
            return "A config to run; the run goes through the queue from the top"
        if role == Qt.ItemDataRole.ForegroundRole:
            if index.column() == 1 and entry.status == JobStatus.FAILED:
                return QBrush(QColor(error_color()))
            if index.column() == 0:
                return QBrush(config_text_color(index.row()))
        if role == Qt.ItemDataRole.FontRole and entry.last_run:
            font = QFont()
            font.setItalic(True)
            return font
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if (
            orientation == Qt.Orientation.Horizontal
            and role == Qt.ItemDataRole.DisplayRole
            and 0 <= section < len(self.HEADERS)
        ):
            return self.HEADERS[section]
        return None
