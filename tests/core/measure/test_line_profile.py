"""Time per source line, eager against compiled: eager torch calls charged to the user's line
that made them (library code folded under it), compiled kernels charged through inductor's
provenance to their FX nodes' lines (a fused kernel shared equally), the eager code between
graphs to the break's line; what the lines account for against the call."""

from __future__ import annotations

import csv
import json
import os

import pytest

from core.analysis.time_breakdown import Node
from core.capture.provenance import kernel_lines, node_lines, read_node_mappings
from core.measure.line_profile import compiled_line_times, eager_line_times, line_times
from core.vocab.op_records import BreakCost
from core.vocab.source_paths import line_site, torch_dir
from tests.core.helpers import profile_command as profile

LINES_MODEL = """\
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(64, 64)
        self.b = torch.nn.Linear(64, 8)

    def forward(self, x):
        h = self.a(x).relu()  # line 11
        h = h * 2 + 1
        if h.sum() > 0:  # line 13: a graph break
            h = h - 1
        return self.b(h).softmax(-1)  # line 15


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(32, 64),)
"""

LINEAR = os.path.join(torch_dir(), "nn", "modules", "linear.py")


GRAPH_CODE = """\
class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[32, 64][64, 1]cpu"):
        l_x_ = L_x_

        # File: /u/m.py:11 in forward, code: h = self.a(x).relu()
        linear: "f32[32, 64][64, 1]cpu" = torch._C._nn.linear(l_x_, w, b);  l_x_ = None
        h: "f32[32, 64][64, 1]cpu" = linear.relu();  linear = None

        # File: /u/m.py:12 in forward, code: h = h * 2 + 1
        mul: "f32[32, 64][64, 1]cpu" = h * 2;  h = None
        h_1: "f32[32, 64][64, 1]cpu" = mul + 1;  mul = None
        return (h_1,)
"""


def test_kernels_get_the_lines_of_this_compile_s_graph_through_torch_s_node_mappings():
    assert node_lines(GRAPH_CODE) == {
        "linear": ("/u/m.py", 11),
        "h": ("/u/m.py", 11),
        "mul": ("/u/m.py", 12),
        "h_1": ("/u/m.py", 12),
    }
    payload = json.dumps(
        {
            "cppCodeToPost": {
                "extern_kernels.addmm:1": ["addmm"],
                "cpp_fused_add_mul_relu_0:2": ["add", "mul", "relu"],
            },
            "postToPre": {"addmm": ["linear"], "relu": ["h"], "mul": ["mul"], "add": ["h_1"]},
        }
    )
    kernels, post_to_pre = read_node_mappings(payload)
    assert kernel_lines(kernels, post_to_pre, GRAPH_CODE) == {
        "extern_kernels.addmm:1": [("/u/m.py", 11)],
        "cpp_fused_add_mul_relu_0:2": [("/u/m.py", 12), ("/u/m.py", 11)],
    }
    assert read_node_mappings("not json") == ({}, {}) and read_node_mappings('["a"]') == ({}, {})


def test_a_stack_is_charged_to_the_user_s_line_else_the_library_s_own():
    stack = [("/u/m.py", 11), (LINEAR, 134)]
    assert line_site(stack) == ("/u/m.py", 11)
    timm = [("/x/site-packages/timm/models/vit.py", 80), (LINEAR, 134)]
    assert line_site(timm) == ("/x/site-packages/timm/models/vit.py", 80)  # a model in a package: its line


