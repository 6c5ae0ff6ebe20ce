"""The Zoo view: a zoo's models × configs grid, each cell coloured by its speedup and marked
for a failed job, a failed accuracy check and graph breaks; a summary row per config
(geometric-mean speedup, pass rate) above the models; the models sortable by worst speedup,
most breaks or longest compile (core.zoo.results.sort_models). Every figure and word comes from
core.zoo.results; this is its Qt face. A zoo.json is untrusted input: its text is shown as text.

Clicking a model's cell emits `sig_job_chosen` with that model's report folder and config;
the window opens it in the usual views. GUI thread only.
"""

from __future__ import annotations

import math
import os

from PySide6.QtCore import QAbstractTableModel, QModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QHeaderView, QLabel, QTableView, QVBoxLayout, QWidget

from core.vocab.formatting import count, fmt_speedup
from core.zoo.results import CELL_MARKS, SORT_ORDERS, ConfigSummary, Zoo, ZooRow, cell_text, sort_models
from core.zoo.results import FASTER as ZOO_FASTER
from core.zoo.results import SLOWER as ZOO_SLOWER
from gui.widgets.safe_text import plain, tooltip
from gui.widgets.table_model import keyboard_friendly
from gui.widgets.theme import error_color, is_dark

# Diverging colours (Okabe–Ito blue and vermillion, readable by colour-blind users): faster
# than eager towards blue, slower towards vermillion, full strength at 2x either way.
FASTER, SLOWER = QColor("#0072B2"), QColor("#D55E00")
FAILED_COLOR, PENDING_COLOR, RUNNING_COLOR = QColor("#7f7f7f"), QColor("#d9d9d9"), QColor("#F0E442")
FULL_AT = math.log(2.0)
LEGEND = (
    "Cell: speedup of compiled over eager (median), blue faster, vermillion slower (its 95% interval clear of "
    "1), stronger further from 1x; uncoloured within the noise, for the debugging backends (references, never "
    "a speedup) and where the timing was unusable.  FAILED: the job failed (hover for why).  "
    f"Marks: {CELL_MARKS}.  Top row: geometric-mean speedup over the models that passed with a usable timing, "
    "and the pass rate."
)


def speedup_color(speedup: float | None) -> QColor | None:
    """The cell colour for a speedup: blended from the window's base towards blue or vermillion."""
    if speedup is None or speedup <= 0:
        return None
    strength = min(1.0, abs(math.log(speedup)) / FULL_AT)
    target = FASTER if speedup >= 1 else SLOWER
    base = QColor("#202020") if is_dark() else QColor("#ffffff")
    mix = 0.15 + 0.7 * strength if abs(math.log(speedup)) > 0.02 else 0.0
    return QColor(
        round(base.red() + (target.red() - base.red()) * mix),
        round(base.green() + (target.green() - base.green()) * mix),
        round(base.blue() + (target.blue() - base.blue()) * mix),
    )


def summary_text(s: ConfigSummary) -> str:
    rate = f"{s.passed}/{s.models} passed"
    what = "reference" if s.reference else "geomean"
    return f"{fmt_speedup(s.geomean_speedup)} {what} · {rate}"


