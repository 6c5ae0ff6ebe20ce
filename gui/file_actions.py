"""File dialogs and report files: export the CSVs, save and reopen a session (report.json),
dropped files, and the message boxes. The files are written by `core.report`, exactly as the `profile`
command writes them; an error (an unwritable folder) is shown and nothing is lost: the
results stay on screen to save elsewhere. GUI thread only.
"""
from __future__ import annotations

import os
import platform

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget

from core.report import (REPORT_FILES, FolderInUseError, ReportError, atomic_write, load_report, report_json,
                         write_report)
from gui.safe_text import markup

MODEL_SUFFIXES = (".py", ".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript")


def dropped_paths(mime) -> list[str]:
    """Local model files and report.json files among dropped URLs."""
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls()
            if u.isLocalFile() and u.toLocalFile().endswith(MODEL_SUFFIXES + (".json",))]


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
        parent, "Open model file", folder,
        "Model files (*.py *.pt2 *.pt *.pth *.ts *.jit *.torchscript);;Python model files (*.py);;"
        "torch.export programs (*.pt2);;All files (*)")
    return path


def export_report(parent, results, options: dict, folder: str | None) -> list[str]:
    """Write every report file into a folder; [] when cancelled, nothing to write or failed."""
    if not results:
        error_box(parent, "Nothing to export", "Run a profile or open a session first.")
        return []
    asked = folder is None
    if asked:
        folder = QFileDialog.getExistingDirectory(parent, "Export report into folder", os.getcwd())
        if not folder:
            return []
    try:
        paths = write_report(results, folder, options)
    except FolderInUseError as exc:
        # A folder chosen in the dialog that holds an earlier report: ask, as a file dialog
        # asks before replacing a file (core refuses by default so nothing is lost silently).
        holds_report = any(os.path.exists(os.path.join(folder, name)) for name in REPORT_FILES)
        if not (asked and holds_report and _confirm_replace(parent, folder)):
            parent.show_error("Export failed", str(exc))
            return []
        try:
            paths = write_report(results, folder, options, overwrite=True)
        except ReportError as again:
            parent.show_error("Export failed", str(again))
            return []
    except ReportError as exc:
        parent.show_error("Export failed", str(exc))
        return []
    parent.status_label.setText(f"Exported {len(paths)} files to {os.path.abspath(folder)}")
    return paths


def _confirm_replace(parent, folder: str) -> bool:
    box = QMessageBox(QMessageBox.Icon.Question, "Replace the report?",
                      f"{folder} already holds a report. Replace its files with this one?",
                      QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel, parent)
    box.setTextFormat(Qt.TextFormat.PlainText)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    return box.exec() == QMessageBox.StandardButton.Yes


def save_session(parent, results, options: dict, path: str | None) -> str:
    """Save the run as report.json; '' when cancelled or failed."""
    if not results:
        error_box(parent, "Nothing to save", "Run a profile or open a session first.")
        return ""
    if path is None:
        path, _ = QFileDialog.getSaveFileName(parent, "Save session", os.path.join(os.getcwd(), "report.json"),
                                              "compile-profiler report (*.json)")
        if not path:
            return ""
    try:
        atomic_write(path, report_json(results, options))
    except OSError as exc:
        parent.show_error("Saving the session failed",
                          f"cannot write {path}: {exc.strerror or exc}. Choose a folder you can write to; "
                          "the results are still here.")
        return ""
    parent.status_label.setText(f"Saved session to {path}")
    return path


def open_session(parent, path: str | None, folder: str):
    """(results, header, path) from a report.json, or None (cancelled, or the error shown)."""
    if path is None:
        path, _ = QFileDialog.getOpenFileName(parent, "Open session", folder,
                                              "compile-profiler report (report.json *.json);;All files (*)")
        if not path:
            return None
    try:
        results, header = load_report(path)
    except ReportError as exc:
        text = str(exc)
        parent.show_error(f"Cannot open {os.path.basename(path)}",
                          (text if path in text else f"{path}: {text}") + "\nWhat was on screen stays as it was.")
        return None
    except Exception as exc:  # noqa: BLE001 - a report this version does not expect: say so, no traceback
        parent.show_error(f"Cannot open {os.path.basename(path)}",
                          f"{path} is not a report this version can read ({describe(exc)}).\n"
                          "What was on screen stays as it was.")
        return None
    return results, header, path


def report_warnings(header) -> list[str]:
    """The sentences a report's header warns with (`core.report.load_report`'s 'warnings')."""
    warnings = header.get("warnings") if isinstance(header, dict) else None
    if not warnings:
        return []
    return [str(w) for w in warnings] if isinstance(warnings, (list, tuple)) else [str(warnings)]


def describe(exc: BaseException) -> str:
    """An exception as one line for a user (its type only when it has no message)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


TABLE_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole, Qt.ItemDataRole.UserRole,
               Qt.ItemDataRole.ForegroundRole)


def check_tables(window, max_rows: int = 5000):
    """Ask every table of `window` for every cell it may paint (and the graph-break details):
    the exception a report's wrong-typed value raises, or None. Run right after a report is
    shown, so such a value is refused up front instead of failing at every repaint."""
    from gui.graph_breaks_panel import detail_html

    models = (window.summary_panel.model, window.graph_breaks_panel.model,
              window.graph_breaks_panel.compile_panel.breakdown_model,
              window.graph_breaks_panel.compile_panel.recompile_model, window.sweep_panel.model)
    try:
        for model in models:
            for row in range(min(model.rowCount(), max_rows)):
                for column in range(model.columnCount()):
                    index = model.index(row, column)
                    for role in TABLE_ROLES:
                        model.data(index, role)
        for row in range(min(window.graph_breaks_panel.model.rowCount(), max_rows)):
            detail_html(window.graph_breaks_panel.model.graph_break(row))
    except Exception as exc:  # noqa: BLE001 - reported to the user by the caller
        return exc
    return None


def about_box(parent: QWidget, catalog) -> None:
    import pyqtgraph
    import PySide6

    versions = dict(catalog.versions) if catalog is not None else {}
    rows = [
        ("torch", versions.get("torch", "loading…")),
        ("torchvision", versions.get("torchvision", "loading…" if catalog is None else "not installed")),
        ("CUDA (torch build)", versions.get("cuda", "loading…")),
        ("GPU", versions.get("gpu") or (catalog.gpu_reason if catalog is not None else "loading…")),
        ("Python", platform.python_version()),
        ("PySide6 / Qt", PySide6.__version__),
        ("pyqtgraph", pyqtgraph.__version__),
    ]
    table = "".join(f"<tr><td><b>{k}</b></td><td>&nbsp;{markup(v)}</td></tr>" for k, v in rows)
    QMessageBox.about(parent, "About compile-profiler",
                      "<h3>compile-profiler</h3><p>Does compiling my model pay off, at what cost, and why does "
                      f"it break? A profiler for PyTorch's torch.compile.</p><table>{table}</table>")
