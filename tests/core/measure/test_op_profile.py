"""The op profile and what the compiler made, on real jobs (in-process, backend eager or
aot_eager, one thread: this machine is shared), plus one inductor job."""

import csv
import json
import os

import pytest

from core.analysis.results import JobResult
from core.measure.job import run_job
from core.report.files import OutputFolder, load_report, write_report
from core.vocab import events as ev
from core.vocab.artifacts import JobArtifacts
from tests.core.helpers import make_spec

SLEEP_MS = 3.0
KNOWN_COST_MODEL = f'''\
"""Two graph breaks of known cost: a {SLEEP_MS:g} ms sleep in a disabled function, and an
explicit break with nothing around it."""
import time

import torch


@torch.compiler.disable
def wait(x):
    time.sleep({SLEEP_MS / 1000!r})
    return x


class KnownCost(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.b = torch.nn.Linear(16, 16)

    def forward(self, x):
        y = self.a(x).relu()
        y = wait(y)  # SLEEPS
        y = self.b(y).sigmoid()
        torch._dynamo.graph_break()  # EXPLICIT
        return y * 2


def get_model():
    return KnownCost()


def get_example_inputs():
    return (torch.randn(4, 16),)
'''

CHAIN_MODEL = '''\
"""Linear, a chain of element-wise ops, Linear: inductor fuses the chain into one kernel."""
import torch


class Chain(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 64)

    def forward(self, x):
        y = self.a(x)
        y = torch.sin(y) * 2 + 1
        y = torch.relu(y) - torch.cos(y)
        return self.b(y)


def get_model():
    return Chain()


def get_example_inputs():
    return (torch.randn(8, 64),)
'''


def line_of(source: str, marker: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if marker in text)


def run(spec):
    result = JobResult(spec)
    events = []

    def emit(event):
        events.append(event)
        result.apply(event)

    outcome = run_job(spec, emit)
    assert outcome == "completed", result.failure_detail
    return result, events


@pytest.fixture(scope="module")
def known_cost(tmp_path_factory):
    """One aot_eager job of KNOWN_COST_MODEL writing its files, as the CLI runs it."""
    root = tmp_path_factory.mktemp("report")
    path = root / "known_cost.py"
    path.write_text(KNOWN_COST_MODEL)
    folder = OutputFolder(str(root / "out")).claim()
    spec = make_spec(
        str(path), backend="aot_eager", iters=10, warmup=2, threads=1, op_profile_calls=8, artifacts_dir=folder.path
    )
    result, events = run(spec)
    write_report([result], folder.path, folder=folder)
    folder.release()
    return result, events, folder.path


def test_every_profiled_event_is_classified(known_cost):
    result, _, _ = known_cost
    p = result.op_profile
    assert p.calls == 8 and not p.note
    assert p.eager.calls + p.eager.outlier_calls == 8 and p.compiled.calls + p.compiled.outlier_calls == 8
    assert p.eager.calls >= 4 and p.compiled.calls >= 4
    categories = {o.category for o in p.compiled.ops}
    assert {"operator", "graph_call", "compiled_region", "guard_check", "runtime_wrapper"} <= categories
    names = {o.name: o for o in p.compiled.ops}
    assert names["Torch-Compiled Region: 0/0"].category == "compiled_region"
    assert names["AOTDispatcher Runtime Wrapper Prologue"].category == "runtime_wrapper"
    assert {o.graph for o in p.compiled.ops if o.category == "compiled_region"} == {"0/0", "1/0", "2/0"}
    assert {o.category for o in p.eager.ops} == {"operator"}
    for side in (p.eager, p.compiled):  # the categories split the call exactly
        assert sum(side.time_by_category().values()) == pytest.approx(side.ms_per_call, rel=1e-6)
        assert side.in_graphs_ms + side.outside_graphs_ms == pytest.approx(side.ms_per_call, rel=1e-6)
    assert p.compiled.graphs_per_call == 3 and p.eager.graphs_per_call == 0
    addmm = [o for o in p.compiled.ops if o.name == "aten::addmm"]
    assert sorted(o.graph for o in addmm) == ["0/0", "1/0"]


