"""Hugging Face transformers models: `hf:TYPE` (bert, gpt2, t5, llama, vit, whisper, ...) built from
the default config of that model type with random weights, or `hf:FOLDER` saved with
save_pretrained (config and safetensors weights). Nothing is ever downloaded: there is no model
hub here, configs come from transformers itself (AutoConfig.for_model) or the folder, and the
hub is switched offline before transformers is imported.

`--hf-class` or `hf:SOURCE#HeadClass` picks a head (AutoModelForCausalLM, BertForMaskedLM, ...);
by default a type gets its base model (AutoModel) and a folder the class it was saved from.
`--hf-config KEY=VALUE` overrides any config field, typed like --dynamo-config, so a large
architecture can be profiled small (`num_hidden_layers=2`).

Default configs can be huge (llama's is about 7 billion parameters, 25 GiB in float32): a model
whose weights would not fit is refused before it is built (core.models.hf_memory). Inputs come
from the config (core.models.hf_inputs).

A folder is loaded with local_files_only and safetensors only: a checkpoint holding only
pickled weights (pytorch_model.bin) is refused with the reason, as pickled whole modules are,
and so is a config that needs its own Python code (auto_map: trust_remote_code).
"""

from __future__ import annotations

import os
import traceback

from core.models.base import LoadedModel, ModelLoadError, close_matches, short_error
from core.models.hf_config import HfSource, _transformers, build_config, cache_note, from_config, parse_source
from core.models.hf_memory import check_fits, count_text
from core.vocab.config import ModelSpec

SAFETENSORS_FILES = ("model.safetensors", "model.safetensors.index.json")
PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")


# ------------------------------------------------------------------ classes


def auto_classes() -> list[str]:
    """The names of transformers' auto model classes (AutoModel, AutoModelForCausalLM, ...,
    AutoBackbone for the types that are only backbones)."""
    transformers = _transformers()
    names = [n for n in dir(transformers) if n.startswith("AutoModel") and "Flax" not in n and "TF" not in n]
    return sorted(names) + (["AutoBackbone"] if hasattr(transformers, "AutoBackbone") else [])


def heads_for(config) -> list[str]:
    """The AutoModel classes that can build a model of this config's type."""
    transformers = _transformers()
    found = []
    for name in auto_classes():
        mapping = getattr(getattr(transformers, name, None), "_model_mapping", None)
        try:
            if mapping is not None and type(config) in mapping:
                found.append(name)
        except Exception:
            continue
    return found


def model_class(source: HfSource, config):
    """The class that builds the model: the head asked for, else the folder's saved architecture,
    else AutoModel (or the first head this type has when it has no base model)."""
    transformers = _transformers()
    head = source.head
    if not head and source.is_folder:
        saved = (getattr(config, "architectures", None) or [None])[0]
        if saved and getattr(transformers, saved, None) is not None:
            head = saved
    heads = heads_for(config)
    if not head:
        if "AutoModel" in heads or not heads:
            head = "AutoModel"
        else:
            head = heads[0]
    try:
        cls = getattr(transformers, head, None) if head.isidentifier() else None
    except Exception:  # transformers imports lazily: a class whose module fails to import
        cls = None
    is_model_class = isinstance(cls, type) and (
        hasattr(cls, "_model_mapping") or issubclass(cls, transformers.PreTrainedModel)
    )
    if not is_model_class:
        close = close_matches(head, auto_classes())
        raise ModelLoadError(
            f"transformers has no model class {head!r}."
            + (f" Close matches: {', '.join(close)}." if close else "")
            + f" Heads for {config.model_type}: {', '.join(heads) or 'none'}."
        )
    if head.startswith(("AutoModel", "AutoBackbone")) and head not in heads:
        raise ModelLoadError(
            f"{head} cannot build a {config.model_type} model. Heads for {config.model_type}: "
            f"{', '.join(heads) or 'none'}."
        )
    if not hasattr(cls, "_model_mapping"):
        expected = getattr(cls, "config_class", None)
        if expected is not None and not isinstance(config, expected):
            raise ModelLoadError(
                f"{head} takes a {expected.__name__}, not the {type(config).__name__} of "
                f"{config.model_type}. Heads for {config.model_type}: {', '.join(heads)}."
            )
    return cls


# ------------------------------------------------------------------ checking and loading


