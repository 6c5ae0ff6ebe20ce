"""Graph-break and graph counts against what torch itself reports (issue 18, items 13-16).

- per_call counts what ran in a call: a frame that runs again from dynamo's cache passes its
  break again (the op profile's calls, as graphs.csv's calls_per_call shows);
- a frame skipped for the recompile limit keeps the function and file:line torch names;
- graph_count is every graph compiled over the job (torch's own unique_graphs, graphs.csv);
- a compile error that ends the job is said as such: torch raised, nothing ran eagerly.

Each job runs in-process on a tiny model file with backend "eager"; torch's graph_breaks
records are collected by a handler of the test's own (the torch_log fixture).
"""

import logging

from core.cli.output import print_summary
from core.vocab.config import CompileConfig
from tests.core.helpers import SHAPE_CHANGE_MODEL, make_spec
from tests.core.helpers import run_in_process as run


def ordinary(result):
    return [g for g in result.graph_breaks if not g.frame_skipped and not g.compile_failed]


def skipped(result):
    return [g for g in result.graph_breaks if g.frame_skipped]


def unique_graphs() -> int:
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


def graph_calls(result, graphs) -> float:
    """calls_per_call of these graphs, as graphs.csv has it (the op profile's graph marks)."""
    return sum(t.calls_per_call for g in graphs if (t := result.graph_time(g.graph)) is not None)


# forward loops over four layers (dynamo skips it: a break in a loop); each layer's frame
# is compiled once and then runs from dynamo's cache for the other three.
LOOPED_LAYERS_MODEL = """\
import torch


class Layer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        n = y.sum().item()                   # line 11
        return (y + n).tanh()


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.ModuleList([Layer() for _ in range(4)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)                     # line 22
        return x.cos()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


def test_per_call_counts_every_pass_of_a_frame_run_from_the_cache(write_model, torch_log, capsys):
    path = write_model(LOOPED_LAYERS_MODEL, "looped.py")
    outcome, result, _ = run(make_spec(path, iters=2, warmup=1, op_profile_calls=3))
    assert outcome == "completed", result.failure_detail
    (gb,) = ordinary(result)
    assert (gb.file, gb.line) == (path, 11)
    assert {(path, 11)} == set(torch_log.sites)  # forward's attempt (skipped) and the layer's frame
    # what graphs.csv shows: the resume function after the break runs once a layer
    resumed = [g for g in result.graphs if g.function == "torch_dynamo_resume_in_forward_at_11"]
    assert resumed and graph_calls(result, resumed) == 4
    assert gb.per_call == 4 and result.per_call_counted(gb)
    s = result.summary()
    assert s["graph_break_per_call"] == 4 and s["graph_break_sites"] == 1
    assert "split by 4 graph breaks a call" in s["coverage"], s["coverage"]
    print_summary([result])
    out = capsys.readouterr().out
    assert "(x4 per call, logged 1x" in out and "from the compile alone" not in out


def test_without_an_op_profile_per_call_says_it_comes_from_the_compile_alone(write_model, capsys):
    path = write_model(LOOPED_LAYERS_MODEL, "looped.py")
    outcome, result, _ = run(make_spec(path, iters=2, warmup=1, op_profile_calls=0))
    assert outcome == "completed", result.failure_detail
    (gb,) = ordinary(result)
    assert gb.per_call == 1 and not result.per_call_counted(gb)  # the layer's frame compiled once
    print_summary([result])
    out = capsys.readouterr().out
    assert "(x1 per call from the compile alone: no op profile, logged 1x)" in out, out


SHAPES_MODEL = """\
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):                    # line 9
        return self.lin(x).relu()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(2, 8),)


def get_input_variants():
    return [(torch.randn(n, 8),) for n in range(2, 8)]
"""


class TorchWarnings(logging.Handler):
    """What torch warns on its convert_frame logger ("torch._dynamo hit config.recompile_limit")."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def sweep_spec(path, limit, **dynamo):
    config = CompileConfig(
        backend="eager", dynamic="false", dynamo_config=tuple(sorted({"recompile_limit": limit, **dynamo}.items()))
    )
    return make_spec(path, iters=2, warmup=1, sweep_shapes=True, config=config)


