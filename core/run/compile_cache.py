"""Each compile config compiles in an inductor cache of its own.

Inductor keeps what it compiles on disk (TORCHINDUCTOR_CACHE_DIR, /tmp/torchinductor_$USER by
default): the FX-graph cache, keyed by the config, and the C++/Triton kernels, keyed by their
source. Two configs of one model share most kernels, so in one cache the config profiled second
reused the first's kernels and its "cold" compile (an FX-graph cache miss) read half the first's:
on the verdicts bench, mnasnet0_5's max-autotune-no-cudagraphs 8.2 s after inductor's 16.3 s, and
that difference alone made a tie a call read "clear". Here each config label has its own folder
under the product's cache folder (core.run.torch_info.cache_folder), shared by every run and
process of that config: a config's first compile is cold in its own cache whatever ran before it,
a later one finds its own FX-graph entries (the cache state the report shows: hit or miss), and
no config's compile time depends on which other config ran first.

Only the inductor backend compiles kernels; the others keep the machine's default cache.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re

from core.run.torch_info import cache_folder
from core.vocab.config import CompileConfig, JobSpec

CACHED_BACKENDS = ("inductor",)


def config_cache_dir(config: CompileConfig) -> str | None:
    """The inductor cache folder of `config` (None for a backend that compiles no kernels):
    a readable slug of its label and a digest of the whole label (labels are unique per config)."""
    if config.backend not in CACHED_BACKENDS:
        return None
    label = config.label
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", label)[:60]
    digest = hashlib.sha256(label.encode()).hexdigest()[:10]
    return os.path.join(cache_folder(), "inductor", f"{slug}-{digest}")


def with_config_cache(spec: JobSpec) -> JobSpec:
    """`spec` with its config's cache folder (JobSpec.compile_cache_dir), unless it names one. A
    folder that cannot be made or written (a read-only home; inductor would fail the compile on it)
    or that a symlink leads out of the product's cache folder leaves the machine's default cache."""
    if spec.compile_cache_dir:
        return spec
    folder = config_cache_dir(spec.config)
    if folder is None:
        return spec
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return spec
    if not os.access(folder, os.W_OK | os.X_OK):
        return spec
    # a folder linked elsewhere (a planted symlink) would have inductor write outside the product's
    # cache folder: it keeps the machine's default instead
    if os.path.realpath(folder) != os.path.join(os.path.realpath(cache_folder()), "inductor", os.path.basename(folder)):
        return spec
    return dataclasses.replace(spec, compile_cache_dir=folder)
