"""torchvision models by name, built with weights=None (nothing is ever downloaded)."""
from __future__ import annotations

import inspect
from typing import Any

from core.config import ModelSpec
from core.models import LoadedModel, ModelLoadError, VIDEO_FRAMES


def model_names() -> list[str]:
    import torchvision

    return sorted(torchvision.models.list_models())


def _torchvision_family(name: str) -> str:
    import torchvision.models as tvm

    for family in ("video", "segmentation", "detection", "optical_flow", "quantization"):
        if name in tvm.list_models(module=getattr(tvm, family)):
            return family
    return "classification"


def load(spec: ModelSpec) -> LoadedModel:
    import torch
    import torchvision

    names = model_names()
    if spec.source not in names:
        close = [n for n in names if spec.source.lower() in n][:10]
        hint = f" Close matches: {', '.join(close)}." if close else ""
        raise ModelLoadError(
            f"{spec.source!r} is neither a file nor a torchvision model.{hint} "
            "Give a torchvision name (e.g. resnet18) or a path to a .py, .pt2 or TorchScript file."
        )
    family = _torchvision_family(spec.source)
    if family in ("detection", "optical_flow"):
        raise ModelLoadError(
            f"torchvision's {spec.source} takes "
            + ("a list of images" if family == "detection" else "two images")
            + ", not one tensor; wrap it in a model file (get_model / get_example_inputs) to profile it."
        )
    if spec.batch_size < 1 or spec.image_size < 16:
        raise ModelLoadError("batch size must be at least 1 and image size at least 16.")
    # Never a download (no model hub here): no weights, and no backbone weights either,
    # which segmentation builders would otherwise fetch by default.
    kwargs: dict[str, Any] = {"weights": None}
    params = inspect.signature(torchvision.models.get_model_builder(spec.source)).parameters
    if "weights_backbone" in params:
        kwargs["weights_backbone"] = None
    if family == "quantization":
        kwargs["quantize"] = False
    model = torchvision.models.get_model(spec.source, **kwargs)
    if spec.weights:
        _load_weights(model, spec.weights)
    if family == "video":
        size = 112 if spec.image_size == 224 else spec.image_size
        shape = (spec.batch_size, 3, VIDEO_FRAMES, size, size)
    else:
        shape = (spec.batch_size, 3, spec.image_size, spec.image_size)
    generator = torch.Generator().manual_seed(0)
    inputs = (torch.randn(*shape, generator=generator),)
    return LoadedModel(model, inputs, "torchvision", f"torchvision {spec.source} ({family}, weights=None)")


def _load_weights(model, path: str) -> None:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ModelLoadError(f"cannot read weights ({exc}). Weights must be a state_dict saved with "
                             "torch.save(model.state_dict(), path).", file=path) from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    try:
        model.load_state_dict(state)
    except Exception as exc:
        raise ModelLoadError(f"weights do not fit this model: {str(exc).splitlines()[0]}", file=path) from None
