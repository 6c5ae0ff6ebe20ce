"""The bundled example models (resources/models/) load, profile and show what torch really does."""

import csv
import os
import subprocess
import sys

import pytest

from core import PROJECT_ROOT as ROOT
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from tests.core.helpers import run_in_process as run

MODELS = os.path.join(ROOT, "resources", "models")
LSTM = os.path.join(MODELS, "lstm_variable_length.py")


def spec(source, dynamic="auto", dynamo_config=(), sweep=False, iters=2, warmup=1):
    return JobSpec(
        "ex",
        ModelSpec(source),
        CompileConfig(backend="eager", dynamic=dynamic, dynamo_config=dynamo_config),
        warmup=warmup,
        iters=iters,
        sweep_shapes=sweep,
    )


def test_resnet50_example_profiles():
    outcome, result, _ = run(spec(os.path.join(MODELS, "resnet50.py"), iters=1, warmup=0))
    assert outcome == "completed", result.failure_reason
    assert result.model_info.parameters > 25_000_000 and result.compile.fully_compiled


def test_conditional_execution_reports_the_branch():
    _, result, _ = run(spec(os.path.join(MODELS, "conditional_execution.py")))
    (gb,) = result.graph_breaks
    assert (gb.reason, gb.gb_code, gb.source) == ("Data-dependent branching", "GB0170", "if x.sum() > 0:")
    assert any("torch.cond" in h for h in gb.hints) and len(gb.hints) >= 2


def test_lstm_runs_eagerly_by_default_and_compiles_with_allow_rnn():
    _, default, _ = run(spec(LSTM))
    assert default.compile.graph_count == 0 and "Nothing was compiled" in default.compile.coverage
    assert [g.gb_code for g in default.graph_breaks if g.frame_skipped] == ["GB0014"]
    _, allowed, _ = run(spec(LSTM, dynamo_config=(("allow_rnn", True),)))
    assert allowed.compile.fully_compiled and not allowed.graph_breaks


@pytest.mark.parametrize("dynamic, compiles, recompiled", [("false", 9, 8), ("auto", 2, 1), ("true", 1, 0)])
def test_lstm_sweep_follows_torchs_recompile_pattern(dynamic, compiles, recompiled):
    _, result, _ = run(spec(LSTM, dynamic=dynamic, dynamo_config=(("allow_rnn", True),), sweep=True, iters=1, warmup=0))
    assert result.status == "completed", result.failure_reason
    variants = result.variants
    assert len(variants) == 11
    assert sum(v.compiles for v in variants) == compiles
    assert sum(v.recompiled for v in variants) == recompiled
    if dynamic == "false":
        hit = [v.index for v in variants if v.recompile_limit_hit]
        assert hit == [8]  # the 9th length: recompile limit 8 reached
        assert [v.ran_eagerly for v in variants] == [False] * 8 + [True] * 3
    if recompiled:
        assert "size mismatch at index 0. expected 8, actual 16" in variants[1].recompile_reasons[0]
        assert result.recompiles and result.recompiles[0].reasons


def test_custom_kernel_two_ways():
    path = os.path.join(MODELS, "custom_kernel.py")
    _, plain, _ = run(spec(path))  # builds the C++ extension on first use (cached afterwards)
    assert plain.status == "completed", plain.failure_reason
    assert "GB0007" in {g.gb_code for g in plain.graph_breaks}
    _, registered, _ = run(spec(path + ":get_model_custom_op"))
    assert registered.status == "completed", registered.failure_reason
    assert registered.graph_breaks == [] and registered.compile.fully_compiled


def test_sweep_cli_writes_variants_csv(tmp_path):
    out = tmp_path / "sweep"
    proc = subprocess.run(
        [
            sys.executable,
            "main.py",
            "profile",
            LSTM,
            "--backend",
            "eager",
            "--dynamo-config",
            "allow_rnn=True",
            "--sweep-shapes",
            "--dynamic",
            "false",
            "--dynamic",
            "true",
            "--iters",
            "1",
            "--warmup",
            "0",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "variants.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert {
        "config",
        "dynamic",
        "variant",
        "input_shapes",
        "recompiled",
        "recompile_reason",
        "compile_time_s",
        "eager_median_ms",
        "compiled_median_ms",
    } <= set(rows[0])
    assert len(rows) == 22
    assert sum(r["recompiled"] == "true" for r in rows if r["dynamic"] == "false") == 8
    assert "recompile limit hit" in proc.stdout


def test_sweep_needs_variants(tmp_path):
    path = tmp_path / "plain.py"
    path.write_text(
        "import torch\ndef get_model():\n    return torch.nn.ReLU()\n"
        "def get_example_inputs():\n    return (torch.randn(2),)\n"
    )
    proc = subprocess.run(
        [sys.executable, "main.py", "profile", str(path), "--sweep-shapes", "--out", str(tmp_path / "o")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "get_input_variants" in proc.stderr


def test_custom_kernel_build_error_is_clear(monkeypatch):
    """Without a compiler or ninja, load_inline raises: the example says what is missing."""
    from torch.utils import cpp_extension

    from core.models.python_files import import_model_file

    module = import_model_file(os.path.join(MODELS, "custom_kernel.py"))
    monkeypatch.setattr(module, "_extension", None)

    def no_toolchain(*args, **kwargs):
        raise RuntimeError("Ninja is required to load C++ extensions")

    monkeypatch.setattr(cpp_extension, "load_inline", no_toolchain)
    with pytest.raises(
        RuntimeError, match=r"needs a C\+\+ compiler \(g\+\+\) and the ninja package.*Ninja is required"
    ):
        module.build_extension()
