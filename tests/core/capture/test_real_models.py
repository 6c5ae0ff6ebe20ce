"""Real third-party models: the break table matches what torch itself logs.

A torchvision detector, a Hugging Face model built from a small config and a timm model,
all with random weights (nothing is downloaded), compiled with backend "eager". torch's own
graph_breaks log records are collected here independently of core.capture.live, and every place
torch logged must be in the table, each record counted once.
"""

import os

import pytest

from core.vocab import source_paths as paths
from tests.core.helpers import make_spec
from tests.core.helpers import run_in_process as run

DETECTOR = '''\
"""torchvision Faster R-CNN (MobileNetV3-Large 320 FPN), random weights, in a wrapper module."""
import torch
import torchvision


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.model = torchvision.models.detection.fasterrcnn_mobilenet_v3_large_320_fpn(
            weights=None, weights_backbone=None).eval()

    def forward(self, images):
        return self.model(images)            # line 13


def get_model():
    torch.manual_seed(0)
    return Detector()


def get_example_inputs():
    torch.manual_seed(0)
    return ([torch.rand(3, 320, 320)],)
'''

BART = '''\
"""BART for sequence classification from a small config (2+2 layers, d_model 64)."""
import torch
from transformers import BartConfig, BartForSequenceClassification


def get_model():
    torch.manual_seed(0)
    cfg = BartConfig(vocab_size=1000, d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2,
                     decoder_attention_heads=2, encoder_ffn_dim=128, decoder_ffn_dim=128, max_position_embeddings=64)
    return BartForSequenceClassification(cfg).eval()


def get_example_inputs():
    ids = torch.randint(4, 1000, (2, 16), generator=torch.Generator().manual_seed(0))
    ids[:, -1] = 2  # every sequence ends with the eos token
    return (ids,)
'''

SEQUENCER = '''\
"""timm Sequencer2D (LSTM token mixing), random weights, two blocks per stage, 112 px."""
import timm
import torch


def get_model():
    torch.manual_seed(0)
    return timm.create_model("sequencer2d_s", pretrained=False, num_classes=10, img_size=112,
                             layers=(2, 2, 2, 2)).eval()


def get_example_inputs():
    return (torch.randn(1, 3, 112, 112),)
'''


def profile(write_model, source, name):
    path = write_model(source, name)
    outcome, result, _ = run(make_spec(path, iters=1, warmup=0))
    assert outcome == "completed", result.failure_reason + result.failure_detail
    return path, result


def check_against_torch(result, torch_log):
    """Every place torch logged is a row, and every record is counted once."""
    assert torch_log.sites, "torch logged no graph break"
    assert {(g.file, g.line) for g in result.graph_breaks} == set(torch_log.sites)
    assert sum(g.logged for g in result.graph_breaks) == len(torch_log.sites)
    ordinary = [g for g in result.graph_breaks if not g.frame_skipped]
    s = result.summary()
    assert s["graph_break_sites"] == len({g.key for g in ordinary})
    assert s["graph_break_per_call"] == sum(g.per_call for g in ordinary)
    for g in result.graph_breaks:
        assert g.compile_id and g.gb_code and g.source and g.context
        assert g.per_call <= g.logged
        if g.frame_skipped:
            assert g.eager_function
    return ordinary


def test_torchvision_detector(write_model, torch_log):
    pytest.importorskip("torchvision")
    path, result = profile(write_model, DETECTOR, "detector.py")
    ordinary = check_against_torch(result, torch_log)
    # Skipped frames (dynamo gave up on filter_proposals, postprocess_detections, ...) share
    # GB0036 with the ordinary breaks; those used to vanish ("graph breaks 0").
    skipped = [g for g in result.graph_breaks if g.frame_skipped]
    assert len(ordinary) >= 3 and skipped
    assert {g.gb_code for g in ordinary} & {g.gb_code for g in skipped}
    assert result.summary()["frames_skipped"] == result.compile.frames_skipped == len(skipped)
    for g in result.graph_breaks:  # a torchvision frame is not torch's own code
        assert paths.display_path(g.file).startswith("torchvision/")
        assert (g.user_file, g.user_line) == (path, 13)  # the wrapper's call into the library
    names = {g.eager_function.split(" ")[0] for g in skipped}
    assert {"filter_proposals", "postprocess_detections"} <= names


def test_hugging_face_bart(write_model, torch_log):
    pytest.importorskip("transformers")
    _, result = profile(write_model, BART, "bart.py")
    ordinary = check_against_torch(result, torch_log)
    assert ordinary and all(paths.display_path(g.file) == "transformers/models/bart/modeling_bart.py" for g in ordinary)
    assert all(os.path.isabs(g.file) for g in ordinary)  # the report keeps the full path


def test_timm_sequencer(write_model, torch_log):
    pytest.importorskip("timm")
    _, result = profile(write_model, SEQUENCER, "sequencer.py")
    (gb,) = check_against_torch(result, torch_log)
    assert gb.gb_code == "GB0014" and paths.display_path(gb.file) == "timm/models/sequencer.py"
    # dynamo restarts and recompiles re-log the LSTM call many times; fewer passes per call
    assert gb.logged == len(torch_log.sites) > gb.per_call >= 1
