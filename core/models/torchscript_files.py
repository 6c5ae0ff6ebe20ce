"""TorchScript files: recognised, and profiled eagerly only (torch.compile does not take
ScriptModules); pickled whole modules are refused."""

from __future__ import annotations

import os
import traceback
import zipfile

from core.models.base import TORCHSCRIPT_NOTE, LoadedModel, ModelLoadError, short_error
from core.vocab.config import ModelSpec


def load(path: str, spec: ModelSpec) -> LoadedModel:
    import torch

    try:
        module = torch.jit.load(path, map_location="cpu")
    except Exception as exc:
        kind = _guess_pickle_kind(path)
        raise ModelLoadError(
            f"not a TorchScript file ({short_error(exc)}). {kind}", file=path, detail=traceback.format_exc()
        ) from None
    shape = (spec.batch_size, 3, spec.image_size, spec.image_size)
    return LoadedModel(
        module,
        (torch.randn(*shape),),
        "torchscript",
        f"{os.path.basename(path)} (TorchScript)",
        compile_supported=False,
        note=TORCHSCRIPT_NOTE,
    )


def _guess_pickle_kind(path: str) -> str:
    try:
        if zipfile.is_zipfile(path):
            return (
                "It looks like a file from torch.save: a state_dict is loaded as --weights for a "
                "torchvision model; a pickled whole module would need torch.load(weights_only=False), "
                "which can run arbitrary code, so it is refused. Save it with torch.export.save or "
                "write a model file instead."
            )
    except OSError:
        pass
    return "Supported files: .py model files, .pt2 (torch.export.save) and TorchScript (torch.jit.save)."
