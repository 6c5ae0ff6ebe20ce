"""Loading core.catalog's Catalog on a background thread, so the window shows before torch is
imported; the result is delivered on the GUI thread.
"""
from __future__ import annotations

import gc
import threading

from PySide6.QtCore import QObject, Signal

from core.catalog import Catalog, load_catalog, load_more_models


class CatalogLoader(QObject):
    """Loads the catalog on a daemon thread; create and start on the GUI thread."""

    sig_loaded = Signal(object)
    """The catalog is ready (a `Catalog`); delivered on the GUI thread."""

    sig_more_models = Signal(object)
    """The timm and Hugging Face sources (a tuple of str) arrived after the catalog."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.catalog: Catalog | None = None
        self.sig_loaded.connect(self._on_loaded)

    def start(self) -> None:
        threading.Thread(target=self._load, name="catalog-loader", daemon=True).start()

    def _load(self) -> None:  # background thread
        # Python's cyclic garbage collector runs in whichever thread happens to allocate. Run in
        # this one (importing timm and transformers allocates a lot), it destroyed Qt objects of
        # the GUI thread (a closed window's) and deadlocked in shiboken's GIL handling: a GUI
        # test run hung in QObject::~QObject called from gc_collect_main here. So no automatic
        # collection while this thread works; the GUI thread collects afterwards as usual.
        enabled = gc.isenabled()
        gc.disable()
        try:
            if self._emit(self.sig_loaded, load_catalog()):
                self._emit(self.sig_more_models, load_more_models())
        finally:
            if enabled:
                gc.enable()

    @staticmethod
    def _emit(signal, value) -> bool:
        """Emit from this thread; False when the loader was deleted meanwhile (its window closed
        while torch, timm or transformers were importing): nobody is left to tell."""
        try:
            signal.emit(value)
        except RuntimeError:  # "Signal source has been deleted"
            return False
        return True

    def _on_loaded(self, catalog: Catalog) -> None:
        self.catalog = catalog
