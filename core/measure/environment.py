"""Facts about the job's process and machine: peak memory, CPU model, versions.

Runs inside the job's child process; nothing here imports Qt.
"""

from __future__ import annotations

import hashlib
import os
import platform

from core.vocab.config import JobSpec


def reset_peak_rss() -> bool:
    """Reset the kernel's RSS high-water mark (VmHWM) for this process (Linux ≥ 4.0)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def model_file(source: str) -> str:
    """The model file (.py or .pt2) a job of this model source loads, as core.models.load_model
    resolves it; "" for a library model or another kind of file."""
    from core.models import EXPORT_SUFFIXES, PY_SUFFIXES, source_kind, split_factory

    if source_kind(source) != "file":
        return ""
    path = os.path.abspath(os.path.expanduser(split_factory(source)[0]))
    return path if path.endswith(PY_SUFFIXES + EXPORT_SUFFIXES) else ""


def file_sha256(path: str) -> str:
    """The SHA-256 of a file's content, read in pieces (a .pt2 archive holds the weights)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def environment(spec: JobSpec) -> dict:
    """What the job's report records of this machine, and `model_file_sha256`: the SHA-256 of
    the model file the job loads ("" for a library model or an unreadable file), which a bundle
    checks the file against (core.report.bundle: only the file the run loaded goes in)."""
    import torch

    env = {
        "python": platform.python_version(),
        "torch": str(torch.__version__),  # a TorchVersion: unpickling it would import torch
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "threads": torch.get_num_threads(),
        "device": spec.device,
        "cuda_available": torch.cuda.is_available(),
        "cuda_version": torch.version.cuda,
        "inductor_cache_dir": os.environ.get("TORCHINDUCTOR_CACHE_DIR", ""),
        "model_file_sha256": "",
    }
    path = model_file(spec.model.source)
    if path:
        try:
            env["model_file_sha256"] = file_sha256(path)
        except OSError:
            pass  # loading it says what is wrong
    try:
        import torchvision

        env["torchvision"] = str(torchvision.__version__)
    except Exception:
        env["torchvision"] = None
    if spec.device == "cuda" and torch.cuda.is_available():
        env["device_name"] = torch.cuda.get_device_name(0)
    else:
        env["device_name"] = env["cpu"]
    return env
