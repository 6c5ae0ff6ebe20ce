"""Opening a saved report.json in the window (File → Open session, --session, a dropped
file). A report is untrusted input: one that cannot be read (a value of the wrong type,
`core.report.files.ReportError`) or that no panel can draw is refused with a message naming the
file and the problem, no traceback, and what was on screen stays; the warnings of its
header (another report version) are shown above the results; a model file it names is
never read, and becomes the next run's model only when the user knows it already.
GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDialog, QFileDialog

from core.models import is_file_source, split_factory
from core.models.examples import is_bundled
from core.report.files import OtherKindError, ReportError, load_report
from gui.window.app_window import AppWindow


def open_report(window: AppWindow, path: str | None) -> bool:
    """Show a report.json in `window` (asks for one when `path` is None); True when shown. A
    script run's report (`main.py run`) opens in the script window; a text generation's is
    refused with where its figures are."""
    try:
        loaded = read_report(window, path, window.folders.get("report"), other_kinds=True)
    except OtherKindError as exc:
        return open_other_kind(window, exc)
    if loaded is None:
        return False
    results, header, path = loaded
    window.folders.remember("report", path)
    options = header.get("options") if isinstance(header.get("options"), dict) else {}
    warnings = report_warnings(header)
    session = window.session
    previous = (session.results, session.options, session.origin, session.warnings)
    previous_sections = dict(window.session_sections)
    decision = window.view("decision")
    previous_calls, previous_budget = decision.calls.value(), decision.budget.value()
    calls = options.get("calls")
    if isinstance(calls, int) and not isinstance(calls, bool):  # the run's --calls: its recommendation.txt's
        if decision.calls.minimum() <= calls <= decision.calls.maximum():
            decision.calls.setValue(calls)  # before the results arrive: they are decided once, at these calls
    tune = header.get("tune")
    budget_s = tune.get("budget_s") if isinstance(tune, dict) else None
    if isinstance(budget_s, (int, float)) and not isinstance(budget_s, bool):  # a tune's: Find best settings again
        if decision.budget.minimum() <= budget_s / 60 <= decision.budget.maximum():
            decision.budget.setValue(budget_s / 60)
    problem = window.show_results_from_report(results, options, path, warnings, header)
    problem = problem or check_tables(window)
    if problem is not None:
        decision.calls.setValue(previous_calls)
        decision.budget.setValue(previous_budget)
        session.load(*previous)
        window.session_sections = previous_sections
        window.show_tune_notes()
        window.show_error(
            f"Cannot open {os.path.basename(path)}",
            f"{path}: this app cannot show this report ({describe(problem)}).{_kept(window, ' ')}",
        )
        return False
    source = results[0].spec.model.source if results else ""
    if source and may_adopt(window, source):
        window.adopt_model(source, results[0].spec.sweep_shapes)
    if any(r.variants for r in results) and window.tabs.currentIndex() == 0:
        window.show_tab("sweep")
    window.status_label.setText(
        f"Opened {path}: {len(results)} job(s)"
        + (f" — {len(warnings)} warning(s) above the results" if warnings else "")
    )
    return True


def open_other_kind(window: AppWindow, found: OtherKindError) -> bool:
    """A report of another kind than a model's: a script run's shown in the script window
    (True), a text generation's refused saying where its figures are (False)."""
    from core.report.script_report import load_script_report

    where = found.path
    if found.kind != "script":
        window.show_error(
            f"Cannot open {os.path.basename(where)}",
            f"{found} The app shows text generation live (Task → Generate) but cannot reopen its report yet: its "
            f"figures are in {os.path.join(os.path.dirname(where), 'summary.txt')} and summary.csv.{_kept(window, ' ')}",
        )
        return False
    try:
        result = load_script_report(where)
    except Exception as exc:  # noqa: BLE001 - an untrusted report: said, no traceback
        window.show_error(
            f"Cannot open {os.path.basename(where)}",
            f"{where} is not a script report this version can read ({describe(exc)}).{_kept(window, ' ')}",
        )
        return False
    if not window.open_script_window().show_report(result, where):
        window.show_error(
            f"Cannot open {os.path.basename(where)} now",
            f"A script is being profiled in the script window; open {where} when it has ended (or cancel it).",
        )
        return False
    window.folders.remember("report", where)
    window.status_label.setText(f"Opened {where} in the script window: {result.headline()}")
    return True


