"""Hugging Face models by type (hf:TYPE, default config, random weights) and by save_pretrained
folder (hf:FOLDER), all from tiny configs: nothing is downloaded."""

import json
import os

import pytest
import torch

from core.models import (
    ModelLoadError,
    check_forward,
    check_source,
    describe_inputs,
    hf_config,
    hf_memory,
    hf_models,
    load_model,
    normalize_source,
)
from core.vocab.config import ModelSpec
from tests.core.helpers import TINY_GPT2

TINY_BERT = (
    "num_hidden_layers=1",
    "hidden_size=32",
    "num_attention_heads=2",
    "intermediate_size=37",
    "vocab_size=100",
    "max_position_embeddings=64",
)
TINY_T5 = ("num_layers=1", "num_decoder_layers=1", "d_model=32", "num_heads=2", "d_ff=37", "d_kv=16", "vocab_size=100")


def loaded(source, overrides, **kwargs):
    model = load_model(ModelSpec(source, hf_config=overrides, **kwargs))
    check_forward(model, source)
    return model


def test_text_models_get_token_ids_in_the_vocabulary_and_a_mask():
    bert = loaded("hf:bert", TINY_BERT, seq_len=16, batch_size=2)
    assert bert.kind == "hf" and "BertModel" in bert.description and "random weights" in bert.description
    assert describe_inputs(bert) == ("input_ids=int64[2×16]", "attention_mask=int64[2×16]")
    ids = bert.inputs[0]
    assert 0 <= int(ids.min()) and int(ids.max()) < 100
    assert isinstance(bert.model, torch.nn.Module) and bert.model.wrapped.config.num_hidden_layers == 1
    gpt2 = loaded("hf:gpt2", TINY_GPT2, seq_len=8)
    assert gpt2.model.wrapped.config.n_layer == 1  # num_hidden_layers is gpt2's n_layer
    assert "use_cache=False" in gpt2.description  # one forward pass: no key/value cache returned
    with torch.inference_mode():
        assert list(gpt2.model(*gpt2.inputs).keys()) == ["last_hidden_state"]


def test_encoder_decoders_get_decoder_inputs_and_heads_are_picked():
    t5 = loaded("hf:t5", TINY_T5, seq_len=8)
    assert t5.input_names == ("input_ids", "attention_mask", "decoder_input_ids")
    assert "encoder-decoder" in t5.description
    head = loaded("hf:t5#AutoModelForSeq2SeqLM", TINY_T5, seq_len=8)
    assert "T5ForConditionalGeneration" in head.description
    same = loaded("hf:bert", TINY_BERT, hf_class="BertForMaskedLM", seq_len=8)
    assert "BertForMaskedLM" in same.description
    with pytest.raises(ModelLoadError, match="two heads asked for"):
        check_source(ModelSpec("hf:bert#AutoModel", hf_class="AutoModelForMaskedLM"))
    with pytest.raises(ModelLoadError, match="AutoModelForSeq2SeqLM cannot build a bert model.*AutoModelForMaskedLM"):
        check_source(ModelSpec("hf:bert", hf_class="AutoModelForSeq2SeqLM", hf_config=TINY_BERT))
    with pytest.raises(ModelLoadError, match="no model class 'AutoModelForMaskedLMM'.*AutoModelForMaskedLM"):
        check_source(ModelSpec("hf:bert", hf_class="AutoModelForMaskedLMM", hf_config=TINY_BERT))


def test_vision_and_audio_models_get_pixels_and_waveforms():
    vit = loaded("hf:vit", TINY_BERT[:4] + ("image_size=32", "patch_size=8"))
    assert describe_inputs(vit) == ("pixel_values=float32[1×3×32×32]",)
    wav = loaded(
        "hf:wav2vec2",
        TINY_BERT[:4]
        + (
            "conv_dim=(8, 8)",
            "conv_stride=(5, 2)",
            "conv_kernel=(10, 3)",
            "num_conv_pos_embeddings=16",
            "num_feat_extract_layers=2",
        ),
    )
    assert describe_inputs(wav) == ("input_values=float32[1×16000]",)
    whisper = loaded(
        "hf:whisper",
        (
            "encoder_layers=1",
            "decoder_layers=1",
            "d_model=32",
            "encoder_attention_heads=2",
            "decoder_attention_heads=2",
            "encoder_ffn_dim=37",
            "decoder_ffn_dim=37",
            "num_mel_bins=8",
            "max_source_positions=16",
        ),
        seq_len=4,
    )
    assert describe_inputs(whisper) == ("input_features=float32[1×8×32]", "decoder_input_ids=int64[1×4]")


