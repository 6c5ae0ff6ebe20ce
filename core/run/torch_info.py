"""What the installed torch offers here (backends, modes, torchvision models, CUDA, the
GPU monitor, the dynamo config's settings), read in one call that imports torch.

The app never imports torch itself: it needs these names and settings, not the library
(torch and torchvision cost ~700 MB of its memory and seconds of its exit). It reads them
from a helper process (`python -m core.cli.helpers torch-info`, see `torch_info_command`),
cached per installed versions and GPU driver (`cached_torch_info`), and opens its GPU
monitor itself (NVML, no torch). The timm and Hugging Face names come from a second helper
(`python -m core.cli.helpers more-models`, see `more_models_command`), cached the same way
(`cached_more_models`): importing those libraries in the app's process held the GIL for
hundreds of milliseconds at a time and cost hundreds of MB. No Qt; any thread.
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
    # every backend torch.compile accepts here (`backends` is the short list the picker offers)
    all_backends: tuple[str, ...] = ()


def load_torch_info() -> TorchInfo:
    """Import torch and read its catalogs. Any thread; takes seconds. Never raises."""
    versions: dict = {}
    try:
        import torch

        from core.models import torchvision_model_names
        from core.run.sampling import GpuMonitor
        from core.vocab.config import (
            available_backends,
            available_modes,
            dynamo_config_defaults,
            recommended_backends,
        )

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
            all_backends=tuple(available_backends()),
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


# Both caches are tens of KB (the offer ~9 KB, the names ~100 KB); a larger file is not ours to
# trust: a 280 MB one held the app 50 s and 13.6 GB while it parsed.
CACHE_MAX_BYTES = 4 * 1024 * 1024


def read_cache_json(path: str):
    """The JSON value a cache file holds; ValueError when it is larger than CACHE_MAX_BYTES or not
    JSON (nested too deep included), OSError when it cannot be read. Reads at most the cap."""
    with open(path, "rb") as fh:
        data = fh.read(CACHE_MAX_BYTES + 1)
    if len(data) > CACHE_MAX_BYTES:
        raise ValueError(f"{path} is larger than {CACHE_MAX_BYTES:,} bytes")
    try:
        return json.loads(data.decode("utf-8"))
    except RecursionError as exc:
        raise ValueError(f"{path} is nested too deep") from exc


def helper_json(out: str):
    """The JSON value on the last line a helper printed; ValueError when that line is larger than
    CACHE_MAX_BYTES (what the helper would cache) or not JSON."""
    lines = out.strip().splitlines()
    last = lines[-1] if lines else ""
    if len(last) > CACHE_MAX_BYTES:
        raise ValueError(f"the helper printed more than {CACHE_MAX_BYTES:,} bytes")
    try:
        return json.loads(last)
    except RecursionError as exc:
        raise ValueError("the helper printed JSON nested too deep") from exc


def cached_more_models() -> tuple[str, ...] | None:
    """The timm and Hugging Face names from the cache, or None when there is none for the
    installed versions (or it is unreadable, too large or garbled: it is then rebuilt)."""
    try:
        names = read_cache_json(_more_models_cache_path())
    except (OSError, ValueError):
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return tuple(names)


def write_more_models_cache(names: tuple[str, ...]) -> None:
    """Keep the names for the next start (atomically; older caches removed). Never raises."""
    _write_cache(_more_models_cache_path(), list(names), "model-names-")


# ------------------------------------------------------------------ torch's offer, from a helper

TORCH_INFO_PACKAGES = ("torch", "torchvision", "nvidia-ml-py")
BACKEND_ENTRY_POINTS = "torch_dynamo_backends"  # torch._dynamo.backends.registry reads these
_JSON_FIELDS = ("backends", "modes", "models", "all_backends")
BUILT_IN_BACKENDS = ("eager", "inductor")  # torch.compile has these in every release


def _json_value(value):
    """A dynamo setting's default as JSON holds it: sets become sorted lists, anything else
    that JSON cannot hold its repr (only a setting's type matters for checking overrides)."""
    if isinstance(value, (set, frozenset, tuple, list)):
        items = [_json_value(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if isinstance(value, dict):
        return {str(k): _json_value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


def torch_info_to_json(info: TorchInfo) -> dict:
    """What a TorchInfo says, as JSON (the GPU monitor left out: it is a live handle)."""
    d = {name: list(getattr(info, name)) for name in _JSON_FIELDS}
    d.update(
        cuda_available=info.cuda_available,
        versions=_json_value(dict(info.versions)),
        gpu_reason=info.gpu_reason,
        dynamo_defaults=_json_value(dict(info.dynamo_defaults)),
        error=info.error,
    )
    return d


def torch_info_from_json(d) -> TorchInfo:
    """The TorchInfo a helper printed (or the cache held); ValueError when it is not one."""
    if not isinstance(d, dict):
        raise ValueError("not a JSON object")
    lists = {}
    for name in _JSON_FIELDS:
        value = d.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ValueError(f"{name} is not a list of names")
        lists[name] = tuple(value)
    versions, defaults = d.get("versions", {}), d.get("dynamo_defaults", {})
    if not isinstance(versions, dict) or not isinstance(defaults, dict):
        raise ValueError("versions or dynamo_defaults is not an object")
    if not isinstance(d.get("cuda_available", False), bool):
        raise ValueError("cuda_available is not true or false")
    return TorchInfo(
        **lists,
        cuda_available=d.get("cuda_available", False),
        versions=versions,
        gpu_reason=str(d.get("gpu_reason", "")),
        dynamo_defaults=defaults,
        error=str(d.get("error", "")),
    )


def torch_info_cache_key() -> str:
    """What torch's offer depends on: the installed torch, torchvision and NVML packages
    (their metadata, nothing imported), the backends other packages add to torch.compile
    (torch reads them from the `torch_dynamo_backends` entry points: torch-tensorrt's, say),
    the GPU driver and the GPUs shown to this process, and our code that reads the offer."""
    from importlib import metadata

    digest = hashlib.sha256()
    for name in TORCH_INFO_PACKAGES:
        try:
            digest.update(f"{name}={metadata.version(name)};".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{name}=none;".encode())
    try:
        plugins = sorted(f"{e.name}={e.value}" for e in metadata.entry_points(group=BACKEND_ENTRY_POINTS))
    except Exception:  # unreadable metadata: a key of its own, never a stale match
        plugins = ["unreadable"]
    digest.update(f"{BACKEND_ENTRY_POINTS}={','.join(plugins)};".encode())
    digest.update(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')};".encode())
    try:
        with open("/proc/driver/nvidia/version", "rb") as fh:  # the NVIDIA driver, where there is one
            digest.update(fh.read(4096))
    except OSError:
        digest.update(b"no-nvidia-driver;")
    for path in (
        __file__,
        os.path.join(ROOT, "core", "vocab", "config.py"),
        os.path.join(ROOT, "core", "models", "torchvision_models.py"),
    ):
        try:
            with open(path, "rb") as fh:
                digest.update(fh.read())
        except OSError:
            digest.update(path.encode())
    return digest.hexdigest()[:16]


def _torch_info_cache_path() -> str:
    return os.path.join(cache_folder(), f"torch-info-{torch_info_cache_key()}.json")


def cached_torch_info() -> TorchInfo | None:
    """torch's offer from the cache, or None when there is none for this installation (or
    it is unreadable, too large or garbled: it is then rebuilt)."""
    try:
        info = torch_info_from_json(read_cache_json(_torch_info_cache_path()))
    except (OSError, ValueError, TypeError):
        return None
    if not set(BUILT_IN_BACKENDS) <= set(info.all_backends) or "default" not in info.modes:
        return None  # torch always offers these: a cache without them is stale or edited, not torch's word
    return info


def write_torch_info_cache(info: TorchInfo) -> None:
    """Keep torch's offer for the next start (atomically; older caches removed). A failed
    load is not kept. Never raises."""
    if not info.backends:
        return
    _write_cache(_torch_info_cache_path(), torch_info_to_json(info), "torch-info-")


def _write_cache(path: str, value, prefix: str) -> None:
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(value, fh)
        os.replace(tmp, path)
        for name in os.listdir(os.path.dirname(path)):
            if name.startswith(prefix) and name.endswith(".json") and name != os.path.basename(path):
                os.unlink(os.path.join(os.path.dirname(path), name))
    except OSError:
        pass


def torch_info_command() -> list[str]:
    """The helper process that prints torch's offer as JSON (and caches it); run with the
    project root as the working directory."""
    return [sys.executable, "-m", "core.cli.helpers", "torch-info"]


def more_models_command() -> list[str]:
    """The helper process that prints the timm and Hugging Face names as a JSON list (and
    caches them); run with the project root as the working directory."""
    return [sys.executable, "-m", "core.cli.helpers", "more-models"]


def load_and_cache_torch_info() -> TorchInfo:
    """`load_torch_info`, kept for the next start (`write_torch_info_cache`): the helper's work,
    and a command line's that imported torch anyway (core.cli.job_specs.remember_offer)."""
    info = load_torch_info()
    write_torch_info_cache(info)
    return info
