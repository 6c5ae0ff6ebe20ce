"""How big a Hugging Face model is before it is built, and whether it fits.

Default configs can be huge (llama's is about 7 billion parameters, 25 GiB in float32). The model
is built on the meta device, which allocates nothing (a 7-billion-parameter model takes a fraction
of a second), to count its parameters and weight bytes; one whose weights would take more than
WEIGHTS_SHARE of the memory available is refused with a message naming its size, this machine's
memory and an override that would fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.models import ModelLoadError

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


def estimate_size(cls, config) -> SizeEstimate | None:
    """Parameters and weight bytes (buffers included) of the model, counted on the meta device:
    nothing is allocated, a 7-billion-parameter model takes a fraction of a second. None when the
    model cannot be built there."""
    import torch

    from core.models.hf_config import from_config

    try:
        with torch.device("meta"):
            model = from_config(cls, config)
    except Exception:
        return None
    params = list(model.parameters())
    tensors = params + list(model.buffers())
    dtypes = sorted({str(p.dtype).replace("torch.", "") for p in params}) or ["float32"]
    return SizeEstimate(
        sum(p.numel() for p in params),
        sum(t.numel() * t.element_size() for t in tensors),
        "/".join(dtypes),
        type(model).__name__,
    )


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
