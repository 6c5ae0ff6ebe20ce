"""Compile configs: backend and mode from the installed torch, dynamic, fullgraph, device,
warm-up and iterations, and a queue of configs to compare in one run.

Every config is checked with `core.config.validate_config` as it is edited and again
before a run; what torch would refuse is explained inline, in red, before anything runs.
The queue shows each config's status and, for a failed job, its reason. GUI thread only.
"""
from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (QAbstractItemView, QCheckBox, QComboBox, QFormLayout, QGroupBox, QHBoxLayout,
                               QHeaderView, QLabel, QPushButton, QSpinBox, QTableView, QVBoxLayout, QWidget)

from core.config import DYNAMIC_CHOICES, CompileConfig, ConfigError, validate_config
from gui.theme import config_color, error_color

DEFAULT_BACKENDS = ("inductor", "eager", "aot_eager")  # shown until torch's own list arrives
DEFAULT_MODES = ("default",)


@dataclass
class QueueEntry:
    config: CompileConfig
    status: str = "queued"
    reason: str = ""
    detail: str = ""


class QueueModel(QAbstractTableModel):
    """Rows: the queued CompileConfigs and the status of their last job."""

    HEADERS = ("Config", "Status")

    def __init__(self, parent=None):
        super().__init__(parent)
        self._entries: list[QueueEntry] = []

    @property
    def configs(self) -> list[CompileConfig]:
        return [e.config for e in self._entries]

    def add(self, config: CompileConfig) -> bool:
        """Queue a config; False when it is queued already."""
        if config in self.configs:
            return False
        row = len(self._entries)
        self.beginInsertRows(QModelIndex(), row, row)
        self._entries.append(QueueEntry(config))
        self.endInsertRows()
        return True

    def remove(self, row: int) -> None:
        if 0 <= row < len(self._entries):
            self.beginRemoveRows(QModelIndex(), row, row)
            del self._entries[row]
            self.endRemoveRows()

    def clear(self) -> None:
        self.beginResetModel()
        self._entries.clear()
        self.endResetModel()

    def set_status(self, config: CompileConfig, status: str, reason: str = "", detail: str = "") -> None:
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
                return entry.config.label
            return f"{entry.status}: {entry.reason}" if entry.reason else entry.status
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 1 and entry.reason:
                return entry.reason + ("\n\n" + entry.detail[-1500:] if entry.detail else "")
            return "A config to run; the run goes through the queue from the top"
        if role == Qt.ItemDataRole.ForegroundRole:
            if index.column() == 1 and entry.status == "failed":
                return QBrush(QColor(error_color()))
            if index.column() == 0:
                return QBrush(config_color(index.row()))
        return None

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole \
                and 0 <= section < len(self.HEADERS):
            return self.HEADERS[section]
        return None


def _combo(items, tip: str) -> QComboBox:
    box = QComboBox()
    box.addItems(list(items))
    box.setToolTip(tip)
    return box


def _set_items(box: QComboBox, items, keep: str) -> None:
    box.blockSignals(True)
    box.clear()
    box.addItems(list(items))
    if keep in items:
        box.setCurrentText(keep)
    box.blockSignals(False)


