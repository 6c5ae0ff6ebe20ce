"""torchvision models by name, built with weights=None (nothing is ever downloaded), each called with
the inputs it takes: one image batch (classification, segmentation, quantized), one clip batch
(video), a list of 3×H×W images in eval mode (detection, keypoint and instance segmentation:
they return a list of dicts of boxes, labels, scores, keypoints, masks), two image batches (optical
flow: RAFT returns a list of flow estimates, one per refinement)."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from core.models.base import VIDEO_FRAMES, LoadedModel, ModelLoadError, close_matches, require_package
from core.vocab.config import ModelSpec

FAMILIES = ("video", "segmentation", "detection", "optical_flow", "quantization")


def model_names() -> list[str]:
    torchvision = require_package("torchvision", "a torchvision model")
    return sorted(torchvision.models.list_models())


def families() -> dict[str, str]:
    """Every torchvision model name → its family: classification, video, segmentation, detection,
    keypoint detection, instance segmentation, optical flow, quantization. Nothing is built."""
    require_package("torchvision", "a torchvision model")
    import torchvision.models as tvm

    found = {name: "classification" for name in tvm.list_models()}
    for family in FAMILIES:
        for name in tvm.list_models(module=getattr(tvm, family)):
            found[name] = _detailed_family(name, family)
    return found


def _unknown_name(name: str, names) -> ModelLoadError:
    close = close_matches(name, sorted(names))
    hint = f" Close matches: {', '.join(close)}." if close else ""
    return ModelLoadError(
        f"{name!r} is neither a file nor a torchvision model.{hint} "
        "Give a torchvision name (e.g. resnet18), timm:NAME, hf:TYPE or hf:FOLDER, or a path to a .py, "
        ".pt2 or TorchScript file."
    )


def _detailed_family(name: str, family: str) -> str:
    if family == "detection":
        if name.startswith("keypointrcnn"):
            return "keypoint detection"
        if name.startswith("maskrcnn"):
            return "instance segmentation"
    return family.replace("_", " ")


def check(spec: ModelSpec, names: Sequence[str] | None = None) -> str:
    """The model's family, or ModelLoadError for an unknown name (with close matches) or
    input settings the family cannot take. Builds nothing. `names`: every torchvision model
    name, when the caller has them without importing torchvision (`model_names()` as cached):
    a name not among them is refused before the import."""
    if names is not None and spec.source not in names:
        raise _unknown_name(spec.source, names)
    found = families()
    if spec.source not in found:
        raise _unknown_name(spec.source, found)
    family = found[spec.source]
    if spec.batch_size < 1 or spec.image_size < 16:
        raise ModelLoadError("batch size must be at least 1 and image size at least 16.")
    if family == "optical flow" and (spec.image_size % 8 or spec.image_size < 128):
        raise ModelLoadError(
            f"{spec.source} (RAFT) needs an image size that is a multiple of 8 and at least "
            f"128 (its correlation pyramid halves the 1/8-scale features three times), "
            f"not {spec.image_size}."
        )
    return family


def builder_kwargs(name: str) -> dict[str, Any]:
    """The keyword arguments the model is built with: no weights (nor backbone weights, which
    segmentation and detection builders would otherwise fetch by default); quantized
    models unquantized. A bundle's repro.py builds the model with the same."""
    import torchvision

    kwargs: dict[str, Any] = {"weights": None}
    params = inspect.signature(torchvision.models.get_model_builder(name)).parameters
    if "weights_backbone" in params:
        kwargs["weights_backbone"] = None
    if families().get(name) == "quantization":
        kwargs["quantize"] = False
    return kwargs


def load(spec: ModelSpec) -> LoadedModel:
    import torch
    import torchvision

    family = check(spec)
    # Never a download (no model hub here): no weights, and no backbone weights either,
    # which segmentation and detection builders would otherwise fetch by default.
    model = torchvision.models.get_model(spec.source, **builder_kwargs(spec.source))
    if spec.weights:
        _load_weights(model, spec.weights)
    generator = torch.Generator().manual_seed(0)
    size, batch = spec.image_size, spec.batch_size
    if family == "video":
        size = 112 if size == 224 else size
        inputs: tuple = (torch.randn(batch, 3, VIDEO_FRAMES, size, size, generator=generator),)
        what = f"batch×3×{VIDEO_FRAMES}×H×W clips"
    elif family in ("detection", "keypoint detection", "instance segmentation"):
        # In train mode these models want targets too; eval mode is what inference profiles. Images
        # in [0, 1], as the models' own transform expects (it normalises and resizes them).
        model.eval()
        inputs = ([torch.rand(3, size, size, generator=generator) for _ in range(batch)],)
        what = "a list of 3×H×W images"
    elif family == "optical flow":
        inputs = tuple(torch.rand(batch, 3, size, size, generator=generator) * 2 - 1 for _ in range(2))
        what = "two image batches"
    else:
        inputs = (torch.randn(batch, 3, size, size, generator=generator),)
        what = ""
    description = f"torchvision {spec.source} ({family}{', ' + what if what else ''}, weights=None)"
    return LoadedModel(model, inputs, "torchvision", description)


def _load_weights(model, path: str) -> None:
    import torch

    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ModelLoadError(
            f"cannot read weights ({exc}). Weights must be a state_dict saved with "
            "torch.save(model.state_dict(), path).",
            file=path,
        ) from None
    if isinstance(state, dict) and "state_dict" in state and isinstance(state["state_dict"], dict):
        state = state["state_dict"]
    try:
        model.load_state_dict(state)
    except Exception as exc:
        raise ModelLoadError(f"weights do not fit this model: {str(exc).splitlines()[0]}", file=path) from None
