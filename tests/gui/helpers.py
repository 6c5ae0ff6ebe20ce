"""What the app's tests share: the test model file, timeouts for torch's loading and a run, and
results built from core events (no child process) for the table and chart tests. Fixtures
are in conftest.py."""

from __future__ import annotations

import os

from core import PROJECT_ROOT as ROOT
from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec

DATA = os.path.join(os.path.dirname(__file__), "data")


GRAPH_BREAK_MODEL = os.path.join(DATA, "graph_break_model.py")


# Every call sleeps: a job takes a known least time on any host (the tune-budget test).
SLOW_MODEL = os.path.join(DATA, "slow_model.py")


TORCH_INFO_TIMEOUT_MS = 90_000  # the first window of a session imports torch (~3-5 s, more on a busy box)


RUN_TIMEOUT_MS = 180_000


# Lines 13-17 of graph_break_model.py as the engine records them around the break at line 15.
GRAPH_BREAK_CONTEXT = (
    "    def forward(self, x):",
    "        h = torch.relu(self.fc1(x))",
    "        if h.sum() > 0:  # data-dependent branch: dynamo cannot know which way it goes",
    "            h = h * 2",
    "        scale = h.mean().item()  # a Python float out of a tensor",
)


def fake_result(
    job_id: str = "job1", backend: str = "eager", n: int = 20, breaks: bool = True, status_event=None
) -> JobResult:
    """A JobResult folded from hand-made events, as a run would have produced them."""
    r = JobResult(fake_spec(job_id, backend, n))
    for e in fake_events(job_id, n, breaks, status_event):
        assert r.apply(e)
    return r


def fake_spec(job_id: str = "job1", backend: str = "eager", n: int = 20) -> JobSpec:
    return JobSpec(job_id, ModelSpec(GRAPH_BREAK_MODEL), CompileConfig(backend=backend), warmup=2, iters=n)


def fake_events(job_id: str = "job1", n: int = 20, breaks: bool = True, status_event=None) -> list:
    """The events `fake_result` folds, its terminal event (`status_event`, else completed) last."""
    events = [
        ev.JobStarted(job_id, pid=1, environment={"threads": 2, "torch": "2.14.1"}),
        ev.PhaseChanged(job_id, phase="load", detail="loading"),
        ev.LatencyMeasured(
            job_id, samples=tuple(rec.LatencySample("eager", i, 2.0 + i * 0.01, True) for i in range(2))
        ),
        ev.CompileFinished(
            job_id,
            result=rec.CompileResult(
                0.5,
                dynamo_s=0.4,
                cache_state="n/a",
                graph_count=4,
                op_count=10,
                guard_count=9,
                frames_compiled=4,
                coverage="Partly compiled: 4 graphs",
            ),
        ),
        ev.LatencyMeasured(
            job_id,
            samples=tuple(
                s
                for i in range(n)
                for s in (
                    rec.LatencySample("eager", i, 2.0 + (i % 5) * 0.1),
                    rec.LatencySample("compiled", i, 1.0 + (i % 3) * 0.1),
                )
            ),
        ),
        ev.MemoryMeasured(job_id, peak=rec.MemoryPeak("eager", 500.0)),
        ev.MemoryMeasured(job_id, peak=rec.MemoryPeak("compile", 650.0)),
        ev.MemoryMeasured(job_id, peak=rec.MemoryPeak("compiled", 520.0)),
        ev.ResourceSampled(job_id, sample=rec.ResourceSample(0.1, "load", 50.0, 300.0)),
        ev.ResourceSampled(job_id, sample=rec.ResourceSample(0.3, "compile", 180.0, 600.0)),
        ev.RecompileFound(
            job_id, recompile=rec.Recompile("forward", "model.py:13", ("0/0: tensor 'x' size mismatch",))
        ),
    ]
    if breaks:
        events += [
            ev.GraphBreakFound(
                job_id,
                graph_break=rec.GraphBreak(
                    "Data-dependent branching",
                    "GB0170",
                    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html",
                    "Detected data-dependent branching.",
                    ("Use torch.cond.", "Make it branchless."),
                    GRAPH_BREAK_MODEL,
                    15,
                    "if h.sum() > 0:",
                    logged=3,
                    per_call=1,
                    compile_id="0/0",
                    context_start=13,
                    context=tuple(GRAPH_BREAK_CONTEXT),
                ),
            ),
            ev.GraphBreakFound(
                job_id,
                graph_break=rec.GraphBreak(
                    "Call to `torch._dynamo.graph_break()`",
                    "GB0025",
                    "",
                    "User-inserted graph break.",
                    ("Remove the call.",),
                    GRAPH_BREAK_MODEL,
                    19,
                    "torch._dynamo.graph_break()",
                ),
            ),
            ev.GraphBreakFound(
                job_id,
                graph_break=rec.GraphBreak(
                    "Call to `torch._dynamo.graph_break()`",
                    "GB0025",
                    "",
                    "User-inserted graph break.",
                    ("Remove the call.",),
                    GRAPH_BREAK_MODEL,
                    19,
                    "torch._dynamo.graph_break()",
                ),
            ),
        ]
    events.append(status_event or ev.JobCompleted(job_id, wall_time_s=3.0))
    return events


LSTM_EXAMPLE = os.path.join(ROOT, "resources", "models", "lstm_variable_length.py")


def fake_sweep_result(job_id: str = "sweep1", dynamic: str = "false", lengths=(8, 16, 32, 48), limit_at: int = 2):
    """A shape-sweep JobResult folded from VariantMeasured events: with dynamic=false every new
    length recompiles until variant `limit_at` hits the recompile limit; later ones run eagerly."""
    config = CompileConfig(backend="eager", dynamic=dynamic, dynamo_config=(("allow_rnn", True),))
    spec = JobSpec(job_id, ModelSpec(LSTM_EXAMPLE), config, warmup=0, iters=3, sweep_shapes=True)
    r = JobResult(spec)
    events = [
        ev.JobStarted(job_id, pid=1, environment={"threads": 2}),
        ev.CompileFinished(
            job_id,
            result=rec.CompileResult(
                0.2, graph_count=1, op_count=6, frames_compiled=1, coverage="Fully compiled: one graph of 6 ops."
            ),
        ),
    ]
    for i, n in enumerate(lengths):
        specialise = dynamic == "false"
        hit = specialise and i == limit_at
        recompiled = specialise and 0 < i <= limit_at
        reasons = (
            (f"0/{i - 1}: tensor 'args[0]' size mismatch at index 0. expected {lengths[i - 1]}, actual {n}",)
            if recompiled
            else ()
        )
        compiles = 1 if (i == 0 or recompiled) else 0
        events.append(
            ev.VariantMeasured(
                job_id,
                variant=rec.VariantResult(
                    index=i,
                    input_shapes=(f"float32[{n}×4×128]",),
                    compiles=compiles,
                    recompiled=recompiled,
                    recompile_reasons=reasons,
                    compile_time_s=0.1 * compiles,
                    recompile_limit_hit=hit,
                    ran_eagerly=specialise and i >= limit_at,
                    eager_ms=(1.0 + i, 1.2 + i, 1.1 + i),
                    compiled_ms=(0.9 + i, 1.0 + i, 0.95 + i),
                ),
            )
        )
    events.append(ev.JobCompleted(job_id, wall_time_s=2.0))
    for e in events:
        assert r.apply(e)
    return r
