"""CUDA-graph coverage from the op profile's events: the kernels carrying a graph replay's
correlation id against every kernel, per call; None on a CPU (no GPU time), never a made-up 0."""

from __future__ import annotations

from core.analysis.cudagraph_coverage import ProfiledEvent as E
from core.analysis.cudagraph_coverage import coverage


def _call(first_id: int, graph_us: float, loose_us: float) -> list[E]:
    """One compiled call: a graph replay (two kernels with its id) and a skipped graph's kernel
    launched on its own."""
    return [
        E("Torch-Compiled Region: 0/0", False, first_id, 0.0),
        E("cudaGraphLaunch", False, first_id + 1, 0.0),
        E("triton_poi_fused_add_0", True, first_id + 1, graph_us / 2),
        E("triton_red_fused_sum_1", True, first_id + 1, graph_us / 2),
        E("cudaLaunchKernel", False, first_id + 2, 0.0),
        E("aten::mm kernel", True, first_id + 2, loose_us),
    ]


def test_the_share_of_gpu_time_in_graph_replays_per_call():
    cov = coverage(_call(10, 900.0, 100.0) + _call(20, 700.0, 300.0), calls=2)
    assert cov.share == 0.8
    assert (cov.graph_ms_per_call, cov.device_ms_per_call, cov.launches_per_call) == (0.8, 1.0, 1.0)
    assert cov.text().startswith("80% of the compiled call's GPU time ran in CUDA-graph replays (0.800 of 1.000 ms")


def test_a_versioned_launch_name_counts_and_no_graph_reads_zero():
    versioned = [E("cudaGraphLaunch_v10000", False, 5, 0.0), E("k", True, 5, 50.0)]
    assert coverage(versioned, calls=1).share == 1.0
    no_graph = [E("cudaLaunchKernel", False, 7, 0.0), E("k", True, 7, 400.0)]
    assert coverage(no_graph, calls=1).share == 0.0  # kernels ran, none inside a graph


def test_a_cpu_profile_has_no_coverage():
    assert coverage([E("aten::mm", False, 1, 0.0)], calls=3) is None
    assert coverage(_call(1, 10.0, 10.0), calls=0) is None
