"""--dtype and --autocast: the model and its floating inputs cast, or every call under
torch.autocast, eager and compiled alike; the report says which; a dtype the model cannot run
fails the job with the reason, never a silent float32 run."""

from __future__ import annotations

import textwrap

from tests.core.helpers import MLP_MODEL, make_spec, run_in_process

REFUSES_HALF = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x):
        if x.dtype == torch.float16:  # as an op without a float16 kernel on this device does
            raise RuntimeError('"addmm_impl_cpu_" not implemented for \\'Half\\'')
        return self.lin(x)


def get_model():
    return Net()


def get_example_inputs():
    return (torch.randn(2, 4),)
"""


def _model(tmp_path, text, name="m.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def test_bfloat16_casts_the_model_and_its_inputs_and_the_report_says_so(tmp_path):
    outcome, result, events = run_in_process(make_spec(_model(tmp_path, MLP_MODEL), dtype="bfloat16"))
    assert result.status == "completed", result.failure_reason
    s = result.summary()
    assert (s["dtype"], s["autocast"]) == ("bfloat16", "")
    assert result.model_info.description.endswith("[bfloat16]")
    assert any("bfloat16[" in shape for shape in result.model_info.input_shapes)
    assert result.accuracy.status == "pass" and result.accuracy.tolerance >= 1e-2  # bfloat16's, not float32's


def test_autocast_runs_every_call_under_it(tmp_path):
    outcome, result, events = run_in_process(make_spec(_model(tmp_path, MLP_MODEL), autocast="bfloat16"))
    assert result.status == "completed", result.failure_reason
    s = result.summary()
    assert (s["dtype"], s["autocast"]) == ("float32", "bfloat16")
    assert "float32, autocast bfloat16" in result.model_info.description
    assert any("float32[" in shape for shape in result.model_info.input_shapes)  # the inputs stay float32


def test_a_dtype_the_model_cannot_run_fails_with_the_reason(tmp_path):
    outcome, result, events = run_in_process(make_spec(_model(tmp_path, REFUSES_HALF), dtype="float16"))
    assert result.status == "failed"
    assert "the model does not run in float16 on cpu" in result.failure_reason
    assert "not implemented for 'Half'" in result.failure_reason and "use another --dtype" in result.failure_reason


def test_the_throughput_method_times_blocks_and_both_gives_two_speedups(tmp_path):
    """--timing throughput: the job's samples are blocks of calls back to back (the time a call);
    --timing both: the latency samples as ever, then a throughput phase beside them."""
    from core.cli.output import config_lines
    from core.measure.timing import MIN_THROUGHPUT_BLOCKS

    path = _model(tmp_path, MLP_MODEL)
    outcome, result, events = run_in_process(make_spec(path, iters=20, timing="throughput"))
    assert result.status == "completed", result.failure_reason
    assert len(result.latencies("eager")) == len(result.latencies("compiled")) == MIN_THROUGHPUT_BLOCKS
    s = result.summary()
    assert s["timing_method"] == "throughput" and s["throughput_speedup"] is None
    assert "(throughput: blocks of 10 calls back to back" in "\n".join(config_lines(result, s))
    outcome, both, events = run_in_process(make_spec(path, iters=20, timing="both"))
    s = both.summary()
    assert len(both.latencies("eager")) == 20 and len(both.throughput) == 2 * MIN_THROUGHPUT_BLOCKS
    assert s["timing_method"] == "both" and s["throughput_speedup"] > 0
    assert s["throughput_speedup_ci_low"] <= s["throughput_speedup"] <= s["throughput_speedup_ci_high"]
    lines = "\n".join(config_lines(both, s))
    assert "(latency: one call at a time" in lines and "  throughput: eager " in lines


def test_the_methods_note_says_why_when_the_two_speedups_differ():
    from core.analysis.figure_agreement import methods_note

    apart = {"speedup": 1.1, "speedup_ci_low": 1.05, "speedup_ci_high": 1.15}
    apart |= {"throughput_speedup": 1.6, "throughput_speedup_ci_low": 1.5, "throughput_speedup_ci_high": 1.7}
    assert "a call timed alone pays the CPU's launch work" in methods_note(apart)
    close = {**apart, "throughput_speedup_ci_low": 1.12}
    assert methods_note(close) == ""


def test_a_mark_that_does_not_fit_the_inputs_is_a_setting_to_fix_before_anything_compiles(tmp_path):
    """It read "compile failed (ConfigError)", and a range that left out the size was blamed on the model."""
    import dataclasses

    from core.vocab.config import CompileConfig, DimMark

    path = _model(tmp_path, MLP_MODEL)
    for mark, said in (
        (DimMark(5, 0), "--mark-dynamic 5:0 names input 5, but the model takes 1 input(s), counted from 0"),
        (DimMark(0, 7), "--mark-dynamic 0:7: input 0 has 2 dimension(s)"),
        (DimMark(0, 0, 100, 200), "--mark-dynamic 0:0:100:200: input 0's dimension 0 is"),
    ):
        config = dataclasses.replace(CompileConfig("eager"), mark_dynamic=(mark,))
        outcome, result, events = run_in_process(make_spec(path, config=config))
        assert result.status == "failed" and result.phase == "load", (result.phase, result.failure_reason)
        assert said in result.failure_reason and "compile failed" not in result.failure_reason
