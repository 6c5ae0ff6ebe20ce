"""How big a Hugging Face model is before it is built, and whether it fits.

Default configs can be huge (llama's is about 7 billion parameters, 25 GiB in float32). The model
is built on the meta device, which allocates nothing (a 7-billion-parameter model takes a fraction
of a second), to count its parameters and weight bytes
(past FULL_BUILD_LAYERS layers it is built at a few layers only and the rest multiplied out, so a
config of 100,000 layers is sized in about a second, not built for minutes); one whose weights would take more than
WEIGHTS_SHARE of the memory available is refused with a message naming its size, this machine's
memory and an override that would fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models.base import ModelLoadError

GIB = 1024**3
# Weights may take at most this share of the memory available: activations, the compiled
# graphs' buffers and compiling itself need the rest (inductor's compile alone peaks at a few GiB).
WEIGHTS_SHARE = 0.5


@dataclass(frozen=True)
class SizeEstimate:
    parameters: int
    bytes: int
    dtype: str
    model_class: str


# Layer counts up to this are built whole on the meta device (a fraction of a second); above
# it the model is built at SAMPLE_LAYERS and twice that, and the layers' share multiplied out:
# building 100,000 layers even on the meta device took minutes and gigabytes.
SAMPLE_LAYERS = 12  # a multiple of the periods of interleaved layer kinds (2, 3, 4, 6)
FULL_BUILD_LAYERS = 2 * SAMPLE_LAYERS
# Past this many layers a config whose size cannot be computed is refused rather than built.
MAX_UNSIZED_LAYERS = 256


def layer_counts(config) -> dict[str, int]:
    """{field as set with --hf-config: its layer count} for the config's layer-count fields,
    one per attribute (gpt2's n_layer and num_hidden_layers are one)."""
    out, targets = {}, set()
    attribute_map = getattr(config, "attribute_map", {}) or {}
    for key in LAYER_FIELDS:
        value = getattr(config, key, None)
        target = attribute_map.get(key, key)
        if isinstance(value, int) and not isinstance(value, bool) and target not in targets:
            targets.add(target)
            out[key] = value
    return out


def _built_size(cls, config) -> tuple[int, int, list[str], str]:
    """(parameters, bytes, dtypes, class name) of the model built whole on the meta device."""
    import torch

    from core.models.hf_config import from_config

    with torch.device("meta"):
        model = from_config(cls, config)
    params = list(model.parameters())
    tensors = params + list(model.buffers())
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in params}) or ["float32"]
    return (
        sum(p.numel() for p in params),
        sum(t.numel() * t.element_size() for t in tensors),
        dtypes,
        type(model).__name__,
    )


def _with_layers(config, counts: dict[str, int]):
    import copy

    smaller = copy.deepcopy(config)
    for key, value in counts.items():
        setattr(smaller, key, value)
    return smaller


def _extrapolated_size(cls, config, large: dict[str, int]) -> tuple[int, int, list[str], str]:
    """The size with the layer counts in `large`, computed, not built: the model at
    SAMPLE_LAYERS in each of them, then each at twice that; every further layer of a field adds
    what its SAMPLE_LAYERS added, divided by SAMPLE_LAYERS (exact when its layers repeat with a
    period dividing SAMPLE_LAYERS)."""
    k = SAMPLE_LAYERS
    base = _built_size(cls, _with_layers(config, dict.fromkeys(large, k)))
    params, nbytes = base[0], base[1]
    for key, count in large.items():
        more = _built_size(cls, _with_layers(config, {**dict.fromkeys(large, k), key: 2 * k}))
        dp, db = more[0] - base[0], more[1] - base[1]
        if dp < 0 or db < 0:
            raise ValueError(f"{key}: more layers made the model smaller")
        params += (count - k) * dp // k
        nbytes += (count - k) * db // k
    return params, nbytes, base[2], base[3]


