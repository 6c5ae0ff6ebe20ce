"""Real third-party models: the break table matches what torch itself logs.

A torchvision detector, a Hugging Face model built from a small config and a timm model,
all with random weights (nothing is downloaded), compiled with backend "eager". torch's own
graph_breaks log records are collected here independently of core.capture.live, and every place
torch logged must be in the table, each record counted once; the breaks a call passes agree
with the graphs that ran (graphs.csv's calls_per_call) and the graph count with torch's.
"""

import os

import pytest

from core.vocab import source_paths as paths
from tests.core.helpers import make_spec
from tests.core.helpers import run_in_process as run

DETECTOR = '''\
"""torchvision Mask R-CNN on a MobileNetV3-Large FPN (as fasterrcnn_mobilenet_v3_large_320_fpn),
random weights, in a wrapper module; every box kept, ten detections, so ten masks are pasted."""
import torch
import torchvision
from torchvision.models.detection.anchor_utils import AnchorGenerator
from torchvision.models.detection.backbone_utils import mobilenet_backbone


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        backbone = mobilenet_backbone(backbone_name="mobilenet_v3_large", weights=None, fpn=True, trainable_layers=0)
        anchors = AnchorGenerator(((32, 64, 128, 256, 512),) * 3, ((0.5, 1.0, 2.0),) * 3)
        self.model = torchvision.models.detection.MaskRCNN(
            backbone, num_classes=5, rpn_anchor_generator=anchors, min_size=160, max_size=160,
            rpn_pre_nms_top_n_test=100, rpn_post_nms_top_n_test=50, box_score_thresh=0.0,
            box_detections_per_img=10).eval()

    def forward(self, images):
        return self.model(images)            # line 20


def get_model():
    torch.manual_seed(0)
    return Detector()


def get_example_inputs():
    torch.manual_seed(0)
    return ([torch.rand(3, 160, 160)],)
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
    outcome, result, _ = run(make_spec(path, iters=1, warmup=0, op_profile_calls=2))
    assert outcome == "completed", result.failure_reason + result.failure_detail
    return path, result


def graph_calls(result, graphs) -> float:
    """calls_per_call of these graphs, as graphs.csv has it (the op profile's graph marks)."""
    return sum(t.calls_per_call for g in graphs if (t := result.graph_time(g.graph)) is not None)


def resumed_after(result, gb):
    """The graphs of the resume functions torch made for a break's line."""
    return [
        g
        for g in result.graphs
        if g.file == gb.file
        and g.function.startswith("torch_dynamo_resume_in_")
        and g.function.endswith(f"_at_{gb.line}")
    ]


def check_against_torch(result, torch_log):
    """Every place torch logged is a row, and every record is counted once."""
    assert torch_log.sites, "torch logged no graph break"
    assert {(g.file, g.line) for g in result.graph_breaks} == set(torch_log.sites)
    assert sum(g.logged for g in result.graph_breaks) == len(torch_log.sites)
    from torch._dynamo.utils import counters

    from core.vocab.formatting import count

    ordinary = [g for g in result.graph_breaks if not g.frame_skipped]
    s = result.summary()
    assert s["graph_break_sites"] == len({g.key for g in ordinary})
    assert s["graph_break_per_call"] == sum(g.per_call for g in ordinary)
    if s["graph_break_per_call"]:
        assert f"split by {count(s['graph_break_per_call'], 'graph break')} a call" in s["coverage"]
    # every graph torch compiled over the job, as torch counts them and graphs.csv lists them
    assert s["graph_count"] == len(result.graphs) == counters["stats"]["unique_graphs"]
    for g in result.graph_breaks:
        assert g.compile_id and g.gb_code and g.source and g.context
        assert not g.compile_failed
        if g.frame_skipped:
            assert g.eager_function
    for g in ordinary:  # counted in the profiled calls: each pass runs the resume function once
        assert result.per_call_counted(g)
        resumed = resumed_after(result, g)
        if graph_calls(result, resumed):
            assert g.per_call == graph_calls(result, resumed), (g.line, [r.graph for r in resumed])
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
        assert (g.user_file, g.user_line) == (path, 20)  # the wrapper's call into the library
    names = {g.eager_function.split(" ")[0] for g in skipped}
    assert {"filter_proposals", "postprocess_detections"} <= names
    # paste_mask_in_image runs once a detection, from dynamo's cache after the first: each of its
    # breaks is passed ten times a call, as the graphs of its frames ran ten times a call
    by_line = {g.line: g for g in ordinary if g.file.endswith("roi_heads.py")}
    assert {418, 419, 436} <= set(by_line)
    assert [by_line[n].per_call for n in (418, 419, 436)] == [10, 10, 10]
    at_436 = {cid for (file, line), cid in zip(torch_log.sites, torch_log.compile_ids) if line == 436}
    assert at_436 and graph_calls(result, [g for g in result.graphs if g.graph in at_436]) == 10


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
