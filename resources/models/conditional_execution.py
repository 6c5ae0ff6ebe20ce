"""The textbook data-dependent branch: `if x.sum() > 0` breaks the graph (GB0170).

Dynamo cannot trace a Python `if` on a tensor's value, so it compiles the code before the
condition, runs the condition in Python, and compiles each branch separately. The profile
shows the break with its reason, its GB code and torch's hints (e.g. use torch.where or
torch.cond). A branchless version, `torch.where(x.sum() > 0, F.relu(x), -F.relu(-x))`,
compiles as one graph.
"""

import torch
import torch.nn.functional as F


class ConditionalExecution(torch.nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return F.relu(x)
        else:
            return -F.relu(-x)


def get_model():
    return ConditionalExecution()


def get_example_inputs():
    torch.manual_seed(0)
    return (torch.randn(64, 1024),)
