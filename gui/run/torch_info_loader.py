"""What the installed torch offers (core.run.torch_info's TorchInfo), read without importing
torch into the app's process: from the cache kept per installation, else from a helper process
(QProcess) that imports torch and prints it as JSON. The GPU monitor (NVML, no torch) is opened
here, on a background thread. The timm and Hugging Face names come next, from their own cache
or helper: timm and transformers are never imported into the app's process either.

The app needs names and settings, not the libraries: without them it holds 89 MB at the show
and exits in a fraction of a second (docs/BENCHMARKS.md, "The app's start, memory and exit").
Create and start on the GUI thread; results arrive there.
"""

from __future__ import annotations

import dataclasses
import threading

from PySide6.QtCore import QObject, QProcess, QTimer, Signal

from core.run.torch_info import (
    ROOT,
    TorchInfo,
    cached_more_models,
    cached_torch_info,
    helper_json,
    more_models_command,
    torch_info_command,
    torch_info_from_json,
)
from gui.qt_compat import collect_garbage_on_gui_thread

KILL_WAIT_MS = 1000


class TorchInfoLoader(QObject):
    """Loads torch's offer, then the slower names; create and start on the GUI thread."""

    sig_loaded = Signal(object)
    """torch's offer is ready (a `TorchInfo` with this process's GPU monitor); GUI thread."""

    sig_more_models = Signal(object)
    """The timm and Hugging Face sources (a tuple of str) arrived after torch's offer."""

    sig_settled = Signal()
    """Nothing more comes from the cache: torch's offer and the names were delivered from it,
    or a helper process lists what was not cached (seconds), or torch could not be loaded.
    Once; `settled` says whether it came."""

    # (cached TorchInfo or None, GpuMonitor, cached timm/Hugging Face names or None): background → GUI thread
    _sig_prepared = Signal(object, object, object)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.torch_info: TorchInfo | None = None
        self.more_models_error = ""  # why the timm/Hugging Face names could not be listed
        self._gpu = None
        self._cached_names = None  # the timm and Hugging Face names from their cache, read in the background
        self._processes: list[QProcess] = []
        self._callbacks: dict = {}  # process → what to do with its output
        self._stopped = False
        self._started = False
        self.settled = False
        self._sig_prepared.connect(self._on_prepared)

    def start(self) -> None:
        """Begin (once; a second call, or one after `stop`, does nothing)."""
        if self._started or self._stopped:
            return
        self._started = True
        # the app collects garbage on the GUI thread only (gui.qt_compat): a collection in the
        # background thread could destroy a closed window's Qt objects there, and deadlock
        collect_garbage_on_gui_thread()
        threading.Thread(target=self._prepare, name="torch-info-loader", daemon=True).start()

    def stop(self) -> None:
        """End the helper processes still running (the window is closing): nothing is left
        behind and nothing arrives afterwards."""
        self._stopped = True
        self._callbacks.clear()
        for process in list(self._processes):
            process.kill()
            process.waitForFinished(KILL_WAIT_MS)
        self._processes.clear()

    @property
    def helpers_running(self) -> int:
        return len(self._processes)

    def _prepare(self) -> None:  # background thread: file reads and NVML's start, no torch
        from core.run.sampling import GpuMonitor

        cached = cached_torch_info()
        # the names' cache is keyed by four packages' versions: reading their metadata was
        # 7-8 ms of the GUI thread when torch's offer was delivered
        names = cached_more_models()
        gpu = GpuMonitor()
        try:
            self._sig_prepared.emit(cached, gpu, names)
        except RuntimeError:  # "Signal source has been deleted": its window closed meanwhile
            pass

    def _on_prepared(self, cached: TorchInfo | None, gpu, names) -> None:
        if self._stopped:
            return
        self._gpu = gpu
        self._cached_names = names
        if cached is not None:
            self._deliver(cached)
        else:
            self._run_helper(torch_info_command(), self._on_torch_info_listed)
            self._settle()

    def _run_helper(self, command: list[str], on_finished) -> None:
        # A child of this loader (deleted with it); its slot is a bound method, not a lambda
        # holding the process: such a cycle was collected on the GUI thread with the loader
        # and crashed a test run.
        process = QProcess(self)
        process.setWorkingDirectory(ROOT)
        process.finished.connect(self._on_helper_finished)
        self._processes.append(process)
        self._callbacks[process] = on_finished
        process.start(command[0], command[1:])

    def _on_helper_finished(self, code: int, status) -> None:
        process = self.sender()
        on_finished = self._callbacks.pop(process, None)
        if process in self._processes:
            self._processes.remove(process)
        if on_finished is None:
            return
        out = bytes(process.readAllStandardOutput()).decode("utf-8", "replace").strip()
        err = bytes(process.readAllStandardError()).decode("utf-8", "replace").strip().splitlines()
        try:
            value = helper_json(out) if code == 0 and out else None
        except ValueError:
            value = None
        why = err[-1] if err else f"the helper process ended with code {code}"
        on_finished(value, why)

    def _on_torch_info_listed(self, value, why: str) -> None:
        try:
            info = torch_info_from_json(value)
        except ValueError:
            info = TorchInfo(error=f"could not load torch: {why}")
        self._deliver(info)

    def _deliver(self, info: TorchInfo) -> None:
        gpu = self._gpu
        if gpu is not None:
            info = dataclasses.replace(info, gpu_monitor=gpu, gpu_reason=gpu.reason)
        self.torch_info = info
        self.sig_loaded.emit(info)
        if not info.backends:
            self._settle()
            return  # torch could not be loaded: the timm and Hugging Face names need it too
        names = self._cached_names
        if names is not None:  # after every other slot of sig_loaded (the list is set there)
            QTimer.singleShot(0, self, lambda: self._deliver_names(names))
            return
        self._run_helper(more_models_command(), self._on_more_models_listed)
        self._settle()

    def _deliver_names(self, names) -> None:
        self.sig_more_models.emit(names)
        self._settle()

    def _settle(self) -> None:
        if not self.settled and not self._stopped:
            self.settled = True
            self.sig_settled.emit()

    def _on_more_models_listed(self, names, why: str) -> None:
        if not isinstance(names, list):
            self.more_models_error = why
            return
        self.sig_more_models.emit(tuple(str(n) for n in names))
