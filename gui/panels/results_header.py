"""The line above the charts that says whose results they are: "Results: <model> (<configs>)",
taken from the shown JobResults' own specs, never from the model picker. When the picker
names another model (the next run's), the line says the results are the previous model's.
Below it, the warnings a report came with (e.g. made by another report version).
GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from core.analysis.quality_advice import FORM_FIELDS, banner
from core.models import is_file_source, split_factory, workload_differences, workload_settings
from gui.widgets.safe_text import markup, plain, tooltip
from gui.widgets.theme import error_color, warning_color

HEADER_CONFIGS = 5  # configs the line names; past that it counts them (the tooltip names all)
EMPTY_TEXT = "No results yet: choose a model and a config, then Run (Ctrl+R), or open a session."


def model_name(source: str) -> str:
    """A model as people call it: the file's name (with a factory other than get_model), or
    the torchvision name."""
    if not source:
        return "?"
    if not is_file_source(source):
        return source
    path, factory = split_factory(source)
    name = os.path.basename(path)
    return name if factory == "get_model" else f"{name}:{factory}"


def results_models(results) -> list[str]:
    """The distinct model sources of `results`, in order."""
    return list(dict.fromkeys(r.spec.model.source for r in results))


class ResultsHeader(QFrame):
    """GUI thread only."""

    sig_rerun_requested = Signal()
    """The user asked to run the configs shown again (their timing was not quiet)."""

    sig_load_requested = Signal()
    """The user asked for the model and configs shown in the form, for the next run."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.quality = plain(QLabel(""))  # core.analysis.quality_advice.banner: config labels and reasons as text
        self.quality.setWordWrap(True)
        self.quality.setObjectName("timing_banner")
        self.quality.setToolTip(
            "How far the timing of these results can be trusted (hover a config's Timing cell "
            "in the Summary for its figures)"
        )
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run the configs shown again, on this machine, with the form's settings")
        self.rerun_button.clicked.connect(self.sig_rerun_requested.emit)
        self.banner = QFrame()
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.quality, 1)
        row.addWidget(self.rerun_button)
        self.banner.hide()
        self.title = QLabel(EMPTY_TEXT)
        self.title.setTextFormat(Qt.TextFormat.RichText)  # our markup; report text inside is escaped
        self.title.setWordWrap(True)
        self.title.setToolTip("The model and configs of the results shown below")
        # a button, not a link inside the title (which holds report text): the form takes these
        # results' model and configs for the next run
        self.load_button = QPushButton("Use these settings")
        self.load_button.setToolTip(
            "Put the model and the configs of the results shown into the form for the next run (runs nothing)"
        )
        self.load_button.clicked.connect(self.sig_load_requested.emit)
        self.load_button.hide()
        self.warnings = plain(QLabel(""))
        self.warnings.setWordWrap(True)
        self.warnings.setObjectName("report_warnings")
        self.warnings.setStyleSheet(f"color: {error_color()}")
        self.warnings.setToolTip("What the opened report's header warned about")
        self.warnings.hide()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(2, 0, 2, 2)
        layout.setSpacing(1)
        title_row = QHBoxLayout()
        title_row.setContentsMargins(0, 0, 0, 0)
        title_row.addWidget(self.title, 1)
        title_row.addWidget(self.load_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(title_row)
        layout.addWidget(self.banner)
        layout.addWidget(self.warnings)
        self._results: list = []
        self._chosen = ""
        self._origin = ""
        self._next_workload: dict[str, str] = {}
        self._update()

    def set_results(self, results, origin: str = "") -> None:
        """Show whose `results` (JobResults) these are; `origin` is the report they came
        from ('' for a run)."""
        self._results, self._origin = list(results), origin
        self._update()

    def set_chosen_model(self, source: str) -> None:
        """The model the next run profiles (the model picker's choice)."""
        self._chosen = source
        self._update()

    def set_next_workload(self, workload: dict[str, str]) -> None:
        """The next run's workload settings from the form (core.models.workload_settings)."""
        if workload != self._next_workload:
            self._next_workload = dict(workload)
            self._update()

    def workload_changes(self) -> list[str]:
        """What the next run would measure differently from the results shown, for the same
        model (a report of another batch size opened, and Run profiled the form's silently)."""
        if not self._results or not self._next_workload or self.is_previous_model():
            return []
        shown = {tuple(workload_settings(r.spec.model, r.spec.task, r.spec.device).items()) for r in self._results}
        if len(shown) != 1:  # results of several workloads: no one set to hold the form against
            return []
        return workload_differences(dict(shown.pop()), self._next_workload)

    def set_quality(self, results) -> None:
        """The banner when any ended result's timing is not quiet (core.analysis.quality_advice.banner)."""
        text = banner(results, brief=True, fields=FORM_FIELDS)  # every reason in the tooltip
        self.quality.setText(text)
        self.quality.setToolTip(tooltip(banner(results, fields=FORM_FIELDS)) if text else "")
        unusable = "unusable (" in text
        style = f"color: {error_color() if unusable else warning_color()}"
        if self.quality.styleSheet() != style:  # a style sheet set re-polishes the label
            self.quality.setStyleSheet(style)
        self.banner.setVisible(bool(text))

    def set_warnings(self, warnings) -> None:
        text = "\n".join(f"⚠ {w}" for w in warnings)
        self.warnings.setText(text)
        self.warnings.setVisible(bool(text))

    def is_previous_model(self) -> bool:
        """True when the results belong to another model than the one chosen for the next run."""
        return bool(self._results and self._chosen and self._chosen not in results_models(self._results))

    def text(self) -> str:
        """The line as plain text (tests, status)."""
        return self.title.text()

    def _update(self) -> None:
        changes = self.workload_changes()
        self.load_button.setVisible(bool(self._results) and (self.is_previous_model() or bool(changes)))
        if not self._results:
            self.title.setText(f"<span style='color:gray'>{markup(EMPTY_TEXT)}</span>")
            self.title.setToolTip("The model and configs of the results shown below")
            return
        models = results_models(self._results)
        labels = list(dict.fromkeys(r.config.label for r in self._results))
        configs = ", ".join(labels)
        if len(labels) > HEADER_CONFIGS:  # eleven labels took three lines from the charts below
            configs = f"{len(labels)} configs: {', '.join(labels[: HEADER_CONFIGS - 1])}, …"
        names = ", ".join(model_name(m) for m in models)
        text = f"<b>Results: {markup(names)}</b> ({markup(configs)})"
        if self._origin:
            text += f" <small>from {markup(os.path.basename(self._origin))}</small>"
        if self.is_previous_model():
            whose = "not the model the next run profiles" if self._origin else "the previous model's results"
            text += (
                f" <span style='color:{error_color()}'>— {whose}; the next run profiles "
                f"{markup(model_name(self._chosen))}</span>"
            )
        elif changes:
            text += (
                f" <span style='color:{warning_color()}'>— the next run measures another workload: "
                f"{markup(', '.join(changes))}</span>"
            )
        self.title.setText(text)
        self.title.setToolTip(
            tooltip(
                "The results below belong to:\n"
                + "\n".join(models)
                + ("\nconfigs:\n" + "\n".join(labels) if len(labels) > HEADER_CONFIGS else "")
                + (f"\nopened from {self._origin}" if self._origin else "")
            )
        )