def estimate_size(cls, config) -> SizeEstimate | None:
    """Parameters and weight bytes (buffers included) of the model, on the meta device (nothing
    is allocated): built whole up to FULL_BUILD_LAYERS layers, past that computed from two small
    builds per layer field (bounded in time and memory whatever the layer count). None when the
    model cannot be sized so."""
    large = {k: v for k, v in layer_counts(config).items() if v > FULL_BUILD_LAYERS}
    try:
        if large:
            try:
                params, nbytes, dtypes, name = _extrapolated_size(cls, config, large)
            except Exception:  # a config whose layer lists follow its count (layer_types, say)
                if max(large.values()) > MAX_UNSIZED_LAYERS:
                    return None
                params, nbytes, dtypes, name = _built_size(cls, config)
        else:
            params, nbytes, dtypes, name = _built_size(cls, config)
    except Exception:
        return None
    return SizeEstimate(params, nbytes, "/".join(dtypes), name)


def memory_available(device: str = "cpu") -> tuple[int, int, str]:
    """(bytes available, bytes in all, where) for the weights: the machine's memory (models are
    built on the CPU first), or the GPU's when the job runs there and it has less."""
    import psutil

    vm = psutil.virtual_memory()
    result = (int(vm.available), int(vm.total), "this machine")
    if device == "cuda":
        import torch

        if torch.cuda.is_available():
            free, total = torch.cuda.mem_get_info()
            if free < result[0]:
                result = (int(free), int(total), f"the GPU ({torch.cuda.get_device_name(0)})")
    return result


LAYER_FIELDS = ("num_hidden_layers", "num_decoder_layers", "decoder_layers", "encoder_layers", "num_encoder_layers")


def smaller_overrides(config) -> list[str]:
    """--hf-config items that cut the layer count to 2 (the decoder's too, for encoder-decoders)."""
    from core.models.hf_config import config_fields

    fields = config_fields(config)
    items = []
    seen_values = set()
    for key in LAYER_FIELDS:
        value = fields.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 2:
            target = config.attribute_map.get(key, key) if hasattr(config, "attribute_map") else key
            if target in seen_values:
                continue
            seen_values.add(target)
            items.append(f"{key}=2")
    return items


def check_fits(label: str, cls, config, device: str = "cpu") -> SizeEstimate | None:
    """Refuse, before building, a model whose weights would not fit: the message names the size,
    the memory here and an override that would fit."""
    size = estimate_size(cls, config)
    if size is None:
        counts = layer_counts(config)
        if counts and max(counts.values()) > MAX_UNSIZED_LAYERS:  # building it to find out would take minutes
            key = max(counts, key=counts.get)
            raise ModelLoadError(
                f"{label} has {counts[key]:,} layers ({key}), and its size cannot be computed without building "
                f"it whole, which at that many layers takes minutes and gigabytes; configs of up to "
                f"{MAX_UNSIZED_LAYERS} layers are checked that way. Profile it smaller: "
                + " ".join(f"--hf-config {i}" for i in smaller_overrides(config))
                + "."
            )
        return None
    available, total, where = memory_available(device)
    if size.bytes <= WEIGHTS_SHARE * available:
        return size
    message = (
        f"{label} ({size.model_class}) has {count_text(size.parameters)} parameters: "
        f"{size.bytes / GIB:.1f} GiB of {size.dtype} weights, and {where} has {available / GIB:.1f} GiB "
        f"available ({total / GIB:.1f} GiB in all); weights may take at most half of it, the rest is for "
        f"activations and compiling."
    )
    items = smaller_overrides(config)
    if items:
        import copy

        smaller = copy.deepcopy(config)
        for item in items:
            key, _, value = item.partition("=")
            setattr(smaller, key, int(value))
        small = estimate_size(cls, smaller)
        flags = " ".join(f"--hf-config {i}" for i in items)
        fits = small is not None and small.bytes <= WEIGHTS_SHARE * available
        size_text = f" ({count_text(small.parameters)} parameters, {small.bytes / GIB:.2f} GiB)" if small else ""
        message += f" Profile it smaller: {flags}{size_text}" + (
            "." if fits else ", with a smaller hidden_size too (--hf-config hidden_size=...)."
        )
    else:
        message += " Profile it smaller with --hf-config (e.g. hidden_size=..., num_hidden_layers=...)."
    raise ModelLoadError(message)


def count_text(n: int) -> str:
    """6.61 billion, 535.8 million, 38,949."""
    if n >= 1e9:
        return f"{n / 1e9:.2f} billion"
    if n >= 1e6:
        return f"{n / 1e6:.1f} million"
    return f"{n:,}"
