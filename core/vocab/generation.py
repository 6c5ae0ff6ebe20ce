"""Text generation profiled (`profile hf:TYPE --task generate`): what one generation config is,
and what its script records.

A causal language model generates `new_tokens` tokens greedily (no early stop: `min_new_tokens`
equals `max_new_tokens`) after a prompt of `prompt_len` random tokens, `warmup` generations
first (the compile, the cache's first allocation), then `generations` timed ones, for each prompt
length. The model's forward is compiled as Hugging Face's guide does
(`model.forward = torch.compile(model.forward, ...)`), with the static key/value cache
(`cache_implementation="static"`) or the dynamic one. The run is a script of its own
(core.models.generation writes it: torch and transformers only), profiled as any script is
(core.run.script_process): as written, then under `set_stance("force_eager")`.

Each generation appends one JSON line to the results file the script is given: `pid`,
`prompt_len`, `generation`, `warmup`, `tokens` (generated), `stamps` (seconds from the call of
`generate` to each new token, from a streamer's `put`: the first is the time to first token),
`total_s`. No torch, no Qt.
"""

from __future__ import annotations

from dataclasses import dataclass

CACHES = ("static", "dynamic")
DEFAULT_NEW_TOKENS = 32
DEFAULT_GENERATIONS = 5
DEFAULT_WARMUP = 1
MAX_NEW_TOKENS = 8192
MAX_GENERATIONS = 1000
KV_MEMORY_SHARE = 0.5  # of the machine's memory, the most the key/value cache may be estimated to take


@dataclass(frozen=True)
class GenerationSpec:
    """One generation workload: the model (a Hugging Face source and its config overrides), the
    batch, the prompt lengths, the tokens to generate, the cache, and how many generations."""

    source: str
    hf_config: tuple[str, ...] = ()
    batch_size: int = 1
    prompt_lens: tuple[int, ...] = (16,)
    new_tokens: int = DEFAULT_NEW_TOKENS
    cache: str = "static"
    generations: int = DEFAULT_GENERATIONS
    warmup: int = DEFAULT_WARMUP
    device: str = "cpu"

    @property
    def label(self) -> str:
        return f"{self.cache} cache"


def kv_cache_bytes(layers: int, kv_heads: int, head_dim: int, batch: int, tokens: int, bytes_per_value: int = 4) -> int:
    """The key/value cache of `tokens` positions: a key and a value per layer, head and position."""
    return 2 * layers * kv_heads * head_dim * batch * tokens * bytes_per_value


def make_specs(
    source: str,
    hf_config: tuple[str, ...] = (),
    batch_size: int = 1,
    prompt_lens: tuple[int, ...] = (16,),
    new_tokens: int = DEFAULT_NEW_TOKENS,
    caches: tuple[str, ...] = ("static",),
    generations: int = DEFAULT_GENERATIONS,
    warmup: int = DEFAULT_WARMUP,
    device: str = "cpu",
    names: dict[str, str] | None = None,
) -> list[GenerationSpec]:
    """One GenerationSpec per cache, every figure checked against the one table of limits
    (core.vocab.limits) and this module's; a ConfigError names the setting as `names` calls it
    (the command line's flags by default, or the app's fields)."""
    from core.vocab.limits import ConfigError, check_limits

    said = {"new_tokens": "--new-tokens", "generations": "--generations", "warmup": "--warmup", "cache": "--cache"}
    said.update(names or {})
    if not source.startswith("hf:"):
        raise ConfigError(
            "generation profiles a Hugging Face causal language model (hf:TYPE, e.g. hf:gpt2, or hf:FOLDER), "
            f"not {source}."
        )
    if not prompt_lens:
        raise ConfigError("give at least one prompt length.")
    for n in prompt_lens:
        check_limits(seq_len=n)
    check_limits(batch_size=batch_size)
    for key, value, high in (
        ("new_tokens", new_tokens, MAX_NEW_TOKENS),
        ("generations", generations, MAX_GENERATIONS),
        ("warmup", warmup, MAX_GENERATIONS),
    ):
        low = 0 if key == "warmup" else 1
        if not low <= value <= high:
            raise ConfigError(f"{said[key]} must be between {low} and {high:,}, not {value:,}.")
    if not caches:
        raise ConfigError(f"choose at least one cache ({said['cache']}: {' or '.join(CACHES)}).")
    for cache in caches:
        if cache not in CACHES:
            raise ConfigError(f"{said['cache']} must be one of {', '.join(CACHES)}, not {cache!r}.")
    return [
        GenerationSpec(
            source, tuple(hf_config), batch_size, tuple(prompt_lens), new_tokens, cache, generations, warmup, device
        )
        for cache in dict.fromkeys(caches)
    ]
