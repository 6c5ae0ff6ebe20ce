"""Tiny model files written into tmp_path, shared by the core tests."""
from __future__ import annotations

import textwrap

import pytest

from core.vocab.config import CompileConfig, JobSpec, ModelSpec

BREAKS_MODEL = '''\
"""Three graph breaks: a data-dependent branch, .item() and an explicit graph_break()."""
import torch
import torch.nn.functional as F


class Breaks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        if y.sum() > 0:                      # line 13
            y = F.relu(y)
        else:
            y = -F.relu(-y)
        n = y.sum().item()                   # line 17
        y = y + n
        torch._dynamo.graph_break()          # line 19
        return y.cos()


def get_model():
    return Breaks()


def get_example_inputs():
    return (torch.randn(4, 8),)
'''

MLP_MODEL = '''\
"""A small MLP with no graph breaks."""
import torch


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def get_example_inputs():
    return (torch.randn(2, 16),)
'''

# The disabled function runs eagerly, so dynamo cannot see the counter: the code after it
# receives a tensor whose size alternates, and with dynamic=false that forces a recompile.
SHAPE_CHANGE_MODEL = '''\
import torch

CALLS = [0]


@torch.compiler.disable
def grow(x):
    CALLS[0] += 1
    return x.repeat(1 + CALLS[0] % 2, 1)


class ShapeChange(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = grow(x)
        return self.lin(y).relu()


def get_model():
    return ShapeChange()


def get_example_inputs():
    return (torch.randn(4, 8),)
'''

LSTM_MODEL = '''\
import torch


def get_model():
    return torch.nn.LSTM(input_size=8, hidden_size=16, num_layers=2)


def get_example_inputs():
    return (torch.randn(5, 1, 8),)
'''


@pytest.fixture
def write_model(tmp_path):
    """write_model(source, name="m.py") -> path of a model file with that text."""

    def write(source: str, name: str = "model.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


def make_spec(source: str, backend: str = "eager", iters: int = 6, warmup: int = 2, **kwargs) -> JobSpec:
    config = kwargs.pop("config", None) or CompileConfig(backend=backend, dynamic=kwargs.pop("dynamic", "auto"),
                                                         dynamo_config=kwargs.pop("dynamo_config", ()))
    import uuid

    return JobSpec(job_id=uuid.uuid4().hex[:8], model=ModelSpec(source), config=config, iters=iters,
                   warmup=warmup, **kwargs)
