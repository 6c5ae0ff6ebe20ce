"""Reading a job's CPU, memory and GPU use from outside its process.

The runner samples the child from the parent (psutil on the child's pid, NVML for the GPU)
so that sampling never runs inside, or perturbs, the timed loop. Without a GPU or without
NVML this says "no GPU" and carries on; it never fails a job.
"""

from __future__ import annotations

import time

import psutil

from core.vocab.formatting import MB
from core.vocab.records import ResourceSample

# What NVML's errors mean, in words (pynvml names them NVMLError_<Name>).
NVML_REASONS = {
    "LibraryNotFound": "there is no NVIDIA driver on this machine (NVML's library is not installed), so no GPU to read",
    "DriverNotLoaded": "the NVIDIA driver is installed but not loaded, so no GPU can be read",
    "NoPermission": "this user may not read the NVIDIA GPU (NVML refused: no permission)",
}


def nvml_reason(exc: BaseException) -> str:
    """Why NVML gave no GPU readings, in words (its error name kept for a search)."""
    name = type(exc).__name__.replace("NVMLError_", "")
    return NVML_REASONS.get(name, f"the NVIDIA GPU could not be read (NVML: {name})")


class GpuMonitor:
    """NVML readings for one GPU. `available` is False (with `reason`) when there is none."""

    def __init__(self, index: int = 0):
        self.available = False
        self.reason = "no GPU"
        self.name = ""
        self._handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            if pynvml.nvmlDeviceGetCount() <= index:
                self.reason = "the NVIDIA driver sees no GPU on this machine"
                return
            self._nvml = pynvml
            self._handle = pynvml.nvmlDeviceGetHandleByIndex(index)
            name = pynvml.nvmlDeviceGetName(self._handle)
            self.name = name.decode() if isinstance(name, bytes) else str(name)
            self.available, self.reason = True, ""
        except ImportError:
            self.reason = "no GPU readings (the nvidia-ml-py package is not installed)"
        except Exception as exc:  # NVMLError_LibraryNotFound, DriverNotLoaded, ...
            self.reason = nvml_reason(exc)

    def read(self, pids: set[int]) -> tuple[float | None, float | None]:
        """(utilization %, memory MB used by `pids` or, if unknown, by the whole device)."""
        if not self.available:
            return None, None
        nv = self._nvml
        try:
            util = float(nv.nvmlDeviceGetUtilizationRates(self._handle).gpu)
            used = 0
            found = False
            for proc in nv.nvmlDeviceGetComputeRunningProcesses(self._handle):
                if proc.pid in pids and proc.usedGpuMemory is not None:
                    used += proc.usedGpuMemory
                    found = True
            if not found:
                used = nv.nvmlDeviceGetMemoryInfo(self._handle).used
            return util, used / MB
        except Exception:
            return None, None


class ProcessSampler:
    """Samples a process and its children (inductor's compile workers count too)."""

    def __init__(self, pid: int, gpu: GpuMonitor | None = None, t0: float | None = None, process: int = 0):
        self._proc = psutil.Process(pid)
        self._gpu = gpu
        self._t0 = time.monotonic() if t0 is None else t0
        self._process = process
        self._known: dict[int, psutil.Process] = {pid: self._proc}
        for p in self._known.values():
            p.cpu_percent(None)  # prime: the first reading of cpu_percent is meaningless
        self._machine = MachineCpu()

    def known_processes(self) -> list[psutil.Process]:
        """Every process of the job seen so far (the job and its descendants), so that the
        runner can end those still alive after the job, even once the job's process is gone."""
        return list(self._known.values())

    def sample(self, phase: str) -> ResourceSample | None:
        try:
            procs = [self._proc] + self._proc.children(recursive=True)
        except psutil.Error:
            return None
        cpu = rss = 0.0
        for p in procs:
            known = self._known.setdefault(p.pid, p)
            try:
                cpu += known.cpu_percent(None)
                rss += known.memory_info().rss
            except psutil.Error:
                continue
        util, gpu_mem = self._gpu.read({p.pid for p in procs}) if self._gpu else (None, None)
        machine = self._machine.read()
        return ResourceSample(
            t_s=round(time.monotonic() - self._t0, 4),
            phase=phase,
            cpu_percent=round(cpu, 1),
            rss_mb=round(rss / MB, 2),
            gpu_util_percent=util,
            gpu_mem_mb=None if gpu_mem is None else round(gpu_mem, 2),
            machine_cpu_percent=None if machine is None else round(machine, 1),
            process=self._process,
        )


class MachineCpu:
    """The whole machine's CPU use between two readings, on the per-process scale (100 = one
    core busy), from the kernel's CPU times; each reader keeps its own baseline (psutil's
    module-level cpu_percent would be shared by every sampler)."""

    def __init__(self):
        self._last = self._times()

    @staticmethod
    def _times():
        try:
            t = psutil.cpu_times()
        except Exception:  # noqa: BLE001 - a platform without it: no machine reading
            return None
        idle = t.idle + getattr(t, "iowait", 0.0)
        return sum(t) - idle, sum(t)

    def read(self) -> float | None:
        now = self._times()
        last, self._last = self._last, now
        if now is None or last is None or now[1] <= last[1]:
            return None
        cores = psutil.cpu_count() or 1
        return max(0.0, min(100.0 * cores, 100.0 * cores * (now[0] - last[0]) / (now[1] - last[1])))


def memory_limit_mb() -> float:
    """The memory this machine (or this cgroup, when it is smaller) gives processes."""
    limit = psutil.virtual_memory().total / MB
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(path) as fh:
                raw = fh.read().strip()
            if raw.isdigit():
                limit = min(limit, int(raw) / MB)
        except OSError:
            continue
    return limit
