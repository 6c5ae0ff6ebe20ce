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

import json
import os
import traceback
from dataclasses import dataclass

from core.vocab.config import ConfigError, ModelSpec, parse_key_values
from core.models import HF_PREFIX, LoadedModel, ModelLoadError, close_matches, require_package, short_error
from core.models.hf_inputs import text_config
from core.models.hf_memory import check_fits, count_text

# Composite model types whose config is made of other configs: no default to build from.
COMPOSITE_TYPES = ("encoder-decoder", "vision-encoder-decoder", "speech-encoder-decoder",
                   "vision-text-dual-encoder")
SAFETENSORS_FILES = ("model.safetensors", "model.safetensors.index.json")
PICKLE_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")


@dataclass(frozen=True)
class HfSource:
    """A parsed `hf:` source: a model type or a folder (absolute), and the head class asked for."""

    target: str
    is_folder: bool
    head: str = ""

    @property
    def label(self) -> str:
        return f"hf:{os.path.basename(self.target.rstrip(os.sep)) if self.is_folder else self.target}"


def _transformers():
    # No model hub here: whatever transformers or huggingface_hub would fetch fails fast offline
    # instead of waiting on the network. Read by huggingface_hub when it is first imported.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    transformers = require_package("transformers", "a Hugging Face model")
    transformers.utils.logging.disable_progress_bar()  # "Loading weights" bars would flood the job's log
    return transformers


def model_types() -> list[str]:
    """Every model type transformers knows (its CONFIG_MAPPING keys); nothing is imported beyond
    transformers' name tables."""
    _transformers()
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING_NAMES

    return sorted(CONFIG_MAPPING_NAMES)


def looks_like_folder(target: str) -> bool:
    """A folder rather than a model type: a path (a separator, `.`, `~`), or an existing folder
    whose name is no model type (write ./bert for a folder called bert)."""
    if not target:
        return False
    if os.sep in target or "/" in target or target.startswith((".", "~")):
        return True
    return os.path.isdir(target) and target not in model_types()


def parse_source(source: str, hf_class: str = "") -> HfSource:
    """"hf:bert", "hf:./folder#AutoModelForCausalLM" → HfSource. ModelLoadError when the head
    is given twice, differently."""
    body = source[len(HF_PREFIX):] if source.startswith(HF_PREFIX) else source
    target, _, head = body.partition("#")
    target, head = target.strip(), head.strip()
    if head and hf_class and head != hf_class:
        raise ModelLoadError(f"two heads asked for: {head} (in {source}) and --hf-class {hf_class}; give one.")
    head = head or hf_class
    if not target:
        raise ModelLoadError("hf: needs a model type (hf:bert, hf:gpt2, hf:t5, ...) or a folder saved with "
                             "save_pretrained (hf:./my_model).")
    if looks_like_folder(target):
        return HfSource(os.path.abspath(os.path.expanduser(target)), True, head)
    return HfSource(target, False, head)


# ------------------------------------------------------------------ configs


def _folder_config(path: str):
    """The config of a save_pretrained folder, after checking it needs no code of its own."""
    transformers = _transformers()
    config_file = os.path.join(path, "config.json")
    if not os.path.isdir(path):
        raise ModelLoadError("folder not found; an hf: folder is one saved with save_pretrained.", file=path)
    if not os.path.isfile(config_file):
        raise ModelLoadError("no config.json here; an hf: folder is one saved with model.save_pretrained(folder) "
                             "(config.json and model.safetensors).", file=path)
    try:
        with open(config_file, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"config.json cannot be read: {short_error(exc)}", file=path) from None
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    if isinstance(raw, dict) and raw.get("auto_map"):
        raise ModelLoadError("its config.json names its own Python code (auto_map): loading it needs "
                             "trust_remote_code, which runs that code, so it is refused. Wrap the model in a "
                             "model file (get_model / get_example_inputs) if you trust it.", file=path)
    if model_type not in model_types():
        raise ModelLoadError(f"config.json names model type {model_type!r}, which the installed transformers "
                             f"{transformers.__version__} does not know.", file=path)
    try:
        return transformers.AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        raise ModelLoadError(f"config.json cannot be loaded: {short_error(exc)}", file=path,
                             detail=traceback.format_exc()) from None