def _kept(parent, sep: str = "\n") -> str:
    """Said after a report that could not be opened, when results were on screen (not at a
    start with nothing shown yet)."""
    session = getattr(parent, "session", None)
    return f"{sep}What was on screen stays as it was." if session is not None and session.results else ""


def may_adopt(window: AppWindow, source: str) -> bool:
    """Whether a report's model may become the next run's: a torchvision name, a bundled
    example or a file this user opened before (never a path only the report names)."""
    if not is_file_source(source):
        return True
    path = os.path.abspath(split_factory(source)[0])
    return is_bundled(source) or path in window.recent.paths()


class ReportDialog(QFileDialog):
    """Asks for a report: a report.json, or a report folder (one holding a report.json), which
    Open chooses instead of going into it. Qt's own dialog (the desktop's cannot choose a folder
    where it asks for a file)."""

    def __init__(self, parent, title: str, start: str):
        super().__init__(parent, title, start, "compile-profiler report (report.json *.json);;All files (*)")
        self.setFileMode(QFileDialog.FileMode.ExistingFile)
        self.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        self.chosen = ""

    def accept(self) -> None:
        files = self.selectedFiles()
        path = os.path.abspath(os.path.expanduser(files[0])) if files else ""
        if path and os.path.isdir(path) and os.path.isfile(os.path.join(path, "report.json")):
            self.chosen = path  # a report folder: chosen, not gone into
            QDialog.accept(self)
            return
        super().accept()
        if self.result() == QDialog.DialogCode.Accepted:
            files = self.selectedFiles()
            self.chosen = files[0] if files else ""


def ask_report(parent, title: str, folder: str) -> str:
    """A report.json or report folder the user chose, starting in `folder`; '' when cancelled."""
    dialog = ReportDialog(parent, title, folder)
    return dialog.chosen if dialog.exec() == QDialog.DialogCode.Accepted else ""


def read_report(parent, path: str | None, folder: str, title: str = "Open session", other_kinds: bool = False):
    """(results, header, path) from a report.json, or None (cancelled, or the error shown);
    the file dialog (when `path` is None) is titled `title` and starts in `folder`.
    `other_kinds`: a script's or a generation's report raises OtherKindError for the caller."""
    if path is None:
        path = ask_report(parent, title, folder)
        if not path:
            return None
    try:
        results, header = load_report(path)
    except ReportError as exc:
        if other_kinds and isinstance(exc, OtherKindError):
            raise
        text = str(exc)
        parent.show_error(
            f"Cannot open {os.path.basename(path)}",
            (text if path in text else f"{path}: {text}") + _kept(parent),
        )
        return None
    except Exception as exc:  # noqa: BLE001 - a report this version does not expect: say so, no traceback
        parent.show_error(
            f"Cannot open {os.path.basename(path)}",
            f"{path} is not a report this version can read ({describe(exc)}).{_kept(parent)}",
        )
        return None
    return results, header, path


def report_warnings(header) -> list[str]:
    """The sentences a report's header warns with (`core.report.files.load_report`'s 'warnings')."""
    warnings = header.get("warnings") if isinstance(header, dict) else None
    if not warnings:
        return []
    return [str(w) for w in warnings] if isinstance(warnings, (list, tuple)) else [str(warnings)]


def describe(exc: BaseException) -> str:
    """An exception as one line for a user (its type only when it has no message)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return text or type(exc).__name__


TABLE_ROLES = (
    Qt.ItemDataRole.DisplayRole,
    Qt.ItemDataRole.ToolTipRole,
    Qt.ItemDataRole.UserRole,
    Qt.ItemDataRole.ForegroundRole,
)


def check_tables(window: AppWindow, max_rows: int = 5000):
    """Ask every table of `window` for every cell it may paint (and the graph-break details):
    the exception a report's wrong-typed value raises, or None. Run right after a report is
    shown, so such a value is refused up front instead of failing at every repaint."""
    from gui.panels.break_detail import detail_html

    models = (
        window.summary_panel.model,
        window.graph_breaks_panel.model,
        window.graph_breaks_panel.compile_panel.breakdown_model,
        window.graph_breaks_panel.compile_panel.recompile_model,
        window.sweep_panel.model,
    )
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
