"""Choosing what to profile: the bundled examples (`resources/models`), a searchable list of
torchvision models, model files (open, drop, recent), the input settings (batch size, image
size) and, for a model file that defines get_input_variants(), the shape sweep.

Opening a file, and the notice that a Python file runs code, is the window's job (it owns
the actions); this panel shows the choice. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QStringListModel,
    Qt,
    Signal,
)
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QMenu,
    QSpinBox,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from core.models import defines_variants, is_file_source
from core.models.examples import examples_in
from core.vocab.limits import LIMITS
from gui.form.model_lists import ExampleModel, ModelMatches
from gui.widgets.safe_text import markup, tooltip


class _SearchKeys(QObject):
    """Up and Down in the search box move the highlighted match in the list below (focus
    stays in the box, as a completer's popup); Enter is `returnPressed`."""

    def __init__(self, panel: "ModelPanel"):
        super().__init__(panel)
        self.panel = panel

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Down, Qt.Key.Key_Up):
            self.panel.move_highlight(1 if event.key() == Qt.Key.Key_Down else -1)
            return True
        return False


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
        self.current.setTextFormat(Qt.TextFormat.RichText)  # our markup; the model's name inside is escaped
        self.current.setWordWrap(True)
        self.current.setToolTip("The model the next run profiles")

        self.examples = ExampleModel(examples_in(), self)
        self.example_list = _example_list(self.examples)
        self.example_list.selectionModel().currentChanged.connect(self._on_example_current_changed)

        self.search = _search_field()
        self.names = QStringListModel(self)
        self.proxy = ModelMatches(self.names, self)
        self.search.textChanged.connect(self._on_search_edited)
        self.search.returnPressed.connect(self.choose_highlighted)
        self._search_keys = _SearchKeys(self)
        self.search.installEventFilter(self._search_keys)
        self._highlight_moved = False  # Down/Up chose the highlighted row since the last keystroke
        self.list = _model_list(self.proxy)
        self.list.selectionModel().currentChanged.connect(self._on_list_current_changed)
        self.loading = QLabel("Loading torchvision models…")
        self.loading.setStyleSheet("color: gray")

        self.open_button = QToolButton()
        self.open_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        self.recent_menu = QMenu(self)
        self.recent_button = _recent_button(self.recent_menu)
        buttons = QHBoxLayout()
        buttons.addWidget(self.open_button, 1)
        buttons.addWidget(self.recent_button)

        self.batch, self.image, self.sweep = _input_fields()
        form = QFormLayout()
        sizes = QHBoxLayout()
        sizes.addWidget(self.batch, 1)
        sizes.addWidget(QLabel("Image size"))
        sizes.addWidget(self.image, 1)
        form.addRow("Batch size", sizes)
        form.addRow("", self.sweep)
        self._add_workload_rows(form)

        layout = QVBoxLayout(self)
        layout.addWidget(self.current)
        layout.addWidget(_heading("Examples"))
        layout.addWidget(self.example_list)
        layout.addWidget(_heading("Models: torchvision, timm, Hugging Face"))
        layout.addWidget(self.search)
        layout.addWidget(self.loading)
        layout.addWidget(self.list, 1)
        layout.addLayout(buttons)
        layout.addLayout(form)

    # ---------------------------------------------------------------- contents
    def set_models(self, names) -> None:
        self._highlight_moved = False
        self.names.setStringList(list(names))
        self.loading.setVisible(not names)
        if not names:
            self.loading.setText("No torchvision models available; open a model file instead.")
        if self._source and not is_file_source(self._source):
            self._select_in_list(self._source)

    def add_models(self, names) -> None:
        """More catalog names (timm:, hf:) arrived after torch's; append them to the list."""
        known = self.names.stringList()
        seen = set(known)
        self._highlight_moved = False
        self.names.setStringList(known + [n for n in names if n not in seen])
        if self._source and not is_file_source(self._source):
            self._select_in_list(self._source)

    def set_recent(self, paths: list[str]) -> None:
        self.recent_menu.clear()
        for path in paths:
            action = self.recent_menu.addAction(os.path.basename(path))
            action.setToolTip(tooltip(path))
            action.setData(path)
            action.triggered.connect(lambda checked=False, p=path: self.sig_recent_chosen.emit(p))
        self.recent_button.setEnabled(bool(paths))

    def set_source(self, source: str) -> None:
        """Show `source` as the chosen model (does not emit)."""
        self._source = source
        sweepable = is_file_source(source) and defines_variants(source)
        self.sweep.setEnabled(sweepable)
        if not sweepable:
            self.sweep.setChecked(False)
        self._select_example(source)
        if is_file_source(source):
            self.current.setText(
                f"Next run: <b>{markup(os.path.basename(source))}</b><br>"
                f"<small>{markup(os.path.dirname(source))}</small>"
            )
            self.current.setToolTip(tooltip(f"The model the next run profiles:\n{source}"))
            self._selecting = True
            try:  # also forget the current row, so clicking it again chooses it again
                self.list.setCurrentIndex(QModelIndex())
                self.list.clearSelection()
            finally:
                self._selecting = False
        else:
            kind = (
                "Hugging Face" if source.startswith("hf:") else "timm" if source.startswith("timm:") else "torchvision"
            )
            self.current.setText(
                f"Next run: <b>{markup(source)}</b> <small>({kind})</small>" if source else "<i>none chosen</i>"
            )
            self.current.setToolTip("The model the next run profiles")
            self._select_in_list(source)

    def source(self) -> str:
        return self._source

    def _add_workload_rows(self, form: QFormLayout) -> None:
        """Task (inference or a training step, with its optimizer), a batch-size sweep, and the
        Hugging Face settings (sequence length, config overrides): the options of `profile`'s
        --task, --optimizer, --sweep-batch, --seq-len and --hf-config."""
        self.task = QComboBox()
        self.task.addItem("Inference", "inference")
        self.task.addItem("Training step", "training")
        self.task.addItem("Generate (causal LM)", "generate")
        self.task.setToolTip(
            "Inference: one call is a forward. Training step: forward, loss, backward and an "
            "optimizer step, eager against compiled from the same weights and optimizer state. "
            "Generate: a Hugging Face causal language model generating text (time to first token, "
            "per-token decode, tokens/s, recompiles), in a window of its own"
        )
        self.optimizer = QComboBox()
        self.optimizer.addItems(["sgd", "adamw"])
        self.optimizer.setToolTip("The optimizer of a training step")
        task_row = QHBoxLayout()
        task_row.addWidget(self.task, 1)
        task_row.addWidget(self.optimizer)
        self.task.currentIndexChanged.connect(lambda *_: self.optimizer.setEnabled(self.task_value() == "training"))
        self.optimizer.setEnabled(False)
        form.addRow("Task", task_row)
        self.sweep_batch_edit = QLineEdit()
        self.sweep_batch_edit.setPlaceholderText("e.g. 1,8,32 (empty: no sweep)")
        self.sweep_batch_edit.setToolTip(
            "Profile each config at each of these batch sizes against one compiled "
            "model: throughput eager and compiled (Shape sweep tab)"
        )
        form.addRow("Sweep batch", self.sweep_batch_edit)
        self.seq_len = QSpinBox()
        self.seq_len.setRange(int(LIMITS["seq_len"].low), int(LIMITS["seq_len"].high))
        self.seq_len.setValue(int(LIMITS["seq_len"].default))
        self.seq_len.setToolTip("Tokens per sequence of Hugging Face text models (hf:...)")
        self.hf_config = QLineEdit()
        self.hf_config.setPlaceholderText("num_hidden_layers=2 hidden_size=128")
        self.hf_config.setToolTip("Overrides of the Hugging Face model's config, KEY=VALUE separated by spaces")
        hf_row = QHBoxLayout()
        hf_row.addWidget(self.seq_len)
        hf_row.addWidget(self.hf_config, 1)
        form.addRow("HF seq len, config", hf_row)

    def task_value(self) -> str:
        return self.task.currentData() or "inference"

    def set_task(self, task: str) -> None:
        self.task.setCurrentIndex(max(0, self.task.findData(task)))

    def sweep_batch(self) -> tuple[int, ...]:
        """The batch sizes to sweep (empty: none); raises ValueError with the reason."""
        import argparse

        from core.cli.args import parse_batch_sizes

        text = self.sweep_batch_edit.text().strip()
        if not text:
            return ()
        try:
            return parse_batch_sizes(text)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"Sweep batch: {exc}") from None

    def hf_overrides(self) -> tuple[str, ...]:
        return tuple(self.hf_config.text().split())

    def sweeps(self) -> bool:
        """The next run sweeps shapes or batch sizes (a batch list that does not parse counts: the
        run refuses it with the reason)."""
        return self.sweep_shapes() or bool(self.sweep_batch_edit.text().strip())

    def sweep_shapes(self) -> bool:
        """Whether the next run sweeps the model's input variants."""
        return self.sweep.isEnabled() and self.sweep.isChecked()

    def _select_example(self, source: str) -> None:
        row = self.examples.row_of(source)
        self._selecting = True
        try:
            if row < 0:
                self.example_list.clearSelection()
                self.example_list.setCurrentIndex(QModelIndex())
            else:
                self.example_list.setCurrentIndex(self.examples.index(row))
        finally:
            self._selecting = False

    def _on_example_current_changed(self, current, previous) -> None:
        if not current.isValid() or self._selecting:
            return
        source = current.data(Qt.ItemDataRole.UserRole)
        if source and source != self._source:
            self.set_source(source)
            self.sig_model_chosen.emit(source)

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

    # ---------------------------------------------------------------- search
    def _on_search_edited(self, text: str) -> None:
        """Filter and rank; the chosen model stays chosen (shown selected when it matches)
        and nothing is chosen by typing: filtering removes rows, and Qt then moves the list's
        current row to a neighbour, which must not choose that neighbour."""
        self._selecting = True
        try:
            self.proxy.set_search(text)
            self.list.setCurrentIndex(QModelIndex())
            self.list.clearSelection()
        finally:
            self._selecting = False
        self._highlight_moved = False
        self._show_chosen_in_list()
        if self.proxy.rowCount():
            self.list.scrollToTop()

    def _show_chosen_in_list(self) -> None:
        """Mark the chosen model in the list (selected, not current) when it is shown."""
        rows = self.names.stringList()
        if self._source in rows:
            index = self.proxy.mapFromSource(self.names.index(rows.index(self._source)))
            if index.isValid():
                self.list.selectionModel().select(index, self.list.selectionModel().SelectionFlag.ClearAndSelect)

    def move_highlight(self, step: int) -> None:
        """Move the highlighted match (Down/Up in the search box) without choosing it."""
        count = self.proxy.rowCount()
        if not count:
            return
        current = self.list.currentIndex()
        if not self._highlight_moved or not current.isValid():
            row = 0 if step > 0 else count - 1
        else:
            row = min(max(current.row() + step, 0), count - 1)
        self._selecting = True
        try:
            self.list.setCurrentIndex(self.proxy.index(row, 0))
        finally:
            self._selecting = False
        self._highlight_moved = True
        self.list.scrollTo(self.proxy.index(row, 0))

    def choose_highlighted(self) -> str:
        """Enter in the search box: choose the match Down/Up highlighted, else the best
        match (the first row); the chosen name, '' when nothing matches."""
        current = self.list.currentIndex()
        index = current if self._highlight_moved and current.isValid() else self.proxy.index(0, 0)
        if not index.isValid():
            return ""
        name = index.data()
        self._highlight_moved = False
        if name != self._source:
            self.set_source(name)
            self.sig_model_chosen.emit(name)
        return name

    def _on_list_current_changed(self, current, previous) -> None:
        if not current.isValid() or self._selecting:
            return
        name = current.data()
        if name and name != self._source:
            self.set_source(name)
            self.sig_model_chosen.emit(name)


