"""File → Save bug report…: a reproducer bundle (core.report.bundle) of the results on screen.

The results must come from a report folder: a session opened from a folder's report.json, or
a finished run of this window (its run folder holds the jobs' traces; the run's report.json is
written there first, a folder the app owns). What goes in is said first
(`BundlePlan.notice`, with the config and its finding: the selected row of the Summary table,
else `choose_result`'s); the user then chooses where (starting in the last folder used, else
home), and the bundle is built by `python -m core.cli.helpers bundle REPORT OUT LABEL` in a
QProcess: the app's process never imports torch, and the GUI thread never waits. An existing
file is replaced only when the user says so, and only once the new zip is whole. A failure
(the helper's own message) is shown; nothing on screen is lost. GUI thread only.
"""

from __future__ import annotations

import json
import os
import sys
import uuid

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from core.report.bundle import BundleError, choose_result, plan_bundle
from core.report.files import atomic_write
from core.report.report_contents import report_json
from core.vocab.artifacts import artifact_name
from gui.run.helper_process import HelperProcess
from gui.window.app_window import AppWindow

HELPER_TIMEOUT_MS = 15 * 60 * 1000  # building the model's inputs and collect_env (bounded at 120 s itself)
FOLDER_SETTING = "bug_report/folder"


def bundle_command(report_dir: str, out: str, label: str) -> list[str]:
    """The helper's command line (core.report.bundle's __main__: a JSON line, exit 1 on error)."""
    return [sys.executable, "-m", "core.cli.helpers", "bundle", report_dir, out, label]


def report_folder(window: AppWindow) -> str:
    """The report folder of the results on screen ('' when there is none): the folder of the
    report.json they were opened from, or a finished run's own folder."""
    session = window.session
    if not session.results or window.controller.busy:
        return ""
    if session.origin:
        folder = os.path.dirname(os.path.abspath(session.origin))
        return folder if os.path.basename(session.origin) == "report.json" and os.path.isdir(folder) else ""
    run = window.run_folder
    if run is None or not session.artifacts_dir or not all(r.ended for r in session.results):
        return ""
    same = os.path.realpath(session.artifacts_dir) == os.path.realpath(run.name)
    return run.name if same and os.path.isdir(run.name) else ""


def ask_bundle_path(parent, start: str) -> str:
    """Where to save the zip ('' when cancelled). Replacing a file is asked apart (ask_replace)."""
    path, _ = QFileDialog.getSaveFileName(
        parent,
        "Save bug report",
        start,
        "Bug report (*.zip)",
        options=QFileDialog.Option.DontConfirmOverwrite,
    )
    return path


def _box(parent, name: str, title: str, text: str, yes: QMessageBox.StandardButton) -> QMessageBox:
    box = QMessageBox(QMessageBox.Icon.Question, title, text, yes | QMessageBox.StandardButton.Cancel, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)  # quotes paths, configs and findings from a report
    box.setObjectName(name)
    box.setDefaultButton(yes)
    box.setWindowModality(Qt.WindowModality.WindowModal)
    return box


