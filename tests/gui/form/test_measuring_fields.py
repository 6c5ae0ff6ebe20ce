"""The form's precision and timing reach every job it starts (run, zoo): iteration_fields carries
them beside the iterations and processes."""

from __future__ import annotations

from core.vocab.config import CompileConfig, ModelSpec, make_jobs
from gui.form.config_panel import ConfigPanel


def test_precision_and_timing_are_job_fields(qtbot):
    panel = ConfigPanel()
    qtbot.addWidget(panel)
    fields = panel.iteration_fields()
    assert (fields["dtype"], fields["autocast"], fields["timing"]) == ("float32", "", "latency")
    panel.precision.setCurrentText("autocast bfloat16")
    panel.timing.setCurrentText("both")
    fields = panel.iteration_fields()
    assert (fields["dtype"], fields["autocast"], fields["timing"]) == ("float32", "bfloat16", "both")
    panel.precision.setCurrentText("float16")
    (spec,) = make_jobs(ModelSpec("resnet18"), [CompileConfig("eager")], **panel.iteration_fields())
    assert (spec.dtype, spec.autocast, spec.timing) == ("float16", "", "both")
