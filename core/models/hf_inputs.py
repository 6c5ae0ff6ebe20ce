"""Example inputs for Hugging Face models, built from the config and the model's forward:

- text (the model's main input is `input_ids`): `--seq-len` token ids drawn within the
  vocabulary, plus an all-ones `attention_mask` when forward takes one;
- encoder-decoders (`config.is_encoder_decoder`): `decoder_input_ids` too (as long as the
  decoder allows);
- vision (`pixel_values`): batch × channels × image_size² from the config (× num_frames for
  video models);
- audio: one second of 16 kHz waveform for `input_values` (wav2vec2, hubert, ...); log-mel
  features for `input_features` (whisper: num_mel_bins × 2·max_source_positions frames;
  speech_to_text: `--seq-len` frames);
- text+vision dual encoders (clip, siglip, ...): token ids and pixel values.

Anything else (multimodal language models whose image tokens must match their images, time
series, reinforcement learning, ...) is refused with the reason. `modality_of` classifies a model
type from transformers' name tables alone, for the catalog; `build` decides from the real model.
"""

from __future__ import annotations

import functools
import inspect

from core.models.base import ModelLoadError
from core.vocab.config import ModelSpec
from core.vocab.limits import LIMITS

DEFAULT_SEQ_LEN = int(LIMITS["seq_len"].default)

AUDIO_SAMPLES = 16_000  # one second at 16 kHz, the rate wav2vec2-style models are trained on

# transformers' modeling_auto tables (names only, no model imported), most specific first.
_MODALITY_TABLES = (
    (
        "multimodal",
        (
            "MODEL_FOR_MULTIMODAL_LM_MAPPING_NAMES",
            "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
            "MODEL_FOR_VISUAL_QUESTION_ANSWERING_MAPPING_NAMES",
        ),
    ),
    ("text+vision", ("MODEL_FOR_ZERO_SHOT_IMAGE_CLASSIFICATION_MAPPING_NAMES",)),
    (
        "audio",
        (
            "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
            "MODEL_FOR_CTC_MAPPING_NAMES",
            "MODEL_FOR_AUDIO_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_AUDIO_FRAME_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_AUDIO_XVECTOR_MAPPING_NAMES",
        ),
    ),
    (
        "vision",
        (
            "MODEL_FOR_IMAGE_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_IMAGE_MAPPING_NAMES",
            "MODEL_FOR_VIDEO_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_OBJECT_DETECTION_MAPPING_NAMES",
            "MODEL_FOR_SEMANTIC_SEGMENTATION_MAPPING_NAMES",
            "MODEL_FOR_BACKBONE_MAPPING_NAMES",
            "MODEL_FOR_DEPTH_ESTIMATION_MAPPING_NAMES",
        ),
    ),
    ("text encoder-decoder", ("MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",)),
    (
        "text",
        (
            "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
            "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
            "MODEL_FOR_SEQUENCE_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_TEXT_ENCODING_MAPPING_NAMES",
            "MODEL_FOR_TOKEN_CLASSIFICATION_MAPPING_NAMES",
            "MODEL_FOR_QUESTION_ANSWERING_MAPPING_NAMES",
        ),
    ),
)
BUILDABLE = ("text", "text encoder-decoder", "vision", "audio", "text+vision")


@functools.lru_cache(maxsize=1)
def modality_tables() -> dict[str, str]:
    """Every model type transformers' auto tables name → its modality (see _MODALITY_TABLES);
    types in none of them are "other". Cheap: name tables only."""
    from transformers.models.auto import modeling_auto

    found: dict[str, str] = {}
    for modality, tables in _MODALITY_TABLES:
        for table in tables:
            for model_type in getattr(modeling_auto, table, {}) or {}:
                found.setdefault(model_type, modality)
    return found


@functools.lru_cache(maxsize=1)
def mapped_types() -> frozenset[str]:
    """Model types some auto class can build (AutoModel, a head, AutoBackbone). Others (e.g.
    clip_text_model) are parts of a composite model with no auto class of their own."""
    from transformers.models.auto import modeling_auto

    return frozenset(
        t
        for name in dir(modeling_auto)
        if name.startswith("MODEL_") and name.endswith("MAPPING_NAMES")
        for t in getattr(modeling_auto, name) or {}
    )


_SUFFIX_MODALITY = (
    ("_text_model", "text"),
    ("_vision_model", "vision"),
    ("_audio_model", "audio"),
    ("_audio_encoder", "audio"),
    ("_vision_encoder", "vision"),
    ("_text_encoder", "text"),
)


