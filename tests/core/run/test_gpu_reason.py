"""Why there are no GPU readings, in words (issue 19 item 10: the app said "No GPU
(LibraryNotFound)")."""

from __future__ import annotations

from core.run.sampling import GpuMonitor, nvml_reason


def _nvml_error(name: str) -> Exception:
    return type(f"NVMLError_{name}", (Exception,), {})()


def test_nvml_errors_are_said_in_words():
    assert nvml_reason(_nvml_error("LibraryNotFound")).startswith("there is no NVIDIA driver on this machine")
    assert "not loaded" in nvml_reason(_nvml_error("DriverNotLoaded"))
    other = nvml_reason(_nvml_error("Unknown"))
    assert other == "the NVIDIA GPU could not be read (NVML: Unknown)"


def test_this_machine_says_why_in_words():
    gpu = GpuMonitor()
    if not gpu.available:
        assert "(LibraryNotFound)" not in gpu.reason
        assert "NVIDIA" in gpu.reason or "nvidia-ml-py" in gpu.reason
