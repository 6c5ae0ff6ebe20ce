"""File → Profile a script…: a window that runs the user's own script under the profiler, as
`main.py run` does (core.run.script_process.ScriptProfile), and shows it live
(gui.panels.script_view.ScriptView).

The form: the script, its arguments (split as a shell would, never run by one), the folder it
runs in (blank: the script's own), whether to run the eager baseline, a backend for every
torch.compile in it (blank: the script's own), the timeout. What was used is remembered per
script (QSettings, by the script's path). A script is the user's own code: before the first
run of a script's content the app says so and asks (gui.form.trust, as for model files).
Save report… writes the report folder (core.report.script_report). Closing the window stops
the script. GUI thread only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.vocab.limits import LIMITS, ConfigError
from core.vocab.script_job import ScriptJobError, make_script_job
from gui.form import trust
from gui.panels.script_view import ScriptView
from gui.run.profile_run import script_profile
from gui.window.app_window import AppWindow
from gui.window.profile_window import ProfileWindow

SETTINGS_PREFIX = "scripts/"
AS_WRITTEN = "as written"


def _settings_key(path: str) -> str:
    return SETTINGS_PREFIX + hashlib.sha1(os.path.abspath(path).encode()).hexdigest()[:16]


class ScriptWindow(ProfileWindow):
    """Profile one script at a time. `backends`: the backends the installed torch offers
    (the main window's torch info), for the override picker. GUI thread only."""

    what = "the script"
    refusal_name = "script_refusal"
    stopping = "Stopping the script (what it did is kept)…"

    sig_finished = Signal(object)
    """A profile ended: its core.analysis.script_results.ScriptResult (None when it could not run)."""

    def __init__(self, settings: QSettings, backends=(), parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.result = None
        self.closing_with_main = False  # the main window closes: the script is stopped, no question
        self.script = QLineEdit()
        self.script.setPlaceholderText("train.py: a Python script that calls torch.compile")
        self.script.editingFinished.connect(self._recall)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse_script)
        self.arguments = QLineEdit()
        self.arguments.setPlaceholderText("--epochs 1 --batch-size 32 (the script's own arguments)")
        self.cwd = QLineEdit()
        self.cwd.setPlaceholderText("the script's own folder")
        browse_cwd = QPushButton("Browse…")
        browse_cwd.clicked.connect(self._browse_cwd)
        self.baseline = QCheckBox("Run it again under set_stance('force_eager') and compare (the eager baseline)")
        self.baseline.setChecked(True)
        self.backend = QComboBox()
        self.backend.addItems([AS_WRITTEN, *backends])
        self.backend.setToolTip("A backend for every torch.compile in the script; 'as written' keeps the script's own")
        lim = LIMITS["script_timeout"]
        self.timeout = QSpinBox()
        self.timeout.setRange(int(lim.low), int(lim.high))
        self.timeout.setValue(int(lim.default))
        self.timeout.setSuffix(" s")
        self.timeout.setToolTip("Each run of the script is stopped after this long; what it did is kept")
        rl = LIMITS["script_repeat"]
        self.repeat = QSpinBox()
        self.repeat.setRange(int(rl.low), int(rl.high))
        self.repeat.setValue(int(rl.default))
        self.repeat.setToolTip(
            "Run the pair (as written, then eager) this many times, alternating: the speedup pools them and "
            "says whether the runs agree (a fresh process can differ for its whole life)"
        )
        self.run_button = QPushButton("Run")
        self.run_button.clicked.connect(self.run)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.save_button = QPushButton("Save report…")
        self.save_button.clicked.connect(lambda: self.save_report())
        form = QFormLayout()
        form.addRow("Script", _row(self.script, browse))
        form.addRow("Arguments", self.arguments)
        form.addRow("Working folder", _row(self.cwd, browse_cwd))
        form.addRow("Backend", self.backend)
        form.addRow("Timeout", self.timeout)
        form.addRow("Run pairs", self.repeat)
        form.addRow("", self.baseline)
        buttons = QHBoxLayout()
        for b in (self.run_button, self.cancel_button, self.save_button):
            buttons.addWidget(b)
        buttons.addStretch(1)
        self.view = ScriptView()
        body = QWidget()
        layout = QVBoxLayout(body)
        layout.addLayout(form)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)
        self.setCentralWidget(body)
        self.controller.sig_run_started.connect(self.view.run_started)
        self.controller.sig_event.connect(self.view.add_event)
        self.controller.sig_output.connect(self.view.add_output)
        self.controller.sig_finished.connect(self._on_finished)
        self.setWindowTitle("profile a script")  # the platform adds the app's name
        room = self.screen().availableGeometry()  # fits the screen: a 1366x768 laptop's too
        self.resize(min(1100, room.width() - 40), min(800, room.height() - 60))
        last = self.settings.value(SETTINGS_PREFIX + "last", "")
        if isinstance(last, str) and last:
            self.script.setText(last)
            self._recall()
        self._update_buttons()

    # ---- the form
    def _browse_script(self) -> None:
        start = os.path.dirname(self.script.text()) or os.getcwd()
        path, _ = QFileDialog.getOpenFileName(self, "Profile a script", start, "Python scripts (*.py)")
        if path:
            self.set_script(path)

    def _browse_cwd(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "The folder the script runs in", self.cwd.text() or os.getcwd())
        if folder:
            self.cwd.setText(folder)

    def set_script(self, path: str) -> None:
        self.script.setText(path)
        self._recall()

    def _recall(self) -> None:
        """The arguments, folder, backend, baseline and timeout last used with this script."""
        path = self.script.text().strip()
        raw = self.settings.value(_settings_key(path), "") if path else ""
        try:
            saved = json.loads(raw) if isinstance(raw, str) and raw else {}
        except ValueError:
            saved = {}
        if not isinstance(saved, dict):
            return
        if isinstance(saved.get("args"), str):
            self.arguments.setText(saved["args"])
        if isinstance(saved.get("cwd"), str):
            self.cwd.setText(saved["cwd"])
        if isinstance(saved.get("baseline"), bool):
            self.baseline.setChecked(saved["baseline"])
        if saved.get("backend") in [self.backend.itemText(i) for i in range(self.backend.count())]:
            self.backend.setCurrentText(saved["backend"])
        if isinstance(saved.get("timeout"), int):
            self.timeout.setValue(saved["timeout"])
        if isinstance(saved.get("repeat"), int):
            self.repeat.setValue(saved["repeat"])

    def _remember(self, path: str) -> None:
        saved = {
            "args": self.arguments.text(),
            "cwd": self.cwd.text(),
            "baseline": self.baseline.isChecked(),
            "backend": self.backend.currentText(),
            "timeout": self.timeout.value(),
            "repeat": self.repeat.value(),
        }
        self.settings.setValue(_settings_key(path), json.dumps(saved))
        self.settings.setValue(SETTINGS_PREFIX + "last", path)

    # ---- running
    def run(self) -> bool:
        """Check the form, ask before a script's first run, start. True when it started."""
        if self.controller.busy:
            return False
        try:
            args = shlex.split(self.arguments.text())
        except ValueError as exc:
            return self._refuse(f"The arguments cannot be split as a shell would ({exc}): check the quotes.")
        overrides = () if self.backend.currentText() == AS_WRITTEN else (("backend", self.backend.currentText()),)
        try:
            job = make_script_job(
                self.script.text().strip(),
                "",
                args,
                cwd=self.cwd.text().strip(),
                overrides=overrides,
                timeout_s=self.timeout.value(),
            )
        except (ScriptJobError, ConfigError) as exc:
            return self._refuse(str(exc))
        if not trust.confirm_python_file(self, self.settings, job.target):
            self.statusBar().showMessage(f"Not run: {os.path.basename(job.target)}")
            return False
        self._remember(job.target)
        self.result = None
        self.view.start()
        self.controller.start(script_profile(job, self.baseline.isChecked(), self.repeat.value()))
        self.statusBar().showMessage(f"Profiling {os.path.basename(job.target)}…")
        self._update_buttons()
        return True

    def _on_finished(self, result, error: str) -> None:
        self.result = result
        self.view.finish(result, error)
        self.statusBar().showMessage(result.headline() if result is not None else f"Not profiled: {error}")
        self._update_buttons()
        self.sig_finished.emit(result)

    def show_report(self, result, path: str) -> bool:
        """A saved script report shown as a finished run's (File → Open session… with a script's
        report.json); nothing runs. Refused (False) while a profile runs here: the two would mix."""
        import shlex

        if self.controller.busy:
            return False
        self.result = result
        target = os.path.join(result.cwd, result.target) if result.cwd else result.target
        if not result.module and os.path.isfile(target):  # in the form, for Run (which asks trust first)
            self.set_script(os.path.abspath(target))
            self.arguments.setText(shlex.join(result.args))
            self.cwd.setText(result.cwd)
            backend = dict(result.overrides).get("backend")
            if backend and self.backend.findText(str(backend)) < 0:  # torch's list not loaded yet: Run checks it
                self.backend.addItem(str(backend))
            self.backend.setCurrentText(str(backend) if backend else AS_WRITTEN)
        self.view.show_report(result)
        self.statusBar().showMessage(f"Opened {path}: {result.headline()}")
        self._update_buttons()
        return True

    def _update_buttons(self) -> None:
        busy = self.controller.busy
        self.run_button.setEnabled(not busy)
        self.cancel_button.setEnabled(busy)
        self.save_button.setEnabled(not busy and self.result is not None)

    def save_report(self, folder: str | None = None) -> bool:
        """Write the report folder of the last profile (asks for a folder when None)."""
        from core.report.script_report import write_script_report

        if self.result is None:
            return False
        result = self.result
        return self._write_report(folder, "Save the script's report into", lambda out: write_script_report(out, result))


def open_script_window(window: AppWindow, path: str | None = None) -> ScriptWindow:
    """The main window's script window, made on first use and shown (`path`: the script to put in
    its form)."""
    if window.script_window is None:
        backends = window.torch_info.backends if window.torch_info is not None else ()
        window.script_window = ScriptWindow(window.settings, backends)
    if path:
        window.script_window.set_script(path)
    window.script_window.show()
    window.script_window.raise_()
    window.script_window.activateWindow()
    return window.script_window


def _row(*widgets) -> QWidget:
    holder = QWidget()
    layout = QHBoxLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    for w in widgets:
        layout.addWidget(w, 1 if isinstance(w, QLineEdit) else 0)
    return holder
