"""Training steps (`--task training`): one timed call is forward, loss, backward and an
optimizer step, eager against the same step with the model compiled (and, with
`compile_optimizer`, the optimizer step compiled too).

Both sides share one model and one optimizer, so that the memory figures compare the steps,
not two copies. To make both start from the same weights and optimizer state, a snapshot of
`model.state_dict()` and of the optimizer's state is taken once, after a priming step that
creates the optimizer's state (AdamW's moments), and copied back *in place* (`copy_`, never new
tensors: the compiled model and the compiled optimizer step guard on their tensors) whenever
the calls switch side and before each call of the correctness check. The copy happens outside
the timed call (the job's `before` hook).

The loss is the model's own when it returns one (a Hugging Face ModelOutput's `loss`, given
`labels`: see `add_labels`), else the mean of every floating-point output. The correctness
check compares the loss and every parameter's gradient (core.measure.output_match's rules).
"""

from __future__ import annotations

import copy
from typing import Callable

from core.measure.output_match import tree_map_tensors

TASKS = ("inference", "training")
OPTIMIZERS = ("sgd", "adamw")
LR = 1e-3  # small: the weights barely move over a benchmark, so later steps stay comparable
LM_HEADS = ("ForCausalLM", "ForMaskedLM", "LMHeadModel")  # heads whose labels are the input ids themselves


def loss_of(outputs):
    """The model's own loss (`outputs.loss` or `outputs["loss"]`) when present, else the mean
    of every floating-point output tensor (a scalar that depends on all of them)."""
    import torch

    own = getattr(outputs, "loss", None)
    if own is None and isinstance(outputs, dict):
        own = outputs.get("loss")
    if isinstance(own, torch.Tensor):
        return own
    parts = []
    tree_map_tensors(
        lambda t: parts.append(t.float().mean()) if t.is_floating_point() and t.requires_grad else None, outputs
    )
    if not parts:
        raise ValueError(
            "the model's outputs hold no floating-point tensor that needs a gradient: there is nothing to train"
        )
    return torch.stack(parts).sum()


def add_labels(loaded) -> str:
    """For Hugging Face language-model heads (…ForCausalLM, …ForMaskedLM, …LMHeadModel), pass the input ids as
    `labels` too, so the model computes its own loss. Returns what was done, in words."""
    from core.models.values import keyword_call

    wrapped = getattr(loaded.model, "wrapped", None)
    names = tuple(loaded.input_names)
    if loaded.kind != "hf" or wrapped is None or "input_ids" not in names or "labels" in names:
        return ""
    import inspect

    if not type(wrapped).__name__.endswith(LM_HEADS) or "labels" not in inspect.signature(wrapped.forward).parameters:
        return ""
    ids = loaded.inputs[names.index("input_ids")]
    loaded.model = keyword_call(wrapped, names + ("labels",))
    loaded.inputs = tuple(loaded.inputs) + (ids,)
    loaded.input_names = names + ("labels",)
    return "labels = input_ids: the model's own loss"


def make_optimizer(name: str, params):
    import torch

    if name == "sgd":
        return torch.optim.SGD(params, lr=LR)
    if name == "adamw":
        # foreach=False: one kernel per tensor, what a compiled optimizer step fuses
        return torch.optim.AdamW(params, lr=LR)
    raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, not {name!r}")


def disable_dropout(model) -> int:
    """p=0 for every dropout module: a step that draws random numbers cannot be compared with
    the compiled one (compiled code draws them differently). Returns how many were changed."""
    import torch

    n = 0
    for m in model.modules():
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p:
            m.p = 0.0
            n += 1
    for m in model.modules():  # Hugging Face attention reads its own dropout probability
        for attr in ("dropout_prob", "attention_dropout"):
            if isinstance(getattr(m, attr, None), float):
                setattr(m, attr, 0.0)
    return n


class TrainingSteps:
    """The eager and compiled training steps over one module and one optimizer, and the reset
    that puts both back to the same weights and optimizer state. Job-process code."""

    def __init__(self, module, inputs: tuple, optimizer: str = "sgd"):
        import torch

        self.torch = torch
        self.module = module
        module.train()
        self.dropouts_disabled = disable_dropout(module)
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.names = [n for n, p in module.named_parameters() if p.requires_grad]
        self.optimizer = make_optimizer(optimizer, self.params)
        self.compiled_opt_step: Callable | None = None
        self._prime()
        self._model_state = copy.deepcopy(module.state_dict())
        self._opt_state = copy.deepcopy(self.optimizer.state_dict()["state"])
        self.last_side = "eager"

    def _prime(self) -> None:
        """One optimizer step with zero gradients: creates the optimizer's state (so later
        resets copy into existing tensors), then the weights are snapshotted."""
        for p in self.params:
            p.grad = self.torch.zeros_like(p)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    def reset(self) -> None:
        """Weights and optimizer state back to the snapshot, in place."""
        torch = self.torch
        with torch.no_grad():
            self.module.load_state_dict(self._model_state)
            for i, p in enumerate(self.params):
                saved, state = self._opt_state.get(i, {}), self.optimizer.state.get(p, {})
                for key, value in saved.items():
                    if isinstance(value, torch.Tensor) and isinstance(state.get(key), torch.Tensor):
                        state[key].copy_(value)
                    else:
                        state[key] = copy.deepcopy(value)
        self.optimizer.zero_grad(set_to_none=True)

    def compile_optimizer(self, compile_kwargs: dict) -> None:
        """The optimizer step compiled (torch.compile of `optimizer.step`) for the compiled side."""
        self.compiled_opt_step = self.torch.compile(self.optimizer.step, **compile_kwargs)

    def step(self, forward: Callable, side: str, keep: bool = False) -> Callable:
        """A callable `(*inputs) -> loss` running one training step with `forward` (the module or
        its compiled form). `keep`: return {"loss", "grads"} (the correctness check's outputs)."""
        optimizer = self.optimizer

        def training_step(*inputs):
            opt_step = self.compiled_opt_step if side == "compiled" and self.compiled_opt_step else optimizer.step
            optimizer.zero_grad(set_to_none=True)
            loss = loss_of(forward(*inputs))
            loss.backward()
            kept = None
            if keep:
                kept = {
                    "loss": loss.detach().clone(),
                    "grads": {
                        n: (p.grad.detach().clone() if p.grad is not None else None)
                        for n, p in zip(self.names, self.params)
                    },
                }
            opt_step()
            return kept if keep else loss.detach()

        return training_step

    def before(self, side: str, then: Callable | None = None) -> Callable:
        """A `before` hook for the job's timed calls: reset when the calls switch side, then
        `then` (a CUDA-graph step mark)."""

        def hook():
            if self.last_side != side:
                self.reset()
                self.last_side = side
            if then is not None:
                then()

        return hook

    def checked(self, forward: Callable, side: str) -> Callable:
        """The correctness check's call: reset, one step, its loss and gradients."""
        step = self.step(forward, side, keep=True)

        def check_step(*inputs):
            self.reset()
            self.last_side = side
            out = step(*inputs)
            out["grads"] = {k: v for k, v in out["grads"].items() if v is not None}
            return out

        return check_step