def _heading(text: str) -> QLabel:
    label = QLabel(f"<b>{text}</b>")
    label.setContentsMargins(0, 4, 0, 0)
    return label


def _example_list(examples: ExampleModel) -> QListView:
    """The bundled examples, every row in sight."""
    view = QListView()
    view.setModel(examples)
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setToolTip(
        "Example models that ship with compile-profiler (resources/models); "
        "click one to choose it, hover for what it shows"
    )
    rows = max(1, examples.rowCount())
    view.setFixedHeight(rows * (view.sizeHintForRow(0) + 1) + 6)
    return view


def _search_field() -> QLineEdit:
    search = QLineEdit()
    search.setPlaceholderText("Search torchvision, timm: and hf: models…")
    search.setClearButtonEnabled(True)
    search.setToolTip(
        "Filter the models by name: the exact name first, then names that start with it, then the rest. "
        "Enter chooses the best match (Down/Up pick another first); typing alone changes nothing"
    )
    return search


def _model_list(proxy: ModelMatches) -> QListView:
    view = QListView()
    view.setModel(proxy)
    view.setUniformItemSizes(True)  # one name a row: no size measured per row at each change
    view.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    view.setToolTip(
        "torchvision models, timm:NAME (pretrained=False) and hf:TYPE (a Hugging Face model "
        "type from its default config), all with random weights; click one to choose it"
    )
    view.setMinimumHeight(80)
    return view


def _recent_button(menu: QMenu) -> QToolButton:
    button = QToolButton()
    button.setText("Recent")
    button.setToolTip("Model files opened before")
    button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
    button.setMenu(menu)
    return button


def _input_fields() -> tuple[QSpinBox, QSpinBox, QCheckBox]:
    """Batch size and image size (core's accepted ranges), and the shape sweep's switch."""
    batch = QSpinBox()
    batch.setRange(int(LIMITS["batch_size"].low), int(LIMITS["batch_size"].high))
    batch.setToolTip("Batch size of the example input (torchvision models and TorchScript files)")
    image = QSpinBox()
    image.setRange(int(LIMITS["image_size"].low), int(LIMITS["image_size"].high))
    image.setSingleStep(32)
    image.setValue(224)
    image.setToolTip(
        "Height and width of the example images (torchvision models and TorchScript files); "
        "Python model files make their own inputs"
    )
    sweep = QCheckBox("Sweep input shapes")
    sweep.setEnabled(False)
    sweep.setToolTip(
        "Run every input of the model file's get_input_variants() against one compiled "
        "model per config: latency per shape, recompiles and their reasons (Shape sweep "
        "tab). Only for model files that define get_input_variants()."
    )
    return batch, image, sweep
