"""Loading core.run.torch_info's TorchInfo on a background thread, so the window shows before torch is
imported; the result is delivered on the GUI thread. The timm and Hugging Face names come
from core.run.torch_info's cache or its helper process (QProcess): timm and transformers are never
imported into the app's process.
"""

from __future__ import annotations

import json
import threading

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from core.run.torch_info import ROOT, TorchInfo, cached_more_models, load_torch_info, more_models_command
from gui.qt_compat import collect_garbage_on_gui_thread


class TorchInfoLoader(QObject):
    """Loads the catalog on a daemon thread, then the slower names; create and start on the
    GUI thread."""

    sig_loaded = Signal(object)
    """The catalog is ready (a `TorchInfo`); delivered on the GUI thread."""

    sig_more_models = Signal(object)
    """The timm and Hugging Face sources (a tuple of str) arrived after the catalog."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.torch_info: TorchInfo | None = None
        self.more_models_error = ""  # why the timm/Hugging Face names could not be listed
        self._process: QProcess | None = None
        self.sig_loaded.connect(self._on_loaded)

    def start(self) -> None:
        # the app collects garbage on the GUI thread only (gui.qt_compat): a collection in this
        # thread could destroy a closed window's Qt objects here, and deadlock
        collect_garbage_on_gui_thread()
        threading.Thread(target=self._load, name="catalog-loader", daemon=True).start()

    def _load(self) -> None:  # background thread
        catalog = load_torch_info()
        try:
            self.sig_loaded.emit(catalog)
        except RuntimeError:  # "Signal source has been deleted": its window closed meanwhile
            pass

    def _on_loaded(self, catalog: TorchInfo) -> None:
        self.torch_info = catalog
        names = cached_more_models()
        if names is not None:  # after every other slot of sig_loaded (the list is set there)
            QTimer.singleShot(0, self, lambda: self.sig_more_models.emit(names))
            return
        self._process = process = QProcess(self)
        process.setWorkingDirectory(ROOT)
        process.finished.connect(self._on_more_models_listed)
        command = more_models_command()
        process.start(command[0], command[1:])

    def _on_more_models_listed(self, code: int, status) -> None:
        process, self._process = self._process, None
        if process is None:
            return
        out = bytes(process.readAllStandardOutput()).decode("utf-8", "replace")
        try:
            names = json.loads(out.strip().splitlines()[-1]) if code == 0 and out.strip() else None
        except ValueError:
            names = None
        if not isinstance(names, list):
            err = bytes(process.readAllStandardError()).decode("utf-8", "replace").strip().splitlines()
            self.more_models_error = err[-1] if err else f"the helper process ended with code {code}"
            return
        self.sig_more_models.emit(tuple(str(n) for n in names))
