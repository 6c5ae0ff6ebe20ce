import pytest

from core.vocab.config import (
    CompileConfig,
    available_backends,
    available_modes,
    dynamo_config_defaults,
    expand_configs,
    parse_key_values,
    validate_config,
)
from core.vocab.limits import ConfigError


@pytest.mark.parametrize("mode", ["max", "min", "high-speed", "keypoint"])
def test_outdated_modes_are_refused_with_the_valid_list(mode):
    with pytest.raises(ConfigError) as err:
        validate_config(CompileConfig(mode=mode))
    message = str(err.value)
    assert repr(mode) in message
    for valid in available_modes():  # read from the installed torch
        assert valid in message


def test_valid_lists_come_from_torch():
    import torch._dynamo
    import torch._inductor

    assert set(torch._dynamo.list_backends(None)) == set(available_backends())
    assert list(torch._inductor.list_mode_options()) == available_modes()


def test_unknown_backend_lists_backends():
    with pytest.raises(ConfigError, match="Valid backends here: .*aot_eager.*inductor"):
        validate_config(CompileConfig(backend="tensorrt-turbo"))


def test_mode_needs_inductor_and_excludes_options():
    with pytest.raises(ConfigError, match="only applies to the inductor backend"):
        validate_config(CompileConfig(backend="eager", mode="reduce-overhead"))
    with pytest.raises(ConfigError, match="either a mode or inductor options"):
        validate_config(CompileConfig(mode="max-autotune", inductor_options=(("max_autotune", True),)))


def test_verbose_argument_is_recognised():
    from core.vocab.config import VERBOSE_REFUSAL, asks_for_verbose

    assert asks_for_verbose(["resnet18", "--verbose"]) and asks_for_verbose(["--verbose=1"])
    assert not asks_for_verbose(["resnet18", "--verbosity"])
    assert "--compile-log +dynamo,inductor,guards,output_code" in VERBOSE_REFUSAL and "backend, mode" in VERBOSE_REFUSAL


def test_cuda_refused_without_gpu():
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ConfigError, match="no CUDA GPU"):
        validate_config(CompileConfig(), device="cuda")


def test_dynamo_overrides_are_checked_against_torch_keys():
    defaults = dynamo_config_defaults()
    parsed = parse_key_values(
        ["capture_scalar_outputs=True", "allow_rnn=1", "recompile_limit=4"], defaults, "torch._dynamo.config"
    )
    assert dict(parsed) == {"capture_scalar_outputs": True, "allow_rnn": True, "recompile_limit": 4}
    with pytest.raises(ConfigError, match="no setting 'capture_scalars'.*capture_scalar_outputs"):
        parse_key_values(["capture_scalars=True"], defaults, "torch._dynamo.config")
    with pytest.raises(ConfigError, match="True or False"):
        parse_key_values(["allow_rnn=maybe"], defaults, "torch._dynamo.config")
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        parse_key_values(["allow_rnn"], defaults, "torch._dynamo.config")


def test_expand_configs_every_combination():
    configs = expand_configs(["eager", "inductor"], ["default", "max-autotune-no-cudagraphs"], ["auto", "false"])
    labels = [c.label for c in configs]
    assert "eager" in labels and "eager/dynamic=false" in labels
    assert "inductor/max-autotune-no-cudagraphs/dynamic=false" in labels
    assert not any(c.backend == "eager" and c.mode != "default" for c in configs)
    assert len(configs) == 6 and len(set(labels)) == 6


def test_config_round_trip_and_kwargs():
    cfg = CompileConfig("inductor", "default", "true", True, (("allow_rnn", True),), (("max_autotune", True),))
    assert CompileConfig.from_dict(cfg.to_dict()) == cfg
    assert cfg.compile_kwargs() == {
        "backend": "inductor",
        "fullgraph": True,
        "dynamic": True,
        "options": {"max_autotune": True},
    }


def test_the_default_adds_autotuned_kernels_on_the_cpu_for_inference_only():
    """A run where the user chose no backend and no mode: on the CPU for inference, plain inductor
    and its autotuned kernels (a plain-inductor run cannot recommend what it never measured);
    CUDA, training, sweeps and any other config keep what they are."""
    from core.vocab.config import AUTOTUNE_MODE, default_configs, default_configs_note

    plain = CompileConfig("inductor")
    tuned = CompileConfig("inductor", mode=AUTOTUNE_MODE)
    assert default_configs([plain], "cpu", "inference", sweep=False) == [plain, tuned]
    dynamic = CompileConfig("inductor", dynamic="true", dynamo_config=(("allow_rnn", True),))
    assert default_configs([dynamic], "cpu", "inference", False)[1] == CompileConfig(
        "inductor", mode=AUTOTUNE_MODE, dynamic="true", dynamo_config=(("allow_rnn", True),)
    )
    for device, task, sweep in (("cuda", "inference", False), ("cpu", "training", False), ("cpu", "inference", True)):
        assert default_configs([plain], device, task, sweep) == [plain]
    # a mode is not passed with options (compile_kwargs), and another backend has no modes
    frozen = CompileConfig("inductor", inductor_options=(("freezing", True),))
    assert default_configs([frozen, CompileConfig("eager")], "cpu", "inference", False) == [
        frozen,
        CompileConfig("eager"),
    ]
    assert default_configs([plain, tuned], "cpu", "inference", False) == [plain, tuned]  # never twice
    note = default_configs_note([tuned], app=False)
    assert "inductor/max-autotune-no-cudagraphs" in note and "give --backend or --mode" in note
    assert "add the config to the queue" in default_configs_note([tuned], app=True)
