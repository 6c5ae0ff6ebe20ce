"""How much of a compiled call's GPU time ran inside CUDA-graph replays, from the op profile's
calls (core.measure.op_profile): the kernels a `cudaGraphLaunch` launched against every kernel
the calls ran. The profiler gives each kernel the correlation id of the runtime call that
launched it (CUPTI's: a graph's kernels carry their replay's `cudaGraphLaunch` id; torch then
hangs the kernels' time on the op around the launch, so the launch's own node holds none). A mode that records CUDA graphs
(reduce-overhead, max-autotune) and whose graphs all replay reads near 1; each graph torch
skipped (a CPU op, a mutated input: core.capture's CUDA-graph skips, with torch's reason and the
user's line) runs its kernels launched one by one, outside, and lowers it.

On a CPU there are no kernels and no graphs: the share is None, never 0. Not yet checked on a
GPU by this project's tests (tests/gpu_check.py prepares it). No torch, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.vocab.op_records import CudagraphCoverage

GRAPH_LAUNCHES = ("cudaGraphLaunch", "hipGraphLaunch")  # the runtime calls that replay a graph


def _is_launch(name: str) -> bool:
    return any(name == g or name.startswith(g + "_") for g in GRAPH_LAUNCHES)


@dataclass(frozen=True)
class ProfiledEvent:
    """What coverage reads of one profiler event (torch's FunctionEvent): its name, whether it
    ran on the GPU (a kernel, a copy), its correlation id, its duration in µs."""

    name: str
    on_device: bool
    correlation: int
    us: float


def coverage(events, calls: int) -> CudagraphCoverage | None:
    """The coverage over the profiled `calls`' events (ProfiledEvent); None without calls or
    without any GPU time (a CPU run)."""
    events = list(events)
    launches = {e.correlation for e in events if not e.on_device and _is_launch(e.name)}
    launched = sum(1 for e in events if not e.on_device and _is_launch(e.name))
    device = [e for e in events if e.on_device]
    device_us = sum(e.us for e in device)
    if calls <= 0 or device_us <= 0:
        return None
    graph_us = sum(e.us for e in device if e.correlation in launches)
    return CudagraphCoverage(graph_us / calls / 1000.0, device_us / calls / 1000.0, launched / calls)
