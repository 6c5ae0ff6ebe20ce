"""What the installed torch offers here (backends, modes, torchvision models, CUDA, the
GPU monitor, the dynamo config's settings), read in one call that imports torch.

The app calls `load_catalog` on a background thread so the window shows before torch is
imported (~2 s here, torchvision another ~1 s). No Qt; any thread.
"""
from __future__ import annotations

import traceback
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Catalog:
    """Everything the pickers list. `error` is set (and the lists may be short) when
    loading failed; the app still opens and says why."""

    backends: tuple[str, ...] = ()
    modes: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    cuda_available: bool = False
    versions: dict = field(default_factory=dict)
    gpu_reason: str = ""
    gpu_monitor: object | None = None
    dynamo_defaults: dict = field(default_factory=dict)  # torch._dynamo.config's settings
    error: str = ""
    # timm:NAME and hf:TYPE sources the profiler can build (core.models.catalog), for the picker


def load_catalog() -> Catalog:
    """Import torch and read its catalogues. Any thread; takes seconds. Never raises."""
    versions: dict = {}
    try:
        import torch

        from core.config import available_modes, dynamo_config_defaults, recommended_backends
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


def load_more_models() -> tuple[str, ...]:
    """The buildable timm:NAME and hf:TYPE sources (core.models.catalog). Imports timm and
    transformers, which takes seconds to tens of seconds: the app calls it after
    `load_catalog`, so the window is ready to run before these names arrive. Never raises;
    a missing package leaves its names out."""
    from core.models.catalog import load_model_catalogue

    more = load_model_catalogue(("timm", "hf"))
    return tuple(e.source for e in more.entries if e.buildable)