def modality_of(model_type: str) -> str:
    """ "text", "text encoder-decoder", "vision", "audio", "text+vision", "multimodal" or "other",
    from the tables, else from the name of a sub-model type (clip_vision_model is vision)."""
    found = modality_tables().get(model_type)
    if found:
        return found
    for suffix, modality in _SUFFIX_MODALITY:
        if model_type.endswith(suffix):
            return modality
    return "other"


def concrete_class(cls, config):
    """The class an auto class would build for this config (importing its module builds nothing)."""
    mapping = getattr(cls, "_model_mapping", None)
    if mapping is None:
        return cls
    try:
        found = mapping[type(config)]
    except Exception:
        return None
    return found[0] if isinstance(found, (tuple, list)) else found  # funnel maps to two classes


def _refuse_multimodal(name: str) -> ModelLoadError:
    return ModelLoadError(
        f"{name} reads images through tokens in its text (a multimodal language model): its "
        "inputs cannot be built from the config. Write a model file (get_model / "
        "get_example_inputs) with a processor's real inputs."
    )


def text_config(config):
    """The config of the text part (the config itself for a text model). transformers refuses to
    choose for configs with several (musicgen: text_encoder and decoder): then the config itself."""
    try:
        return config.get_text_config() if hasattr(config, "get_text_config") else config
    except Exception:
        return config