def _type_config(model_type: str):
    transformers = _transformers()
    types = model_types()
    if model_type not in types:
        close = close_matches(model_type, types)
        hint = f" Close matches: {', '.join(HF_PREFIX + c for c in close)}." if close else ""
        raise ModelLoadError(f"transformers has no model type {model_type!r}.{hint} For a folder saved with "
                             f"save_pretrained give its path (hf:./{model_type}).")
    if model_type in COMPOSITE_TYPES:
        raise ModelLoadError(f"hf:{model_type} is made of other models' configs and has no default of its own; "
                             "save one with save_pretrained and give its folder (hf:./folder).")
    try:
        return transformers.AutoConfig.for_model(model_type)
    except Exception as exc:
        raise ModelLoadError(f"transformers cannot build the default {model_type} config: {short_error(exc)}",
                             detail=traceback.format_exc()) from None


def config_fields(config) -> dict:
    """Every field `--hf-config` may set, with its current value: the config's own fields and
    its aliases (gpt2's num_hidden_layers is n_layer)."""
    fields = {k: v for k, v in config.to_dict().items() if not k.startswith("_")}
    for alias in getattr(config, "attribute_map", {}) or {}:
        try:
            fields.setdefault(alias, getattr(config, alias))
        except AttributeError:
            pass
    for key in ("transformers_version", "model_type"):
        fields.pop(key, None)
    return fields


def apply_overrides(config, items: tuple[str, ...] | list[str], what: str) -> tuple[tuple[str, object], ...]:
    """Set `--hf-config KEY=VALUE` items on `config`, each checked against its fields and typed
    like them; ModelLoadError naming the valid fields otherwise."""
    if not items:
        return ()
    fields = config_fields(config)
    try:
        parsed = parse_key_values(list(items), fields, f"the {what} config",
                                  keys_of=f"the {what} config ({', '.join(sorted(fields))})")
    except ConfigError as exc:
        raise ModelLoadError(f"--hf-config: {exc}") from None
    for key, value in parsed:
        try:
            setattr(config, key, value)
        except Exception as exc:
            raise ModelLoadError(f"--hf-config {key}={value!r} is refused by the {what} config: "
                                 f"{short_error(exc)}") from None
    return parsed


def build_config(source: HfSource, overrides: tuple[str, ...] = ()):
    """The config to build from: the type's default or the folder's, with the overrides set.

    use_cache is switched off unless an override sets it: a profile times one forward pass over
    the whole sequence (as scoring, a training step or generation's first step run it), and a
    decoder would otherwise also build and return its key/value cache for a next step that never
    comes: an output that is no result (and that differs object by object between calls)."""
    config = _folder_config(source.target) if source.is_folder else _type_config(source.target)
    for sub in {id(c): c for c in (config, text_config(config))}.values():
        if getattr(sub, "use_cache", None):
            sub.use_cache = False
    apply_overrides(config, overrides, config.model_type)
    return config


def cache_note(config) -> str:
    """", use_cache=False" when the model will not build its key/value cache (see build_config)."""
    return ", use_cache=False" if getattr(text_config(config), "use_cache", None) is False else ""


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
    is_model_class = isinstance(cls, type) and (hasattr(cls, "_model_mapping")
                                                or issubclass(cls, transformers.PreTrainedModel))
    if not is_model_class:
        close = close_matches(head, auto_classes())
        raise ModelLoadError(f"transformers has no model class {head!r}."
                             + (f" Close matches: {', '.join(close)}." if close else "")
                             + f" Heads for {config.model_type}: {', '.join(heads) or 'none'}.")
    if head.startswith(("AutoModel", "AutoBackbone")) and head not in heads:
        raise ModelLoadError(f"{head} cannot build a {config.model_type} model. Heads for {config.model_type}: "
                             f"{', '.join(heads) or 'none'}.")
    if not hasattr(cls, "_model_mapping"):
        expected = getattr(cls, "config_class", None)
        if expected is not None and not isinstance(config, expected):
            raise ModelLoadError(f"{head} takes a {expected.__name__}, not the {type(config).__name__} of "
                                 f"{config.model_type}. Heads for {config.model_type}: {', '.join(heads)}.")
    return cls


def from_config(cls, config):
    """A model of class `cls` (an auto class or a model class) built from `config`."""
    if hasattr(cls, "_model_mapping"):  # an Auto class
        return cls.from_config(config)
    return cls._from_config(config) if hasattr(cls, "_from_config") else cls(config)


# ------------------------------------------------------------------ checking and loading


