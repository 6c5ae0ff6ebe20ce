"""`profile hf:TYPE --task generate`: a tiny Llama built from its config generates with the static
and the dynamic cache, eager against compiled; the recompiles it names are the ones torch logs for
the saved script; models and settings that cannot generate are refused before anything runs."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys

import pytest

from core import PROJECT_ROOT

TINY_LLAMA = (
    "hf:llama",
    *(
        "--hf-config",
        "hidden_size=32",
        "--hf-config",
        "intermediate_size=64",
        "--hf-config",
        "num_hidden_layers=2",
        "--hf-config",
        "num_attention_heads=2",
        "--hf-config",
        "num_key_value_heads=1",
        "--hf-config",
        "vocab_size=256",
    ),
)


def generate(*args, timeout=300):
    return subprocess.run(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "profile", *args],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def rows(folder, name):
    with open(os.path.join(folder, name), newline="") as fh:
        return list(csv.DictReader(fh))


def test_static_and_dynamic_cache_eager_against_compiled_with_the_recompiles_torch_logs(tmp_path):
    out = tmp_path / "r"
    proc = generate(
        *TINY_LLAMA,
        "--task",
        "generate",
        "--cache",
        "static",
        "--cache",
        "dynamic",
        "--backend",
        "aot_eager",
        "--new-tokens",
        "8",
        "--generations",
        "2",
        "--seq-len",
        "12",
        "--out",
        str(out),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = {r["cache"]: r for r in rows(out, "summary.csv")}
    assert set(summary) == {"static", "dynamic"}
    for r in summary.values():
        assert r["prompt_len"] == "12" and r["new_tokens"] == "8" and r["backend"] == "aot_eager"
        for column in (
            "ttft_ms_eager",
            "ttft_ms_compiled",
            "decode_ms_per_token_eager",
            "decode_ms_per_token_compiled",
        ):
            assert float(r[column]) > 0, column
        assert float(r["tokens_per_s_compiled"]) > 0 and r["verdict"] in ("faster", "slower", "cannot tell")
        assert float(r["first_generation_s_compiled"]) > float(r["decode_ms_per_token_compiled"]) / 1000
    # a row per token: the time to first token, then 7 gaps, for each timed generation of each side
    latency = rows(out, "latency.csv")
    assert len([x for x in latency if x["config"] == "static cache/aot_eager"]) == 2 * 2 * 8
    assert "time to first token:" in proc.stdout and "decode:" in proc.stdout
    dynamic = [r for r in rows(out, "recompiles.csv") if r["config"] == "dynamic cache/aot_eager"]
    assert dynamic and all("decode step" in r["where"] for r in dynamic)
    assert "advice: the dynamic cache grows with every token" in proc.stdout
    # the saved script, run plainly with TORCH_LOGS=recompiles, recompiles as often as we said
    script = out / "generate_dynamic_cache_aot_eager.py"
    env = {**os.environ, "TORCH_LOGS": "recompiles"}
    plain = subprocess.run(
        [sys.executable, str(script), str(tmp_path / "plain.jsonl")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert plain.returncode == 0, plain.stderr[-3000:]
    logged = len(re.findall(r"\[__recompiles\] Recompiling function", plain.stderr))
    assert logged == int(summary["dynamic"]["recompiles"]) == len(dynamic)


@pytest.mark.parametrize(
    "args, message",
    [
        (("hf:bert",), "is not a causal language model (an encoder"),
        (("hf:vit",), "is not a causal language model: it cannot generate text"),
        (("resnet18",), "profiles a Hugging Face causal language model"),
        ((*TINY_LLAMA, "--new-tokens", "1000000000"), "--new-tokens must be between 1 and 8,192"),
        ((*TINY_LLAMA, "--seq-len", "4000", "--new-tokens", "200"), "max_position_embeddings"),
        (
            (*TINY_LLAMA, "--batch-size", "65536", "--seq-len", "2000", "--hf-config", "max_position_embeddings=4096"),
            "key/value cache",
        ),
    ],
)
def test_what_cannot_generate_is_refused_before_anything_runs(tmp_path, args, message):
    proc = generate(*args, "--task", "generate", "--out", str(tmp_path / "r"), timeout=120)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr[-2000:]
    assert not (tmp_path / "r").exists()
