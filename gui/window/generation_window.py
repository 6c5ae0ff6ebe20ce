"""Task → Generate: a Hugging Face causal language model generating text, profiled as
`profile hf:TYPE --task generate` does (core.run.generation.GenerationSeries: each cache with each
compile config, as written and under force_eager), shown live (gui.panels.generation_view).

The model, batch size, prompt length, device and compile configs come from the main window's form
(`set_workload`); this window adds what only generation has: the prompt lengths, the tokens to
generate, the generations, the caches, and whether to run the eager baseline. Every figure is
checked against core's limits before anything runs (core.vocab.generation.make_specs); the model
is checked (an encoder-only type refused with the class to use instead, the key/value cache's
memory estimated) in the worker, before the first job. Save report… writes the same report folder
as the command line (core.report.generation_report). Closing the window stops the run.
GUI thread only.
"""

from __future__ import annotations

import dataclasses
import itertools

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.analysis.generation_results import GenerationChange, recompile_changes
from core.vocab.config import CompileConfig
from core.vocab.generation import (
    DEFAULT_GENERATIONS,
    DEFAULT_NEW_TOKENS,
    DEFAULT_WARMUP,
    MAX_GENERATIONS,
    MAX_NEW_TOKENS,
    GenerationSpec,
    make_specs,
)
from core.vocab.limits import ConfigError
from gui.panels.generation_view import GenerationView
from gui.widgets.safe_text import plain
from gui.window.app_window import AppWindow
from gui.window.profile_window import ProfileWindow

FIELDS = {"new_tokens": "New tokens", "generations": "Generations", "warmup": "Warm-up", "cache": "Caches"}


def generation_profile(pairs: list[tuple[GenerationSpec, CompileConfig]], baseline: bool):
    """The worker's profile: the model checked (it may import transformers: never on the GUI
    thread), then each (cache, config) pair."""

    def make(on_run, on_event, on_output, on_result):
        from core.models.generation import check
        from core.run.generation import GenerationSeries

        checked = check(pairs[0][0])
        return GenerationSeries(
            list(pairs),
            checked,
            baseline=baseline,
            on_run=on_run,
            on_event=on_event,
            on_output=on_output,
            on_result=on_result,
        )

    return make


