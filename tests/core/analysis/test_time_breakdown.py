"""The rules of core.analysis.time_breakdown on hand-made call trees: classification, the partition of a
call's time, graph spans and the price of each break, the verdict sentence."""

import pytest

from core.analysis.time_breakdown import Node, analyse, attribute_breaks, classify, time_verdict
from core.vocab import op_records as oprec
from core.vocab.formatting import fmt_ms


@pytest.mark.parametrize(
    "name, category",
    [
        ("aten::addmm", "operator"),
        ("mkldnn::_convolution_pointwise", "operator"),
        ("cpp_fused_add_cos_mul_0", "kernel"),
        ("graph_0_cpp_fused_add_cos_mul_relu_sin_sum_0", "kernel"),
        ("triton_poi_fused_add_0", "kernel"),
        ("Torch-Compiled Region: 1/0", "compiled_region"),
        ("TorchDynamo Cache Lookup", "guard_check"),
        ("AOTDispatcher Runtime Wrapper Prologue", "runtime_wrapper"),
        ("Pregraph bytecode", "runtime_wrapper"),
        ("## Compiled graph __compiled_fn_2_abc ##", "graph_call"),
        ("## Call CompiledFxGraph fe5h6 ##", "runtime_wrapper"),
        ("cudaLaunchKernel", "other"),
    ],
)
def test_classify(name, category):
    assert classify(name) == category


def test_inductors_graph_call_stands_in_for_a_missing_mark():
    step = n(
        "ProfilerStep#1",
        0,
        100,
        n("Torch-Compiled Region: 0/0", 1, 99, n("## Call CompiledFxGraph abc ##", 10, 60, n("cpp_fused_0", 20, 50))),
    )
    side, spans = analyse("compiled", [step])
    assert [(s.start, s.end, s.graph) for s in spans[0]] == [(10, 60, "0/0")]
    assert side.kernels_ms == pytest.approx(0.03) and side.runtime_wrappers_ms == pytest.approx(0.02)


def test_a_kernel_named_by_the_job_is_a_kernel():
    assert classify("my_kernel") == "other"
    assert classify("my_kernel", {"my_kernel"}) == "kernel"


def n(name, start, end, *children):
    return Node(name, start, end, list(children))


def call_with_two_breaks(t0=0.0):
    """One compiled call, µs: graph 0/0 [10, 110], a 3000 µs eager stretch, graph 1/0 (nested
    region) [3200, 3300], graph 2/0 [3400, 3450]; the step ends at 3500."""
    return n(
        "ProfilerStep#1",
        t0,
        t0 + 3500,
        n("TorchDynamo Cache Lookup", t0 + 2, t0 + 8),
        n(
            "Torch-Compiled Region: 0/0",
            t0 + 9,
            t0 + 3480,
            n(
                "## Compiled graph __compiled_fn_1 ##",
                t0 + 10,
                t0 + 110,
                n("aten::addmm", t0 + 20, t0 + 100, n("aten::copy_", t0 + 30, t0 + 40)),
            ),
            n("aten::mul", t0 + 1000, t0 + 1100),  # eager, in a disabled function
            n("TorchDynamo Cache Lookup", t0 + 3150, t0 + 3190),
            n(
                "Torch-Compiled Region: 1/0",
                t0 + 3195,
                t0 + 3470,
                n(
                    "## Compiled graph __compiled_fn_2 ##",
                    t0 + 3200,
                    t0 + 3300,
                    n("cpp_fused_sin_0", t0 + 3250, t0 + 3290),
                ),
                n("TorchDynamo Cache Lookup", t0 + 3330, t0 + 3340),
                n(
                    "Torch-Compiled Region: 2/0",
                    t0 + 3345,
                    t0 + 3460,
                    n("## Compiled graph __compiled_fn_3 ##", t0 + 3400, t0 + 3450),
                ),
            ),
        ),
    )


def test_time_partition_graph_spans_and_counts():
    steps = [call_with_two_breaks(0), call_with_two_breaks(10_000)]
    side, spans = analyse("compiled", steps)
    assert side.calls == 2 and side.ms_per_call == pytest.approx(3.5)
    assert sum(side.time_by_category().values()) == pytest.approx(side.ms_per_call)
    assert [s.graph for s in spans[0]] == ["0/0", "1/0", "2/0"]
    assert side.in_graphs_ms == pytest.approx(0.25) and side.outside_graphs_ms == pytest.approx(3.25)
    assert side.kernels_ms == pytest.approx(0.04)
    assert side.operators_in_graphs_ms == pytest.approx(0.08)  # addmm 70 µs self + copy_ 10
    assert side.operators_outside_graphs_ms == pytest.approx(0.1)
    assert side.guard_checks_ms == pytest.approx(0.056)
    assert (side.operators_per_call, side.kernels_per_call, side.graphs_per_call) == (2, 1, 3)
    rows = {(o.name, o.graph): o for o in side.ops}
    assert rows[("aten::addmm", "0/0")].total_ms_per_call == pytest.approx(0.08)
    assert rows[("aten::mul", "")].category == "operator"  # eager code between graphs: no graph
    assert rows[("cpp_fused_sin_0", "1/0")].category == "kernel"
    guard_graphs = {o.graph for o in side.ops if o.category == "guard_check"}
    assert guard_graphs == {"0/0", "1/0", "2/0"}  # each lookup named by the region it chose


