"""`python -m tests.bench generation`: tiny causal LMs built from their configs (Llama, GPT-2, Qwen2,
Mistral with a sliding window, Mixtral's mixture of experts) generating with the static and the
dynamic cache under aot_eager and inductor (`--backends`), eager against compiled: time to first
token, decode per token, the verdict, and the recompiles we name against those torch logs
(TORCH_LOGS=recompiles) for the same saved script."""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
import tempfile

from core import PROJECT_ROOT

SMALL = ["hidden_size=64", "intermediate_size=128", "num_hidden_layers=2", "num_attention_heads=4", "vocab_size=512"]
MODELS = {
    "llama": ["hf:llama", *SMALL, "num_key_value_heads=2"],
    "gpt2": ["hf:gpt2", "n_embd=64", "n_layer=2", "n_head=4", "vocab_size=512"],
    "qwen2": ["hf:qwen2", *SMALL, "num_key_value_heads=2"],
    "mistral (sliding window 8)": ["hf:mistral", *SMALL, "num_key_value_heads=2", "sliding_window=8"],
    "mixtral (4 experts, top 2)": ["hf:mixtral", *SMALL, "num_key_value_heads=2", "num_local_experts=4"],
}


def bench_generation(args=()) -> None:
    from tests.bench import say

    backends = args[args.index("--backends") + 1].split(",") if "--backends" in args else ["aot_eager", "inductor"]
    folder = tempfile.mkdtemp(prefix="bench-generation-")
    for name, (source, *overrides) in MODELS.items():
        out = os.path.join(folder, re.sub(r"\W+", "_", name))
        command = [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "profile", source, "--task", "generate"]
        for o in overrides:
            command += ["--hf-config", o]
        command += ["--cache", "static", "--cache", "dynamic", "--new-tokens", "32", "--seq-len", "16"]
        command += ["--generations", "5", "--quiet", "--out", out]
        for b in backends:
            command += ["--backend", b]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if proc.returncode != 0:
            say(name, f"failed: {proc.stderr[-400:]}")
            continue
        with open(os.path.join(out, "summary.csv")) as fh:
            for row in csv.DictReader(fh):
                script = os.path.join(
                    out, "generate_" + re.sub(r"[^A-Za-z0-9]+", "_", row["config"]).strip("_") + ".py"
                )
                plain = subprocess.run(
                    [sys.executable, script, os.path.join(folder, "plain.jsonl")],
                    capture_output=True,
                    text=True,
                    timeout=1800,
                    env={**os.environ, "TORCH_LOGS": "recompiles"},
                )
                logged = len(re.findall(r"\[__recompiles\] Recompiling function", plain.stderr))
                say(
                    f"{name}, {row['config']}",
                    f"TTFT {float(row['ttft_ms_compiled']):.2f} ms compiled / {float(row['ttft_ms_eager']):.2f} eager; "
                    f"decode {float(row['decode_ms_per_token_compiled']):.2f} / {float(row['decode_ms_per_token_eager']):.2f} "
                    f"ms a token, {float(row['decode_speedup']):.2f}x [{float(row['decode_speedup_ci_low']):.2f}-"
                    f"{float(row['decode_speedup_ci_high']):.2f}] {row['verdict']} ({row['timing_grade']}); "
                    f"first generation {float(row['first_generation_s_compiled']):.1f} s; recompiles ours "
                    f"{row['recompiles']} / torch {logged}",
                )
