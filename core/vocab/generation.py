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
