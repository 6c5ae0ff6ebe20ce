"""What the windows that profile the user's programs in child processes share (the script window,
gui.window.script_window; the generation window, gui.window.generation_window): a worker
(gui.run.profile_run), Cancel, a refusal said in the status bar and a window-modal box, Save
report… into a folder of the user's choosing, and closing that stops the run. GUI thread only.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtWidgets import QFileDialog, QMainWindow, QMessageBox, QWidget

from core.report.files import OutputFolder, ReportError
from gui.run.profile_run import ProfileRunController


class ProfileWindow(QMainWindow):
    """A subclass names what it profiles (`what`: "the script", "generation"), its refusal box
    (`refusal_name`) and what a cancel keeps (`stopping`)."""

    what = "the program"
    refusal_name = "profile_refusal"
    stopping = "Stopping (what was measured is kept)…"

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.controller = ProfileRunController(self)

    def cancel(self) -> None:
        if self.controller.busy:
            self.controller.cancel()
            self.statusBar().showMessage(self.stopping)

    def _refuse(self, text: str) -> bool:
        self.statusBar().showMessage(text)
        box = QMessageBox(
            QMessageBox.Icon.Warning, f"Cannot profile {self.what}", text, QMessageBox.StandardButton.Ok, self
        )
        box.setObjectName(self.refusal_name)
        box.open()
        return False

    def _write_report(self, folder: str | None, caption: str, write: Callable[[OutputFolder], None]) -> bool:
        """Write the last profile's report folder with `write` into `folder` (asks when None);
        a folder that cannot be claimed or written is refused, and what is on screen stays."""
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, caption, os.getcwd())
            if not folder:
                return False
        try:
            out = OutputFolder(folder).claim()
        except ReportError as exc:
            return self._refuse(str(exc))
        try:
            write(out)
        except (OSError, ReportError) as exc:
            return self._refuse(f"The report could not be written into {folder}: {exc}. What is on screen stays.")
        finally:
            out.release()
        self.statusBar().showMessage(f"Report written to {out.path}")
        return True

    def closeEvent(self, event) -> None:
        """Closing stops the run (its process group); the window waits for it to end."""
        if self.controller.busy:
            self.controller.wait()
        super().closeEvent(event)
