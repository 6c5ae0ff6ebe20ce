"""Choosing what to profile: a searchable list of torchvision models, model files (open,
drop, recent) and the input settings (batch size, image size).

Opening a file, and the notice that a Python file runs code, is the window's job (it owns
the actions); this panel shows the choice. GUI thread only.
"""
from __future__ import annotations

import os

from PySide6.QtCore import QSortFilterProxyModel, QStringListModel, Qt, Signal
from PySide6.QtWidgets import (QAbstractItemView, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QListView, QMenu, QSpinBox, QToolButton, QVBoxLayout, QWidget)

from core.models import is_file_source


class ModelPanel(QGroupBox):
    """GUI thread only."""

    sig_model_chosen = Signal(str)
    """The model to profile changed: a torchvision name or a file path."""

    sig_recent_chosen = Signal(str)
    """A recent file was picked from the Recent menu (the window checks and opens it)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Model", parent)
        self._source = ""
        self._selecting = False
        self.current = QLabel("<i>none chosen</i>")
        self.current.setWordWrap(True)
        self.current.setToolTip("The model the next run profiles")

        self.search = QLineEdit()
        self.search.setPlaceholderText("Search torchvision models…")
        self.search.setClearButtonEnabled(True)
        self.search.setToolTip("Filter the torchvision models by name")
        self.names = QStringListModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.names)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.search.textChanged.connect(self.proxy.setFilterFixedString)
        self.list = QListView()
        self.list.setModel(self.proxy)
        self.list.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.list.setToolTip("torchvision models, built with random weights (weights=None); click one to choose it")
        self.list.setMinimumHeight(120)
        self.list.selectionModel().currentChanged.connect(self._on_list_current_changed)
        self.loading = QLabel("Loading torchvision models…")
        self.loading.setStyleSheet("color: gray")

        self.open_button = QToolButton()
        self.open_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.recent_button = QToolButton()
        self.recent_button.setText("Recent")
        self.recent_button.setToolTip("Model files opened before")
        self.recent_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.recent_menu = QMenu(self)
        self.recent_button.setMenu(self.recent_menu)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button, 1)
        buttons.addWidget(self.recent_button)

        self.batch = QSpinBox()
        self.batch.setRange(1, 4096)
        self.batch.setToolTip("Batch size of the example input (torchvision models and TorchScript files)")
        self.image = QSpinBox()
        self.image.setRange(16, 4096)
        self.image.setSingleStep(32)
        self.image.setValue(224)
        self.image.setToolTip("Height and width of the example images (torchvision models and TorchScript files); "
                              "Python model files make their own inputs")
        form = QFormLayout()
        form.addRow("Batch size", self.batch)
        form.addRow("Image size", self.image)

        layout = QVBoxLayout(self)
        layout.addWidget(self.current)
        layout.addWidget(self.search)
        layout.addWidget(self.loading)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addLayout(form)

    # ---------------------------------------------------------------- contents
    def set_models(self, names) -> None:
        self.names.setStringList(list(names))
        self.loading.setVisible(not names)
        if not names:
            self.loading.setText("No torchvision models available; open a model file instead.")
        if self._source and not is_file_source(self._source):
            self._select_in_list(self._source)

    def set_recent(self, paths: list[str]) -> None:
        self.recent_menu.clear()
        for path in paths:
            action = self.recent_menu.addAction(os.path.basename(path))
            action.setToolTip(path)
            action.setData(path)
            action.triggered.connect(lambda checked=False, p=path: self.sig_recent_chosen.emit(p))
        self.recent_button.setEnabled(bool(paths))

    def set_source(self, source: str) -> None:
        """Show `source` as the chosen model (does not emit)."""
        self._source = source
        if is_file_source(source):
            self.current.setText(f"<b>{os.path.basename(source)}</b><br><small>{os.path.dirname(source)}</small>")
            self.current.setToolTip(source)
            self.list.clearSelection()
        else:
            self.current.setText(f"<b>{source}</b> <small>(torchvision)</small>" if source else "<i>none chosen</i>")
            self.current.setToolTip("The model the next run profiles")
            self._select_in_list(source)

    def source(self) -> str:
        return self._source

    def _select_in_list(self, name: str) -> None:
        rows = self.names.stringList()
        if name in rows:
            index = self.proxy.mapFromSource(self.names.index(rows.index(name)))
            if index.isValid():
                self._selecting = True
                try:
                    self.list.setCurrentIndex(index)
                finally:
                    self._selecting = False
                self.list.scrollTo(index, QAbstractItemView.ScrollHint.PositionAtCenter)

    def _on_list_current_changed(self, current, previous) -> None:
        if not current.isValid() or self._selecting:
            return
        name = current.data()
        if name and name != self._source:
            self.set_source(name)
            self.sig_model_chosen.emit(name)