def test_wrong_names_and_overrides_are_refused_with_the_valid_ones():
    with pytest.raises(ModelLoadError, match="no model type 'bret'. Close matches: hf:bert"):
        check_source(ModelSpec("hf:bret"))
    with pytest.raises(
        ModelLoadError,
        match="no setting 'num_hiden_layers'.*Did you mean: num_hidden_layers.*"
        r"keys of the bert config \(.*vocab_size\)",
    ):
        check_source(ModelSpec("hf:bert", hf_config=("num_hiden_layers=2",)))
    with pytest.raises(ModelLoadError, match="num_hidden_layers takes a number, not 'two'"):
        check_source(ModelSpec("hf:bert", hf_config=("num_hidden_layers=two",)))
    with pytest.raises(ModelLoadError, match="--seq-len 65 is longer than the bert config allows"):
        check_source(ModelSpec("hf:bert", hf_config=TINY_BERT, seq_len=65))
    with pytest.raises(ModelLoadError, match="multimodal language model"):
        check_source(ModelSpec("hf:llava"))


def test_a_config_too_big_for_memory_is_refused_before_building(monkeypatch):
    # hf:llama's default config: ~6.6 billion parameters, counted on the meta device (no memory used).
    monkeypatch.setattr(hf_memory, "memory_available", lambda device="cpu": (8 << 30, 16 << 30, "this machine"))
    with pytest.raises(ModelLoadError) as info:
        check_source(ModelSpec("hf:llama"))
    message = str(info.value)
    assert "hf:llama (LlamaModel) has 6.61 billion parameters: 24.6 GiB of float32 weights" in message
    assert "8.0 GiB available (16.0 GiB in all)" in message
    assert "--hf-config num_hidden_layers=2 (535.8 million parameters" in message
    check_source(ModelSpec("hf:llama", hf_config=("num_hidden_layers=2",)))  # that fits
    size = hf_memory.estimate_size(*_class_and_config("t5"))
    assert size.parameters > 30_000_000 and size.model_class == "T5Model"


@pytest.mark.parametrize(
    "model_type,layers", [("bert", ("num_hidden_layers=40",)), ("t5", ("num_layers=30", "num_decoder_layers=50"))]
)
def test_a_size_computed_from_a_few_layers_is_the_size_built_whole(model_type, layers):
    source = hf_config.parse_source(f"hf:{model_type}")
    config = hf_config.build_config(source, layers)
    cls = hf_models.model_class(source, config)
    computed = hf_memory.estimate_size(cls, config)
    built = hf_memory._built_size(cls, config)
    assert (computed.parameters, computed.bytes) == built[:2] and computed.model_class == built[3]


def test_a_config_of_100000_layers_is_sized_in_a_second_and_refused_with_its_figure():
    """The reported case: the pre-check built all 100,000 layers (112 s, 6 GB)."""
    import time

    import psutil

    rss, started = psutil.Process().memory_info().rss, time.monotonic()
    with pytest.raises(ModelLoadError) as info:
        check_source(ModelSpec("hf:bert", hf_config=("num_hidden_layers=100000",)))
    took = time.monotonic() - started
    assert took < 5, took
    assert psutil.Process().memory_info().rss - rss < 500 << 20
    message = str(info.value)
    assert "hf:bert (BertModel) has 708.81 billion parameters: 2640.5 GiB of float32 weights" in message
    assert "--hf-config num_hidden_layers=2" in message


def _class_and_config(model_type):
    source = hf_config.parse_source(f"hf:{model_type}")
    config = hf_config.build_config(source)
    return hf_models.model_class(source, config), config


@pytest.fixture
def saved_gpt2(tmp_path):
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.for_model(
        "gpt2", n_layer=1, n_embd=32, n_head=2, vocab_size=100, n_positions=64, bos_token_id=0, eos_token_id=0
    )
    model = AutoModelForCausalLM.from_config(config)
    folder = tmp_path / "tiny_gpt2"
    model.save_pretrained(folder)
    return folder, model


