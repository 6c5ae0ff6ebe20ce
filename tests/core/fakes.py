"""JobResults with chosen measurements, folded from real events (no job runs): for the
arithmetic of recommendations, suggestions and comparisons."""

from __future__ import annotations

import uuid

import numpy as np

from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec


def fake_result(
    config: CompileConfig | str = "inductor",
    eager_ms: float = 10.0,
    compiled_ms: float = 5.0,
    compile_s: float = 10.0,
    noise: float = 0.01,
    n: int = 200,
    accuracy: str | None = "pass",
    status: str = "completed",
    device: str = "cpu",
    cache_state: str = "miss",
    memory: tuple[float, float, float] = (300.0, 900.0, 320.0),
    seed: int = 0,
    graph_breaks=(),
    recompiles=(),
    variants=(),
    parameters: int = 1000,
    model: str = "resnet18",
    environment: dict | None = None,
    sweep: bool = False,
    threads: int | None = None,
    cudagraph_skips=(),
    graph_count: int = 1,
    others_cores: float | None = None,
    processes: dict | None = None,
    call_costs=(),
) -> JobResult:
    """A completed job (or `status`) whose eager/compiled calls are normal around the given
    medians with relative spread `noise`; memory = (eager, compile, compiled) peak RSS MB.
    `others_cores`: what the rest of the machine used while the calls were timed (resource
    readings of the benchmark phase); `processes`: {process: compiled median} for calls timed
    in further processes too (their eager median is `eager_ms`)."""
    if isinstance(config, str):
        config = CompileConfig(backend=config)
    spec = JobSpec(
        uuid.uuid4().hex[:8], ModelSpec(model), config, iters=n, device=device, sweep_shapes=sweep, threads=threads
    )
    r = JobResult(spec)
    jid = spec.job_id
    env = {"torch": "2.14.1", "device": "cpu", "threads": 2, "cpu": "test cpu", "cpu_count": 2, **(environment or {})}
    r.apply(ev.JobStarted(jid, pid=1, environment=env))
    r.apply(ev.ModelLoaded(jid, description="fake", model_kind="torchvision", parameters=parameters))
    rng = np.random.default_rng(seed)
    samples = []
    for side, median in (("eager", eager_ms), ("compiled", compiled_ms)):
        values = median * (1 + noise * rng.standard_normal(n)) if not sweep else []
        samples += [rec.LatencySample(side, i, float(v)) for i, v in enumerate(values)]
    for proc, median in (processes or {}).items():
        for side, m in (("eager", eager_ms), ("compiled", median)):
            values = m * (1 + noise * rng.standard_normal(n))
            samples += [rec.LatencySample(side, i, float(v), process=proc) for i, v in enumerate(values)]
    r.apply(ev.LatencyMeasured(jid, samples=tuple(samples)))
    if call_costs:
        r.apply(ev.CallCostsMeasured(jid, costs=tuple(call_costs)))
    if others_cores is not None:
        for i in range(10):
            r.apply(
                ev.ResourceSampled(
                    jid,
                    sample=rec.ResourceSample(
                        i * 0.2, "benchmark", 200.0, 400.0, machine_cpu_percent=200.0 + 100 * others_cores
                    ),
                )
            )
    r.apply(
        ev.CompileFinished(
            jid,
            result=rec.CompileResult(
                compile_s, cache_state=cache_state, graph_count=graph_count, fully_compiled=not graph_breaks
            ),
        )
    )
    for phase, mb in zip(("eager", "compile", "compiled"), memory):
        r.apply(ev.MemoryMeasured(jid, peak=rec.MemoryPeak(phase, mb)))
    for gb in graph_breaks:
        r.apply(ev.GraphBreakFound(jid, graph_break=gb))
    for rc in recompiles:
        r.apply(ev.RecompileFound(jid, recompile=rc))
    for v in variants:
        r.apply(ev.VariantMeasured(jid, variant=v))
    for skip in cudagraph_skips:
        r.apply(ev.CudagraphSkipped(jid, skip=skip))
    if accuracy is not None:
        r.apply(
            ev.AccuracyChecked(
                jid, accuracy=rec.AccuracyResult(accuracy, f"{accuracy} (fake)", max_abs_error=0.0, cosine=1.0)
            )
        )
    if status == "completed":
        r.apply(ev.JobCompleted(jid, wall_time_s=compile_s + 2 * n * (eager_ms + compiled_ms) / 2000))
    elif status == "failed":
        r.apply(ev.JobFailed(jid, reason="compile failed (fake)", phase="compile"))
    elif status == "running":
        pass  # no terminal event: the job's calls are still coming
    else:
        r.apply(ev.JobCancelled(jid, phase="compile"))
    return r
