"""torch's compile log of one config (compile_log/<config>.log, `--compile-log`), with a
search and a level filter: a dialog opened from the Graphs tab.

The file is found and read by core (core.report.artifact_views, core.capture.compile_log.read_log and
filter_log) in the session's own artifacts folder; its text is shown as plain text.
GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QComboBox, QDialog, QHBoxLayout, QLabel, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget

from core.capture.compile_log import LEVEL_ORDER, filter_log, unread_part
from core.report.artifact_views import compile_log_entries, compile_log_path
from gui.widgets.safe_text import plain
from gui.widgets.theme import warning_color

MAX_SHOWN = 20_000  # entries drawn at once; the search narrows the rest


def entry_text(entry) -> str:
    """One log entry as a line of the view: level, compile id, artifact, text."""
    where = " ".join(
        p
        for p in (f"[{entry.compile_id}]" if entry.compile_id else "", f"[{entry.artifact}]" if entry.artifact else "")
        if p
    )
    return f"{entry.level.upper():<8} {where + ' ' if where else ''}{entry.text}"


class CompileLogView(QWidget):
    """The entries of one config's compile log, filtered by level and text. GUI thread only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.entries: list = []
        self.path = ""
        self.level_box = QComboBox()
        self.level_box.addItems(LEVEL_ORDER)
        self.level_box.setToolTip("Show messages at this level and above")
        self.search = QLineEdit()
        self.search.setPlaceholderText("Search the log (text, compile id such as 0/1, artifact)…")
        self.search.setClearButtonEnabled(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.text.setFont(QFont("monospace"))
        self.status = plain(QLabel(""))
        self.status.setWordWrap(True)
        # A huge log is read at its start and its end only: says so, with the file and its size.
        self.cut = plain(QLabel(""))
        self.cut.setWordWrap(True)
        self.cut.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cut.setStyleSheet(f"color: {warning_color()}")
        self.cut.hide()
        self._timer = QTimer(self)  # a search over 200,000 entries waits for a pause in typing
        self._timer.setSingleShot(True)
        self._timer.setInterval(150)
        self._timer.timeout.connect(self._apply)
        self.search.textChanged.connect(lambda _: self._timer.start())
        self.level_box.currentIndexChanged.connect(lambda _: self._apply())
        row = QHBoxLayout()
        row.addWidget(QLabel("Level:"))
        row.addWidget(self.level_box)
        row.addWidget(self.search, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(row)
        layout.addWidget(self.cut)
        layout.addWidget(self.text, 1)
        layout.addWidget(self.status)

    def load(self, artifacts_dir: str, label: str) -> None:
        """Read `label`'s compile log from the session's artifacts folder."""
        self.entries = compile_log_entries(artifacts_dir, label)
        self.path = compile_log_path(artifacts_dir, label)
        note = unread_part(self.entries)
        self.cut.setText(f"Only part of this log is shown: {note}." if note else "")
        self.cut.setVisible(bool(note))
        self._apply()

    def _apply(self) -> None:
        shown = filter_log(self.entries, self.level_box.currentText(), self.search.text())
        self.text.setPlainText("\n".join(entry_text(e) for e in shown[:MAX_SHOWN]))
        if not self.entries:
            self.status.setText(
                "No compile log for this config (a report saved without its compile_log/ folder, "
                "or torch logged nothing at the job's --compile-log level)."
            )
        else:
            more = f"; the first {MAX_SHOWN:,} shown, search to narrow" if len(shown) > MAX_SHOWN else ""
            self.status.setText(f"{len(shown):,} of {len(self.entries):,} messages{more} — {self.path}")


class CompileLogDialog(QDialog):
    """A window holding a CompileLogView for one config. GUI thread only."""

    def __init__(self, artifacts_dir: str, label: str, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("Compile log — " + label.replace("\n", " "))  # a window title is plain text
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.resize(1000, 600)
        self.view = CompileLogView(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.view)
        self.view.load(artifacts_dir, label)
