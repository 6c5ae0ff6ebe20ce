"""Which submodule's compiled code diverges? Run in a job's child after its accuracy check failed
and everything else was measured (`JobSpec.localize`).

One eager call records, for every submodule, the inputs of its first call and its outputs
(forward pre-hooks and hooks, in the order the submodules start). Then, from the model's direct
children in that order, each is compiled alone with the job's own config and called on its
recorded inputs; its outputs are compared with its recorded eager outputs by the accuracy
check's rules (core.measure.output_match: torch._dynamo.utils.same's). The first child that
diverges is searched the same way, down to the deepest submodule that diverges alone: that is
the one named. When no child diverges alone, the divergence comes from how they are compiled
together (or from code in a forward outside any submodule), and it is said so.

torch._dynamo.reset() before each compile: submodules of one class share their forward's code,
and without it the eighth instance would hit the recompile limit and run eagerly (a false
pass). Bounded by `max_compiles` and `budget_s`; what was not reached is said.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

from core.measure.accuracy import float64_reference
from core.measure.output_match import compare, tree_map_tensors

MAX_COMPILES = 48
BUDGET_S = 300.0


@dataclass(frozen=True)
class ModuleDivergence:
    """`module` the deepest submodule whose compiled outputs diverge alone ("" when none does),
    `kind` its class, `reason` the accuracy check's sentence for it (or why none was found),
    `checked` how many submodules were compiled and compared."""

    module: str
    kind: str
    reason: str
    checked: int
    max_rel_error: float | None = None


def _snapshot(value):
    return tree_map_tensors(lambda t: t.detach().clone(), value)


def record_calls(model, inputs: tuple) -> tuple[list[str], dict[str, tuple]]:
    """(submodule names in the order their first call started, name → (args, kwargs, outputs))."""
    order: list[str] = []
    calls: dict[str, tuple] = {}
    pending: dict[str, tuple] = {}
    handles = []

    def pre(name):
        def hook(module, args, kwargs):
            if name not in pending and name not in calls:
                order.append(name)
                pending[name] = (_snapshot(args), _snapshot(kwargs))

        return hook

    def post(name):
        def hook(module, args, kwargs, output):
            if name in pending and name not in calls:
                a, k = pending.pop(name)
                calls[name] = (a, k, _snapshot(output))

        return hook

    try:
        for name, module in model.named_modules():
            if name:
                handles.append(module.register_forward_pre_hook(pre(name), with_kwargs=True))
                handles.append(module.register_forward_hook(post(name), with_kwargs=True))
        model(*inputs)
    finally:
        for h in handles:
            h.remove()
    return [n for n in order if n in calls], calls


def _parent(name: str) -> str:
    return name.rpartition(".")[0]


def localize(
    model,
    inputs: tuple,
    compile_module: Callable[[Any], Callable],
    should_stop: Callable[[], None] = lambda: None,
    max_compiles: int = MAX_COMPILES,
    budget_s: float = BUDGET_S,
) -> ModuleDivergence:
    """The deepest submodule whose compiled outputs diverge alone (see the module docstring).
    `compile_module(submodule)` returns it compiled as the job compiles the model;
    `should_stop()` raises to cancel."""
    import torch

    order, calls = record_calls(model, inputs)
    if not order:
        return ModuleDivergence("", "", "the model has no submodules to compile one at a time", 0)
    started = time.monotonic()
    checked = 0
    found: tuple[str, Any] | None = None
    parent = ""
    cut = ""
    while True:
        diverged = None
        for name in [n for n in order if _parent(n) == parent]:
            should_stop()
            if checked >= max_compiles or time.monotonic() - started > budget_s:
                cut = (
                    f"; stopped after {checked} submodules ({max_compiles} at most, {budget_s:g} s at most), "
                    "so a deeper one may be the cause"
                )
                break
            args, kwargs, expected = calls[name]
            sub = model.get_submodule(name)
            torch._dynamo.reset()
            checked += 1
            try:
                got = _snapshot(compile_module(sub)(*args, **kwargs))
            except Exception as exc:  # noqa: BLE001 - a submodule that cannot be compiled alone is skipped
                del exc
                continue
            fp64 = (lambda sub=sub, args=args: float64_reference(sub, args)) if not kwargs else None
            result = compare(expected, got, fp64)
            if result.status == "fail":
                diverged = (name, result)
                break
        if diverged is None:
            break
        found, parent = diverged, diverged[0]
        if cut:
            break
    torch._dynamo.reset()
    if found is None:
        return ModuleDivergence(
            "",
            "",
            "no submodule diverges when compiled alone: the divergence comes from how they are compiled "
            f"together, or from code in a forward outside any submodule ({checked} compiled and compared{cut})",
            checked,
        )
    name, result = found
    kind = type(model.get_submodule(name)).__name__
    return ModuleDivergence(name, kind, result.reason + cut, checked, result.max_rel_error)
