"""What the installed torch offers (backends, modes, torchvision models, CUDA, the dynamo
config's settings), loaded on a background thread so the window shows before torch is
imported.

Importing torch takes ~2 s here and torchvision another ~1 s; doing it on the GUI thread
would delay the first paint by that much.
"""
from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal


@dataclass(frozen=True)
class Catalog:
    """Everything the pickers list. `error` is set (and the lists may be short) when
    loading failed; the app still opens and says why."""

    backends: tuple[str, ...] = ()
    all_backends: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    cuda_available: bool = False
    versions: dict = field(default_factory=dict)
    gpu_reason: str = ""
    gpu_monitor: object | None = None
    dynamo_defaults: dict = field(default_factory=dict)  # torch._dynamo.config's settings
    error: str = ""


def load_catalog() -> Catalog:
    """Import torch and read its catalogues. Any thread; takes seconds. Never raises."""
    versions: dict = {}
    try:
        import torch

        from core.config import available_backends, available_modes, dynamo_config_defaults, recommended_backends
        from core.models import torchvision_model_names
        from core.resources import GpuMonitor

        versions["torch"] = torch.__version__
        versions["cuda"] = torch.version.cuda or "none (CPU build)"
        cuda = bool(torch.cuda.is_available())
        versions["cuda_available"] = cuda
        if cuda:
            versions["gpu"] = torch.cuda.get_device_name(0)
        models: list[str] = []
        error = ""
        try:
            import torchvision

            versions["torchvision"] = torchvision.__version__
            models = torchvision_model_names()
        except Exception as exc:  # torchvision missing or broken: files still work
            error = f"torchvision models are unavailable: {exc}"
        gpu = GpuMonitor()
        return Catalog(
            backends=tuple(recommended_backends()),
            all_backends=tuple(available_backends()),
            modes=tuple(available_modes()),
            models=tuple(models),
            cuda_available=cuda,
            versions=versions,
            gpu_reason=gpu.reason,
            gpu_monitor=gpu,
            dynamo_defaults=dynamo_config_defaults(),
            error=error,
        )
    except Exception as exc:
        return Catalog(error=f"could not load torch: {exc}\n{traceback.format_exc()}", versions=versions)


class CatalogLoader(QObject):
    """Loads the catalog on a daemon thread; create and start on the GUI thread."""

    sig_loaded = Signal(object)
    """The catalog is ready (a `Catalog`); delivered on the GUI thread."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.catalog: Catalog | None = None
        self.sig_loaded.connect(self._on_loaded)

    def start(self) -> None:
        threading.Thread(target=self._load, name="catalog-loader", daemon=True).start()

    def _load(self) -> None:  # background thread
        self.sig_loaded.emit(load_catalog())

    def _on_loaded(self, catalog: Catalog) -> None:
        self.catalog = catalog