def _check_weights_files(path: str) -> bool:
    """Whether the folder holds safetensors weights; ModelLoadError for a pickle-only checkpoint.
    A folder with a config alone builds with random weights."""
    names = set(os.listdir(path))
    if "model.safetensors.index.json" in names:
        _check_safetensors_index(os.path.join(path, "model.safetensors.index.json"), path)
    if any(n in names for n in SAFETENSORS_FILES) or any(n.endswith(".safetensors") for n in names):
        return True
    pickled = [n for n in sorted(names) if n in PICKLE_FILES or n.endswith((".bin", ".pt", ".pth", ".ckpt"))]
    if pickled:
        raise ModelLoadError(f"its weights are pickled ({', '.join(pickled[:3])}), and loading pickles can run "
                             "arbitrary code, so they are refused, as pickled whole modules are. Save the model "
                             "with save_pretrained(folder), which writes model.safetensors by default, or "
                             "convert the weights to safetensors.", file=path)
    return False


MAX_INDEX_BYTES = 64 * 2**20  # a real index names a few thousand tensors: well under a MB


def _check_safetensors_index(index: str, folder: str) -> None:
    """A sharded checkpoint's index must name only safetensors shards in the folder itself:
    transformers loads whatever file the index's weight_map names, and a crafted index pointing
    at a pickled `.bin` shard would reach torch.load."""
    import json

    try:
        if os.path.getsize(index) > MAX_INDEX_BYTES:
            raise ModelLoadError(f"model.safetensors.index.json is {os.path.getsize(index):,} bytes, more than a "
                                 f"checkpoint index needs ({MAX_INDEX_BYTES:,} at most); refused.", file=folder)
        with open(index, encoding="utf-8") as fh:
            weight_map = json.load(fh).get("weight_map")
    except (OSError, ValueError, AttributeError) as exc:
        raise ModelLoadError(f"model.safetensors.index.json cannot be read ({short_error(exc)}).", file=folder) from None
    if not isinstance(weight_map, dict):
        raise ModelLoadError("model.safetensors.index.json has no weight_map of tensor names to shard files.",
                             file=folder)
    real = os.path.realpath(folder)
    for tensor, shard in weight_map.items():
        if (not isinstance(shard, str) or not shard.endswith(".safetensors") or os.path.basename(shard) != shard
                or shard in (".", "..")):
            raise ModelLoadError(f"model.safetensors.index.json maps {str(tensor)[:80]!r} to {str(shard)[:120]!r}, "
                                 "which is not a .safetensors file in the folder; only safetensors shards beside the "
                                 "index are loaded (a pickled shard could run arbitrary code).", file=folder)
        path = os.path.join(folder, shard)
        if not os.path.isfile(path) or os.path.dirname(os.path.realpath(path)) != real:
            raise ModelLoadError(f"model.safetensors.index.json names the shard {shard!r}, which is not a file in the "
                                 "folder itself (missing, or a link to elsewhere).", file=folder)


def check(spec: ModelSpec, device: str = "cpu"):
    """Everything that can be known before building the model, which is not built: the source,
    the config and its overrides, the head, the inputs, the memory. Returns (HfSource, config,
    class, SizeEstimate or None); ModelLoadError otherwise."""
    from core.models import hf_inputs

    source = parse_source(spec.source, spec.hf_class)
    config = build_config(source, spec.hf_config)
    if source.is_folder:
        _check_weights_files(source.target)
    cls = model_class(source, config)
    hf_inputs.check_inputs(config, spec, cls)
    size = check_fits(source.label, cls, config, device)
    return source, config, cls, size


def load(spec: ModelSpec) -> LoadedModel:
    from core.models import hf_inputs
    from core.models.values import keyword_call

    source, config, cls, size = check(spec)
    try:
        if source.is_folder and _check_weights_files(source.target):
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
        raise ModelLoadError(f"transformers could not build {source.label} with {cls.__name__}: {short_error(exc)}",
                             detail=traceback.format_exc()) from None
    model.eval()
    kwargs, modality = hf_inputs.build(model, config, spec)
    names = tuple(kwargs)
    params = size.parameters if size else sum(p.numel() for p in model.parameters())
    overrides = f", {' '.join(spec.hf_config)}" if spec.hf_config else ""
    description = (f"{source.label} ({type(model).__name__}, {modality}, {count_text(params)} parameters, "
                   f"{weights}{cache_note(config)}{overrides})")
    return LoadedModel(keyword_call(model, names), tuple(kwargs.values()), "hf", description, input_names=names)
