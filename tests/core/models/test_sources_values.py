"""Inputs and outputs of any nesting (core.models.values): moved, described and called alike."""

import collections
import dataclasses

import torch

from core.models import LoadedModel, check_forward, describe_inputs
from core.models.values import describe_value, keyword_call, map_tensors, tensors_in, to_device


@dataclasses.dataclass
class Pair:
    first: torch.Tensor
    second: list


Point = collections.namedtuple("Point", "x y")


def test_every_container_is_walked_and_rebuilt_as_its_own_type():
    from transformers.modeling_outputs import BaseModelOutput

    out = BaseModelOutput(last_hidden_state=torch.ones(2, 3))
    value = (out, {"a": [torch.zeros(1), Point(torch.ones(1), 3)]}, Pair(torch.ones(2), [torch.ones(1)]), "text")
    doubled = map_tensors(lambda t: t * 2, value)
    assert type(doubled[0]) is BaseModelOutput and doubled[0].last_hidden_state.sum() == 12
    assert isinstance(doubled[1]["a"][1], Point) and doubled[1]["a"][1].y == 3
    assert isinstance(doubled[2], Pair) and doubled[2].first.sum() == 4
    assert doubled[3] == "text"
    assert len(list(tensors_in(value))) == 5
    assert to_device(value, "cpu")[0].last_hidden_state.device.type == "cpu"


def test_inputs_are_described_with_their_names_and_nesting():
    assert describe_value(torch.zeros(2, 3, dtype=torch.int64)) == "int64[2×3]"
    assert describe_value([torch.zeros(3, 8, 8)] * 2) == "list of 2 float32[3×8×8]"
    assert describe_value({"ids": torch.zeros(1, 4)}) == "{ids: float32[1×4]}"
    loaded = LoadedModel(
        torch.nn.Identity(),
        (torch.zeros(1, 4), torch.ones(1, 4)),
        "hf",
        "",
        input_names=("input_ids", "attention_mask"),
    )
    assert describe_inputs(loaded) == ("input_ids=float32[1×4]", "attention_mask=float32[1×4]")


def test_keyword_call_passes_trailing_inputs_by_name_and_compiles():
    class TakesKeywords(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x, *, scale=None, shift=None):
            return {"y": self.lin(x) * scale + shift}

    wrapped = keyword_call(TakesKeywords(), ("scale", "shift"))
    assert isinstance(wrapped, torch.nn.Module) and len(list(wrapped.parameters())) == 2
    inputs = (torch.ones(2, 4), torch.full((1,), 2.0), torch.zeros(1))
    eager = wrapped(*inputs)
    compiled = torch.compile(wrapped, backend="eager")(*inputs)
    torch.testing.assert_close(eager["y"], compiled["y"])
    check_forward(LoadedModel(wrapped, inputs, "hf", "", input_names=("", "scale", "shift")), "hf:x")
