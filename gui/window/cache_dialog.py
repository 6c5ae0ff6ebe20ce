"""File → Compile caches…: the inductor cache folder each compile config compiles in
(core.run.compile_cache), their size, files and last use, and removing the selected ones or all.
A folder a running job compiles into is kept (core.measure.cache_hold) and said. Every figure
and sentence is core's; removal is asked first. GUI thread only.
"""

from __future__ import annotations

import threading

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, QTimer
from PySide6.QtWidgets import QDialog, QHBoxLayout, QLabel, QMessageBox, QPushButton, QVBoxLayout

from core.run.compile_cache import AFTER_CLEAR, CACHE_COLUMNS, caches_root, clear_config_caches, config_caches
from core.vocab.formatting import count, disk_size
from gui.widgets.safe_text import plain
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import error_color

RIGHT_ALIGNED = (1, 2)  # size, files


class CacheModel(RowTableModel):
    """Rows: core.run.compile_cache.ConfigCache. GUI thread only."""

    HEADERS = tuple(
        (header.capitalize(), tip)
        for header, tip in zip(
            CACHE_COLUMNS,
            (
                "The config whose compiles this folder keeps",
                "Space on disk (links inside are not followed)",
                "Files in it",
                "When anything in it last changed",
                "A running job compiles into it: it is kept when caches are removed",
            ),
        )
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self.caches: list = []

    def set_caches(self, caches) -> None:
        self.beginResetModel()
        self.caches = list(caches)
        self._rows = [c.cells() for c in self.caches]
        self.endResetModel()

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole and index.column() == 0:
            return self.caches[index.row()].path
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() in RIGHT_ALIGNED:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class CacheDialog(QDialog):
    """The compile caches, with Remove selected / Remove all. `confirm(text) -> bool` asks
    before removing (a QMessageBox by default; the tests answer it)."""

    def __init__(self, parent=None, confirm=None):
        super().__init__(parent)
        self.setWindowTitle("Compile caches")
        self._confirm = confirm or self._ask
        self.busy = False  # a removal is going on
        self._worker: threading.Thread | None = None
        self._done = None
        self._poll = QTimer(self)
        self._poll.setInterval(100)
        self._poll.timeout.connect(self._check_done)
        self.model = CacheModel(self)
        self.table = make_table(self.model, "One row per compile config's inductor cache folder")
        self.head = plain(QLabel())
        self.head.setWordWrap(True)
        self.outcome = plain(QLabel())
        self.outcome.setWordWrap(True)
        self.outcome.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.remove_selected = QPushButton("Remove selected")
        self.remove_all = QPushButton("Remove all")
        refresh = QPushButton("Refresh")
        close = QPushButton("Close")
        self.remove_selected.clicked.connect(lambda: self._remove(selected_only=True))
        self.remove_all.clicked.connect(lambda: self._remove(selected_only=False))
        refresh.clicked.connect(self.refresh)
        close.clicked.connect(self.accept)
        buttons = QHBoxLayout()
        for b in (self.remove_selected, self.remove_all, refresh):
            buttons.addWidget(b)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.head)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.outcome)
        layout.addLayout(buttons)
        self.table.selectionModel().selectionChanged.connect(lambda *_: self._enable())
        self.resize(820, 360)
        self.refresh()

    def refresh(self) -> None:
        caches = config_caches()
        self.model.set_caches(caches)
        total = sum(c.size_bytes for c in caches)
        where = caches_root()
        if caches:
            self.head.setText(
                f"{count(len(caches), 'cache')} in {where}, {disk_size(total)} in all. Each compile config compiles in "
                f"its own, so that no config's compile time depends on another having run first; "
                f"removing them frees the space ({AFTER_CLEAR})."
            )
        else:
            self.head.setText(f"No compile caches in {where}: each config's first profile makes one.")
        self._enable()

    def _enable(self) -> None:
        self.remove_all.setEnabled(bool(self.model.caches) and not self.busy)
        self.remove_selected.setEnabled(bool(self.table.selectionModel().selectedRows()) and not self.busy)

    def selected(self) -> list:
        return [self.model.caches[i.row()] for i in self.table.selectionModel().selectedRows()]

    def _ask(self, text: str) -> bool:
        answer = QMessageBox.question(
            self,
            "Remove compile caches",
            text,
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel,
        )
        return answer == QMessageBox.StandardButton.Yes

    def _remove(self, selected_only: bool) -> None:
        chosen = self.selected() if selected_only else list(self.model.caches)
        if not chosen:
            return
        size = disk_size(sum(c.size_bytes for c in chosen))
        names = ", ".join(c.label for c in chosen[:4]) + (f" and {len(chosen) - 4} more" if len(chosen) > 4 else "")
        if not self._confirm(
            f"Remove the compile caches of {names} ({size})? {AFTER_CLEAR[0].upper()}{AFTER_CLEAR[1:]}."
        ):
            return
        # removed on a thread of its own: gigabytes of kernels take a while, the app goes on
        labels = [c.label for c in chosen]
        self._done = None
        self._worker = threading.Thread(
            target=lambda: setattr(self, "_done", clear_config_caches(labels)), name="clear-caches", daemon=True
        )
        self.busy = True
        self.outcome.setStyleSheet("")
        self.outcome.setText(f"Removing {names} ({size})…")
        self._enable()
        self._worker.start()
        self._poll.start()

    def _check_done(self) -> None:
        if self._worker is not None and self._worker.is_alive():
            return
        self._poll.stop()
        self.busy = False
        done = self._done
        lines = (
            done.lines()
            if done is not None
            else [(True, "The removal stopped with an error; nothing more was removed.")]
        )
        self.outcome.setText("\n".join(line for _, line in lines) or "Nothing was removed.")
        self.outcome.setStyleSheet(f"color: {error_color()}" if any(bad for bad, _ in lines) else "")
        self.refresh()


def show_caches(window) -> CacheDialog:
    """The window's one caches dialog (owned by it), shown afresh."""
    dialog = window.findChild(CacheDialog)
    if dialog is None:
        dialog = CacheDialog(window)
    else:
        dialog.refresh()
    dialog.show()
    dialog.raise_()
    return dialog
