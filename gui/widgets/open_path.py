"""Opening a file or folder the app made (tlparse's report, the traces folder) in the desktop's
browser or file manager, and saying where it is whether or not that worked.

`QDesktopServices.openUrl` fails quietly where no browser or file manager is found (only a
`qt.qpa` warning on stderr), so the path is always shown, selectable, with a Copy button, and
a failure is said in words. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices, QGuiApplication
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from gui.widgets.safe_text import plain


def desktop_open(path: str) -> bool:
    """Ask the desktop to open the local file or folder `path`; False when nothing could."""
    return bool(QDesktopServices.openUrl(QUrl.fromLocalFile(path)))


class OpenedPath(QWidget):
    """A line naming the file or folder last opened (or not), with Copy; hidden until used."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.path = ""
        self.label = plain(QLabel(""))
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.copy_button = QPushButton("Copy path")
        self.copy_button.setToolTip("Copy the path to the clipboard, to open it yourself")
        self.copy_button.clicked.connect(self.copy)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.copy_button)
        self.hide()

    def open(self, path: str, what: str, opener: str) -> bool:
        """Open `path` (`what` it is, e.g. "tlparse's report"; `opener`, e.g. "browser") and
        show the outcome with the path; returns whether the desktop took it."""
        opened = desktop_open(path)
        self.path = path
        if opened:
            self.label.setText(f"Opened {what} in your {opener}: {path}")
        else:
            self.label.setText(
                f"Nothing could open {what}: no {opener} was found. It is at {path} (copy the path and open it yourself)."
            )
        self.show()
        return opened

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.path)