class GenerationWindow(ProfileWindow):
    """Profile one model's generation at a time. GUI thread only."""

    what = "generation"
    refusal_name = "generation_refusal"

    sig_finished = Signal(object)
    """A profile ended: its GenerationResults (a list; None when nothing could run)."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.results: list | None = None
        self.source, self.hf_config, self.batch_size, self.device = "", (), 1, "cpu"
        self.configs: list[CompileConfig] = []
        self.workload = plain(QLabel("Choose a Hugging Face model in the main window (Task: Generate)."))
        self.workload.setWordWrap(True)
        self.prompt_lens = QLineEdit("16")
        self.prompt_lens.setToolTip("Prompt lengths in tokens, comma-separated (16,64,256): each is profiled")
        self.new_tokens = _spin(1, MAX_NEW_TOKENS, DEFAULT_NEW_TOKENS, "Tokens generated each time (no early stop)")
        self.generations = _spin(1, MAX_GENERATIONS, DEFAULT_GENERATIONS, "Timed generations per prompt length")
        self.warmup = _spin(0, MAX_GENERATIONS, DEFAULT_WARMUP, "Generations before the timed ones (the compile)")
        self.static = QCheckBox("static (cache_implementation='static')")
        self.static.setChecked(True)
        self.dynamic = QCheckBox("dynamic (grows every token: recompiles)")
        self.baseline = QCheckBox(
            "Run each config again under set_stance('force_eager') and compare (the eager baseline)"
        )
        self.baseline.setChecked(True)
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save report…")
        self.save_button.clicked.connect(lambda: self.save_report())
        # what removes a config's recompiles, each a button that re-runs that config changed
        self.advice_box = QWidget()
        self.advice = QHBoxLayout(self.advice_box)
        self.advice.setContentsMargins(0, 0, 0, 0)
        self.advice_box.hide()
        self.pairs: dict[str, tuple[GenerationSpec, CompileConfig]] = {}  # label → what made it
        form = QFormLayout()
        form.addRow("Model", self.workload)
        form.addRow("Prompt lengths", self.prompt_lens)
        form.addRow("New tokens", self.new_tokens)
        form.addRow("Generations", _row(self.generations, QLabel("Warm-up"), self.warmup))
        form.addRow("Caches", _row(self.static, self.dynamic))
        form.addRow("", self.baseline)
        buttons = QHBoxLayout()
        for b in (self.run_button, self.cancel_button, self.save_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.view = GenerationView()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.advice_box)
        layout.addWidget(self.view, 1)
        self.setCentralWidget(body)
        self.controller.sig_run_started.connect(self.view.run_started)
        self.controller.sig_event.connect(self.view.add_event)
        self.controller.sig_output.connect(self.view.add_output)
        self.controller.sig_result.connect(self.view.add_result)
        self.controller.sig_finished.connect(self._on_finished)
        self.setWindowTitle("generation")  # the platform adds the app's name
        room = self.screen().availableGeometry()
        self.resize(min(1150, room.width() - 40), min(860, room.height() - 60))
        self._update_buttons()

    def set_workload(
        self, source: str, hf_config=(), batch_size: int = 1, prompt_len: int = 16, device: str = "cpu", configs=()
    ) -> None:
        """What the main window's form chose: the model, batch, prompt length, device, configs."""
        self.source, self.hf_config, self.batch_size, self.device = source, tuple(hf_config), batch_size, device
        self.configs = list(configs)
        if not self.controller.busy:
            self.prompt_lens.setText(str(prompt_len))
        overrides = f" ({', '.join(self.hf_config)})" if self.hf_config else ""
        names = ", ".join(c.label for c in self.configs) or "none"
        self.workload.setText(f"{source}{overrides}, batch {batch_size}, {device}; compile configs: {names}")

    # ---- running
    def specs(self) -> list[GenerationSpec]:
        """The form's generation specs, checked (ConfigError names the field)."""
        try:
            prompts = tuple(int(p) for p in self.prompt_lens.text().replace(" ", "").split(",") if p)
        except ValueError:
            raise ConfigError(
                f"Prompt lengths must be whole numbers separated by commas (16,64), not {self.prompt_lens.text()!r}."
            ) from None
        caches = tuple(c for c, box in (("static", self.static), ("dynamic", self.dynamic)) if box.isChecked())
        return make_specs(
            self.source,
            self.hf_config,
            self.batch_size,
            prompts,
            self.new_tokens.value(),
            caches,
            self.generations.value(),
            self.warmup.value(),
            self.device,
            names=FIELDS,
        )

    def run(self, pairs: list[tuple[GenerationSpec, CompileConfig]] | None = None, keep=()) -> bool:
        """Check the form and start (`pairs`: these configs instead of the form's; `keep`: results
        shown on beside the new ones); True when it started."""
        if self.controller.busy:
            return False
        if pairs is None:
            if not self.configs:
                return self._refuse("No compile config: add one in the main window's form.")
            try:
                pairs = list(itertools.product(self.specs(), self.configs))
            except ConfigError as exc:
                return self._refuse(str(exc))
        self.results = None
        made = {f"{spec.cache} cache/{config.label}": (spec, config) for spec, config in pairs}
        self.pairs = {**self.pairs, **made} if keep else made
        self._show_advice([])
        self.view.start(pairs[0][0].new_tokens, list(made), keep)
        self.controller.start(generation_profile(pairs, self.baseline.isChecked()))
        self.statusBar().showMessage(f"Profiling generation: {len(pairs)} config(s)…")
        self._update_buttons()
        return True

    def apply_and_rerun(self, label: str, change: GenerationChange) -> bool:
        """Re-run the config `label` with `change` (another cache, or dynamic shapes), the other
        results kept on screen beside it."""
        spec, config = self.pairs[label]
        if change.cache:
            spec = dataclasses.replace(spec, cache=change.cache)
        if change.dynamic:
            config = dataclasses.replace(config, dynamic=change.dynamic)
        keep = [r for r in self.view.results if r.label != f"{spec.cache} cache/{config.label}"]
        return self.run([(spec, config)], keep)

    def _show_advice(self, results) -> None:
        while self.advice.count():
            item = self.advice.takeAt(0)
            if item.widget() is not None:
                item.widget().deleteLater()
        changes = [(r.label, c) for r in results if r.label in self.pairs for c in recompile_changes(r)]
        if changes:
            self.advice.addWidget(QLabel("Remove the recompiles:"))
        for label, change in changes:
            button = QPushButton(f"Apply and re-run: {label} with {change.name}")
            button.setToolTip(
                f"Profile {label} again with {change.name} (the command line's {change.flag}); "
                "the other results stay on screen"
            )
            button.clicked.connect(
                lambda checked=False, label=label, change=change: self.apply_and_rerun(label, change)
            )
            self.advice.addWidget(button)
        self.advice.addStretch(1)
        self.advice_box.setVisible(bool(changes))

    def _on_finished(self, results, error: str) -> None:
        self.view.finish(results, error)
        self.results = self.view.results or None  # those kept on screen and the new ones
        self._show_advice(self.view.results)
        if error and not self.results:
            self._refuse(f"Generation could not be profiled: {error}")
        self.statusBar().showMessage(self.view.headline.text())
        self._update_buttons()
        self.sig_finished.emit(self.results)

    def _update_buttons(self) -> None:
        busy = self.controller.busy
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.save_button.setEnabled(not busy and bool(self.results))

    def save_report(self, folder: str | None = None) -> bool:
        """Write the report folder of the last profile (asks for a folder when None)."""
        from core.report.generation_report import write_generation_report

        if not self.results:
            return False
        results, options = self.results, {"app": True, "source": self.source}
        return self._write_report(
            folder, "Save the generation report into", lambda out: write_generation_report(out, results, options)
        )


def open_generation(window: AppWindow, run: bool = True) -> GenerationWindow:
    """Task → Generate: the main window's generation window, made on first use, its workload
    taken from the form, shown, and (`run`) started."""
    if window.generation_window is None:
        window.generation_window = GenerationWindow()
    gen = window.generation_window
    mp = window.model_panel
    source = mp.source()
    gen.set_workload(
        source,
        mp.hf_overrides() if source.startswith("hf:") else (),
        mp.batch.value(),
        mp.seq_len.value(),
        window.config_panel.device.currentText(),
        window.config_panel.run_configs(),
    )
    gen.show()
    gen.raise_()
    gen.activateWindow()
    if run:
        gen.run()
    return gen


def _spin(low: int, high: int, value: int, tip: str) -> QSpinBox:
    box = QSpinBox()
    box.setRange(low, high)
    box.setValue(value)
    box.setToolTip(tip)
    return box


def _row(*widgets) -> QWidget:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        layout.addWidget(w)
    layout.addStretch(1)
    return holder
