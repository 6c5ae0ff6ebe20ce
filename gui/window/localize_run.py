"""Summary → "Find where outputs diverge…": `python main.py localize REPORT --config LABEL`
(core.cli.localize) on the report folder of the results on screen, in a QProcess (gui.run.helper_process).

The report folder is the bug report's (gui.window.bug_report.report_folder: a session opened
from a folder's report.json, or a finished run of this window, whose report.json is written into
its own folder first). What it runs is said first and asked (a job per compiler stage, and per
numerics setting for inductor, each in a fresh process); a report opened from a file passes
core.report.safety.ReportGate as the user answers: its Python model file runs once trusted
(gui.form.trust.confirm_python_file), its risky settings with or without them
(confirm_config_from_file), and the command gets the matching flag. Its progress lines show in the status
bar; at the end the report's `localization` section is read back and the Summary shows the
sentence. The app's process never imports torch and the GUI thread never waits; a failure is
shown with the command's own message, nothing on screen is lost. GUI thread only.
"""

from __future__ import annotations

import os
import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMessageBox

from core import PROJECT_ROOT
from core.decide.localize import needs_localizing
from core.report.files import ReportError, atomic_write, load_report
from core.report.report_contents import report_json
from core.report.safety import ReportGate, describe_config, report_gate
from gui.form.trust import CANCEL, RUN_WITHOUT, confirm_config_from_file, confirm_python_file
from gui.run.helper_process import HelperProcess
from gui.window.app_window import AppWindow
from gui.window.bug_report import report_folder

TIMEOUT_MS = 30 * 60 * 1000  # four stages and five numerics settings of a large model, compiled cold


def localize_command(folder: str, label: str, flags: list[str] = ()) -> list[str]:
    """The command line; `flags` say how to run the report's settings (core.report.safety.ReportGate.flags)."""
    return [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "localize", folder, "--config", label, *flags]


class Localizer(QObject):
    """One localization at a time for `window`. GUI thread only."""

    sig_done = Signal(str)
    """It ended: the sentence shown, or the failure."""

    def __init__(self, window: AppWindow):
        super().__init__(window)
        self.window = window
        self.helper = HelperProcess(
            self, "the localize command", TIMEOUT_MS, "it took more than {minutes} minutes; it was stopped."
        )
        self.helper.sig_progress.connect(self._on_progress)
        self.helper.sig_ended.connect(self._on_finished)
        self.helper.sig_failed.connect(self._failed)
        self.folder = ""
        self.label = ""
        self.flags: list[str] = []  # how the report's settings run, as the user answered (ReportGate.flags)
        self.box: QMessageBox | None = None

    @property
    def busy(self) -> bool:
        return self.helper.busy

    def start(self, label: str) -> bool:
        """Say what it runs and ask (a window-modal box: nothing waits on it)."""
        w = self.window
        if self.busy:
            w.status_label.setText("Outputs are being localized already.")
            return False
        folder = report_folder(w)
        if not folder:
            w.show_error(
                "No report folder",
                "Localizing runs on a report folder: open a session from a report folder's report.json "
                "(File → Open session…) or let the run finish first.",
            )
            return False
        if not w.session.origin:  # a run of this window: its report goes into its own folder first
            try:
                atomic_write(os.path.join(folder, "report.json"), report_json(w.session.results, w.session.options))
            except OSError as exc:
                w.show_error("Cannot localize", f"the run's report could not be written into {folder}: {exc}")
                return False
        self.folder, self.label = folder, label
        box = self.box = QMessageBox(
            QMessageBox.Icon.Question,
            "Find where outputs diverge",
            f"Config {label} failed the accuracy check. Find where its outputs diverge?\n\n"
            "This runs the model through each compiler stage (eager, aot_eager, aot_eager_decomp_partition, "
            "inductor, up to the config's backend), each a job in a fresh process with a few calls, stops at "
            "the first stage that diverges, compiles its submodules one at a time, and for inductor tries "
            "each numerics setting this torch has. The finding is added to "
            f"{os.path.join(folder, 'report.json')}.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            w,
        )
        box.setObjectName("localize_notice")
        box.buttonClicked.connect(self._on_answered)
        box.open()
        return True

    def _on_answered(self, button) -> None:
        box, self.box = self.box, None
        if box is None or box.standardButton(button) != QMessageBox.StandardButton.Yes:
            self.window.status_label.setText("Not localized.")
            return
        flags = self.ask_trust()
        if flags is None:
            self.window.status_label.setText("Not localized: nothing ran.")
            return
        self.flags = flags
        self.run()

    def ask_trust(self) -> list[str] | None:
        """The command's flags for what only the report says (core.report.safety.ReportGate), as
        the user answers: a Python model file runs once trusted (the notice of opening a model
        file, remembered per content), risky settings with them or without them. None: cancelled.
        A run of this window holds the user's own settings and file: --trust-report."""
        w = self.window
        if not w.session.origin:
            return ReportGate().flags(trust_report=True, without_risky=False)
        try:
            results, _ = load_report(self.folder)  # what the command will read
        except ReportError as exc:
            w.show_error("Cannot localize", str(exc))
            return None
        result = next((r for r in results if r.config.label == self.label), None)
        gate = report_gate([result.spec] if result is not None and needs_localizing(result) else [])
        for path in gate.code_files:
            if not w.is_trusted(path) and not confirm_python_file(w, w.settings, path):
                return None
        without = False
        if gate.risky:
            answer = confirm_config_from_file(w, w.session.origin, describe_config(result.config), list(gate.risky))
            if answer == CANCEL:
                return None
            without = answer == RUN_WITHOUT
        return gate.flags(
            trust_report=bool(gate.code_files) or (bool(gate.risky) and not without), without_risky=without
        )

    def run(self) -> None:
        command = localize_command(self.folder, self.label, self.flags)
        self.window.status_label.setText(f"Finding where {self.label} diverges (a job per step)…")
        self.helper.start(command, progress=True)

    def _on_progress(self, line: str) -> None:
        self.window.status_label.setText(f"Localizing {self.label}: {line[:200]}")

    def _on_finished(self, code: int, normal: bool, out: str, last_line: str) -> None:
        if code != 0 or not normal:
            self._failed(last_line or f"it ended with code {code}")
            return
        w = self.window
        path = os.path.join(self.folder, "report.json")
        try:
            _, header = load_report(path)
        except ReportError as exc:
            self._show(f"the finding could not be read back: {exc}", failed=True)
            return
        section = header.get("localization")
        w.report_localization[w.session.origin] = section
        w.summary_panel.set_localization(section)
        w.summary_panel.show_results(w.session.results)
        entry = next((e for e in section or [] if isinstance(e, dict) and e.get("config") == self.label), None)
        sentence = entry.get("sentence", "") if entry else ""
        self._show(f"where {self.label} diverges: {sentence}" if sentence else "localized; nothing was found")

    def _failed(self, message: str) -> None:
        self._show(message, failed=True)

    def _show(self, message: str, failed: bool = False) -> None:
        if failed:
            self.window.show_error(
                "Not localized", f"{message}\nThe results on screen and the report are as they were."
            )
        self.window.status_label.setText(message[:300])
        self.sig_done.emit(message)

    def stop(self) -> None:
        """The window closes: end the command (its jobs end with it: the runner's children)."""
        self.helper.stop(interrupt=True)
