"""torchvision detection, keypoint, instance-segmentation and optical-flow models, with the inputs they take."""

import pytest
import torch

from core.models import ModelLoadError, check_source, describe_inputs, load_model
from core.models.torchvision_models import families
from core.vocab.config import ModelSpec
from tests.core.helpers import make_spec
from tests.core.helpers import run_in_process as run


def test_families_are_detailed():
    found = families()
    assert found["resnet18"] == "classification"
    assert found["fasterrcnn_mobilenet_v3_large_320_fpn"] == "detection"
    assert found["keypointrcnn_resnet50_fpn"] == "keypoint detection"
    assert found["maskrcnn_resnet50_fpn"] == "instance segmentation"
    assert found["raft_small"] == "optical flow"


def test_detection_takes_a_list_of_images_in_eval_mode():
    loaded = load_model(ModelSpec("fasterrcnn_mobilenet_v3_large_320_fpn", batch_size=2, image_size=64))
    assert not loaded.model.training
    (images,) = loaded.inputs
    assert isinstance(images, list) and len(images) == 2 and tuple(images[0].shape) == (3, 64, 64)
    assert describe_inputs(loaded) == ("list of 2 float32[3×64×64]",)
    with torch.inference_mode():
        out = loaded.model(*loaded.inputs)
    assert isinstance(out, list) and set(out[0]) == {"boxes", "labels", "scores"}


def test_raft_takes_two_image_batches():
    loaded = load_model(ModelSpec("raft_small", image_size=128))
    assert [tuple(x.shape) for x in loaded.inputs] == [(1, 3, 128, 128)] * 2
    assert "two image batches" in loaded.description
    with pytest.raises(ModelLoadError, match="multiple of 8 and at least 128"):
        check_source(ModelSpec("raft_small", image_size=100))


LIST_OF_IMAGES_MODEL = '''\
"""Takes a list of 3×H×W images and returns a list of dicts, as torchvision detectors do."""
import torch


class Detector(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, images):
        return [{"boxes": self.conv(x[None]).amax(dim=(2, 3)), "scores": x.mean()[None]} for x in images]


def get_model():
    return Detector()


def get_example_inputs():
    return ([torch.rand(3, 16, 16), torch.rand(3, 16, 16)],)
'''


def test_a_list_of_images_in_and_dicts_out_profile_end_to_end(write_model):
    # The whole torchvision detector takes minutes through a job here; the CLI check in the
    # README runs it. This is the same shape of inputs and outputs through every phase.
    spec = make_spec(write_model(LIST_OF_IMAGES_MODEL), iters=2, warmup=1, op_profile_calls=0)
    outcome, result, _ = run(spec)
    assert outcome == "completed", result.failure_detail
    assert result.model_info.input_shapes == ("list of 2 float32[3×16×16]",)
    assert result.compile is not None and result.compile.graph_count >= 1
