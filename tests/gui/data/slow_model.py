"""A tiny model whose every call sleeps: a job's time has a floor no host speed can lower, so a
test of the tune budget knows its candidates cannot all fit (the sleep breaks the graph)."""

import time

import torch
from torch import nn

SLEEP_S = 0.6  # 5 candidates x (1 warm-up + 5 timed) calls x 2 sides x 0.6 s = 36 s of sleep alone


class SlowNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        time.sleep(SLEEP_S)
        return torch.relu(self.fc(x))


def get_model():
    torch.manual_seed(0)
    return SlowNet()


def get_example_inputs():
    return (torch.randn(4, 16),)