def test_kernels_are_charged_per_graph_shared_equally_and_extern_calls_matched_in_order():
    provenance = {
        "0/0": {
            "extern_kernels.addmm:1": [("m.py", 11)],
            "cpp_fused_x_0:2": [("m.py", 11), ("m.py", 12)],
            "extern_kernels.addmm:3": [("m.py", 15)],
        },
        "1/0": {"cpp_fused_x_0:1": [("m.py", 14)]},  # the same kernel name in another graph
    }
    region = Node(
        "Torch-Compiled Region: 0/0",
        0,
        100,
        [
            Node("aten::addmm", 0, 10, [Node("aten::copy_", 1, 2)]),
            Node("cpp_fused_x_0", 10, 30),
            Node("aten::addmm", 30, 36),
            Node("Torch-Compiled Region: 1/0", 40, 60, [Node("cpp_fused_x_0", 41, 45)]),
            Node("cpp_unknown_9", 60, 61),
        ],
    )
    steps = [Node("ProfilerStep#1", 0, 100, [region]), Node("ProfilerStep#2", 0, 100, [region])]
    per_line, names, unmatched = compiled_line_times(steps, frozenset({"cpp_fused_x_0", "cpp_unknown_9"}), provenance)
    assert per_line == pytest.approx({("m.py", 11): 0.02, ("m.py", 12): 0.01, ("m.py", 15): 0.006, ("m.py", 14): 0.004})
    assert names[("m.py", 11)] == {"extern_kernels.addmm [0/0]", "cpp_fused_x_0 [0/0]"}
    assert names[("m.py", 14)] == {
        "cpp_fused_x_0 [1/0]"
    }  # the same name in another graph is its own and unmatched == pytest.approx(0.001)
    rows = line_times({("m.py", 13): 0.05}, per_line, names, (BreakCost("b", "m.py", 13, 0.03),))
    by = {r.line: r for r in rows}
    assert by[13].graph_break and by[13].compiled_ms == 0.03 and by[13].lost_ms == pytest.approx(-0.02)
    assert by[11].eager_ms == 0.0 and [r.line for r in rows] == [11, 12, 13, 14, 15]


def test_eager_torch_calls_are_timed_at_the_line_that_made_them(write_model):
    import importlib.util

    import torch

    spec = importlib.util.spec_from_file_location("lines_model", write_model(LINES_MODEL, "lines_model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model, inputs = module.get_model(), module.get_example_inputs()
    with torch.inference_mode():
        per_line, call_ms = eager_line_times(model, inputs, 5)
    lines = {line for _, line in per_line}
    assert lines == {11, 12, 13, 14, 15}  # nn.Linear's own code folded under lines 11 and 15
    assert 0 < sum(per_line.values()) <= call_ms


def test_a_real_inductor_run_writes_lines_csv_that_adds_up_within_the_call(write_model, tmp_path):
    path = write_model(LINES_MODEL, "lines_model.py")
    out = tmp_path / "r"
    proc = profile(
        path, "--backend", "inductor", "--iters", "20", "--processes", "1", "--op-profile", "5", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "lines.csv", newline="") as fh:
        rows = {int(r["line"]): r for r in csv.DictReader(fh)}
    assert set(rows) == {11, 12, 13, 14, 15}  # this file's lines, though the graphs may come from the cache
    assert rows[13]["graph_break"] == "true" and rows[11]["source"] == "h = self.a(x).relu()  # line 11"
    assert "extern_kernels.addmm" in rows[11]["kernels"] and "extern_kernels.addmm" in rows[15]["kernels"]
    assert any(k.startswith("cpp_fused") for k in rows[12]["kernels"].split(" | "))
    p = json.loads((out / "report.json").read_text())["jobs"][0]["op_profile"]
    compiled_call = p["compiled"]["ms_per_call"]
    assert 0 < p["lines_compiled_ms"] <= compiled_call and p["lines_eager_ms"] <= p["lines_eager_call_ms"]
    assert abs(sum(float(r["compiled_ms_per_call"]) for r in rows.values()) - p["lines_compiled_ms"]) < 1e-6
    assert "by source line (5 lines; lines.csv): they account for" in proc.stdout


def test_a_triton_kernel_s_gpu_time_is_charged_to_its_lines():
    """The GPU path, with a stand-in profile: a Triton kernel's launch range (inductor records one
    under the profiler) with the GPU time of what it launched; python -m tests.gpu_check runs it
    for real on a machine with a GPU."""
    provenance = {"0/0": {"triton_poi_fused_relu_0:1": [("m.py", 11)]}}
    launch = Node("triton_poi_fused_relu_0", 10, 12, [], device_us=40.0)
    steps = [Node("ProfilerStep#1", 0, 100, [Node("Torch-Compiled Region: 0/0", 0, 90, [launch])])]
    per_line, names, unmatched = compiled_line_times(steps, frozenset(), provenance)
    assert per_line == {("m.py", 11): pytest.approx(0.040)} and names[("m.py", 11)] == {"triton_poi_fused_relu_0 [0/0]"}
