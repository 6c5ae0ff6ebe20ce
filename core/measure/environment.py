"""Facts about the job's process and machine: peak memory, CPU model, versions.

Runs inside the job's child process; nothing here imports Qt.
"""

from __future__ import annotations

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


def environment(spec: JobSpec) -> dict:
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
    }
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
