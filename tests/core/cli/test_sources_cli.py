"""`profile timm:NAME`, `profile hf:TYPE|FOLDER`: validated before any work, then profiled."""

import json

import pytest

from core.cli.args import build_parser
from core.cli.job_specs import build_specs
from core.vocab.limits import ConfigError
from tests.core.helpers import profile_command as profile

TINY_BERT = [
    "--hf-config",
    "num_hidden_layers=1",
    "--hf-config",
    "hidden_size=32",
    "--hf-config",
    "num_attention_heads=2",
    "--hf-config",
    "intermediate_size=37",
]


def specs(*argv):
    return build_specs(build_parser().parse_args([*argv, "--out", "unused", "--backend", "eager"]))


def test_sources_and_their_options_reach_the_job_spec(tmp_path, monkeypatch):
    (job,) = specs("hf:bert", *TINY_BERT, "--seq-len", "64", "--hf-class", "AutoModelForMaskedLM")
    assert job.model.source == "hf:bert" and job.model.seq_len == 64
    assert job.model.hf_class == "AutoModelForMaskedLM"
    assert job.model.hf_config == (
        "num_hidden_layers=1",
        "hidden_size=32",
        "num_attention_heads=2",
        "intermediate_size=37",
    )
    (job,) = specs("timm:resnet18")
    assert job.model.source == "timm:resnet18"
    folder = tmp_path / "saved"
    folder.mkdir()
    (folder / "config.json").write_text(
        json.dumps(
            {
                "model_type": "bert",
                "num_hidden_layers": 1,
                "hidden_size": 32,
                "num_attention_heads": 2,
                "intermediate_size": 37,
            }
        )
    )
    monkeypatch.chdir(tmp_path)
    (job,) = specs("hf:./saved")  # a config alone: random weights
    assert job.model.source == f"hf:{folder}"  # absolute: the job may run elsewhere


@pytest.mark.parametrize(
    "argv, message",
    [
        (["timm:resnt50"], "timm has no model 'resnt50'. Close matches: timm:resnet50"),
        (["hf:bret"], "transformers has no model type 'bret'. Close matches: hf:bert"),
        (["hf:bert", "--hf-config", "num_hiden_layers=2"], "Did you mean: num_hidden_layers"),
        (["hf:bert", "--hf-config", "hidden_size=big"], "hidden_size takes a number, not 'big'"),
        (["resnet18", "--seq-len", "64"], "--seq-len applies only to Hugging Face models"),
        (["timm:resnet18", "--hf-config", "a=1"], "--hf-config applies only to Hugging Face models"),
        (["hf:bert", "--image-size", "64"], "--hf-config image_size=N"),
        (["hf:bert", "--seq-len", "0"], "--seq-len must be between 1 and"),
        (["hf:gpt2", "--seq-len", "2048"], "longer than the gpt2 config allows (1024 positions)"),
        (["raft_small", "--image-size", "100"], "multiple of 8"),
    ],
)
def test_wrong_sources_are_refused_before_any_work(argv, message):
    with pytest.raises(ConfigError) as info:
        specs(*argv)
    assert message in str(info.value)


def test_profile_a_hugging_face_type_from_the_command_line(tmp_path):
    out = tmp_path / "report"
    proc = profile(
        "hf:bert",
        *TINY_BERT,
        "--seq-len",
        "16",
        "--backend",
        "eager",
        "--iters",
        "2",
        "--warmup",
        "1",
        "--op-profile",
        "0",
        "--out",
        str(out),
        "--quiet",
    )
    assert proc.returncode == 0, proc.stderr
    job = json.loads((out / "report.json").read_text())["jobs"][0]
    assert job["status"] == "completed"
    assert job["model_info"]["input_shapes"] == ["input_ids=int64[1×16]", "attention_mask=int64[1×16]"]
    assert job["model_info"]["description"].startswith("hf:bert (BertModel, text")
    assert job["spec"]["model"]["hf_config"][0] == "num_hidden_layers=1"
    assert "graph breaks 0 places" in proc.stdout


def test_profile_without_backend_or_mode_measures_the_default_configs(capsys):
    """No --backend, no --mode: inductor's default and, on the CPU for inference, its autotuned
    kernels, said on stderr; a named backend or mode, a sweep or training keep to what was asked."""
    from core.cli.job_specs import build_specs

    def labels(*argv, announce=False):
        args = build_parser().parse_args(["resnet18", *argv, "--out", "unused"])
        return [s.config.label for s in build_specs(args, announce=announce)]

    assert labels(announce=True) == ["inductor", "inductor/max-autotune-no-cudagraphs"]
    assert "The run also profiles inductor/max-autotune-no-cudagraphs" in capsys.readouterr().err
    assert labels("--dynamic", "false") == [
        "inductor/dynamic=false",
        "inductor/max-autotune-no-cudagraphs/dynamic=false",
    ]
    assert labels("--backend", "inductor") == ["inductor"]
    assert labels("--mode", "default") == ["inductor"]
    assert labels("--task", "training") == ["inductor"]
    assert labels("--sweep-batch", "1,2") == ["inductor"]
    assert labels("--inductor-option", "freezing=True") == ["inductor/freezing=True"]
    assert capsys.readouterr().err == ""  # said only where asked (profile), once
