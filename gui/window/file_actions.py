"""File dialogs and report files: export the CSVs, save a session (report.json; reopening
one is `gui.window.report_opening`), dropped files, and the message boxes. The files are written
by `core.report.files`, exactly as the `profile` command writes them; an error (an unwritable
folder) is shown and nothing is lost: the results stay on screen to save elsewhere.
GUI thread only.
"""

from __future__ import annotations

import os
import platform

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from core.report.files import (
    REPORT_FILES,
    FolderInUseError,
    OutputFolder,
    ReportError,
    atomic_write,
    write_report,
)
from core.report.report_contents import report_json
from core.vocab.artifacts import copy_artifacts
from gui.widgets.folder_dialog import ask_folder
from gui.widgets.safe_text import markup

MODEL_SUFFIXES = (".py", ".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript")


def dropped_paths(mime) -> list[str]:
    """Local model files and report.json files among dropped URLs."""
    if not mime.hasUrls():
        return []
    return [
        u.toLocalFile()
        for u in mime.urls()
        if u.isLocalFile() and (u.toLocalFile().endswith(MODEL_SUFFIXES + (".json",)) or is_hf_folder(u.toLocalFile()))
    ]


def is_hf_folder(path: str) -> bool:
    """A local Hugging Face checkpoint folder (save_pretrained: it holds a config.json)."""
    return os.path.isdir(path) and os.path.isfile(os.path.join(path, "config.json"))


def ask_hf_folder(parent: QWidget, folder: str) -> str:
    return QFileDialog.getExistingDirectory(parent, "Open Hugging Face folder (saved with save_pretrained)", folder)


def error_box(parent: QWidget, title: str, text: str) -> QMessageBox:
    """A window-modal error box that does not block the event loop (runs keep updating).
    Its text is plain: messages quote paths and values from reports and files."""
    box = QMessageBox(QMessageBox.Icon.Critical, title, text, QMessageBox.StandardButton.Ok, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setObjectName("error_box")
    box.open()
    return box


def ask_model_file(parent: QWidget, folder: str) -> str:
    path, _ = QFileDialog.getOpenFileName(
        parent,
        "Open model file",
        folder,
        "Model files (*.py *.pt2 *.pt *.pth *.ts *.jit *.torchscript);;Python model files (*.py);;"
        "torch.export programs (*.pt2);;All files (*)",
    )
    return path


def export_report(
    parent, results, options: dict, folder: str | None, artifacts_dir: str = "", sections: dict | None = None
) -> list[str]:
    """Write every report file into a folder, with the jobs' files from `artifacts_dir`
    (traces/, graphs/, compile_log/: the session's folder); [] when cancelled, nothing to
    write or failed."""
    if not results:
        error_box(parent, "Nothing to export", "Run a profile or open a session first.")
        return []
    asked = folder is None
    if asked:
        folder = ask_folder(parent, "Export report into folder", parent.folders.get("export", writing=True))
        if not folder:
            return []
    try:
        paths = write_report(results, folder, options, sections=sections)
    except FolderInUseError as exc:
        # A folder chosen in the dialog that holds an earlier report: ask, as a file dialog
        # asks before replacing a file (core refuses by default so nothing is lost silently).
        holds_report = any(os.path.exists(os.path.join(folder, name)) for name in REPORT_FILES)
        if not (asked and holds_report and _confirm_replace(parent, folder)):
            parent.show_error("Export failed", str(exc))
            return []
        try:
            paths = _overwrite_report(results, folder, options, artifacts_dir, sections)
        except ReportError as again:
            parent.show_error("Export failed", str(again))
            return []
    except ReportError as exc:
        parent.show_error("Export failed", str(exc))
        return []
    note = copy_job_files(parent, artifacts_dir, folder)
    if note is None:
        return []
    if asked:
        parent.folders.remember("export", folder)
    parent.status_label.setText(f"Exported {len(paths)} files to {os.path.abspath(folder)}{note}")
    return paths


def copy_job_files(parent, artifacts_dir: str, folder: str) -> str | None:
    """Copy the session's artifact folders beside a report written into `folder`: '' when
    done, a note for the status line when a folder of the user's was left alone, None when
    copying failed (the error shown)."""
    if not artifacts_dir or not os.path.isdir(artifacts_dir):
        return ""
    try:
        skipped = copy_artifacts(artifacts_dir, folder)
    except OSError as exc:
        parent.show_error(
            "Copying the job files failed", f"cannot copy the traces and graphs into {folder}: {exc.strerror or exc}."
        )
        return None
    return f" ({', '.join(skipped)} not copied: a folder of yours by that name is there)" if skipped else ""


def _overwrite_report(results, folder: str, options: dict, artifacts_dir: str, sections: dict | None) -> list[str]:
    """Replace the report in `folder`; when it is the session's own artifacts folder (the
    report on screen was opened from there), its traces and graphs stay."""
    same = bool(artifacts_dir) and os.path.realpath(artifacts_dir) == os.path.realpath(folder)
    if not same:
        return write_report(results, folder, options, overwrite=True, sections=sections)
    with OutputFolder(folder, overwrite=True, extend=True) as claimed:
        return write_report(results, folder, options, folder=claimed, sections=sections)


def _confirm_replace(parent, folder: str) -> bool:
    box = QMessageBox(
        QMessageBox.Icon.Question,
        "Replace the report?",
        f"{folder} already holds a report. Replace its files with this one?",
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
        parent,
    )
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Yes


def save_session(
    parent, results, options: dict, path: str | None, artifacts_dir: str = "", sections: dict | None = None
) -> str:
    """Save the run as report.json, with the jobs' files from `artifacts_dir` beside it (so
    the reopened session shows its graphs and traces); '' when cancelled or failed."""
    if not results:
        error_box(parent, "Nothing to save", "Run a profile or open a session first.")
        return ""
    asked = path is None
    if asked:
        start = os.path.join(parent.folders.get("export", writing=True), "report.json")
        path, _ = QFileDialog.getSaveFileName(parent, "Save session", start, "compile-profiler report (*.json)")
        if not path:
            return ""
    try:
        atomic_write(path, report_json(results, options, sections))
    except OSError as exc:
        parent.show_error(
            "Saving the session failed",
            f"cannot write {path}: {exc.strerror or exc}. Choose a folder you can write to; "
            "the results are still here.",
        )
        return ""
    note = copy_job_files(parent, artifacts_dir, os.path.dirname(os.path.abspath(path)))
    if note is None:
        return ""
    if asked:
        parent.folders.remember("export", path)
    parent.status_label.setText(f"Saved session to {path}{note}")
    return path


def about_box(parent: QWidget, torch_info) -> None:
    import pyqtgraph
    import PySide6

    versions = dict(torch_info.versions) if torch_info is not None else {}
    rows = [
        ("torch", versions.get("torch", "loading…")),
        ("torchvision", versions.get("torchvision", "loading…" if torch_info is None else "not installed")),
        ("CUDA (torch build)", versions.get("cuda", "loading…")),
        ("GPU", versions.get("gpu") or (torch_info.gpu_reason if torch_info is not None else "loading…")),
        ("Python", platform.python_version()),
        ("PySide6 / Qt", PySide6.__version__),
        ("pyqtgraph", pyqtgraph.__version__),
    ]
    table = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;{markup(v)}</td></tr>" for k, v in rows)
    QMessageBox.about(
        parent,
        "About compile-profiler",
        "<h3>compile-profiler</h3><p>Does compiling my model pay off, at what cost, and why does "
        f"it break? A profiler for PyTorch's torch.compile.</p><table>{table}</table>",
    )
