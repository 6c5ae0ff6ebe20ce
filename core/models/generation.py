"""A causal language model's generation, as a standalone script: checked before anything runs
(`check`), then written (`write_script`) for core.run.generation to profile as any script.

The script imports torch and transformers only (never this product), builds the model from the
config written beside it (a `hf:FOLDER` with weights: from those weights), compiles its forward
as Hugging Face's guide does, and generates with the settings it reads from a JSON literal: data
only, never code. It is saved into the report folder (`generate_<config>.py`) so a user can read
and re-run exactly what was measured. No Qt.
"""

from __future__ import annotations

import json
import os

from core.models.base import ModelLoadError
from core.vocab.generation import KV_MEMORY_SHARE, GenerationSpec, kv_cache_bytes

ENCODER_TYPES = frozenset(
    (
        "bert",
        "roberta",
        "xlm-roberta",
        "xlm-roberta-xl",
        "electra",
        "ernie",
        "camembert",
        "data2vec-text",
        "roformer",
        "megatron-bert",
        "rembert",
        "xmod",
        "big_bird",
        "bert-generation",
        "roc_bert",
    )
)
"""Encoder types whose causal-LM class exists (BertLMHeadModel) but is a decoder only with
is_decoder=True: built from their config they attend both ways and do not generate text."""

SCRIPT = '''\
"""Text generation as compile-profiler measured it: {summary}

Run it with the same torch and transformers: python {name} RESULTS.jsonl
(one JSON line per generation: the time from calling generate to each new token).
"""

import json
import os
import sys
import time

import torch
from transformers import AutoConfig, AutoModelForCausalLM

SETTINGS = json.loads({settings!r})


class Stamps:
    """A streamer: generate() hands it the prompt, then each new token as it is made."""

    def __init__(self):
        self.times = []

    def put(self, value):
        self.times.append(time.perf_counter())

    def end(self):
        pass


def main(results_path):
    torch.manual_seed(0)
    if SETTINGS["weights_folder"]:
        model = AutoModelForCausalLM.from_pretrained(
            SETTINGS["weights_folder"], local_files_only=True, use_safetensors=True
        )
    else:
        # the type's defaults (or the folder's config) with the overrides given to the constructor,
        # so that the fields derived from them (a layer type per layer) follow
        fields = dict(SETTINGS["config"]["fields"])
        fields.update(dict(SETTINGS["config"]["overrides"]))
        if "num_hidden_layers" in dict(SETTINGS["config"]["overrides"]):
            fields.pop("layer_types", None)
        config = AutoConfig.for_model(SETTINGS["config"]["model_type"], **fields)
        config.use_cache = True
        model = AutoModelForCausalLM.from_config(config)
    model.eval().to(SETTINGS["device"])
    for key, value in SETTINGS["dynamo_config"]:
        setattr(torch._dynamo.config, key, value)
    model.forward = torch.compile(model.forward, **SETTINGS["compile"])
    settings = dict(
        max_new_tokens=SETTINGS["new_tokens"],
        min_new_tokens=SETTINGS["new_tokens"],
        do_sample=False,
        pad_token_id=SETTINGS["pad_token_id"],
    )
    if SETTINGS["cache"] == "static":
        settings["cache_implementation"] = "static"
    cuda = SETTINGS["device"] == "cuda"
    generator = torch.Generator().manual_seed(0)
    with open(results_path, "a") as out, torch.no_grad():
        for prompt_len in SETTINGS["prompt_lens"]:
            ids = torch.randint(0, SETTINGS["vocab_size"], (SETTINGS["batch_size"], prompt_len), generator=generator)
            ids = ids.to(SETTINGS["device"])
            for g in range(SETTINGS["warmup"] + SETTINGS["generations"]):
                stamps = Stamps()
                if cuda:
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
                made = model.generate(ids, attention_mask=torch.ones_like(ids), streamer=stamps, **settings)
                if cuda:
                    torch.cuda.synchronize()
                t1 = time.perf_counter()
                record = {{
                    "pid": os.getpid(),
                    "prompt_len": prompt_len,
                    "generation": g,
                    "warmup": g < SETTINGS["warmup"],
                    "tokens": int(made.shape[1] - prompt_len),
                    "stamps": [t - t0 for t in stamps.times[1:]],
                    "total_s": t1 - t0,
                }}
                out.write(json.dumps(record) + "\\n")
                out.flush()
                print(f"prompt {{prompt_len}}, generation {{g + 1}}: {{record['tokens']}} tokens in {{t1 - t0:.3f}} s")


if __name__ == "__main__":
    main(sys.argv[1])
'''