class ConfigPanel(QGroupBox):
    """GUI thread only."""

    sig_config_edited = Signal()
    """A setting changed (the window re-validates and saves settings)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Compile configs", parent)
        self.catalog_loaded = False
        self.backend = _combo(DEFAULT_BACKENDS, "torch.compile backend (from torch._dynamo.list_backends())")
        self.mode = _combo(DEFAULT_MODES, "Inductor mode (from torch._inductor.list_mode_options()); other "
                                          "backends take 'default' only")
        self.dynamic = _combo(DYNAMIC_CHOICES, "dynamic=: auto (None, torch decides after a shape change), "
                                               "true (symbolic shapes from the start) or false (specialise)")
        self.fullgraph = QCheckBox("fullgraph")
        self.fullgraph.setToolTip("fullgraph=True: fail on the first graph break instead of splitting the graph")
        self.device = _combo(("cpu",), "Where the model runs; CUDA is offered only when torch sees a GPU")
        self.warmup = QSpinBox()
        self.warmup.setRange(0, 1000)
        self.warmup.setValue(5)
        self.warmup.setToolTip("Untimed-in-statistics warm-up calls per side before the timed iterations")
        self.iters = QSpinBox()
        self.iters.setRange(1, 1_000_000)
        self.iters.setValue(50)
        self.iters.setToolTip("Timed iterations per side; eager and compiled calls alternate")
        form = QFormLayout()
        form.addRow("Backend", self.backend)
        form.addRow("Mode", self.mode)
        form.addRow("Dynamic", self.dynamic)
        form.addRow("", self.fullgraph)
        form.addRow("Device", self.device)
        form.addRow("Warm-up", self.warmup)
        form.addRow("Iterations", self.iters)

        self.error = QLabel("")
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {error_color()}")
        self.error.hide()

        self.add_button = QPushButton("Add to queue")
        self.add_button.setToolTip("Queue this config to compare several in one run")
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button = QPushButton("Remove")
        self.remove_button.setToolTip("Remove the selected config from the queue")
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.queue = QueueModel(self)
        self.queue_view = QTableView()
        self.queue_view.setModel(self.queue)
        self.queue_view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.queue_view.verticalHeader().hide()
        self.queue_view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        self.queue_view.horizontalHeader().setStretchLastSection(True)
        self.queue_view.setToolTip("Configs of the next run and the status of their last job. With an empty "
                                   "queue, Run profiles the config above.")
        self.queue_view.setMinimumHeight(90)
        queue_buttons = QHBoxLayout()
        queue_buttons.addWidget(self.add_button)
        queue_buttons.addWidget(self.remove_button)

        self.run_button = QPushButton()
        self.cancel_button = QPushButton()
        run_buttons = QHBoxLayout()
        run_buttons.addWidget(self.run_button, 2)
        run_buttons.addWidget(self.cancel_button, 1)

        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.error)
        layout.addLayout(queue_buttons)
        layout.addWidget(self.queue_view, 1)
        layout.addLayout(run_buttons)

        for box in (self.backend, self.mode, self.dynamic, self.device):
            box.currentTextChanged.connect(self._on_edited)
        for w in (self.warmup, self.iters):
            w.valueChanged.connect(self._on_edited)
        self.fullgraph.toggled.connect(self._on_edited)

    # ---------------------------------------------------------------- catalogue
    def set_catalog(self, backends, modes, cuda_available: bool) -> None:
        """Fill the pickers from the installed torch (keeps the current choices if valid)."""
        _set_items(self.backend, backends, self.backend.currentText())
        _set_items(self.mode, modes, self.mode.currentText())
        _set_items(self.device, ("cpu", "cuda") if cuda_available else ("cpu",), self.device.currentText())
        self.catalog_loaded = True
        self.validate()

    # ---------------------------------------------------------------- values
    def current_config(self) -> CompileConfig:
        return CompileConfig(backend=self.backend.currentText(), mode=self.mode.currentText() or "default",
                             dynamic=self.dynamic.currentText(), fullgraph=self.fullgraph.isChecked())

    def set_config(self, config: CompileConfig) -> None:
        for box, value in ((self.backend, config.backend), (self.mode, config.mode), (self.dynamic, config.dynamic)):
            if box.findText(value) < 0:
                box.addItem(value)  # catalogue not loaded yet: validation will judge it
            box.setCurrentText(value)
        self.fullgraph.setChecked(config.fullgraph)

    def run_configs(self) -> list[CompileConfig]:
        """What Run profiles: the queue, or the config being edited when the queue is empty."""
        return self.queue.configs or [self.current_config()]

    def validate(self, configs: list[CompileConfig] | None = None) -> str:
        """Check `configs` (default: the one being edited); show and return the problem
        ('' if none). Before a run the window passes `run_configs()`."""
        if not self.catalog_loaded:
            self._show_error("")
            return "torch is still loading; wait a moment"
        problem = ""
        for config in configs if configs is not None else [self.current_config()]:
            try:
                validate_config(config, self.device.currentText())
            except ConfigError as exc:
                problem = f"{config.label}: {exc}"
                break
        self._show_error(problem)
        return problem

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))

    # ---------------------------------------------------------------- slots
    def _on_edited(self, *args) -> None:
        self.validate()
        self.sig_config_edited.emit()

    def _on_add_clicked(self) -> None:
        config = self.current_config()
        if self.catalog_loaded:
            try:
                validate_config(config, self.device.currentText())
            except ConfigError as exc:
                self._show_error(f"Not queued: {exc}")
                return
        if not self.queue.add(config):
            self._show_error(f"{config.label} is queued already.")
        else:
            self.validate()

    def _on_remove_clicked(self) -> None:
        rows = sorted({i.row() for i in self.queue_view.selectionModel().selectedRows()}, reverse=True)
        for row in rows or [self.queue.rowCount() - 1]:
            self.queue.remove(row)
        self.validate()