def check_weights_files(path: str) -> bool:
    """Whether the folder holds safetensors weights; ModelLoadError for a pickle-only checkpoint.
    A folder with a config alone builds with random weights."""
    names = set(os.listdir(path))
    if "model.safetensors.index.json" in names:
        _check_safetensors_index(os.path.join(path, "model.safetensors.index.json"), path)
    if any(n in names for n in SAFETENSORS_FILES) or any(n.endswith(".safetensors") for n in names):
        return True
    pickled = [n for n in sorted(names) if n in PICKLE_FILES or n.endswith((".bin", ".pt", ".pth", ".ckpt"))]
    if pickled:
        raise ModelLoadError(
            f"its weights are pickled ({', '.join(pickled[:3])}), and loading pickles can run "
            "arbitrary code, so they are refused, as pickled whole modules are. Save the model "
            "with save_pretrained(folder), which writes model.safetensors by default, or "
            "convert the weights to safetensors.",
            file=path,
        )
    return False


MAX_INDEX_BYTES = 64 * 2**20  # a real index names a few thousand tensors: well under a MB


def _check_safetensors_index(index: str, folder: str) -> None:
    """A sharded checkpoint's index must name only safetensors shards in the folder itself:
    transformers loads whatever file the index's weight_map names, and a crafted index pointing
    at a pickled `.bin` shard would reach torch.load."""
    import json

    try:
        if os.path.getsize(index) > MAX_INDEX_BYTES:
            raise ModelLoadError(
                f"model.safetensors.index.json is {os.path.getsize(index):,} bytes, more than a "
                f"checkpoint index needs ({MAX_INDEX_BYTES:,} at most); refused.",
                file=folder,
            )
        with open(index, encoding="utf-8") as fh:
            weight_map = json.load(fh).get("weight_map")
    except (OSError, ValueError, AttributeError) as exc:
        raise ModelLoadError(
            f"model.safetensors.index.json cannot be read ({short_error(exc)}).", file=folder
        ) from None
    if not isinstance(weight_map, dict):
        raise ModelLoadError(
            "model.safetensors.index.json has no weight_map of tensor names to shard files.", file=folder
        )
    real = os.path.realpath(folder)
    for tensor, shard in weight_map.items():
        if (
            not isinstance(shard, str)
            or not shard.endswith(".safetensors")
            or os.path.basename(shard) != shard
            or shard in (".", "..")
        ):
            raise ModelLoadError(
                f"model.safetensors.index.json maps {str(tensor)[:80]!r} to {str(shard)[:120]!r}, "
                "which is not a .safetensors file in the folder; only safetensors shards beside the "
                "index are loaded (a pickled shard could run arbitrary code).",
                file=folder,
            )
        path = os.path.join(folder, shard)
        if not os.path.isfile(path) or os.path.dirname(os.path.realpath(path)) != real:
            raise ModelLoadError(
                f"model.safetensors.index.json names the shard {shard!r}, which is not a file in the "
                "folder itself (missing, or a link to elsewhere).",
                file=folder,
            )


def check(spec: ModelSpec, device: str = "cpu"):
    """Everything that can be known before building the model, which is not built: the source,
    the config and its overrides, the head, the inputs, the memory. Returns (HfSource, config,
    class, SizeEstimate or None); ModelLoadError otherwise."""
    import core.models.hf_inputs as hf_inputs

    source = parse_source(spec.source, spec.hf_class)
    config = build_config(source, spec.hf_config)
    if source.is_folder:
        check_weights_files(source.target)
    cls = model_class(source, config)
    hf_inputs.check_inputs(config, spec, cls)
    size = check_fits(source.label, cls, config, device)
    return source, config, cls, size


def load(spec: ModelSpec) -> LoadedModel:
    import core.models.hf_inputs as hf_inputs
    from core.models.values import keyword_call

    source, config, cls, size = check(spec)
    try:
        if source.is_folder and check_weights_files(source.target):
            kwargs = {"config": config, "local_files_only": True, "use_safetensors": True}
            if hasattr(cls, "_model_mapping"):
                kwargs["trust_remote_code"] = False
            model = cls.from_pretrained(source.target, **kwargs)
            weights = "weights from model.safetensors"
        else:
            model = from_config(cls, config)
            weights = "random weights"
    except ModelLoadError:
        raise
    except Exception as exc:
        raise ModelLoadError(
            f"transformers could not build {source.label} with {cls.__name__}: {short_error(exc)}",
            detail=traceback.format_exc(),
        ) from None
    model.eval()
    kwargs, modality = hf_inputs.build(model, config, spec)
    names = tuple(kwargs)
    params = size.parameters if size else sum(p.numel() for p in model.parameters())
    overrides = f", {' '.join(spec.hf_config)}" if spec.hf_config else ""
    description = (
        f"{source.label} ({type(model).__name__}, {modality}, {count_text(params)} parameters, "
        f"{weights}{cache_note(config)}{overrides})"
    )
    return LoadedModel(keyword_call(model, names), tuple(kwargs.values()), "hf", description, input_names=names)
