"""Results for the Time breakdown and Graphs views, folded from hand-made events: an op
profile with a priced graph break, and three graphs (one a recompile) whose files lie in
an artifacts folder as a job writes them."""

from __future__ import annotations

from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec
from core.vocab.artifacts import JobArtifacts, write_text
from tests.gui.helpers import GRAPH_BREAK_MODEL, fake_result

FX_CODE = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[8, 64]"):
        # the first linear layer
        relu = torch.relu(L_x_)
        return (relu,)
"""
OUTPUT_CODE = '''cpp_fused_relu_0 = async_compile.cpp_pybinding(['float*'], r"""
extern "C" void kernel(float* out) {}
""")
def call(args):
    return (buf0,)
'''


def side(name: str, kernels: float, ops: float, outside: float, python: float) -> oprec.SideOpProfile:
    total = kernels + ops + outside + python + 0.02
    return oprec.SideOpProfile(
        side=name,
        calls=10,
        ms_per_call=total,
        kernels_ms=kernels,
        operators_in_graphs_ms=ops,
        guard_checks_ms=0.02,
        operators_outside_graphs_ms=outside,
        python_ms=python,
        in_graphs_ms=kernels + ops,
        outside_graphs_ms=total - kernels - ops,
        operators_per_call=12 if name == "eager" else 2,
        kernels_per_call=3 if name == "compiled" else 0,
        graphs_per_call=2 if name == "compiled" else 0,
        ops=(
            oprec.OpStat("aten::addmm", "operator", "0/0" if name == "compiled" else "", 2, 0.30, 0.35),
            oprec.OpStat("cpp_fused_relu_0", "kernel", "0/0", 1, 0.12, 0.12),
            oprec.OpStat("aten::relu", "operator", "", 1, 0.05, 0.06),
            oprec.OpStat("TorchDynamo Cache Lookup", "guard_check", "0/0", 1, 0.02, 0.02),
        ),
    )


def explained_result(root: str, job_id: str = "job1", backend: str = "inductor"):
    """fake_result plus an op profile and graphs; the graph files are written under `root`."""
    r = fake_result(job_id, backend=backend)
    label = r.config.label
    a = JobArtifacts.for_label(label)
    graphs = []
    for gid, reason in (("0/0", ""), ("1/0", ""), ("0/1", "0/0: tensor 'L['x']' size mismatch at index 0")):
        write_text(root, a.graph_file(gid, "code.py"), FX_CODE)
        write_text(root, a.graph_file(gid, "guards.txt"), f"GUARDS of {gid}\n| +- TENSOR_MATCH: check_tensor(L['x'])\n")
        if backend == "inductor":
            write_text(root, a.graph_file(gid, "output_code.py"), OUTPUT_CODE)
        graphs.append(
            rec.CompiledGraph(
                gid,
                "forward (model.py:13)",
                ops=4,
                guards=9,
                compile_s=0.3,
                inputs=("L_x_: f32[8, 64]",),
                kernels=("cpp_fused_relu_0",),
                recompile_reason=reason,
                code_file="/etc/passwd",
            )
        )
    write_text(
        root,
        a.compile_log,
        "I1130 06:07:44.123456 1 torch/_dynamo/convert_frame.py:10] [0/0] compiling forward\n"
        "V1130 06:07:44.223456 1 torch/_dynamo/guards.py:20] [0/0] [__guards] GUARDS: a debug line\n"
        "W1130 06:07:45.123456 1 torch/_dynamo/convert_frame.py:30] [0/1] [__recompiles] Recompiling "
        "function forward\n",
    )
    write_text(root, a.trace("eager"), '{"traceEvents": []}')
    write_text(root, a.trace("compiled"), '{"traceEvents": []}')
    profile = oprec.OpProfile(
        calls=10,
        eager=side("eager", 0.0, 0.0, 1.6, 0.3),
        compiled=side("compiled", 0.3, 0.2, 0.5, 0.4),
        break_costs=(
            oprec.BreakCost("Data-dependent branching", GRAPH_BREAK_MODEL, 15, 0.21, 1.0, ("0/0",), ("1/0",)),
        ),
        unattributed_ms=0.01,
        entry_exit_ms=0.05,
        graph_times=(oprec.GraphTime("0/0", 0.3, 1.0, 0.012, 0.021), oprec.GraphTime("1/0", 0.2, 1.0)),
        eager_trace=a.trace("eager"),
        compiled_trace=a.trace("compiled"),
    )
    for e in [ev.GraphCompiled(job_id, graph=g) for g in graphs] + [ev.OpProfileMeasured(job_id, profile=profile)]:
        assert r.apply(e)
    return r
