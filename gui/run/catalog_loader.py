"""Loading core.catalog's Catalog on a background thread, so the window shows before torch is
imported; the result is delivered on the GUI thread.
"""
from __future__ import annotations

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
        self.sig_loaded.emit(load_catalog())
        self.sig_more_models.emit(load_more_models())

    def _on_loaded(self, catalog: Catalog) -> None:
        self.catalog = catalog
