"""Model sources: torchvision by name, timm by name (`timm:NAME`), Hugging Face by model type or
local folder (`hf:TYPE`, `hf:PATH`), Python model files, torch.export `.pt2` archives and
TorchScript files.

A Python model file defines `get_model()` (an nn.Module or a callable) and
`get_example_inputs()` (a tuple of inputs); optionally `get_input_variants()` (a list of input
tuples, for shape sweeps). `FILE.py:NAME` picks the factory `NAME()` instead of `get_model()`. Every failure
(sys.exit() included) becomes a `ModelLoadError` naming the file, the line and the problem.

A `.pt2` archive is inspected before torch.export.load, which would unpickle, and so run, what a
crafted archive holds: one that would unpickle anything is refused (export_archives).

One module per source: torchvision_models, timm_models, hf_models (with hf_inputs),
python_files, export_archives, torchscript_files; values holds what inputs and outputs may be
(nested containers, keyword calls); catalog lists what can be picked without building anything;
this package holds what they share, `load_model`, which picks one, and `check_source`, which
validates a source before any work.

Every model is called as `model(*inputs)`; keyword inputs go through values.keyword_call.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence

from core.models.base import (  # noqa: F401  (re-exported: the package is where callers find them)
    EXPORT_SUFFIXES,
    HF_PREFIX,
    PY_SUFFIXES,
    TIMM_PREFIX,
    TORCHSCRIPT_NOTE,
    TORCHSCRIPT_SUFFIXES,
    VIDEO_FRAMES,
    LoadedModel,
    ModelLoadError,
    close_matches,
    defines_variants,
    error_line_in,
    exit_error,
    is_file_source,
    pip_command,
    require_package,
    short_error,
    source_kind,
    split_factory,
)
from core.vocab.config import ModelSpec


def workload_settings(model, task: str, device: str) -> dict[str, str]:
    """The settings that make a run's workload for this kind of source (a ModelSpec's, the task,
    the device), named as the app's form names them: what results on screen and the next run
    must share to be the same measurement. A model file makes its own inputs: its batch and image
    size are not among them."""
    kind = source_kind(model.source)
    out = {}
    if kind in ("torchvision", "timm", "hf"):
        out["batch size"] = str(model.batch_size)
    if kind in ("torchvision", "timm"):
        out["image size"] = str(model.image_size)
    if kind == "hf":
        out["HF seq len"] = str(model.seq_len)
        out["HF config"] = " ".join(model.hf_config) or "(none)"
    out["task"] = task
    out["device"] = device
    return out


def workload_differences(shown: dict[str, str], next_run: dict[str, str]) -> list[str]:
    """ "batch size 1 (these results: 2)" for each setting the next run would change."""
    return [f"{k} {next_run[k]} (these results: {v})" for k, v in shown.items() if k in next_run and next_run[k] != v]


MODEL_SEED = 0
"""torch is seeded with this before a model is built, so that its random weights are the same in
every run (and in a bundle's repro.py, which seeds the same)."""


def load_model(spec: ModelSpec) -> LoadedModel:
    """Build the model and its example inputs on the CPU (the job moves them to a device), torch
    seeded with MODEL_SEED first."""
    import torch

    source = spec.source
    from core.models import export_archives, python_files, torchscript_files, torchvision_models

    torch.manual_seed(MODEL_SEED)

    kind = source_kind(source)
    if kind == "timm":
        from core.models import timm_models

        return timm_models.load(spec)
    if kind == "hf":
        from core.models import hf_models

        return hf_models.load(spec)
    if kind == "torchvision":
        return torchvision_models.load(spec)
    source, factory = split_factory(source)
    path = os.path.abspath(os.path.expanduser(source))
    if not os.path.exists(path):
        raise ModelLoadError("file not found; check the path.", file=source)
    if path.endswith(PY_SUFFIXES):
        return python_files.load(path, factory)
    if path.endswith(EXPORT_SUFFIXES):
        return export_archives.load(path, spec)
    return torchscript_files.load(path, spec)


FILE_KINDS = ("python", "export", "torchscript")
_FORWARD_HINTS = {
    "python": "check get_example_inputs() matches what the model expects",
    "export": "the inputs were built from the program's recorded input shapes",
    "torchscript": "TorchScript files get one batch×3×H×W tensor (--batch-size, --image-size)",
    "torchvision": "check --batch-size and --image-size suit this model",
    "timm": "check --batch-size and --image-size suit this model",
    "hf": "check --seq-len, --batch-size and the --hf-config overrides suit this model",
}


def check_forward(loaded: LoadedModel, source: str) -> None:
    """Call the model once; a failure names the model file's line when there is one. Outputs
    may be anything (tensors, tuples, lists, dicts, ModelOutputs): they are not inspected."""
    try:
        loaded.model(*loaded.inputs)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:
        path = os.path.abspath(split_factory(source)[0]) if loaded.kind == "python" else ""
        line = error_line_in(path, exc) if path else 0
        file = source if loaded.kind in FILE_KINDS else ""
        if not isinstance(exc, Exception):  # sys.exit() in forward
            raise exit_error(exc, "the model's forward", "return outputs from forward", file, line) from None
        shapes = ", ".join(describe_inputs(loaded))
        hint = _FORWARD_HINTS.get(loaded.kind, "check the inputs match what the model expects")
        raise ModelLoadError(
            f"the model's forward raised {short_error(exc)} on inputs ({shapes}); {hint}.",
            file=file,
            line=line,
            detail=traceback.format_exc(),
        ) from None


def describe_input(x) -> str:
    """One input as text: `float32[2×3×224×224]`, `list of 2 float32[3×224×224]`, ..."""
    from core.models.values import describe_value

    return describe_value(x)


INPUTS_DESCRIBED = 64
"""Inputs described one by one at most; the rest are counted ("… 999,936 more inputs"): a model
with a million inputs wrote a 12 MB line three times and a 55 MB report.json."""


def describe_inputs(loaded: LoadedModel) -> tuple[str, ...]:
    """The inputs as text (the first INPUTS_DESCRIBED, then how many more), named when the model
    takes them by keyword (`input_ids=int64[1×128]`): what ModelLoaded.input_shapes carries."""
    inputs = loaded.inputs
    names = loaded.input_names or ("",) * len(inputs)
    shown = tuple(
        f"{name}={describe_input(x)}" if name else describe_input(x)
        for name, x in zip(names[:INPUTS_DESCRIBED], inputs[:INPUTS_DESCRIBED])
    )
    rest = len(inputs) - len(shown)
    return shown + ((f"… {rest:,} more inputs",) if rest > 0 else ())


def normalize_source(source: str) -> str:
    """The source as a job receives it: file paths and hf: folders made absolute (a job may run
    from another folder), names unchanged."""
    kind = source_kind(source)
    if kind == "file":
        path, factory = split_factory(source)
        return os.path.abspath(path) + (f":{factory}" if factory != "get_model" else "")
    if kind == "hf":
        from core.models import hf_config

        parsed = hf_config.parse_source(source)
        if parsed.is_folder:
            return HF_PREFIX + parsed.target + (f"#{parsed.head}" if parsed.head else "")
    return source


def check_source(spec: ModelSpec, device: str = "cpu", torchvision_names: Sequence[str] | None = None) -> None:
    """Validate a model source before any work, cheaply (no model is built): ModelLoadError
    saying what is wrong and what to do (a missing file, an unknown name with close matches,
    a missing package with the command that installs it, a Hugging Face config that would not
    fit in memory). `torchvision_names`: torchvision's model names when the caller has them
    (core.run.torch_info's cache): a name not among them is refused without importing torchvision."""
    kind = source_kind(spec.source)
    if kind == "timm":
        from core.models import timm_models

        timm_models.check(spec)
    elif kind == "hf":
        from core.models import hf_models

        hf_models.check(spec, device)
    elif kind == "torchvision":
        from core.models import torchvision_models

        torchvision_models.check(spec, torchvision_names)
    elif not os.path.exists(split_factory(spec.source)[0]):
        raise ModelLoadError(f"model file {split_factory(spec.source)[0]} not found; check the path.")
    elif os.path.isdir(split_factory(spec.source)[0]):  # a job ran and failed reading it as TorchScript
        folder = split_factory(spec.source)[0]
        raise ModelLoadError(
            f"{folder} is a folder, not a model file: name a .py model file, a .pt2 or a TorchScript file in it, "
            f"or a Hugging Face checkpoint folder as hf:{folder}."
        )
    else:
        from core.models.python_files import check_file

        check_file(*split_factory(spec.source))


def torchvision_model_names() -> list[str]:
    """Every torchvision model name (imports torchvision)."""
    from core.models.torchvision_models import model_names

    return model_names()
