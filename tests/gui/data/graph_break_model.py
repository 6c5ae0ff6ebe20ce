"""A tiny model with three graph breaks: a data-dependent branch, .item() and an explicit break."""

import torch
from torch import nn


class BranchyNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(64, 64)
        self.fc2 = nn.Linear(64, 64)
        self.head = nn.Linear(64, 10)

    def forward(self, x):
        h = torch.relu(self.fc1(x))
        if h.sum() > 0:  # data-dependent branch: dynamo cannot know which way it goes
            h = h * 2
        scale = h.mean().item()  # a Python float out of a tensor
        h = self.fc2(h) * scale
        torch._dynamo.graph_break()  # an explicit break
        return self.head(torch.tanh(h))


def get_model():
    torch.manual_seed(0)
    return BranchyNet()


def get_example_inputs():
    return (torch.randn(8, 64),)