def test_each_gap_goes_to_the_break_that_ended_the_graph_before_it():
    steps = [call_with_two_breaks(0), call_with_two_breaks(10_000)]
    side, spans = analyse("compiled", steps)
    at = {"0/0": ("Skip calling a disabled function", "m.py", 17), "1/0": ("graph_break()", "m.py", 19)}
    split = attribute_breaks(steps, spans, at)
    costs = {b.line: b for b in split.costs}
    assert costs[17].cost_ms_per_call == pytest.approx(3.09) and costs[17].gaps_per_call == 1
    assert costs[17].graphs_before == ("0/0",) and costs[17].graphs_after == ("1/0",)
    assert costs[19].cost_ms_per_call == pytest.approx(0.1)
    assert [b.line for b in split.costs] == [17, 19]  # costliest first
    assert split.entry_exit_ms == pytest.approx(0.06)
    total = sum(b.cost_ms_per_call for b in split.costs) + split.unattributed_ms + split.entry_exit_ms
    assert total == pytest.approx(side.outside_graphs_ms)
    assert {t.graph: t.ms_per_call for t in split.graph_times} == pytest.approx({"0/0": 0.1, "1/0": 0.1, "2/0": 0.05})
    unknown = attribute_breaks(steps, spans, {})
    assert unknown.costs == () and unknown.unattributed_ms == pytest.approx(3.19)


def test_a_gap_after_a_called_function_returns_belongs_to_the_callers_break():
    """Frame 0/0 breaks at a call (the break is inside the callee, logged in 0/0 too); the
    callee runs as frame 1/0 and breaks itself (resume 2/0); after it returns, 0/0's resume
    3/0 runs. Regions: 1/0 and 3/0 inside 0/0, 2/0 inside 1/0."""
    step = n(
        "ProfilerStep#1",
        0,
        1000,
        n(
            "Torch-Compiled Region: 0/0",
            5,
            995,
            n("## Compiled graph g0 ##", 10, 20),
            n(
                "Torch-Compiled Region: 1/0",
                100,
                800,
                n("## Compiled graph g1 ##", 110, 120),
                n("Torch-Compiled Region: 2/0", 300, 790, n("## Compiled graph g2 ##", 310, 320)),
            ),
            n("Torch-Compiled Region: 3/0", 900, 990, n("## Compiled graph g3 ##", 950, 960)),
        ),
    )
    _, spans = analyse("compiled", [step])
    site = ("Unsupported Tensor.item() call", "lib.py", 1175)
    split = attribute_breaks([step], spans, {"0/0": site, "1/0": site})
    (cost,) = split.costs
    assert cost.gaps_per_call == 3 and cost.cost_ms_per_call == pytest.approx((90 + 190 + 630) / 1000)
    assert cost.graphs_before == ("0/0", "1/0", "2/0") and cost.graphs_after == ("1/0", "2/0", "3/0")
    assert split.unattributed_ms == 0.0


def test_verdict_names_the_costliest_break():
    steps = [call_with_two_breaks()]
    side, spans = analyse("compiled", steps)
    split = attribute_breaks(
        steps, spans, {"0/0": ("Skip calling", "/x/model.py", 17), "1/0": ("graph_break()", "/x/model.py", 19)}
    )
    eager = oprec.SideOpProfile("eager", calls=1, ms_per_call=0.5, operators_per_call=4)
    profile = oprec.OpProfile(
        calls=1,
        eager=eager,
        compiled=side,
        break_costs=split.costs,
        unattributed_ms=split.unattributed_ms,
        entry_exit_ms=split.entry_exit_ms,
    )
    text = time_verdict(profile, eager_ms=0.4, compiled_ms=3.2)
    assert text.startswith(
        "Compiled is slower (3.20 ms against 0.40 ms eager): under the profiler, 3.19 ms of 3.50 ms per call runs "
        "between graphs (2 graph breaks); fix the break at model.py:17 (Skip calling) first "
        "(3.09 ms)"
    ), text
    fast = time_verdict(
        oprec.OpProfile(
            calls=1,
            eager=eager,
            compiled=oprec.SideOpProfile(
                "compiled",
                calls=1,
                ms_per_call=1.0,
                in_graphs_ms=0.95,
                outside_graphs_ms=0.05,
                graphs_per_call=1,
                kernels_per_call=3,
                operators_per_call=1,
            ),
        ),
        eager_ms=2.0,
        compiled_ms=1.0,
    )
    assert fast == (
        "Compiled is 2.00× faster (1.00 ms against 2.00 ms eager): under the profiler, 0.95 ms of 1.00 ms per call runs "
        "inside compiled graphs (3 kernels and 1 operator, against 4 operators eager)."
    )
    in_graphs = oprec.OpProfile(
        calls=1,
        eager=eager,
        compiled=oprec.SideOpProfile("compiled", calls=1, ms_per_call=1.0, in_graphs_ms=0.95, graphs_per_call=1),
    )
    tied = time_verdict(in_graphs, 1.0, 1.02, tied=True)
    assert tied.startswith("Compiled and eager are within the noise (1.02 ms against 1.00 ms eager): ")
    # a timing graded unusable (a busy machine) takes no direction, even where the medians differ by 1.5x
    busy = time_verdict(in_graphs, 0.092, 0.14, unusable=True)
    assert busy.startswith("Cannot tell which side is faster: the timing is unusable (0.14 ms against 92 µs eager")
    assert "slower" not in busy and "× faster" not in busy
    nothing = time_verdict(oprec.OpProfile(calls=1, compiled=oprec.SideOpProfile("compiled", calls=1, ms_per_call=1.0)))
    assert nothing.startswith("Nothing ran in a compiled graph")
    assert time_verdict(None) == "" and fmt_ms(0.04) == "40 µs" and fmt_ms(1.234) == "1.23 ms"


