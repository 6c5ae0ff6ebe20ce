"""Compile configs: backend and mode from the installed torch, dynamic, fullgraph,
`torch._dynamo.config` overrides, device, warm-up and iterations, and a queue of configs to
compare in one run (with one click for the three dynamic settings of a shape sweep).

Every config is checked with `core.vocab.config.validate_config` (and its dynamo overrides
against the installed torch's settings) as it is edited and again before a run; what torch
would refuse is explained inline, in red, before anything runs. The queue shows each
config's status and, for a failed job, its reason. A suggestion line offers a dynamo
setting the model needs (allow_rnn for an LSTM); a run's suggestions (core.decide.suggestions, in the
Decision tab) change the queue through `apply_change`. GUI thread only.
"""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QGroupBox,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from core.vocab import dynamo_overrides
from core.vocab.config import CompileConfig, default_configs, default_configs_note, validate_config
from core.vocab.limits import ConfigError, iteration_fields
from gui.form.config_fields import (
    combo,
    compile_fields,
    count_fields,
    dynamo_config_field,
    precision_field,
    queue_box,
    queue_buttons,
    queue_view,
    row,
    run_bar,
    set_items,
    suggestion_box,
    timing_field,
)
from gui.form.config_queue import QueueEntry, QueueModel  # noqa: F401  (QueueEntry: re-exported)
from gui.widgets.safe_text import plain
from gui.widgets.theme import error_color

SWEEP_DYNAMICS = ("false", "auto", "true")  # specialise, torch decides, symbolic from the start