def test_a_frame_skipped_for_the_recompile_limit_names_the_function_torch_names(write_model, capsys):
    path = write_model(SHAPES_MODEL, "shapes.py")
    warnings = TorchWarnings()
    logger = logging.getLogger("torch._dynamo.convert_frame")
    logger.addHandler(warnings)
    try:
        outcome, result, _ = run(sweep_spec(path, 2))
    finally:
        logger.removeHandler(warnings)
    assert outcome == "completed", result.failure_detail
    (skip,) = skipped(result)
    assert skip.gb_code == "GB0039"
    assert (skip.file, skip.line, skip.eager_function) == (path, 9, "forward (shapes.py:9)")
    # torch's warning names the same function and place, and so does the recompile that hit the limit
    (hit,) = [m for m in warnings.messages if "hit config.recompile_limit" in m]
    assert f"function: 'forward' ({path}:9)" in hit
    (rc,) = [r for r in result.recompiles if r.compile_id == skip.compile_id]
    assert (rc.function, rc.location) == ("forward", f"{path}:9")
    print_summary([result])
    assert "frame skipped GB0039 at shapes.py:9, ran eagerly: forward (shapes.py:9)" in capsys.readouterr().out


def test_a_recompile_limit_of_zero_still_names_the_function(write_model):
    """No recompile is logged (the first compile is over the limit): torch's warning is the
    only place that names the function."""
    path = write_model(SHAPES_MODEL, "shapes.py")
    config = CompileConfig(backend="eager", dynamo_config=(("recompile_limit", 0),))
    outcome, result, _ = run(make_spec(path, iters=2, warmup=1, config=config))
    assert outcome == "completed", result.failure_detail
    assert not result.recompiles
    (skip,) = skipped(result)
    assert (skip.file, skip.line, skip.eager_function) == (path, 9, "forward (shapes.py:9)")
    assert result.summary()["graph_count"] == 0 == unique_graphs()


def test_graph_count_counts_the_graphs_compiled_after_the_first_call(write_model):
    # the first compiled call makes one graph (after the disabled function); the next call's
    # other size makes a second: torch counts both, graphs.csv lists both
    path = write_model(SHAPE_CHANGE_MODEL, "shape_change.py")
    outcome, result, _ = run(make_spec(path, iters=2, warmup=2, dynamic="false", op_profile_calls=2))
    assert outcome == "completed", result.failure_detail
    assert result.recompiles
    assert result.summary()["graph_count"] == len(result.graphs) == unique_graphs() == 2
    assert result.compile.graph_count == 2


def test_a_sweep_counts_a_graph_per_shape_and_one_graph_a_call(write_model):
    path = write_model(SHAPES_MODEL, "shapes.py")
    outcome, result, _ = run(sweep_spec(path, 8))
    assert outcome == "completed", result.failure_detail
    s = result.summary()
    assert s["graph_count"] == len(result.graphs) == unique_graphs() == 6
    assert s["coverage"].startswith("Fully compiled: one graph a call"), s["coverage"]
    assert "6 graphs" in s["coverage"]


# helper breaks, so it is compiled as a frame of its own; its second call comes with another
# shape: a recompile of helper, over the limit of 1, which fail_on_recompile_limit_hit makes
# torch raise in the first compiled call, after four graphs were made.
FAILING_COMPILE_MODEL = """\
import torch


def helper(x):                               # line 4
    y = x * 2
    torch._dynamo.graph_break()
    return y + 1


class M(torch.nn.Module):
    def forward(self, x):
        a = helper(x.relu())
        b = helper(x[:, :4])                 # line 13
        return a.sum() + b.sum()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


def test_a_compile_error_that_ends_the_job_is_no_skipped_frame(write_model, capsys):
    path = write_model(FAILING_COMPILE_MODEL, "failing.py")
    limits = (("fail_on_recompile_limit_hit", True), ("recompile_limit", 1))
    outcome, result, _ = run(
        make_spec(path, config=CompileConfig(backend="eager", dynamic="false", dynamo_config=limits))
    )
    assert outcome == "failed" and result.phase == "compile"
    assert "fail_on_recompile_limit_hit" in result.failure_reason
    assert not skipped(result)  # nothing ran eagerly: torch raised
    (failed,) = [g for g in result.graph_breaks if g.compile_failed]
    assert "Hard failure due to fail_on_recompile_limit_hit" in failed.reason
    assert (failed.file, failed.line, failed.per_call) == (path, 4, 0)
    # the counts are kept: the graphs made before torch raised, as graphs.csv lists them
    s = result.summary()
    assert result.graphs and s["graph_count"] == len(result.graphs) == unique_graphs()
    assert s["frames_skipped"] == 0
    assert s["graph_break_sites"] == len(ordinary(result)) >= 1  # the graph_break() in helper
    assert s["coverage"].startswith("The compile failed"), s["coverage"]
    print_summary([result])
    out = capsys.readouterr().out
    assert "frame skipped" not in out and "ran eagerly:" not in out
    assert (
        "compile failed at failing.py:4 (torch raised, nothing ran eagerly): FailOnRecompileLimitHit: "
        "Hard failure due to fail_on_recompile_limit_hit"
    ) in out, out