def test_an_interrupted_call_is_left_out():
    from core.analysis.time_breakdown import steady_calls

    calls = [
        n("ProfilerStep#1", 0, 100),
        n("ProfilerStep#2", 200, 19_000),
        n("ProfilerStep#3", 20_000, 20_110),
        n("ProfilerStep#4", 30_000, 30_090),
    ]
    kept, dropped = steady_calls(calls)
    assert dropped == 1 and [c.start for c in kept] == [0, 20_000, 30_000]
    side, _ = analyse("eager", kept, outlier_calls=dropped)
    assert (side.calls, side.outlier_calls) == (3, 1) and side.ms_per_call == pytest.approx(0.1)
    assert steady_calls(calls[:2]) == (calls[:2], 0)  # too few to tell


def test_a_profile_far_slower_than_the_timed_calls_is_flagged():
    """Profiled calls 450x the timed ones (seen on a busy machine: 14.44 ms against 32 µs)."""
    side = oprec.SideOpProfile("compiled", calls=1, ms_per_call=14.44, in_graphs_ms=14.31, graphs_per_call=1)
    text = time_verdict(oprec.OpProfile(calls=1, compiled=side), eager_ms=0.020, compiled_ms=0.032)
    assert text.endswith(
        "Caution: the profiled calls took 14.44 ms against 32 µs timed (451x): something else used "
        "the machine while they ran, so these shares may not hold for the timed calls; run again "
        "on a quieter machine."
    ), text
    usual = oprec.SideOpProfile("compiled", calls=1, ms_per_call=0.064, in_graphs_ms=0.03, graphs_per_call=1)
    assert "Caution" not in time_verdict(oprec.OpProfile(calls=1, compiled=usual), 0.018, 0.038)  # profiler's own cost


def test_each_region_gets_the_guard_check_that_chose_it_and_its_wrappers_own_time():
    """As torch's profiler nests a compiled call (seen in a real trace): the cache lookup just
    before a region, and inside it the pre-graph bytecode, the graph mark, the AOT prologue and
    the compiled graph's call around the kernels and operators; a nested region is its own."""
    from core.analysis.time_breakdown import Node, region_costs

    inner = Node(
        "Torch-Compiled Region: 1/0",
        200,
        260,
        [
            Node("Pregraph bytecode", 200, 202),
            Node("## Compiled graph __compiled_fn_5 ##", 202, 250, [Node("cpp_fused_sub_0", 210, 220)]),
        ],
    )
    outer = Node(
        "Torch-Compiled Region: 0/0",
        20,
        300,
        [
            Node("Pregraph bytecode", 20, 23),
            Node(
                "## Compiled graph __compiled_fn_1 ##",
                23,
                90,
                [
                    Node("AOTDispatcher Runtime Wrapper Prologue", 24, 27),
                    Node(
                        "## Call CompiledFxGraph abc ##",
                        27,
                        80,
                        [Node("aten::addmm", 30, 60), Node("cpp_fused_relu_0", 60, 70)],
                    ),
                ],
            ),
            Node("aten::is_nonzero", 100, 102),  # the code of the graph break, eager
            Node("TorchDynamo Cache Lookup", 180, 199),
            inner,
        ],
    )
    step = Node("ProfilerStep#1", 0, 320, [Node("TorchDynamo Cache Lookup", 0, 20), outer])
    costs = region_costs([step, step], frozenset({"cpp_fused_relu_0", "cpp_fused_sub_0"}))
    # 0/0: mark 67 - its children 56 = 11, prologue 3, the graph call 53 - 40 = 13, pre-graph 3
    assert costs["0/0"] == pytest.approx((0.020, 0.030))
    assert costs["1/0"] == pytest.approx((0.019, 0.040))  # pre-graph 2 + mark 48 - 10
