"""Compile figures past torch's 64 retained compilation metrics, and the recompile limit
read from torch's graph-break type rather than from message text."""

import types

from core.capture import break_records, compile_metrics
from tests.core.helpers import make_spec
from tests.core.helpers import run_in_process as run

SWEEP_MODEL = """\
import torch


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())


def get_example_inputs():
    return (torch.randn(1, 4),)


def get_input_variants():
    return [(torch.randn(n, 4),) for n in {sizes}]
"""


def test_a_sweep_past_64_compiles_counts_every_one(write_model):
    """torch keeps the last 64 compilation metrics: variants 64+ used to read as "reused
    compiled code" and the sweep as 63 recompiles."""
    path = write_model(SWEEP_MODEL.format(sizes="range(1, 71)"), "sweep70.py")
    spec = make_spec(
        path, dynamic="false", iters=1, warmup=0, sweep_shapes=True, dynamo_config=(("recompile_limit", 100),)
    )
    outcome, result, _ = run(spec)
    assert outcome == "completed", result.failure_detail
    assert [v.compiles for v in result.variants] == [1] * 70
    assert [v.recompiled for v in result.variants] == [False] + [True] * 69
    assert not any(v.recompile_limit_hit or v.ran_eagerly for v in result.variants)
    assert all(v.compile_time_s > 0 for v in result.variants)
    assert all(v.recompile_reasons for v in result.variants[1:])
    assert len(result.recompiles) == 69


def test_a_model_with_70_breaks_counts_every_graph_and_op(write_model):
    body = "".join("        x = x + 1\n        torch._dynamo.graph_break()\n" for _ in range(70))
    path = write_model(
        "import torch\n\n\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        + body
        + "        return x + 1\n\n\ndef get_model():\n    return M()\n\n\n"
        "def get_example_inputs():\n    return (torch.randn(2, 2),)\n",
        "many.py",
    )
    outcome, result, _ = run(make_spec(path, iters=1, warmup=0))
    assert outcome == "completed", result.failure_detail
    c = result.compile
    assert (c.graph_count, c.frames_compiled, c.op_count) == (71, 71, 71)
    assert "71 graphs (71 ops)" in c.coverage and "split by 70 graph breaks" in c.coverage
    s = result.summary()
    assert (s["graph_break_sites"], s["graph_break_per_call"]) == (70, 70)
    assert [g.line for g in result.graph_breaks] == list(range(7, 7 + 2 * 70, 2))


def test_recompile_limit_is_read_from_the_break_type(write_model):
    path = write_model(SWEEP_MODEL.format(sizes="(1, 2, 3, 4, 5, 1)"), "limit.py")
    spec = make_spec(
        path, dynamic="false", iters=1, warmup=0, sweep_shapes=True, dynamo_config=(("recompile_limit", 2),)
    )
    _, result, _ = run(spec)
    variants = result.variants
    assert [v.compiles for v in variants] == [1, 1, 1, 0, 0, 0]
    assert [v.recompile_limit_hit for v in variants] == [False, False, True, False, False, False]
    # new shapes after the limit run eagerly; the first shape again runs its compiled code
    assert [v.ran_eagerly for v in variants] == [False, False, True, True, True, False]
    (limit,) = [g for g in result.graph_breaks if g.frame_skipped]
    assert limit.gb_code == "GB0039" and limit.reason == break_records.RECOMPILE_LIMIT_TYPE


def test_recompile_limit_is_not_guessed_from_message_text():
    other = types.SimpleNamespace(
        fail_type="Unsupported",
        fail_reason=(
            "Data-dependent branching\n  Explanation: a message that mentions the recompile limit.\n"
            "  Hint: raise the recompile limit\n"
        ),
    )
    limit = types.SimpleNamespace(
        fail_type="Unsupported",
        fail_reason=(
            "Dynamo recompile limit exceeded\n  Explanation: Dynamo attempted to recompile the code object too "
            "many times.\n"
        ),
    )
    hard = types.SimpleNamespace(fail_type="FailOnRecompileLimitHit", fail_reason="Hard failure")
    assert not compile_metrics.is_recompile_limit(other)
    assert compile_metrics.is_recompile_limit(limit) and compile_metrics.is_recompile_limit(hard)
    assert not compile_metrics.is_recompile_limit(types.SimpleNamespace(fail_type=None, fail_reason=None))


def test_recompiles_in_later_calls_do_not_add_to_the_per_call_count(write_model):
    """Each sweep variant recompiles every frame and torch logs every break again: logged
    grows, but one call still passes each break once."""
    from tests.core.helpers import BREAKS_MODEL

    source = BREAKS_MODEL + "\n\ndef get_input_variants():\n    return [(torch.randn(n, 8),) for n in (4, 5, 6)]\n"
    path = write_model(source, "breaks_sweep.py")
    _, result, _ = run(make_spec(path, dynamic="false", iters=1, warmup=0, sweep_shapes=True))
    assert [v.compiles for v in result.variants] == [4, 4, 4]
    assert sorted((g.line, g.logged, g.per_call) for g in result.graph_breaks) == [(13, 3, 1), (17, 3, 1), (19, 3, 1)]
    s = result.summary()
    assert (s["graph_break_sites"], s["graph_break_per_call"]) == (3, 3)