def test_break_costs_are_the_known_ones_and_add_up(known_cost):
    result, _, _ = known_cost
    by_line = {g.line: g for g in result.graph_breaks}
    sleeps, explicit = line_of(KNOWN_COST_MODEL, "SLEEPS"), line_of(KNOWN_COST_MODEL, "EXPLICIT")
    assert set(by_line) == {sleeps, explicit}
    slow, fast = result.break_cost(by_line[sleeps]), result.break_cost(by_line[explicit])
    assert SLEEP_MS <= slow.cost_ms_per_call < SLEEP_MS + 5, slow  # the sleep, plus a shared machine's noise
    assert fast.cost_ms_per_call < min(1.5, slow.cost_ms_per_call / 3), fast
    assert slow.graphs_before == ("0/0",) and slow.graphs_after == ("1/0",)
    assert fast.graphs_before == ("1/0",) and fast.graphs_after == ("2/0",)
    before, after = result.graphs_around(by_line[sleeps])
    assert [g.graph for g in before] == ["0/0"] and [g.graph for g in after] == ["1/0"]
    p = result.op_profile
    between = sum(b.cost_ms_per_call for b in p.break_costs) + p.unattributed_ms
    assert p.unattributed_ms == 0.0
    assert between + p.entry_exit_ms == pytest.approx(p.compiled.outside_graphs_ms, rel=1e-6)
    assert between >= 0.9 * (p.compiled.outside_graphs_ms - p.entry_exit_ms)
    verdict = result.time_verdict()  # eager sleeps too: slower or within the noise, the sleep named either way
    assert verdict.startswith(("Compiled is slower", "Compiled and eager are within the noise")), verdict
    assert f"runs between graphs (2 graph breaks); fix the break at known_cost.py:{sleeps}" in verdict, verdict


def test_graphs_are_reported_with_code_and_guards(known_cost):
    result, events, root = known_cost
    graphs = {g.graph: g for g in result.graphs}
    assert set(graphs) == {"0/0", "1/0", "2/0"}
    assert sum(isinstance(e, ev.GraphCompiled) for e in events) == 3
    first = graphs["0/0"]
    assert first.function == "forward" and first.file.endswith("known_cost.py") and first.line > 0
    assert first.ops >= 2 and first.guards > 0
    assert first.compile_s > 0 and first.inputs and first.inputs[-1] == "L_x_: f32[4, 16]"
    for g in graphs.values():
        code = open(os.path.join(root, g.code_file)).read()
        assert "class GraphModule(torch.nn.Module)" in code
        assert "TREE_GUARD_MANAGER" in open(os.path.join(root, g.guards_file)).read()
        assert g.output_code_file == "" and g.kernels == ()  # aot_eager generates no code


