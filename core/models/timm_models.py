"""timm models by name (`timm:NAME`, `timm:NAME.TAG`), built with pretrained=False: nothing is
ever downloaded. The input is one image batch of the size the model's own pretrained config
names (timm's `input_size`, e.g. 3×224×224 for resnet50, 3×384×384 for vit_base_patch16_384);
`--image-size` other than its default 224 asks for another size (models whose size is fixed,
such as ViTs, are built for it)."""

from __future__ import annotations

import traceback

from core.models.base import TIMM_PREFIX, LoadedModel, ModelLoadError, close_matches, require_package, short_error
from core.vocab.config import ModelSpec
from core.vocab.limits import LIMITS

DEFAULT_IMAGE_SIZE = int(LIMITS["image_size"].default)


def _timm():
    return require_package("timm", "a timm model")


def model_names() -> list[str]:
    """Every timm architecture name (timm.list_models(); no tags, nothing built)."""
    return list(_timm().list_models())


def families() -> dict[str, str]:
    """Every timm model name → the timm module defining it (resnet, vision_transformer, ...)."""
    timm = _timm()
    found: dict[str, str] = {}
    for module in timm.list_modules():
        for name in timm.list_models(module=module):
            found.setdefault(name, module)
    return found


def name_of(source: str) -> str:
    return source[len(TIMM_PREFIX) :] if source.startswith(TIMM_PREFIX) else source


def check(spec: ModelSpec) -> tuple[int, int, int]:
    """The input size (C, H, W) the model will get, or ModelLoadError for a name timm does not
    know (with close matches) or a missing timm. Builds nothing."""
    timm = _timm()
    from timm.models import get_pretrained_cfg, split_model_name_tag

    name = name_of(spec.source)
    arch, tag = split_model_name_tag(name)
    if not name or not timm.is_model(arch):
        close = close_matches(arch, model_names())
        hint = f" Close matches: {', '.join(TIMM_PREFIX + c for c in close)}." if close else ""
        raise ModelLoadError(
            f"timm has no model {name!r}.{hint} timm.list_models() lists them all "
            "(the app's model list shows them under timm)."
        )
    try:
        cfg = get_pretrained_cfg(name) if tag else get_pretrained_cfg(arch)
    except RuntimeError:  # timm: "Invalid pretrained tag"
        cfg = None
    if tag and cfg is None:
        tags = [t.split(".", 1)[1] for t in timm.list_pretrained(arch + ".*")]
        raise ModelLoadError(
            f"timm's {arch} has no pretrained config tagged {tag!r}"
            + (f"; its tags: {', '.join(tags)}." if tags else "; use the name without a tag.")
        )
    if spec.batch_size < 1 or spec.image_size < 16:
        raise ModelLoadError("batch size must be at least 1 and image size at least 16.")
    channels, height, width = tuple(cfg.input_size) if cfg is not None and cfg.input_size else (3, 224, 224)
    if spec.image_size != DEFAULT_IMAGE_SIZE:
        height = width = spec.image_size
    return int(channels), int(height), int(width)


def builder_kwargs(spec: ModelSpec, size: tuple[int, int] | None = None) -> dict:
    """timm.create_model's keyword arguments for this spec: no pretrained weights, and the image
    size for models whose position embeddings are sized for it (ViT-like). A bundle's repro.py
    builds the model with the same."""
    from timm.models import get_pretrained_cfg

    height, width = size if size is not None else check(spec)[1:]
    cfg = get_pretrained_cfg(name_of(spec.source))
    kwargs: dict = {"pretrained": False}
    if cfg is not None and cfg.fixed_input_size and cfg.input_size and tuple(cfg.input_size[1:]) != (height, width):
        kwargs["img_size"] = (height, width)  # ViT-like: position embeddings sized for the input
    return kwargs


def load(spec: ModelSpec) -> LoadedModel:
    import torch

    channels, height, width = check(spec)
    timm = _timm()
    from timm.models import get_pretrained_cfg

    name = name_of(spec.source)
    cfg = get_pretrained_cfg(name)  # check() made sure a tag is valid
    kwargs = builder_kwargs(spec, (height, width))
    try:
        model = timm.create_model(name, **kwargs)
    except TypeError as exc:
        if "img_size" not in kwargs:
            raise
        raise ModelLoadError(
            f"timm's {name} takes only {cfg.input_size[1]}×{cfg.input_size[2]} images and "
            f"cannot be built for {height}×{width} ({short_error(exc)}); leave --image-size at "
            f"its default."
        ) from None
    except Exception as exc:
        raise ModelLoadError(
            f"timm could not build {name}: {short_error(exc)}", detail=traceback.format_exc()
        ) from None
    if spec.weights:
        from core.models.torchvision_models import _load_weights

        _load_weights(model, spec.weights)
    generator = torch.Generator().manual_seed(0)
    inputs = (torch.randn(spec.batch_size, channels, height, width, generator=generator),)
    family = families().get(name.split(".")[0], "timm")
    origin = "its pretrained config" if spec.image_size == DEFAULT_IMAGE_SIZE else "--image-size"
    return LoadedModel(
        model,
        inputs,
        "timm",
        f"timm {name} ({family}, pretrained=False, input {channels}×{height}×{width} from {origin})",
    )