class ZooGridModel(QAbstractTableModel):
    """Row 0: the per-config summaries; then one row per model in the chosen order. Column 0
    names the model; one column per config. GUI thread only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.zoo: Zoo | None = None
        self.order = "model"
        self._models: list[str] = []
        self._summaries: list[ConfigSummary] = []
        self.running: tuple[str | None, str | None] = (None, None)  # the cell whose job runs now
        self.running_phase, self.running_detail = "", ""  # what it does now (its phase; the detail)

    def set_running(self, model: str | None, config: str | None) -> None:
        """Mark the cell of the job that runs now (None, None: none)."""
        self.running = (model, config)
        self.running_phase, self.running_detail = "", ""
        if self.rowCount():
            self.dataChanged.emit(self.index(1, 1), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def set_running_phase(self, phase: str, detail: str = "") -> None:
        """What the running job does now: `phase` in its cell, `detail` on hover."""
        self.running_phase, self.running_detail = phase, detail
        model, config = self.running
        if config is not None and self.rowCount():
            self.dataChanged.emit(self.index(1, 1), self.index(self.rowCount() - 1, self.columnCount() - 1))

    def set_zoo(self, zoo: Zoo | None, order: str | None = None) -> None:
        self.beginResetModel()
        self.zoo = zoo
        self.order = order or self.order
        self._models = sort_models(zoo, self.order) if zoo else []
        self._summaries = zoo.summaries() if zoo else []
        self.endResetModel()

    def set_order(self, order: str) -> None:
        self.set_zoo(self.zoo, order)

    def models(self) -> list[str]:
        return list(self._models)

    def cell(self, index: QModelIndex) -> tuple[str | None, str | None]:
        """(model, config) of a cell; model None for the summary row, config None for column 0."""
        if not index.isValid() or self.zoo is None:
            return None, None
        model = self._models[index.row() - 1] if index.row() > 0 else None
        config = self.zoo.configs[index.column() - 1] if index.column() > 0 else None
        return model, config

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() or self.zoo is None else len(self._models) + 1

    def columnCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() or self.zoo is None else len(self.zoo.configs) + 1

    def headerData(self, section: int, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or self.zoo is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return "model" if section == 0 else self.zoo.configs[section - 1]
        if role == Qt.ItemDataRole.ToolTipRole:
            return tooltip(
                "The model (hover for its source)"
                if section == 0
                else f"torch.compile config {self.zoo.configs[section - 1]}"
            )
        return None

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        model, config = self.cell(index)
        if index.row() == 0:
            return self._summary_data(config, role)
        row = self.zoo.row(model, config) if config else None
        running = config is not None and (model, config) == self.running
        if role == Qt.ItemDataRole.DisplayRole:
            if config is None:
                return display_name(model)
            return (f"{self.running_phase}…" if self.running_phase else "running…") if running else cell_text(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            if running and self.running_detail:
                return tooltip(f"{model} · {config}: running: {self.running_detail}")
            if config is None:
                return tooltip(f"{model}\nreport folder: {self.zoo.models.get(model, '')}")
            text = row.describe() if row else f"{model} · {config}: not in this zoo"
            if row and row.accuracy_failed:
                text += f"\naccuracy: {row.accuracy_reason}"
            return tooltip(text + "\n\nClick to open this model's report.")
        if role == Qt.ItemDataRole.BackgroundRole and config is not None:
            color = RUNNING_COLOR if running else cell_color(row)
            return QBrush(color) if color is not None else None
        if role == Qt.ItemDataRole.ForegroundRole and config is not None:
            return QBrush(text_color(RUNNING_COLOR if running else cell_color(row)))
        if (
            role == Qt.ItemDataRole.FontRole
            and row is not None
            and (row.accuracy_failed or (row.ended and not row.completed))
        ):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and config is not None:
            return int(Qt.AlignmentFlag.AlignCenter)
        if role == Qt.ItemDataRole.UserRole:
            return row
        return None

    def _summary_data(self, config: str | None, role):
        s = next((s for s in self._summaries if s.config == config), None)
        if role == Qt.ItemDataRole.DisplayRole:
            return "all models" if config is None else summary_text(s) if s else "-"
        if role == Qt.ItemDataRole.ToolTipRole:
            if config is None:
                return tooltip(
                    "Per config: the geometric-mean speedup over the models that passed, and how many "
                    "passed (completed and not failing the accuracy check)."
                )
            return tooltip(s.sentence() + (f"\n\nWarning: {s.environment_warning}" if s.environment_warning else ""))
        if role == Qt.ItemDataRole.FontRole:
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.BackgroundRole and s is not None:
            color = summary_color(s)
            return QBrush(color) if color is not None else None
        if role == Qt.ItemDataRole.ForegroundRole and s is not None:
            return QBrush(text_color(summary_color(s)))
        if role == Qt.ItemDataRole.TextAlignmentRole and config is not None:
            return int(Qt.AlignmentFlag.AlignCenter)
        return None


def display_name(model: str) -> str:
    """A model as the grid names it: a file by its name (the full path in the tooltip)."""
    if "/" in model and not model.startswith(("timm:", "hf:")):
        head, sep, factory = model.rpartition(":")
        if sep and "/" not in factory and head:
            return f"{os.path.basename(head)}:{factory}"
        return os.path.basename(model)
    return model


def text_color(background: QColor | None) -> QColor:
    """Black or white, whichever reads better on `background` (the palette's text without one)."""
    if background is None:
        from PySide6.QtWidgets import QApplication

        return QApplication.palette().text().color()
    luminance = (
        0.2126 * background.redF() ** 2.2 + 0.7152 * background.greenF() ** 2.2 + 0.0722 * background.blueF() ** 2.2
    )
    return QColor("#000000") if luminance > 0.18 else QColor("#ffffff")


def cell_color(row: ZooRow | None) -> QColor | None:
    """Only a speedup the measurements can stand behind is coloured (core.zoo.results's verdict)."""
    if row is None or row.status == "pending":
        return PENDING_COLOR
    if not row.completed:
        return FAILED_COLOR
    return speedup_color(row.speedup) if row.verdict in (ZOO_FASTER, ZOO_SLOWER) else None


def summary_color(s: ConfigSummary | None) -> QColor | None:
    return None if s is None or s.reference else speedup_color(s.geomean_speedup)


class ZooPanel(QWidget):
    """The grid, its sort order, the per-config sentences and the warnings. GUI thread only."""

    sig_job_chosen = Signal(str, str)
    """A cell was clicked: (the model's report folder, the config; "" for the model column)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = ZooGridModel(self)
        self.order = QComboBox()
        for name, why in SORT_ORDERS.items():
            self.order.addItem(name)
            self.order.setItemData(self.order.count() - 1, why, Qt.ItemDataRole.ToolTipRole)
        self.order.setCurrentText("worst speedup")
        self.order.setToolTip("Order of the models")
        self.order.currentTextChanged.connect(self.model.set_order)
        self.title = plain(QLabel("No zoo opened"))
        self.title.setWordWrap(True)
        self.table = keyboard_friendly(QTableView())
        self.table.setModel(self.model)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setMinimumSectionSize(110)
        self.table.clicked.connect(self._on_clicked)
        self.sentences = plain(QLabel(""))
        self.sentences.setWordWrap(True)
        self.sentences.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.warning = plain(QLabel(""))
        self.warning.setWordWrap(True)
        self.warning.setStyleSheet(f"color: {error_color()}")
        self.warning.hide()
        self.legend = plain(QLabel(LEGEND))
        self.legend.setWordWrap(True)

        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(plain(QLabel("Sort by")))
        top.addWidget(self.order)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.warning)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.sentences)
        layout.addWidget(self.legend)

    def show_zoo(self, zoo: Zoo | None) -> None:
        """Show a zoo (None: nothing); keeps the chosen order."""
        self.model.set_zoo(zoo, self.order.currentText())
        if zoo is None:
            self.title.setText("No zoo opened")
            self.sentences.setText("")
            self.warning.hide()
            return
        jobs = len(zoo.rows)
        ended = sum(r.ended for r in zoo.rows)
        state = "" if zoo.finished else f" — in progress: {ended} of {jobs} jobs ended"
        size = f"{count(len(zoo.models), 'model')} × {count(len(zoo.configs), 'config')}"
        self.title.setText(f"{zoo.path}: {size}{state}")
        self.sentences.setText("\n".join(s.sentence() for s in zoo.summaries()))
        warnings = list(zoo.warnings) + ([zoo.overall_warning()] if zoo.overall_warning() else [])
        self.warning.setText("\n".join(f"Warning: {w}" for w in warnings))
        self.warning.setVisible(bool(warnings))

    def _on_clicked(self, index: QModelIndex) -> None:
        model, config = self.model.cell(index)
        if model is None or self.model.zoo is None:
            return
        self.sig_job_chosen.emit(self.model.zoo.report_folder(model), config or "")
