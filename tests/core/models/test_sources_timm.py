"""timm:NAME: built with pretrained=False, inputs sized from the model's pretrained config."""

import pytest

from core.models import ModelLoadError, check_forward, check_source, load_model
from core.models.timm_models import check
from core.vocab.config import ModelSpec


def test_input_size_comes_from_the_pretrained_config():
    assert check(ModelSpec("timm:resnet18")) == (3, 224, 224)
    assert check(ModelSpec("timm:vit_base_patch16_384")) == (3, 384, 384)
    assert check(ModelSpec("timm:resnet18", image_size=64)) == (3, 64, 64)  # asked for


def test_small_models_build_and_run_at_small_sizes():
    loaded = load_model(ModelSpec("timm:resnet18", batch_size=2, image_size=32))
    assert loaded.kind == "timm" and "pretrained=False" in loaded.description
    assert tuple(loaded.inputs[0].shape) == (2, 3, 32, 32)
    check_forward(loaded, "timm:resnet18")
    vit = load_model(ModelSpec("timm:vit_tiny_patch16_224", image_size=32))  # fixed size: built for 32
    check_forward(vit, "timm:vit_tiny_patch16_224")


def test_unknown_names_and_tags_are_refused_with_close_matches():
    with pytest.raises(ModelLoadError, match="timm has no model 'resnt18'.*timm:resnet18"):
        check_source(ModelSpec("timm:resnt18"))
    with pytest.raises(ModelLoadError, match="no pretrained config tagged 'nope'.*a1_in1k"):
        check_source(ModelSpec("timm:resnet50.nope"))
    assert check(ModelSpec("timm:resnet50.a1_in1k")) == (3, 224, 224)


def test_a_missing_package_names_the_install_command(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "timm", None)  # import timm raises ImportError
    with pytest.raises(ModelLoadError, match=r"needs the Python package 'timm'.*pip install timm"):
        check_source(ModelSpec("timm:resnet18"))
