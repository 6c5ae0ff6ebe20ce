"""A combo box choosing one config of the results on screen, by its label (report text,
shown as plain text by the combo), keeping the choice across refreshes. GUI thread only."""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QComboBox

from gui.widgets.theme import config_text_color


class ConfigPicker(QComboBox):
    """One entry per JobResult; `current()` is the chosen result (None when empty)."""

    sig_config_chosen = Signal()
    """Another config was chosen (by the user or because the results changed)."""

    def __init__(self, tip: str, parent=None):
        super().__init__(parent)
        self.setToolTip(tip)
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToContents)
        self._results: list = []
        self.currentIndexChanged.connect(lambda _: self.sig_config_chosen.emit())

    def set_results(self, results) -> None:
        """Offer `results`; the config chosen before stays chosen when it is still there."""
        label = self.currentText()
        self._results = list(results)
        self.blockSignals(True)
        self.clear()
        for i, r in enumerate(self._results):
            self.addItem(r.config.label)
            self.setItemData(i, config_text_color(i), Qt.ItemDataRole.ForegroundRole)
        index = self.findText(label) if label else -1
        self.setCurrentIndex(index if index >= 0 else (0 if self._results else -1))
        self.blockSignals(False)
        self.sig_config_chosen.emit()

    def current(self):
        i = self.currentIndex()
        return self._results[i] if 0 <= i < len(self._results) else None

    def choose(self, label: str) -> bool:
        """Choose the config called `label`; False when there is none."""
        index = self.findText(label)
        if index < 0:
            return False
        self.setCurrentIndex(index)
        return True