class BugReportSaver(QObject):
    """Saving one bug report at a time for `window`: the notice, the file, the helper process.
    GUI thread only."""

    sig_saved = Signal(str)
    """A bundle was written at this path."""

    sig_failed = Signal(str)
    """No bundle was written: the message shown."""

    def __init__(self, window: AppWindow):
        super().__init__(window)
        self.window = window
        self.helper = HelperProcess(
            self,
            "the helper process",
            HELPER_TIMEOUT_MS,
            "building it took more than {minutes} minutes; it was stopped.",
        )
        self.helper.sig_ended.connect(self._on_finished)
        self.helper.sig_failed.connect(self._failed)
        self.folder = ""  # the report folder being bundled
        self.label = ""  # the config being bundled
        self.target = ""  # where the user asked for the zip
        self.written = ""  # where the helper writes it (a new name beside the target when replacing)
        self.box: QMessageBox | None = None  # the question on screen
        self._part_existed = False  # a file named like the helper's .part was there before it started

    @property
    def busy(self) -> bool:
        return self.helper.busy

    # ---------------------------------------------------------------- the steps
    def start(self) -> bool:
        """Say what goes in and ask to go on (a window-modal box: nothing waits on it)."""
        w = self.window
        if self.busy:
            w.status_label.setText("A bug report is being saved already.")
            return False
        folder = report_folder(w)
        if not folder:
            w.show_error(
                "No report folder",
                "A bug report is made from a report folder: open a session from a report folder's "
                "report.json (File → Open session…) or let a run finish first.",
            )
            return False
        results = w.session.results
        try:
            if not w.session.origin:  # a run of this window: its report goes into its own folder first
                atomic_write(os.path.join(folder, "report.json"), report_json(results, w.session.options))
            plan = plan_bundle(self._chosen(results), folder)
        except (BundleError, OSError) as exc:
            w.show_error("Cannot save a bug report", str(exc))
            return False
        self.folder, self.label = folder, plan.result.config.label
        left_out = "".join(f"\n  - {line}" for line in plan.left_out)
        text = (
            f"Config {self.label}: {plan.finding.sentence}\n\n{plan.notice()}"
            + (f"\n\nLeft out:{left_out}" if left_out else "")
            + "\n\nSave it as a zip?"
        )
        self.box = _box(w, "bug_report_notice", "Save bug report", text, QMessageBox.StandardButton.Save)
        self.box.buttonClicked.connect(self._on_notice_answered)
        self.box.open()
        return True

    def _chosen(self, results: list):
        """The selected row of the Summary table, else the first config with a finding."""
        table = self.window.summary_panel.table
        rows = table.selectionModel().selectedRows() if table.selectionModel() else []
        if rows and 0 <= rows[0].row() < len(results):
            return self.window.summary_panel.model.result(rows[0].row())
        return choose_result(results)

    def _on_notice_answered(self, button) -> None:
        box, self.box = self.box, None
        if box is None or box.standardButton(button) != QMessageBox.StandardButton.Save:
            self.window.status_label.setText("Bug report not saved.")
            return
        path = ask_bundle_path(
            self.window, os.path.join(self._start_folder(), f"bundle-{artifact_name(self.label)}.zip")
        )
        if not path:
            self.window.status_label.setText("Bug report not saved.")
            return
        self.save_to(path)

    def _start_folder(self) -> str:
        last = self.window.settings.value(FOLDER_SETTING, "", type=str)
        return last if last and os.path.isdir(last) else os.path.expanduser("~")

    def save_to(self, path: str) -> None:
        """Write the bundle at `path` (.zip added): asks first when a file is there."""
        path = os.path.abspath(os.path.expanduser(path))
        if not path.lower().endswith(".zip"):
            path += ".zip"
        self.target = path
        if not os.path.lexists(path):
            self._run(path)
            return
        self.box = _box(
            self.window,
            "bug_report_replace",
            "Replace the file?",
            f"{path} exists already. Replace it with the new bug report? (It is replaced only once the new one "
            "is written whole.)",
            QMessageBox.StandardButton.Yes,
        )
        self.box.buttonClicked.connect(self._on_replace_answered)
        self.box.open()

    def _on_replace_answered(self, button) -> None:
        box, self.box = self.box, None
        if box is None or box.standardButton(button) != QMessageBox.StandardButton.Yes:
            self.window.status_label.setText(f"Bug report not saved: {self.target} left as it was.")
            return
        folder, name = os.path.split(self.target)
        self._run(os.path.join(folder, f".{name}.{uuid.uuid4().hex[:8]}.new.zip"))

    def _run(self, written: str) -> None:
        self.written = written
        self._part_existed = os.path.lexists(written + ".part")
        self.window.settings.setValue(FOLDER_SETTING, os.path.dirname(self.target))
        command = bundle_command(self.folder, written, self.label)
        self.window.status_label.setText(
            f"Saving the bug report of {self.label} to {self.target}… (building the model's inputs and reading "
            "this machine's environment can take a minute)"
        )
        self.helper.start(command)
        self.window.update_actions()

    # ---------------------------------------------------------------- the helper's end
    def _on_finished(self, code: int, normal: bool, stdout: str, last_line: str) -> None:
        out = stdout.strip().splitlines()
        try:
            value = json.loads(out[-1]) if out else {}
        except ValueError:
            value = {}
        value = value if isinstance(value, dict) else {}
        if code == 0 and normal and isinstance(value.get("names"), list):
            self._saved(value)
        elif isinstance(value.get("error"), str):
            self._failed(value["error"])
        else:
            why = last_line or f"it ended with code {code}"
            self._failed(f"the helper process failed: {why}")

    def _saved(self, value: dict) -> None:
        self._end()
        try:
            if self.written != self.target:
                os.replace(self.written, self.target)
        except OSError as exc:
            self._remove_written()
            self._show_failure(f"cannot replace {self.target}: {exc.strerror or exc}.")
            return
        finding = value.get("finding") if isinstance(value.get("finding"), str) else ""
        self.window.status_label.setText(
            f"Bug report saved to {self.target} ({len(value['names'])} files)"
            + (f"; it reproduces: {finding}" if finding else "")
        )
        self.sig_saved.emit(self.target)

    def _failed(self, message: str) -> None:
        self._end()
        self._remove_written()
        self._show_failure(message)

    def _show_failure(self, message: str) -> None:
        text = f"{message}\nNothing was written at {self.target}; the results on screen are as they were."
        self.window.show_error("Bug report not saved", text)
        self.sig_failed.emit(text)

    def _remove_written(self) -> None:
        """What the helper may have left: a replacement's new file, its .part file when the
        helper was killed (never a file of the user's: one there before is left alone)."""
        if self.written != self.target and os.path.isfile(self.written):
            os.unlink(self.written)
        part = self.written + ".part"  # core.report.bundle.write_bundle's file while writing
        if not self._part_existed and os.path.isfile(part):
            os.unlink(part)

    def _end(self) -> None:
        self.window.update_actions()

    def stop(self) -> None:
        """The window closes: end the helper (its half-written zip is its own .part file)."""
        if self.helper.busy:
            self.helper.stop()
            self._remove_written()