class ConfigPanel(QGroupBox):
    """GUI thread only."""

    sig_config_edited = Signal()
    """A setting changed (the window re-validates and saves settings)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__("Compile configs", parent)
        self.torch_info_loaded = False
        self.dynamo_defaults: dict | None = None  # torch._dynamo.config's settings, from torch's offer
        self._offer: dict = {}  # what torch offers here, for validate_config (set_torch_info)
        self._suggestion: tuple[str, str] | None = None
        # how torch.compile is called
        self.backend, self.mode, self.dynamic, self.fullgraph, self.compile_optimizer = compile_fields()
        self.dynamo_config = dynamo_config_field()
        self.device = combo(("cpu",), "Where the model runs; CUDA is offered only when torch sees a GPU")
        # how calls are timed and computed
        self.warmup, self.iters, self.processes = count_fields()
        self.precision, self.timing = precision_field(), timing_field()
        self.error = plain(QLabel(""))  # messages quote what was typed or read: never rich text
        self.error.setWordWrap(True)
        self.error.setStyleSheet(f"color: {error_color()}")
        self.error.hide()
        # what the default profiles beside the config being edited (core.vocab.config.default_configs)
        self.workload = ("inference", False)  # the next run's task, and whether it sweeps (set_workload)
        self.default_note = plain(QLabel(""))
        self.default_note.setWordWrap(True)
        self.default_note.hide()
        # a dynamo setting the chosen model needs to compile at all, with its button
        self.suggestion = plain(QLabel(""))  # quotes torch's hint from a run or a report
        self.suggestion_button = QPushButton()
        self.suggestion_box = suggestion_box(self.suggestion, self.suggestion_button)
        self.suggestion_button.clicked.connect(self._on_suggestion_clicked)
        # the queue of configs and its buttons; the run bar
        self.add_button, self.remove_button, self.dynamics_button = queue_buttons()
        self.queue = QueueModel(self)
        self.queue_view = queue_view(self.queue)
        self.queue_box = queue_box(self.queue_view, self.add_button, self.remove_button, self.dynamics_button)
        self.run_button = QPushButton()
        self.cancel_button = QPushButton()
        self.run_bar = run_bar(self.run_button, self.cancel_button)

        layout = QVBoxLayout(self)
        layout.addLayout(self._form())
        layout.addWidget(self.error)
        layout.addWidget(self.default_note)
        layout.addWidget(self.suggestion_box)
        layout.addWidget(self.queue_box, 1)  # where the window does not place it apart (a panel alone)
        self._connect()

    def _form(self) -> QFormLayout:
        form = QFormLayout()
        form.addRow("Backend", self.backend)
        form.addRow("Mode", self.mode)
        form.addRow("Dynamic", row(self.dynamic, self.fullgraph, self.compile_optimizer))
        form.addRow("Dynamo config", self.dynamo_config)
        form.addRow("Device", self.device)
        # Processes on a row of its own: the three fields side by side made the form 449 px wide,
        # wider than its pane (the form and the queue's statuses were cut at the right).
        form.addRow("Warm-up", row(self.warmup, QLabel("Iterations"), self.iters))
        form.addRow("Processes", row(self.processes))
        form.addRow("Precision", self.precision)  # rows of their own: side by side they cut the form
        form.addRow("Timing", self.timing)
        return form

    def _connect(self) -> None:
        self.add_button.clicked.connect(self._on_add_clicked)
        self.remove_button.clicked.connect(self._on_remove_clicked)
        self.dynamics_button.clicked.connect(self._on_dynamics_clicked)
        for box in (self.backend, self.mode, self.dynamic, self.device):
            box.currentTextChanged.connect(self._on_edited)
        for w in (self.warmup, self.iters, self.processes):
            w.valueChanged.connect(self._on_edited)
        self.fullgraph.toggled.connect(self._on_edited)
        self.compile_optimizer.toggled.connect(self._on_edited)
        self.dynamo_config.textChanged.connect(self._on_edited)
        for changed in (self.queue.rowsInserted, self.queue.rowsRemoved, self.queue.modelReset):
            changed.connect(lambda *_: self._refresh_default_note())

    # ---------------------------------------------------------------- torch info
    def set_torch_info(
        self, backends, modes, cuda_available: bool, dynamo_defaults: dict | None = None, all_backends=()
    ) -> None:
        """Fill the pickers from the installed torch (keeps the current choices if valid);
        `dynamo_defaults` (torch._dynamo.config's settings) validates the overrides, and
        `all_backends` (every backend torch accepts; default: those offered), the modes and
        CUDA's presence the configs, so that checking a config never imports torch here."""
        self.dynamo_defaults = dict(dynamo_defaults) if dynamo_defaults else None
        self._offer = {
            "backends": tuple(all_backends) or tuple(backends),
            "modes": tuple(modes),
            "cuda_available": bool(cuda_available),
        }
        set_items(self.backend, backends, self.backend.currentText())
        set_items(self.mode, modes, self.mode.currentText())
        set_items(self.device, ("cpu", "cuda") if cuda_available else ("cpu",), self.device.currentText())
        self.torch_info_loaded = True
        self.validate()

    # ---------------------------------------------------------------- values
    def iteration_fields(self) -> dict:
        """The JobSpec fields of the measuring boxes: iterations and processes
        (core.vocab.limits.iteration_fields), the precision (dtype, autocast) and the timing method."""
        iters = self.iters.value()
        dtype, autocast = self.precision.currentData() or ("float32", "")
        return {
            **iteration_fields(iters or None, processes=self.processes.value()),
            "dtype": dtype,
            "autocast": autocast,
            "timing": self.timing.currentText() or "latency",
        }

    def current_config(self) -> CompileConfig:
        """The config being edited (overrides that do not parse are left out; `validate` says why)."""
        try:
            dynamo = self.dynamo_overrides()
        except ConfigError:
            dynamo = ()
        return CompileConfig(
            backend=self.backend.currentText(),
            mode=self.mode.currentText() or "default",
            dynamic=self.dynamic.currentText(),
            fullgraph=self.fullgraph.isChecked(),
            dynamo_config=dynamo,
            compile_optimizer=self.compile_optimizer.isChecked(),
        )

    def dynamo_overrides(self) -> tuple:
        """The dynamo overrides of the field, sorted (key, value) pairs. Raises ConfigError."""
        return dynamo_overrides.parse(self.dynamo_config.text(), self.dynamo_defaults)

    def set_config(self, config: CompileConfig) -> None:
        for box, value in ((self.backend, config.backend), (self.mode, config.mode), (self.dynamic, config.dynamic)):
            if box.findText(value) < 0:
                box.addItem(value)  # torch's offer not loaded yet: validation will judge it
            box.setCurrentText(value)
        self.fullgraph.setChecked(config.fullgraph)
        self.compile_optimizer.setChecked(config.compile_optimizer)
        self.dynamo_config.setText(dynamo_overrides.as_text(config.dynamo_config))

    def run_configs(self) -> list[CompileConfig]:
        """What Run profiles: the queue, or when the queue is empty the config being edited and what
        the default adds to it for the workload (core.vocab.config.default_configs)."""
        if self.queue.configs:
            return self.queue.configs
        return default_configs([self.current_config()], self.device.currentText(), *self.workload)

    def set_workload(self, task: str, sweep: bool) -> None:
        """The next run's task and whether it sweeps: what the default profiles depends on them."""
        self.workload = (task, sweep)
        self._refresh_default_note()

    def _refresh_default_note(self) -> None:
        added = self.run_configs()[1:] if not self.queue.configs else []
        self.default_note.setText(default_configs_note(added, app=True) if added else "")
        self.default_note.setVisible(bool(added))

    def validate(self, configs: list[CompileConfig] | None = None) -> str:
        """Check `configs` (default: the one being edited); show and return the problem
        ('' if none). Before a run the window passes `run_configs()`."""
        if not self.torch_info_loaded:
            self._show_error("")
            return "torch is still loading; wait a moment"
        problem = self.field_problem()
        if problem and configs is not None and self.queue.configs:
            problem = ""  # the run uses the queue, not the field; the field's error stays shown below
        for config in configs if configs is not None else [self.current_config()]:
            if problem:
                break
            problem = self.config_problem(config)
        self._show_error(problem or self.field_problem())
        return problem

    def field_problem(self) -> str:
        """Why the dynamo overrides field does not parse, or ''."""
        try:
            self.dynamo_overrides()
        except ConfigError as exc:
            return str(exc)
        return ""

    def config_problem(self, config: CompileConfig) -> str:
        """What torch would refuse in `config` ('' if nothing)."""
        try:
            validate_config(config, self.device.currentText(), **self._offer)
            if self.dynamo_defaults is not None:
                dynamo_overrides.check(config, self.dynamo_defaults)
        except ConfigError as exc:
            return f"{config.label}: {exc}"
        return ""

    # ---------------------------------------------------------------- suggestions
    def show_suggestion(self, key: str, value: str, why: str) -> None:
        """Offer a dynamo setting: `why` in words and a button that adds KEY=VALUE."""
        self._suggestion = (key, value)
        self.suggestion.setText(why)
        self.suggestion_button.setText(f"Add {key}={value}")
        self.suggestion_button.setToolTip(
            f"Add torch._dynamo.config.{key}={value} to the config being edited and to every queued config"
        )
        self.suggestion_box.show()

    def clear_suggestion(self) -> None:
        self._suggestion = None
        self.suggestion_box.hide()

    def has_override(self, key: str, value: str) -> bool:
        return str(dict(self.current_config().dynamo_config).get(key)) == value

    def apply_override(self, key: str, value: str) -> None:
        """Set KEY=VALUE in the field and in every queued config (their statuses restart)."""
        pairs = dict(self.current_config().dynamo_config)
        pairs[key] = dynamo_overrides.parse(f"{key}={value}", self.dynamo_defaults)[0][1]
        if self.field_problem():  # keep what the user typed; the error stays shown until fixed
            self.dynamo_config.setText(f"{self.dynamo_config.text().rstrip(', ')}, {key}={value}")
        else:
            self.dynamo_config.setText(dynamo_overrides.as_text(sorted(pairs.items())))
        queued = self.queue.configs
        if queued:
            self.queue.clear()
            for config in queued:
                self.queue.add(dynamo_overrides.with_override(config, key, pairs[key]))

    def apply_change(self, config: CompileConfig, change) -> CompileConfig:
        """Apply a core.decide.advice.ConfigChange to `config` (a config of the last run) and
        return the new config. The queue is what the next Run profiles: `config` is replaced
        in it by the new one (queued when it was not), the other queued configs stay; the
        form shows the new config (inductor options such as freezing live in the queue only)."""
        new = change.apply(config)
        queued = self.queue.configs
        self.queue.clear()
        for c in queued:
            self.queue.add(new if c == config else c)
        self.queue.add(new)  # False (no-op) when it replaced `config` above
        self.set_config(new)
        self.validate()
        return new

    def show_problem(self, text: str) -> None:
        """Show why the form cannot run, inline in red ('' hides it)."""
        self._show_error(text)

    def _show_error(self, text: str) -> None:
        self.error.setText(text)
        self.error.setVisible(bool(text))

    # ---------------------------------------------------------------- slots
    def _on_edited(self, *args) -> None:
        self.validate()
        self._refresh_default_note()
        self.sig_config_edited.emit()

    def _on_add_clicked(self) -> None:
        self._queue([self.current_config()])

    def _on_dynamics_clicked(self) -> None:
        config = self.current_config()
        self._queue([dataclasses.replace(config, dynamic=d) for d in SWEEP_DYNAMICS], quiet_duplicates=True)

    def _queue(self, configs: list[CompileConfig], quiet_duplicates: bool = False) -> None:
        problem = self.field_problem()
        if not problem and self.torch_info_loaded:
            problem = next((p for p in map(self.config_problem, configs) if p), "")
        if problem:
            self._show_error(f"Not queued: {problem}")
            return
        added = [self.queue.add(config) for config in configs]
        if not any(added) or (not all(added) and not quiet_duplicates):
            self._show_error(f"{configs[added.index(False)].label} is queued already.")
        else:
            self.validate()

    def _on_suggestion_clicked(self) -> None:
        if self._suggestion is None:
            return
        key, value = self._suggestion
        self.apply_override(key, value)
        self.clear_suggestion()

    def _on_remove_clicked(self) -> None:
        rows = sorted({i.row() for i in self.queue_view.selectionModel().selectedRows()}, reverse=True)
        for index in rows or [self.queue.rowCount() - 1]:
            self.queue.remove(index)
        self.validate()
