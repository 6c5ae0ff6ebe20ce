"""torchvision ResNet-50 with random weights (weights=None: nothing is downloaded)."""

import torch
import torchvision

BATCH, IMAGE_SIZE = 1, 224


def get_model():
    return torchvision.models.resnet50(weights=None)


def get_example_inputs():
    torch.manual_seed(0)
    return (torch.randn(BATCH, 3, IMAGE_SIZE, IMAGE_SIZE),)


def get_input_variants():
    """Batch sizes 1, 2, 4 and 8: what a serving workload sees."""
    return [(torch.randn(b, 3, IMAGE_SIZE, IMAGE_SIZE),) for b in (1, 2, 4, 8)]
