"""Where compiled outputs diverge (profile --localize): by compiler stage, by submodule, and for
inductor which numerics setting makes the check pass. Models made to diverge at a known module
and stage: a submodule that behaves differently under torch.compiler.is_compiling() (dynamo's
graph), and a custom op whose inductor decomposition lies (decompositions)."""

from __future__ import annotations

import json

from core.decide.localize import Localization, localize, numerics_configs, stage_configs
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from tests.core.fakes import fake_result
from tests.core.helpers import COMPILING_MODEL
from tests.core.helpers import profile_command as profile

DECOMP_MODEL = """\
import torch
from torch._inductor.decomposition import register_decomposition


@torch.library.custom_op("locdemo::scale", mutates_args=())
def scale(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@scale.register_fake
def _(x):
    return torch.empty_like(x)


@register_decomposition(torch.ops.locdemo.scale.default)
def _wrong(x):  # inductor's decomposition of the op: lies (x 2.5, not x 2)
    return x * 2.5


class Scaled(torch.nn.Module):
    def forward(self, x):
        return scale(x)


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(16, 16)
        self.s = Scaled()
        self.b = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.b(self.s(self.a(x)).tanh())


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(8, 16),)
"""

QUICK = ("--iters", "5", "--processes", "1", "--op-profile", "0", "--localize")


