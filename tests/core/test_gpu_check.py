"""tests/gpu_check.py's precision and timing checks on the CPU with a tiny model: a mistake in
them shows here, not on a lent GPU whose minutes are few (issue 43)."""

from __future__ import annotations

from tests import gpu_check
from tests.core.helpers import MLP_MODEL


def test_the_precision_and_timing_checks_run_on_the_cpu(write_model, capsys):
    model = write_model(MLP_MODEL)
    precisions = (("bf16", "bfloat16", "", True), ("autocast_bf16", "float32", "bfloat16", True))
    assert gpu_check.check_precision(model, "cpu", "aot_eager", batch=1, iters=10, precisions=precisions) == 0
    # one thread, in the job and the references: with two on this 2-core machine and another
    # program busy on one core, OpenMP's second thread waited a time slice (16 ms) each call in
    # the job, which calls back to back, and rarely in the references
    assert gpu_check.check_timing_methods(model, "cpu", "aot_eager", batch=1, iters=10, threads=1) == 0
    out = capsys.readouterr().out
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert lines["bf16_status"] == "completed" and lines["bf16_dtype"] == "bfloat16"
    assert lines["autocast_bf16_autocast"] == "bfloat16" and lines["autocast_bf16_accuracy"] == "pass"
    assert lines["timing_status"] == "completed" and lines["timing_timing_method"] == "both"
    for name in ("eager", "compiled"):
        assert float(lines[f"timing_{name}_timer_ms"]) > 0
        assert 0.2 < float(lines[f"timing_{name}_throughput_over_timer"]) < 5  # the same model, a like figure


def test_a_dtype_the_device_refuses_is_a_failure_only_where_it_must_run(monkeypatch, capsys):
    """A check that must run a dtype fails when the job fails; one that may not, passes when the
    failure names the dtype (never a silent float32 run)."""
    from types import SimpleNamespace

    failed = SimpleNamespace(status="failed", failure_reason="this CPU cannot run float16 matmul; use float32")
    monkeypatch.setattr(gpu_check, "profile_job", lambda *a, **k: failed)
    assert gpu_check.check_precision("m.py", "cpu", precisions=(("fp16", "float16", "", False),)) == 0
    assert gpu_check.check_precision("m.py", "cpu", precisions=(("fp16", "float16", "", True),)) == 1
    failed.failure_reason = "something else broke"
    assert gpu_check.check_precision("m.py", "cpu", precisions=(("fp16", "float16", "", False),)) == 1
    assert "fp16_status: failed (something else broke)" in capsys.readouterr().out


def test_only_names_the_checks_to_run():
    import pytest

    with pytest.raises(SystemExit):
        gpu_check.main(["--only", "precison"])