def test_files_of_the_job(known_cost):
    result, _, root = known_cost
    arts = JobArtifacts.for_label("aot_eager")
    for side in ("eager", "compiled"):
        with open(os.path.join(root, arts.trace(side))) as fh:
            trace = json.load(fh)
        names = {e.get("name", "") for e in trace["traceEvents"]}
        assert "aten::addmm" in names
        if side == "compiled":
            assert "Torch-Compiled Region: 1/0" in names and any(n.startswith("## Compiled graph") for n in names)
    assert result.op_profile.eager_trace == arts.trace("eager")
    log = open(os.path.join(root, arts.compile_log)).read()
    assert "Graph break in user code" in log and "[__graph_breaks]" in log
    traces = os.listdir(os.path.join(root, arts.torch_trace_dir))
    assert len(traces) == 1 and traces[0].endswith(".log")
    with open(os.path.join(root, "graph_breaks.csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert all(float(r["cost_ms_per_call"]) > 0 for r in rows)
    with open(os.path.join(root, "ops.csv"), newline="") as fh:
        ops = list(csv.DictReader(fh))
    assert list(ops[0]) == [
        "config",
        "side",
        "name",
        "category",
        "graph",
        "calls_per_call",
        "self_ms_per_call",
        "total_ms_per_call",
        "device_ms_per_call",
    ]
    assert {r["side"] for r in ops} == {"eager", "compiled"}
    with open(os.path.join(root, "graphs.csv"), newline="") as fh:
        graph_rows = list(csv.DictReader(fh))
    assert [r["graph"] for r in graph_rows] == ["0/0", "1/0", "2/0"]
    assert all(float(r["time_ms_per_call"]) > 0 and r["code_file"] for r in graph_rows)
    with open(os.path.join(root, "time_breakdown.csv"), newline="") as fh:
        parts = list(csv.DictReader(fh))
    compiled = sum(float(r["ms_per_call"]) for r in parts if r["side"] == "compiled")
    assert compiled == pytest.approx(result.op_profile.compiled.ms_per_call, rel=1e-6)
    (back,), _ = load_report(root)  # report.json keeps all of it, type-checked on reading
    assert back.op_profile == result.op_profile and back.graphs == result.graphs
    assert back.time_verdict() == result.time_verdict()


def test_tlparse_reads_the_structured_trace(known_cost, tmp_path):
    from core.report.tlparse import run_tlparse, tlparse_executable, tlparse_job

    if tlparse_executable() is None:
        pytest.skip("tlparse is not installed")
    _, _, root = known_cost
    problem = run_tlparse(os.path.join(root, JobArtifacts.for_label("aot_eager").torch_trace_dir), str(tmp_path / "tl"))
    assert problem == ""
    assert (tmp_path / "tl" / "index.html").exists() and (tmp_path / "tl" / "-_1_0_0").is_dir()
    # the real tlparse never runs over an existing folder (it would need --overwrite, which deletes it)
    assert "exists already" in run_tlparse(os.path.join(root, "torch_trace", "aot_eager"), str(tmp_path / "tl"))
    index, problem = tlparse_job(root, "aot_eager")  # the app's: a fresh folder of its own
    assert problem == "" and os.path.isfile(index) and not index.startswith(root)


def test_op_profile_off_and_eager_backend(write_model):
    path = write_model(KNOWN_COST_MODEL, "known_cost.py")
    result, events = run(make_spec(path, iters=4, warmup=1, threads=1, op_profile_calls=0))
    assert result.op_profile is None and "op_profile" not in [e.phase for e in events if isinstance(e, ev.PhaseChanged)]
    assert result.summary()["time_verdict"] is None
    explicit = next(g for g in result.graph_breaks if g.line == line_of(KNOWN_COST_MODEL, "EXPLICIT"))
    before, after = result.graphs_around(explicit)  # without a profile: from compile ids and resume names
    assert [g.graph for g in before] == ["1/0"] and [g.function for g in after] == [
        f"torch_dynamo_resume_in_forward_at_{explicit.line}"
    ]
    result, _ = run(make_spec(path, iters=4, warmup=1, threads=1, op_profile_calls=3))
    p = result.op_profile  # backend eager: no AOT wrappers, the marks still find the graphs
    assert p.compiled.graphs_per_call == 3 and len(p.break_costs) == 2
    assert result.summary()["eager_operators_per_call"] == p.eager.operators_per_call


def test_inductor_fuses_the_chain_and_the_timed_model_is_left_as_compiled(write_model):
    import sys

    import torch
    from torch._inductor.codecache import PyCodeCache

    path = write_model(CHAIN_MODEL, "chain.py")
    result, _ = run(make_spec(path, backend="inductor", iters=6, warmup=2, threads=1, op_profile_calls=5))
    p = result.op_profile
    assert p.eager.operators_per_call == 8  # linear, sin, mul, add, relu, cos, sub, linear
    assert p.compiled.kernels_per_call >= 1
    assert p.compiled.kernels_per_call + p.compiled.operators_per_call < p.eager.operators_per_call
    kernels = [o.name for o in p.compiled.ops if o.category == "kernel"]
    fused = [k for k in kernels if k.startswith("cpp_fused_") and "sin" in k and "cos" in k]
    assert fused, kernels
    (graph,) = result.graphs
    assert fused[0] in graph.kernels and graph.output_code_file.endswith("0_0.output_code.py")
    assert not torch._inductor.config.cpp.enable_kernel_profile  # the timed model was never instrumented
    for module in PyCodeCache.modules:  # and the marks are gone again
        assert not any(getattr(v, "_compile_profiler_mark", False) for v in vars(module).values())
    assert not any(
        getattr(v, "_compile_profiler_mark", False)
        for m in list(sys.modules.values())
        for k, v in list(getattr(m, "__dict__", {}).items())
        if isinstance(k, str) and k.startswith("__compiled_fn_")
    )
    assert "runs inside compiled graphs" in result.time_verdict() or "overhead" in result.time_verdict()


def test_a_recompiled_graph_carries_its_guard_failure(write_model, tmp_path):
    from tests.core.helpers import SHAPE_CHANGE_MODEL

    path = write_model(SHAPE_CHANGE_MODEL, "shapes.py")
    result, _ = run(
        make_spec(path, dynamic="false", iters=4, warmup=2, threads=1, op_profile_calls=2, artifacts_dir=str(tmp_path))
    )
    recompiled = [g for g in result.graphs if not g.graph.endswith("/0")]
    assert recompiled, [g.graph for g in result.graphs]
    assert "size mismatch at index 0" in recompiled[0].recompile_reason
    first = next(g for g in result.graphs if g.graph == recompiled[0].graph.split("/")[0] + "/0")
    assert first.inputs != recompiled[0].inputs  # compiled for another shape
    assert (tmp_path / recompiled[0].code_file).is_file()
