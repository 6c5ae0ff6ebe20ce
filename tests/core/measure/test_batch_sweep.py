"""--sweep-batch: each batch size against one compiled model; throughput, best batch size."""

import dataclasses

import pytest

from core.analysis.variants import best_batch, throughput_rows
from core.cli.args import build_parser
from core.cli.job_specs import build_specs
from core.vocab import records as rec
from core.vocab.limits import ConfigError
from tests.core.helpers import MLP_MODEL, make_spec
from tests.core.helpers import run_in_process as run


def test_batch_sweep_measures_each_size_against_one_compiled_model(write_model):
    path = write_model(MLP_MODEL, "mlp.py")
    spec = dataclasses.replace(
        make_spec(path, backend="eager", iters=4, warmup=1, op_profile_calls=0), sweep_batch=(1, 4, 16)
    )
    outcome, result, _ = run(spec)
    assert outcome == "completed", result.failure_detail
    assert [v.batch_size for v in result.variants] == [1, 4, 16]
    assert [v.input_shapes for v in result.variants][2] == ("float32[16×16]",)
    rows = throughput_rows(result.variants)
    assert all(r["eager_items_per_s"] and r["compiled_items_per_s"] and r["peak_mb"] for r in rows)
    s = result.summary()
    assert s["best_batch_size"] in (1, 4, 16) and s["best_batch_speedup"] is not None
    assert result.accuracy.status == "pass"


def test_out_of_memory_ends_that_batch_size_only():
    ok = rec.VariantResult(0, ("float32[2×3]",), 1, False, eager_ms=(2.0,), compiled_ms=(1.0,), batch_size=2)
    oom = rec.VariantResult(1, ("float32[64×3]",), 0, False, batch_size=64, error="out of memory at batch size 64")
    rows = throughput_rows([ok, oom])
    assert rows[0]["compiled_items_per_s"] == 2000 and rows[0]["speedup"] == 2
    assert rows[1]["error"] and rows[1]["compiled_items_per_s"] is None
    assert best_batch([ok, oom])["batch_size"] == 2


def test_sweep_batch_option(write_model):
    path = write_model(MLP_MODEL, "mlp.py")
    args = build_parser().parse_args([path, "--sweep-batch", "1,8,32", "--out", "x"])
    assert args.sweep_batch == (1, 8, 32)
    assert build_specs(args)[0].sweep_batch == (1, 8, 32)
    with pytest.raises(SystemExit):
        build_parser().parse_args([path, "--sweep-batch", "1,x", "--out", "x"])
    bad = build_parser().parse_args(
        [path, "--sweep-batch", "1,2", "--task", "training", "--sweep-shapes", "--out", "x"]
    )
    with pytest.raises(ConfigError):
        build_specs(bad)
