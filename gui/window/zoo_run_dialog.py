"""File → Run a zoo…: pick models (the bundled examples, torchvision's models, the model chosen
in the main window), run them under the configs queued in the main window with its run
settings, into a zoo folder, on this machine (core.zoo.sweep's local executor, one job at a
time), and follow it live in a Zoo window. The folder gets exactly what `python main.py zoo`
writes, so the command line can `--resume` it. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QAbstractListModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListView,
    QPushButton,
    QVBoxLayout,
)

from core.report.files import ReportError
from core.vocab.config import ModelSpec, make_jobs
from core.vocab.limits import ConfigError, check_limits
from gui.widgets.folder_dialog import ask_folder
from gui.widgets.safe_text import plain
from gui.window.app_window import AppWindow


class PickModel(QAbstractListModel):
    """Checkable rows over (source, label) pairs; `picked()` in list order. GUI thread only."""

    def __init__(self, items: list[tuple[str, str]], checked=(), parent=None):
        super().__init__(parent)
        self._items = list(items)
        self._checked = set(checked)

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._items)

    def data(self, index: QModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        source, label = self._items[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return label
        if role == Qt.ItemDataRole.ToolTipRole:
            return source
        if role == Qt.ItemDataRole.CheckStateRole:
            return Qt.CheckState.Checked if source in self._checked else Qt.CheckState.Unchecked
        if role == Qt.ItemDataRole.UserRole:
            return source
        return None

    def flags(self, index: QModelIndex):
        return super().flags(index) | Qt.ItemFlag.ItemIsUserCheckable

    def setData(self, index: QModelIndex, value, role=Qt.ItemDataRole.EditRole) -> bool:
        if role != Qt.ItemDataRole.CheckStateRole or not index.isValid():
            return False
        source = self._items[index.row()][0]
        if Qt.CheckState(value) == Qt.CheckState.Checked:
            self._checked.add(source)
        else:
            self._checked.discard(source)
        self.dataChanged.emit(index, index, [role])
        return True

    def set_checked(self, source: str, checked: bool = True) -> None:
        for row, (s, _) in enumerate(self._items):
            if s == source:
                self.setData(
                    self.index(row),
                    Qt.CheckState.Checked if checked else Qt.CheckState.Unchecked,
                    Qt.ItemDataRole.CheckStateRole,
                )

    def picked(self) -> list[str]:
        return [s for s, _ in self._items if s in self._checked]


def model_choices(window: AppWindow) -> list[tuple[str, str]]:
    """What may be swept: the model chosen in the main window, the bundled examples, and
    torchvision's models (a file only when the main window already has it: no new code runs
    unasked)."""
    from core.models.examples import examples_in

    items = []
    chosen = window.model_panel.source()
    if chosen:
        items.append((chosen, f"{os.path.basename(chosen) if os.sep in chosen else chosen}  · chosen in the window"))
    items += [(e.source, f"{e.name}  · example") for e in examples_in() if e.source != chosen]
    names = window.torch_info.models if window.torch_info is not None else ()
    items += [(n, n) for n in names if n != chosen]
    return items


class ZooRunDialog(QDialog):
    """Models to sweep and the folder to write. GUI thread only."""

    def __init__(self, main, parent=None):
        super().__init__(parent or main)
        self.setWindowTitle("Run a zoo")
        self.main = main
        self.picks = PickModel(model_choices(main), [main.model_panel.source()] if main.model_panel.source() else ())
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.picks)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter models…")
        self.filter.textChanged.connect(self.proxy.setFilterFixedString)
        self.list = QListView()
        self.list.setModel(self.proxy)
        configs, dropped = zoo_configs(main.config_panel.run_configs())
        panel, mp = main.config_panel, main.model_panel
        hf = f"sequence length {mp.seq_len.value()}"
        if mp.hf_overrides():
            hf += f", config {' '.join(mp.hf_overrides())}"
        marks = (
            f"\nLeft out: {', '.join(dropped)} (marks one model's input dimensions; they mean nothing for another model)."
            if dropped
            else ""
        )
        self.settings = plain(
            QLabel(
                f"Configs (queued in the main window): {', '.join(c.label for c in configs)}{marks}\n"
                f"Per job: {panel.warmup.value()} warm-up and {panel.iters.text()} timed calls per side, in "
                f"{panel.processes.value()} process(es), on "
                f"{panel.device.currentText()}, batch {mp.batch.value()}, image size "
                f"{mp.image.value()}; Hugging Face models: {hf}. Jobs run one at a time, each in its own process."
            )
        )
        self.settings.setWordWrap(True)
        self.folder = QLineEdit(main.folders.new_zoo_folder())
        self.folder.setToolTip(
            "A new folder for the zoo's files (made when the zoo starts); a folder holding an earlier zoo is refused"
        )
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.folder, 1)
        row.addWidget(browse)
        form = QFormLayout()
        form.addRow("Write into", row)
        self.problem = plain(QLabel(""))
        self.problem.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.start_button = buttons.addButton("Run zoo", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self._on_accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.list, 1)
        layout.addWidget(self.settings)
        layout.addLayout(form)
        layout.addWidget(self.problem)
        layout.addWidget(buttons)
        self.resize(520, 560)

    def _browse(self) -> None:
        start = os.path.dirname(self.folder.text().strip()) or os.path.expanduser("~")
        path = ask_folder(self, "Zoo folder", start)
        if path:
            self.folder.setText(path)

    def _on_accept(self) -> None:
        problem = "" if self.picks.picked() else "Pick at least one model."
        problem = problem or ("" if self.folder.text().strip() else "Choose a folder to write into.")
        if problem:
            self.problem.setText(problem)
            return
        self.accept()


def zoo_configs(configs: list) -> tuple[list, list[str]]:
    """The queued configs as the zoo runs them: without mark_dynamic (one model's input
    dimensions, meaningless for the others), the same config once; and the marks left out."""
    import dataclasses

    out, dropped = [], []
    for c in configs:
        if c.mark_dynamic:
            dropped.append(f"mark_dynamic={','.join(m.label for m in c.mark_dynamic)} of {c.label}")
            c = dataclasses.replace(c, mark_dynamic=())
        if c not in out:
            out.append(c)
    return out, dropped


def build_sweep(window: AppWindow, models: list[str], folder: str):
    """(ZooSweep, its jobs) for `models` under the main window's queued configs and run
    settings, folders claimed; ConfigError or ReportError says why not."""
    from core.models import ModelLoadError, check_source, source_kind
    from core.zoo.sweep import ZooSweep

    panel, model_panel = window.config_panel, window.model_panel
    configs, _ = zoo_configs(panel.run_configs())
    problem = panel.validate(configs)
    if problem:
        raise ConfigError(problem)
    check_limits(
        warmup=panel.warmup.value(), batch_size=model_panel.batch.value(), image_size=model_panel.image.value()
    )
    iterations = panel.iteration_fields()
    device = panel.device.currentText()
    specs = {}
    for source in models:
        model = ModelSpec(
            source,
            batch_size=model_panel.batch.value(),
            image_size=model_panel.image.value(),
            seq_len=model_panel.seq_len.value(),
            # the form's Hugging Face config is the user's (a 2-layer GPT-2): the zoo's Hugging Face
            # models are built with it, as the main window's run builds them
            hf_config=model_panel.hf_overrides() if source_kind(source) == "hf" else (),
        )
        # A file is checked here (does it exist); a timm, torchvision or Hugging Face name needs
        # torch and its library, which the app's process never imports, and a Hugging Face config
        # is sized by building it: each job checks its model in its own process, before building
        # it, and a refused one fails its row with the reason.
        if source_kind(source) == "file":
            try:
                check_source(model, device)
            except ModelLoadError as exc:
                raise ConfigError(f"{source}: {exc}") from None
        specs[source] = make_jobs(model, configs, warmup=panel.warmup.value(), **iterations, device=device)
    options = {
        "source": "gui",
        "models": models,
        "configs": [c.label for c in configs],
        "warmup": panel.warmup.value(),
        "iters": panel.iters.value() or "auto",
        "processes": iterations["processes"],
        "device": device,
        "batch_size": model_panel.batch.value(),
        "image_size": model_panel.image.value(),
        "seq_len": model_panel.seq_len.value(),
        "hf_config": list(model_panel.hf_overrides()),
    }
    sweep = ZooSweep(folder, specs, options)
    return sweep, sweep.prepare()


def run_zoo(window: AppWindow, models: list[str] | None = None, folder: str | None = None):
    """File → Run a zoo…: ask (unless `models` and `folder` are given), start the sweep and
    open its Zoo window following it; the window, or None when nothing started."""
    from gui.window.zoo_window import ZooWindow, keep

    if window.torch_info is None:
        window.show_error("Not ready", "torch is still loading; try again in a moment.")
        return None
    if models is None or folder is None:
        dialog = ZooRunDialog(window)
        if dialog.exec() != QDialog.DialogCode.Accepted:
            return None
        models, folder = dialog.picks.picked(), dialog.folder.text().strip()
    try:
        sweep, jobs = build_sweep(window, models, folder)
    except (ConfigError, ReportError) as exc:
        window.show_error("Cannot run the zoo", str(exc))
        return None
    window.folders.remember("zoo", os.path.dirname(os.path.abspath(folder)))  # the next zoo goes beside it
    zoo_window = keep(window, ZooWindow(window))
    zoo_window.follow(sweep, jobs)
    zoo_window.show()
    return zoo_window
