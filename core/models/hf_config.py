"""A Hugging Face model's source and config: `hf:TYPE` or `hf:FOLDER` (with `#HeadClass`)
parsed, the config read (the type's default, or the folder's after checking it needs no code of
its own), `--hf-config` overrides applied, and a model built from it. transformers is imported
with the hub switched offline. Used by core.models.hf_models (loading) and hf_memory (sizes)."""

from __future__ import annotations

import json
import os
import traceback
from dataclasses import dataclass

from core.models.base import HF_PREFIX, ModelLoadError, close_matches, require_package, short_error
from core.models.hf_inputs import text_config
from core.vocab.config import parse_key_values
from core.vocab.limits import ConfigError

# Composite model types whose config is made of other configs: no default to build from.
COMPOSITE_TYPES = ("encoder-decoder", "vision-encoder-decoder", "speech-encoder-decoder", "vision-text-dual-encoder")


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
    """ "hf:bert", "hf:./folder#AutoModelForCausalLM" → HfSource. ModelLoadError when the head
    is given twice, differently."""
    body = source[len(HF_PREFIX) :] if source.startswith(HF_PREFIX) else source
    target, _, head = body.partition("#")
    target, head = target.strip(), head.strip()
    if head and hf_class and head != hf_class:
        raise ModelLoadError(f"two heads asked for: {head} (in {source}) and --hf-class {hf_class}; give one.")
    head = head or hf_class
    if not target:
        raise ModelLoadError(
            "hf: needs a model type (hf:bert, hf:gpt2, hf:t5, ...) or a folder saved with "
            "save_pretrained (hf:./my_model)."
        )
    if looks_like_folder(target):
        return HfSource(os.path.abspath(os.path.expanduser(target)), True, head)
    return HfSource(target, False, head)


def _folder_config(path: str):
    """The config of a save_pretrained folder, after checking it needs no code of its own."""
    transformers = _transformers()
    config_file = os.path.join(path, "config.json")
    if not os.path.isdir(path):
        raise ModelLoadError("folder not found; an hf: folder is one saved with save_pretrained.", file=path)
    if not os.path.isfile(config_file):
        raise ModelLoadError(
            "no config.json here; an hf: folder is one saved with model.save_pretrained(folder) "
            "(config.json and model.safetensors).",
            file=path,
        )
    try:
        with open(config_file, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError) as exc:
        raise ModelLoadError(f"config.json cannot be read: {short_error(exc)}", file=path) from None
    model_type = raw.get("model_type") if isinstance(raw, dict) else None
    if isinstance(raw, dict) and raw.get("auto_map"):
        raise ModelLoadError(
            "its config.json names its own Python code (auto_map): loading it needs "
            "trust_remote_code, which runs that code, so it is refused. Wrap the model in a "
            "model file (get_model / get_example_inputs) if you trust it.",
            file=path,
        )
    if model_type not in model_types():
        raise ModelLoadError(
            f"config.json names model type {model_type!r}, which the installed transformers "
            f"{transformers.__version__} does not know.",
            file=path,
        )
    try:
        return transformers.AutoConfig.from_pretrained(path, local_files_only=True, trust_remote_code=False)
    except Exception as exc:
        raise ModelLoadError(
            f"config.json cannot be loaded: {short_error(exc)}", file=path, detail=traceback.format_exc()
        ) from None


def _type_config(model_type: str):
    transformers = _transformers()
    types = model_types()
    if model_type not in types:
        close = close_matches(model_type, types)
        hint = f" Close matches: {', '.join(HF_PREFIX + c for c in close)}." if close else ""
        raise ModelLoadError(
            f"transformers has no model type {model_type!r}.{hint} For a folder saved with "
            f"save_pretrained give its path (hf:./{model_type})."
        )
    if model_type in COMPOSITE_TYPES:
        raise ModelLoadError(
            f"hf:{model_type} is made of other models' configs and has no default of its own; "
            "save one with save_pretrained and give its folder (hf:./folder)."
        )
    try:
        return transformers.AutoConfig.for_model(model_type)
    except Exception as exc:
        raise ModelLoadError(
            f"transformers cannot build the default {model_type} config: {short_error(exc)}",
            detail=traceback.format_exc(),
        ) from None


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
        parsed = parse_key_values(
            list(items), fields, f"the {what} config", keys_of=f"the {what} config ({', '.join(sorted(fields))})"
        )
    except ConfigError as exc:
        raise ModelLoadError(f"--hf-config: {exc}") from None
    for key, value in parsed:
        try:
            setattr(config, key, value)
        except Exception as exc:
            raise ModelLoadError(
                f"--hf-config {key}={value!r} is refused by the {what} config: {short_error(exc)}"
            ) from None
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
    """ ", use_cache=False" when the model will not build its key/value cache (see build_config)."""
    return ", use_cache=False" if getattr(text_config(config), "use_cache", None) is False else ""


def from_config(cls, config):
    """A model of class `cls` (an auto class or a model class) built from `config`."""
    if hasattr(cls, "_model_mapping"):  # an Auto class
        return cls.from_config(config)
    return cls._from_config(config) if hasattr(cls, "_from_config") else cls(config)
