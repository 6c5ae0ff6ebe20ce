"""GPU code paths, exercised on the CPU with stand-ins (no GPU on the test machines).

What still needs a real GPU: CUDA timing under load, NVML readings, reduce-overhead with CUDA
graphs, peak CUDA memory (see docs/BENCHMARKS.md)."""

import types

import pytest
import torch

from core.measure.job import Job
from core.run.sampling import GpuMonitor, ProcessSampler
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from core.vocab.samples import SampleLog


def make_job(mode="default", device="cuda"):
    spec = JobSpec("gpu", ModelSpec("m.py"), CompileConfig(mode=mode), device=device)
    return Job(spec, lambda e: None, lambda: False, SampleLog(None))


class FakeEvent:
    """torch.cuda.Event on the CPU: records when it was recorded and synchronised."""

    log: list = []
    made = 0

    def __init__(self, enable_timing=False):
        assert enable_timing
        self.name = ("start", "end")[FakeEvent.made % 2]  # the job makes them in pairs: start, end
        FakeEvent.made += 1

    def record(self):
        FakeEvent.log.append(f"record {self.name}")

    def synchronize(self):
        FakeEvent.log.append(f"synchronize {self.name}")

    def elapsed_time(self, end):
        return 12.0


def _fake_cuda(monkeypatch):
    FakeEvent.log, FakeEvent.made = [], 0
    monkeypatch.setattr(torch.cuda, "synchronize", lambda: FakeEvent.log.append("sync"))
    monkeypatch.setattr(torch.cuda, "Event", FakeEvent)
    return FakeEvent.log


def test_cuda_timed_calls_are_timed_by_a_pair_of_cuda_events(monkeypatch):
    log = _fake_cuda(monkeypatch)
    job = make_job()
    assert job.cuda
    ms = job.timed(lambda x: log.append("call"), (1,), before=lambda: log.append("step"))
    assert log == ["step", "sync", "record start", "call", "record end", "synchronize end"]
    assert ms == 12.0  # the events' own elapsed time


def test_a_throughput_block_is_one_pair_of_events_around_its_calls(monkeypatch):
    log = _fake_cuda(monkeypatch)
    job = make_job()
    ms = job.timed_block(lambda x: log.append("call"), (1,), lambda: log.append("step"), 4)
    assert log == ["sync", "record start"] + ["step", "call"] * 4 + ["record end", "synchronize end"]
    assert ms == 3.0  # 12 ms over 4 calls


def test_flush_cache_clears_a_buffer_outside_the_timed_events(monkeypatch):
    import dataclasses

    log = _fake_cuda(monkeypatch)
    job = make_job()
    job.spec = dataclasses.replace(job.spec, flush_cache=True)

    class Buffer:
        def zero_(self):
            log.append("flush")

    job._flush_buffer = Buffer()
    job.timed(lambda x: log.append("call"), (1,))
    assert log[:3] == ["flush", "sync", "record start"]


@pytest.mark.parametrize(
    "mode, device, marks",
    [
        ("reduce-overhead", "cuda", True),
        ("max-autotune", "cuda", True),
        ("default", "cuda", False),
        ("reduce-overhead", "cpu", False),
    ],
)
def test_cudagraph_modes_mark_each_step(mode, device, marks):
    job = make_job(mode, device)
    assert (job.step_marker() is torch.compiler.cudagraph_mark_step_begin) == marks


def test_no_gpu_is_said_not_failed():
    gpu = GpuMonitor()
    if gpu.available:
        pytest.skip("this machine has a GPU")
    assert "GPU" in gpu.reason and gpu.read({1}) == (None, None)


def test_nvml_readings_per_process(monkeypatch):
    """With a stand-in NVML: utilization, and memory of the job's processes only."""
    fake = types.SimpleNamespace(
        nvmlDeviceGetUtilizationRates=lambda h: types.SimpleNamespace(gpu=73),
        nvmlDeviceGetComputeRunningProcesses=lambda h: [
            types.SimpleNamespace(pid=10, usedGpuMemory=512 * 2**20),
            types.SimpleNamespace(pid=99, usedGpuMemory=2**30),
        ],
        nvmlDeviceGetMemoryInfo=lambda h: types.SimpleNamespace(used=8 * 2**30),
    )
    gpu = GpuMonitor.__new__(GpuMonitor)
    gpu.available, gpu.reason, gpu._nvml, gpu._handle = True, "", fake, object()
    assert gpu.read({10, 11}) == (73.0, 512.0)
    assert gpu.read({12}) == (73.0, 8192.0)  # process not listed: device-wide use
    import os

    sample = ProcessSampler(os.getpid(), gpu).sample("eager")
    assert sample.gpu_util_percent == 73.0 and sample.phase == "eager" and sample.rss_mb > 10


def test_cudagraphs_through_options_mark_each_step_too():
    """ "Apply and re-run" folds a mode into inductor options (triton.cudagraphs=True): such a
    config records CUDA graphs as the mode did, so each call still needs its step mark."""
    from core.decide.advice import ConfigChange

    cfg = ConfigChange("freezing", inductor_options=(("freezing", True),)).apply(CompileConfig(mode="reduce-overhead"))
    assert cfg.mode == "default" and cfg.records_cudagraphs
    spec = JobSpec("gpu", ModelSpec("m.py"), cfg, device="cuda")
    job = Job(spec, lambda e: None, lambda: False, SampleLog(None))
    assert job.step_marker() is torch.compiler.cudagraph_mark_step_begin and spec.warmup_calls("compiled") >= 3
    off = CompileConfig(inductor_options=(("triton.cudagraphs", False),))
    assert not off.records_cudagraphs and not CompileConfig("aot_eager", mode="reduce-overhead").records_cudagraphs


def test_cudagraph_coverage_reads_the_real_profilers_events_and_says_nothing_on_a_cpu():
    """The op profile's coverage path on torch's own FunctionEvents: every event read (a name, a
    correlation id, a duration), no device time on a CPU, so no coverage rather than 0%."""
    import torch

    from core.analysis.cudagraph_coverage import coverage
    from core.measure.op_profile import _profiled_events, profile_calls

    prof = profile_calls(lambda x: (x @ x).relu(), (torch.randn(16, 16),), calls=3)
    events = list(_profiled_events(prof))
    assert events and all(not e.on_device and e.us >= 0 and isinstance(e.correlation, int) for e in events)
    assert any(e.name == "aten::mm" for e in events)
    assert coverage(events, calls=3) is None