def check(spec: GenerationSpec) -> dict:
    """What the script needs of the model, known before anything runs: ModelLoadError when the
    model cannot generate (not a causal language model: the class to use instead is named), the
    prompt and new tokens do not fit its positions, or the key/value cache would not fit in memory.
    Returns {"config": the config (use_cache on), "model_type", "vocab_size", "pad_token_id",
    "kv_bytes", "weights_folder"}."""
    from core.models.hf_config import build_config, parse_source, text_config
    from core.models.hf_memory import memory_available
    from core.models.hf_models import check_weights_files

    source = parse_source(spec.source, "")
    config = build_config(source, spec.hf_config)
    from transformers import AutoModelForCausalLM

    encoder = config.model_type in ENCODER_TYPES and not getattr(config, "is_decoder", False)
    if encoder or type(config) not in AutoModelForCausalLM._model_mapping:
        raise ModelLoadError(
            f"{source.label} ({config.model_type}) is not a causal language model"
            + (" (an encoder: it attends both ways)" if encoder else "")
            + ": it cannot generate text. "
            "Profile a decoder such as hf:gpt2, hf:llama or hf:qwen2 (AutoModelForCausalLM), or this model "
            "with --task inference."
        )
    from core.models.hf_memory import check_fits

    check_fits(source.label, AutoModelForCausalLM, config, spec.device)  # the weights, before the cache
    text = text_config(config)
    for sub in {id(c): c for c in (config, text)}.values():
        if hasattr(sub, "use_cache"):
            sub.use_cache = True  # build_config turns it off for one forward; generation needs it
    longest = max(spec.prompt_lens) + spec.new_tokens
    positions = getattr(text, "max_position_embeddings", None) or getattr(text, "n_positions", None)
    if positions and longest > positions:
        raise ModelLoadError(
            f"a prompt of {max(spec.prompt_lens):,} tokens and {spec.new_tokens:,} new ones need {longest:,} positions; "
            f"{source.label} has {positions:,} (max_position_embeddings). Use a shorter --seq-len or fewer "
            "--new-tokens, or raise it with --hf-config max_position_embeddings=N."
        )
    layers = getattr(text, "num_hidden_layers", None) or getattr(text, "n_layer", 1)
    heads = getattr(text, "num_attention_heads", None) or getattr(text, "n_head", 1)
    kv_heads = getattr(text, "num_key_value_heads", None) or heads
    hidden = getattr(text, "hidden_size", None) or getattr(text, "n_embd", 1)
    head_dim = getattr(text, "head_dim", None) or max(1, hidden // max(1, heads))
    kv = kv_cache_bytes(int(layers), int(kv_heads), int(head_dim), spec.batch_size, longest)
    limit = memory_available(spec.device)[0] * KV_MEMORY_SHARE
    if kv > limit:
        raise ModelLoadError(
            f"the key/value cache of {spec.batch_size} x {longest:,} positions would take about {kv / 2**30:,.1f} GB "
            f"(2 x {layers} layers x {kv_heads} heads x {head_dim} x 4 bytes a position), more than half of the "
            "memory available; use a smaller --batch-size, --seq-len or --new-tokens."
        )
    weights = source.target if source.is_folder and check_weights_files(source.target) else ""
    from core.models.hf_config import _folder_config, _type_config, apply_overrides

    base = _folder_config(source.target) if source.is_folder else _type_config(source.target)
    base_fields = (
        {}
        if not source.is_folder
        else {k: v for k, v in base.to_dict().items() if k not in ("model_type", "transformers_version")}
    )
    pairs = apply_overrides(base, spec.hf_config, config.model_type)
    config_data = {"model_type": config.model_type, "fields": base_fields, "overrides": [list(p) for p in pairs]}
    pad = getattr(text, "pad_token_id", None)
    if pad is None:
        pad = getattr(text, "eos_token_id", None)
    if isinstance(pad, (list, tuple)):
        pad = pad[0] if pad else 0
    return {
        "config": config,
        "model_type": config.model_type,
        "vocab_size": int(getattr(text, "vocab_size", 0) or 0),
        "pad_token_id": int(pad or 0),
        "kv_bytes": kv,
        "weights_folder": weights,
        "config_data": {} if weights else config_data,
    }


def write_script(
    spec: GenerationSpec, checked: dict, compile_kwargs: dict, dynamo_config, folder: str, name: str
) -> str:
    """Write the script `name` into `folder` (the model's config inside it, as data); its path."""
    settings = {
        "weights_folder": checked["weights_folder"],
        "config": checked["config_data"],
        "device": spec.device,
        "compile": compile_kwargs,
        "dynamo_config": [list(p) for p in dynamo_config],
        "new_tokens": spec.new_tokens,
        "pad_token_id": checked["pad_token_id"],
        "vocab_size": checked["vocab_size"],
        "batch_size": spec.batch_size,
        "prompt_lens": list(spec.prompt_lens),
        "warmup": spec.warmup,
        "generations": spec.generations,
        "cache": spec.cache,
    }
    summary = f"{spec.source}, {spec.cache} cache, torch.compile({', '.join(f'{k}={v!r}' for k, v in compile_kwargs.items())})"
    text = SCRIPT.format(summary=summary.replace('"""', "'''"), name=name, settings=json.dumps(settings))
    path = os.path.join(folder, name)
    with open(path, "x", encoding="utf-8") as fh:
        fh.write(text)
    return path
