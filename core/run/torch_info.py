"""What the installed torch offers here (backends, modes, torchvision models, CUDA, the
GPU monitor, the dynamo config's settings), read in one call that imports torch.

The app calls `load_torch_info` on a background thread so the window shows before torch is
imported (~2 s here, torchvision another ~1 s). The timm and Hugging Face names come from a
helper process (`python -m core.run.torch_info more-models`, see `more_models_command`) and are
cached per installed versions (`cached_more_models`): the app needs their names, not the
libraries, and importing those libraries in its process held the GIL for hundreds of
milliseconds at a time and cost hundreds of MB. No Qt; any thread.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import traceback
from dataclasses import dataclass, field

from core import PROJECT_ROOT as ROOT


@dataclass(frozen=True)
class TorchInfo:
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


def load_torch_info() -> TorchInfo:
    """Import torch and read its catalogs. Any thread; takes seconds. Never raises."""
    versions: dict = {}
    try:
        import torch

        from core.models import torchvision_model_names
        from core.run.sampling import GpuMonitor
        from core.vocab.config import available_modes, dynamo_config_defaults, recommended_backends

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
        return TorchInfo(
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
        return TorchInfo(error=f"could not load torch: {exc}\n{traceback.format_exc()}", versions=versions)


def load_more_models() -> tuple[str, ...]:
    """The buildable timm:NAME and hf:TYPE sources (core.models.catalog). Imports timm and
    transformers, which takes seconds to tens of seconds: the app calls it after
    `load_torch_info`, so the window is ready to run before these names arrive. Never raises;
    a missing package leaves its names out."""
    from core.models.catalog import load_model_catalog

    more = load_model_catalog(("timm", "hf"))
    return tuple(e.source for e in more.entries if e.buildable)


MORE_MODELS_PACKAGES = ("timm", "transformers", "torch", "torchvision")


CACHE_ENV = "COMPILE_PROFILER_CACHE"


def cache_folder() -> str:
    """The folder this product keeps its caches in: $COMPILE_PROFILER_CACHE when set (the
    tests use their own), else $XDG_CACHE_HOME/compile-profiler or ~/.cache/compile-profiler."""
    if os.environ.get(CACHE_ENV):
        return os.environ[CACHE_ENV]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "compile-profiler")


def more_models_cache_key() -> str:
    """What the list of buildable timm and Hugging Face names depends on: the installed
    versions of those packages (read from their metadata, nothing imported) and our code
    that decides which models are buildable."""
    from importlib import metadata

    digest = hashlib.sha256()
    for name in MORE_MODELS_PACKAGES:
        try:
            digest.update(f"{name}={metadata.version(name)};".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none;".encode())
    models = os.path.join(ROOT, "core", "models")
    for name in sorted(os.listdir(models)):
        if name.endswith(".py"):
            with open(os.path.join(models, name), "rb") as fh:
                digest.update(fh.read())
    return digest.hexdigest()[:16]


def _more_models_cache_path() -> str:
    return os.path.join(cache_folder(), f"model-names-{more_models_cache_key()}.json")


def cached_more_models() -> tuple[str, ...] | None:
    """The timm and Hugging Face names from the cache, or None when there is none for the
    installed versions (or it is unreadable)."""
    try:
        with open(_more_models_cache_path(), encoding="utf-8") as fh:
            names = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def write_more_models_cache(names: tuple[str, ...]) -> None:
    """Keep the names for the next start (atomically; older caches removed). Never raises."""
    path = _more_models_cache_path()
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(list(names), fh)
        os.replace(tmp, path)
        for name in os.listdir(os.path.dirname(path)):
            if name.startswith("model-names-") and name.endswith(".json") and name != os.path.basename(path):
                os.unlink(os.path.join(os.path.dirname(path), name))
    except OSError:
        pass


def more_models_command() -> list[str]:
    """The helper process that prints the timm and Hugging Face names as a JSON list (and
    caches them); run with the project root as the working directory."""
    return [sys.executable, "-m", "core.run.torch_info", "more-models"]


def main(argv: list[str]) -> int:
    if argv != ["more-models"]:
        print("usage: python -m core.run.torch_info more-models", file=sys.stderr)
        return 2
    names = load_more_models()
    write_more_models_cache(names)
    print(json.dumps(list(names)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