def test_a_save_pretrained_folder_loads_its_class_and_weights(saved_gpt2, monkeypatch):
    folder, model = saved_gpt2
    got = loaded(f"hf:{folder}", (), seq_len=8)
    assert "GPT2LMHeadModel" in got.description and "weights from model.safetensors" in got.description
    torch.testing.assert_close(got.model.wrapped.transformer.wte.weight, model.transformer.wte.weight)
    base = loaded(f"hf:{folder}#AutoModel", (), seq_len=8)
    assert "GPT2Model" in base.description
    monkeypatch.chdir(folder.parent)
    assert normalize_source("hf:./tiny_gpt2#AutoModel") == f"hf:{folder}#AutoModel"


def test_pickled_weights_and_own_code_are_refused(saved_gpt2, tmp_path):
    folder, model = saved_gpt2
    pickled = tmp_path / "pickled"
    pickled.mkdir()
    (pickled / "config.json").write_text((folder / "config.json").read_text())
    torch.save(model.state_dict(), pickled / "pytorch_model.bin")
    with pytest.raises(ModelLoadError, match=r"weights are pickled \(pytorch_model.bin\).*refused.*safetensors"):
        check_source(ModelSpec(f"hf:{pickled}"))
    own_code = tmp_path / "own_code"
    own_code.mkdir()
    config = json.loads((folder / "config.json").read_text())
    config["auto_map"] = {"AutoModel": "modeling_mine.MyModel"}
    (own_code / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelLoadError, match="auto_map.*trust_remote_code.*refused"):
        check_source(ModelSpec(f"hf:{own_code}"))
    with pytest.raises(ModelLoadError, match="no config.json here"):
        check_source(ModelSpec(f"hf:{tmp_path}"))
    with pytest.raises(ModelLoadError, match="folder not found"):
        check_source(ModelSpec(f"hf:{tmp_path / 'missing'}"))
    assert not os.path.exists(tmp_path / "missing")


def test_default_sequence_length_follows_a_shorter_model_and_odd_types_are_checked():
    from transformers import AutoConfig

    from core.models.hf_inputs import sequence_length

    clip_text = AutoConfig.for_model("clip_text_model")  # 77 positions
    assert sequence_length(clip_text, ModelSpec("hf:clip_text_model")) == 77  # --seq-len left at its default
    assert sequence_length(clip_text, ModelSpec("hf:clip_text_model", seq_len=16)) == 16
    with pytest.raises(ModelLoadError, match="--seq-len 100 is longer than the clip_text_model config allows"):
        check_source(ModelSpec("hf:clip_text_model", seq_len=100))
    # funnel maps to two classes, pp_lcnet_v3 is only a backbone, musicgen has two text configs
    for model_type in ("funnel", "pp_lcnet_v3", "musicgen"):
        check_source(ModelSpec(f"hf:{model_type}"))


def test_a_safetensors_index_naming_a_pickled_shard_is_refused_before_torch_load(saved_gpt2, tmp_path, monkeypatch):
    """The reported attack: an index.json whose weight_map points at a .bin shard reached torch.load."""
    folder, model = saved_gpt2
    crafted = tmp_path / "crafted"
    crafted.mkdir()
    (crafted / "config.json").write_text((folder / "config.json").read_text())
    torch.save(model.state_dict(), crafted / "pytorch_model-00001-of-00001.bin")
    names = list(model.state_dict())
    index = {"metadata": {}, "weight_map": {n: "pytorch_model-00001-of-00001.bin" for n in names}}
    (crafted / "model.safetensors.index.json").write_text(json.dumps(index))
    loads = []
    real_load = torch.load
    monkeypatch.setattr(torch, "load", lambda *a, **k: loads.append(a) or real_load(*a, **k))
    from core.models import load_model

    with pytest.raises(ModelLoadError, match=r"maps .* to 'pytorch_model-00001-of-00001.bin'.*not a .safetensors"):
        load_model(ModelSpec(f"hf:{crafted}"))  # what a job does: refused before from_pretrained
    index["weight_map"] = {n: "../elsewhere.safetensors" for n in names}
    (crafted / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(ModelLoadError, match="not a .safetensors file in the folder"):
        check_source(ModelSpec(f"hf:{crafted}"))
    assert loads == []