def test_a_module_that_differs_under_compile_is_found_at_dynamo_and_named(write_model, tmp_path):
    path = write_model(COMPILING_MODEL, "compiling.py")
    proc = profile(path, "--backend", "aot_eager", *QUICK, "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(t for t in proc.stdout.splitlines() if t.startswith("where [aot_eager] diverges: "))
    assert "outputs diverge in dynamo's graph capture (first seen with backend eager), in `block.odd` (Odd" in line
    (loc,) = json.loads((tmp_path / "r" / "report.json").read_text())["localization"]
    assert (
        loc["stages"] == [["eager", "fail"]]
        and loc["module"] == "block.odd"
        and loc["part"] == "dynamo's graph capture"
    )
    assert loc["max_rel_error"] > 0.1 and loc["sentence"] in line
    job = json.loads((tmp_path / "r" / "report.json").read_text())["jobs"]
    assert [j["spec"]["config"]["backend"] for j in job] == [
        "aot_eager"
    ]  # the localization jobs are no configs of the run


def test_a_lying_decomposition_is_found_in_the_decompositions_before_inductor_runs(write_model, tmp_path):
    path = write_model(DECOMP_MODEL, "decomp.py")
    proc = profile(path, "--backend", "aot_eager_decomp_partition", *QUICK, "--out", str(tmp_path / "r"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (loc,) = json.loads((tmp_path / "r" / "report.json").read_text())["localization"]
    assert loc["stages"] == [["eager", "pass"], ["aot_eager", "pass"], ["aot_eager_decomp_partition", "fail"]]
    assert loc["part"] == "inductor's decompositions and partitioning" and loc["module"] == "s"
    assert "in `s` (Scaled, max rel error 2.5e-01)" in loc["sentence"]


def test_a_model_that_passes_has_nothing_to_localize(write_model, tmp_path):
    from tests.core.helpers import MLP_MODEL

    path = write_model(MLP_MODEL, "mlp.py")
    proc = profile(path, "--backend", "eager", *QUICK, "--out", str(tmp_path / "r"))
    assert proc.returncode == 0 and "no config failed the accuracy check; nothing to localize" in proc.stderr
    assert "localization" not in json.loads((tmp_path / "r" / "report.json").read_text())


def test_the_stages_stop_at_the_config_s_backend_and_carry_only_dynamo_settings():
    cfg = CompileConfig(
        "inductor",
        "max-autotune-no-cudagraphs",
        dynamo_config=(("allow_rnn", True),),
        inductor_options=(("freezing", True),),
    )
    stages = stage_configs(cfg)
    assert [c.backend for c in stages] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert (
        stages[0].mode == "default"
        and stages[0].inductor_options == ()
        and stages[0].dynamo_config == cfg.dynamo_config
    )
    assert stages[-1] == cfg and [c.backend for c in stage_configs(CompileConfig("aot_eager"))] == [
        "eager",
        "aot_eager",
    ]
    assert stage_configs(CompileConfig("my_backend")) == []
    available = {"emulate_precision_casts": False, "split_reductions": True, "pattern_matcher": True}
    tried = numerics_configs(CompileConfig("inductor", inductor_options=(("pattern_matcher", False),)), available)
    assert [c.inductor_options for c in tried] == [
        (("emulate_precision_casts", True), ("pattern_matcher", False)),
        (("pattern_matcher", False), ("split_reductions", False)),
    ]  # a setting this torch lacks (fallback_random here) or the config has already is not tried


def _checked(config, accuracy: rec.AccuracyResult):
    result = fake_result(config)
    result.accuracy = accuracy
    return result


def _failing(backend):
    return _checked(CompileConfig(backend), rec.AccuracyResult("fail", "output: max rel error 0.03"))


def test_inductor_s_code_is_named_and_the_setting_that_passes_is_offered():
    """Fake jobs: every stage before inductor passes, inductor fails, and only
    emulate_precision_casts=True makes it pass."""
    ran = []

    def run_one(spec):
        ran.append(spec)
        opts = dict(spec.config.inductor_options)
        ok = spec.config.backend != "inductor" or opts.get("emulate_precision_casts") is True
        a = rec.AccuracyResult(
            "pass" if ok else "fail", "", module="" if ok else "enc.3", module_kind="Attention", module_rel_error=3e-2
        )
        return _checked(spec.config, a)

    available = {"emulate_precision_casts": False, "fallback_random": False}
    loc = localize(_failing("inductor"), run_one, available)
    assert [s.config.backend for s in ran][:4] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert all(s.processes == 1 and s.op_profile_calls == 0 and s.artifacts_dir is None for s in ran)
    assert [s.localize for s in ran] == [True, True, True, True, False, False]  # modules only while bisecting
    assert loc.sentence() == (
        "outputs diverge in inductor's code (first seen with backend inductor), in `enc.3` (Attention, max rel "
        "error 3.0e-02); with emulate_precision_casts=True the check passes."
    )
    assert loc.flags() == ["--inductor-option emulate_precision_casts=True"]


def test_a_divergence_that_does_not_reproduce_or_a_stage_without_verdict_cannot_tell():
    passing = lambda spec: _checked(spec.config, rec.AccuracyResult("pass"))  # noqa: E731
    loc = localize(_failing("aot_eager"), passing, {})
    assert loc.stage == "" and loc.sentence().startswith("cannot tell where the outputs diverge: every stage passed")
    unsure = lambda spec: _checked(spec.config, rec.AccuracyResult("nondeterministic"))  # noqa: E731
    loc = localize(_failing("aot_eager"), unsure, {})
    assert "backend eager gave no verdict (nondeterministic)" in loc.sentence() and loc.stages == [
        ("eager", "nondeterministic")
    ]
    assert Localization("x").sentence().startswith("cannot tell")


def test_a_cancel_names_the_stages_and_the_numerics_settings_left_untried():
    """Cancelled at aot_eager: that stage, the ones after it and the numerics settings are named
    as untried; cancelled among the numerics settings: the ones not run are named."""

    def cancelled_at(backend):
        return lambda spec: (
            None if spec.config.backend == backend else _checked(spec.config, rec.AccuracyResult("pass"))
        )

    loc = localize(_failing("inductor"), cancelled_at("aot_eager"), {})
    assert loc.untried == [
        "stage aot_eager",
        "stage aot_eager_decomp_partition",
        "stage inductor",
        "the numerics settings",
    ]
    assert loc.sentence() == (
        "cannot tell where the outputs diverge: cancelled at stage aot_eager (eager pass, aot_eager cancelled); "
        "left untried by the cancel: stage aot_eager, stage aot_eager_decomp_partition, stage inductor, "
        "the numerics settings."
    )
    assert loc.to_dict()["untried"] == loc.untried

    calls = []

    def cancelled_in_numerics(spec):
        calls.append(spec)
        if spec.config.backend != "inductor":
            return _checked(spec.config, rec.AccuracyResult("pass"))
        if len(calls) == 6:  # the second numerics setting
            return None
        return _checked(spec.config, rec.AccuracyResult("fail", "x"))

    available = {"emulate_precision_casts": False, "fallback_random": False, "split_reductions": True}
    loc = localize(_failing("inductor"), cancelled_in_numerics, available)
    assert loc.tried == [("emulate_precision_casts", True)]
    assert loc.untried == ["fallback_random=True", "split_reductions=False"]
    assert loc.sentence().endswith(
        "no numerics setting tried makes it pass (emulate_precision_casts=True); "
        "left untried by the cancel: fallback_random=True, split_reductions=False."
    )


def test_the_config_run_may_differ_from_the_report_s_and_what_was_left_out_is_said():
    """core.cli.localize runs a report's config without its risky settings when asked: the jobs get
    that config, the finding keeps the report's label and says what was left out."""
    risky = CompileConfig("inductor", inductor_options=(("cpp.cxx", "touch /tmp/pwned; g++"),))
    result = _checked(risky, rec.AccuracyResult("fail", "x"))
    ran = []

    def run_one(spec):
        ran.append(spec)
        return _checked(spec.config, rec.AccuracyResult("pass"))

    loc = localize(result, run_one, {}, CompileConfig("inductor"))
    assert [dict(s.config.inductor_options) for s in ran] == [{}, {}, {}, {}]
    assert loc.config == risky.label
    loc.left_out = ["cpp.cxx = 'touch /tmp/pwned; g++'"]
    assert loc.sentence().endswith("; run without the report's settings cpp.cxx = 'touch /tmp/pwned; g++'.")