def max_positions(config) -> int | None:
    """The longest token sequence the text model's position embeddings allow, if it has a limit."""
    text = text_config(config)
    for key in ("max_position_embeddings", "n_positions", "max_seq_len"):
        value = getattr(text, key, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


def check_inputs(config, spec: ModelSpec, cls=None) -> None:
    """Refuse, before building, a model whose inputs cannot be built (its main input, a
    multimodal language model) or a --seq-len it cannot take."""
    if spec.seq_len < 1 or spec.batch_size < 1:
        raise ModelLoadError("--seq-len and --batch-size must be at least 1.")
    concrete = concrete_class(cls, config) if cls is not None else None
    if concrete is not None:
        main = getattr(concrete, "main_input_name", "input_ids")
        if main not in MAIN_INPUTS:
            raise _refuse_main(concrete.__name__, main)
        try:
            params = inspect.signature(concrete.forward).parameters
        except (TypeError, ValueError):
            params = {}
        if (
            main == "input_ids"
            and "pixel_values" in params
            and getattr(config, "vision_config", None) is not None
            and modality_of(config.model_type) != "text+vision"
        ):
            raise _refuse_multimodal(concrete.__name__)
        if main != "input_ids":
            return
    limit = max_positions(config)
    if limit is not None and spec.seq_len > limit and spec.seq_len != DEFAULT_SEQ_LEN:
        raise ModelLoadError(
            f"--seq-len {spec.seq_len} is longer than the {config.model_type} config allows "
            f"({limit} positions); give --seq-len {limit} or less, or raise it with "
            f"--hf-config max_position_embeddings=N."
        )


MAIN_INPUTS = ("input_ids", "pixel_values", "input_values", "input_features")


def _refuse_main(name: str, main: str) -> ModelLoadError:
    return ModelLoadError(
        f"{name}'s main input is {main!r}: inputs are built for text (input_ids), vision "
        "(pixel_values) and audio (input_values, input_features) models. Write a model file "
        "(get_model / get_example_inputs) to profile it."
    )


def sequence_length(config, spec: ModelSpec) -> int:
    """--seq-len, or the model's maximum when --seq-len is left at its default and the model
    allows fewer positions (clip's text encoder takes 77 tokens); a longer --seq-len given on
    purpose is refused by check_inputs."""
    limit = max_positions(config)
    if spec.seq_len == DEFAULT_SEQ_LEN and limit is not None and limit < spec.seq_len:
        return limit
    return spec.seq_len


def _image_size(config) -> tuple[int, int]:
    size = getattr(config, "image_size", None) or 224
    if isinstance(size, dict):  # {"height": .., "width": ..} in a few configs
        size = (size.get("height", 224), size.get("width", 224))
    if isinstance(size, (list, tuple)):
        return int(size[0]), int(size[-1])
    return int(size), int(size)


def _special_ids(config, vocab: int) -> dict[str, int]:
    found = {}
    for key in ("pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "sep_token_id"):
        value = getattr(config, key, None)
        if isinstance(value, list) and value:  # some configs list several eos ids
            value = value[0]
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < vocab:
            found[key] = value
    return found


def _token_ids(torch, generator, batch: int, length: int, vocab: int, config=None, role: str = "encoder"):
    """Random token ids within the vocabulary, none of them a special token (a padding id inside a
    sequence would change what some models attend to); a text ends with the end-of-sequence
    token, as tokenizers write it (BART-style classifiers pool there), and a decoder input
    starts with the decoder's start token, as the models' own shift_right makes it."""
    vocab = max(int(vocab), 1)
    ids = torch.randint(0, vocab, (batch, length), generator=generator)
    special = _special_ids(config, vocab) if config is not None else {}
    taken = set(special.values())
    if taken and len(taken) < vocab:
        ordinary = next(i for i in range(vocab) if i not in taken)
        for value in taken:
            ids[ids == value] = ordinary
    if role == "encoder" and "eos_token_id" in special and length > 1:
        ids[:, -1] = special["eos_token_id"]
    if role == "decoder":
        start = special.get("decoder_start_token_id", special.get("pad_token_id"))
        if start is not None:
            ids[:, 0] = start
    return ids


def _pixels(torch, generator, config, batch: int, dtype):
    channels = int(getattr(config, "num_channels", 3) or 3)
    height, width = _image_size(config)
    frames = getattr(config, "num_frames", None)
    shape = (
        (batch, int(frames), channels, height, width)
        if isinstance(frames, int) and frames > 0
        else (batch, channels, height, width)
    )
    return torch.randn(*shape, generator=generator).to(dtype)


def build(model, config, spec: ModelSpec) -> tuple[dict, str]:
    """The keyword inputs for `model` (in forward's order of use) and the modality they make."""
    import torch

    params = inspect.signature(model.forward).parameters
    main = getattr(model, "main_input_name", "input_ids")
    dtype = getattr(model, "dtype", torch.float32)
    if not dtype.is_floating_point:
        dtype = torch.float32
    g = torch.Generator().manual_seed(0)
    batch, length = spec.batch_size, sequence_length(config, spec)
    text = text_config(config)
    inputs: dict = {}
    if main == "input_ids":
        modality = "text"
        inputs["input_ids"] = _token_ids(torch, g, batch, length, getattr(text, "vocab_size", 2), text)
        if "attention_mask" in params:
            inputs["attention_mask"] = torch.ones(batch, length, dtype=torch.long)
        vision = getattr(config, "vision_config", None)
        if "pixel_values" in params and vision is not None:
            if modality_of(config.model_type) != "text+vision":
                raise _refuse_multimodal(type(model).__name__)
            inputs["pixel_values"] = _pixels(torch, g, vision, batch, dtype)
            modality = "text+vision"
    elif main == "pixel_values":
        modality = "vision"
        inputs["pixel_values"] = _pixels(torch, g, getattr(config, "vision_config", None) or config, batch, dtype)
    elif main == "input_values":
        modality = "audio"
        inputs["input_values"] = torch.randn(batch, AUDIO_SAMPLES, generator=g).to(dtype)
    elif main == "input_features":
        modality = "audio"
        inputs["input_features"] = _audio_features(torch, g, config, batch, length).to(dtype)
    else:
        raise _refuse_main(type(model).__name__, main)
    if getattr(config, "is_encoder_decoder", False) and "decoder_input_ids" in params:
        decoder_length = length
        limit = getattr(config, "max_target_positions", None)
        if isinstance(limit, int) and limit > 0:
            decoder_length = min(length, limit)
        vocab = getattr(config, "decoder_vocab_size", None) or getattr(text, "vocab_size", 2)
        inputs["decoder_input_ids"] = _token_ids(torch, g, batch, decoder_length, vocab, config, "decoder")
        modality += " encoder-decoder" if "encoder-decoder" not in modality else ""
    return inputs, modality


def _audio_features(torch, generator, config, batch: int, length: int):
    mel_bins = getattr(config, "num_mel_bins", None)
    if isinstance(mel_bins, int) and mel_bins > 0:
        # Whisper-style encoders take a fixed window: two frames per encoder position.
        sources = getattr(config, "max_source_positions", None)
        frames = 2 * sources if isinstance(sources, int) and sources > 0 else length
        return torch.randn(batch, mel_bins, frames, generator=generator)
    per_channel = getattr(config, "input_feat_per_channel", None)
    if isinstance(per_channel, int) and per_channel > 0:
        channels = int(getattr(config, "input_channels", 1) or 1)
        return torch.randn(batch, length, per_channel * channels, generator=generator)
    size = getattr(config, "feature_size", None) or getattr(config, "num_mel_bins", None) or 80
    return torch.randn(batch, length, int(size), generator=generator)
