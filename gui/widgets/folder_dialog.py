"""Choosing a folder to write into, where typing a new folder's name makes it.

Qt's own folder dialog refuses a name that does not exist yet ("Directory not found"): to
export into a new folder the user had to leave the dialog. `FolderDialog` makes the typed
folder (and the new folders it is in) when the user accepts. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtWidgets import QFileDialog, QMessageBox, QWidget


class FolderDialog(QFileDialog):
    """A folder chooser whose typed new folder is made on accept."""

    def __init__(self, parent: QWidget | None, title: str, start: str):
        super().__init__(parent, title, start)
        self.setFileMode(QFileDialog.FileMode.Directory)
        self.setOption(QFileDialog.Option.ShowDirsOnly, True)
        self.setLabelText(QFileDialog.DialogLabel.Accept, "Choose")
        self.problem = ""

    def accept(self) -> None:
        files = self.selectedFiles()
        path = os.path.abspath(os.path.expanduser(files[0])) if files else ""
        if path and not os.path.lexists(path):
            try:
                os.makedirs(path)  # a new folder, in new folders of its own when typed so (a/b/c)
            except OSError as exc:
                self._refuse(f"Cannot make {path}: {exc.strerror or exc}. Choose a folder you can write to.")
                return
            self.selectFile(path)
        super().accept()

    def _refuse(self, text: str) -> None:
        self.problem = text
        box = QMessageBox(QMessageBox.Icon.Warning, self.windowTitle(), text, QMessageBox.StandardButton.Ok, self)
        box.setObjectName("folder_problem")
        box.open()


def ask_folder(parent: QWidget | None, title: str, start: str) -> str:
    """The folder chosen (made when typed new), or '' when cancelled."""
    dialog = FolderDialog(parent, title, start)
    if dialog.exec() != QFileDialog.DialogCode.Accepted:
        return ""
    files = dialog.selectedFiles()
    return files[0] if files else ""
