"""What a suggestion is (core.decide.suggestions makes them): the change to test as data
(ConfigChange, applied by "apply and re-run"), the Suggestion with its premise, evidence and
rank, and the checks every rule shares (did the job complete, did this run measure the change
already, can its timing carry advice, did dynamo compile the work). No Qt; any thread."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from core.vocab.config import CompileConfig, DimMark
from core.vocab.records import JobStatus


class UnknownModeError(ValueError):
    """A config's mode that this torch does not know (a report from another torch version, or a
    crafted one): a change cannot fold it into options."""


@dataclass(frozen=True)
class ConfigChange:
    """An "apply and re-run" action: how to change a CompileConfig. Fields left None stay
    as they are; `dynamo_config` and `inductor_options` are merged into the config's (a
    mode is folded into options then, since torch.compile takes one or the other);
    `rerun_only` means run the same config again (e.g. to measure a warm cache)."""

    description: str
    backend: str | None = None
    mode: str | None = None
    dynamic: str | None = None
    fullgraph: bool | None = None
    dynamo_config: tuple[tuple[str, Any], ...] = ()
    inductor_options: tuple[tuple[str, Any], ...] = ()
    rerun_only: bool = False
    mark_dynamic: tuple[DimMark, ...] = ()  # replaces the config's marks (the dynamic-shape call)

    def apply(self, config: CompileConfig) -> CompileConfig:
        fields = {
            k: getattr(self, k) for k in ("backend", "mode", "dynamic", "fullgraph") if getattr(self, k) is not None
        }
        if self.mark_dynamic:
            fields["mark_dynamic"] = self.mark_dynamic
        new = dataclasses.replace(config, **fields)
        if self.dynamo_config:
            new = dataclasses.replace(
                new, dynamo_config=tuple(sorted({**dict(new.dynamo_config), **dict(self.dynamo_config)}.items()))
            )
        if self.inductor_options:
            options = dict(new.inductor_options)
            if new.mode != "default":
                import torch._inductor

                if new.mode not in torch._inductor.list_mode_options():
                    raise UnknownModeError(f"mode {new.mode!r} is not one this torch knows")
                options = {**torch._inductor.list_mode_options(new.mode), **options}
                new = dataclasses.replace(new, mode="default")
            options.update(self.inductor_options)
            new = dataclasses.replace(new, inductor_options=tuple(sorted(options.items())))
        return new

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["dynamo_config"] = dict(self.dynamo_config)
        d["inductor_options"] = dict(self.inductor_options)
        return d


@dataclass(frozen=True)
class Suggestion:
    """One thing to try for config `config` (a label). `rule` names the rule (module
    docstring); `title` says what to do in a line, `evidence` the measurements behind it;
    `code` is what to paste when the change lives in the user's code; `changes` are the
    apply-and-re-run actions, best first (empty when no config change can test it)."""

    rule: str
    config: str
    title: str
    evidence: str
    code: str = ""
    changes: tuple[ConfigChange, ...] = ()
    premise: str = ""  # what this run measured that makes the rule apply
    blocking: bool = False  # it keeps the model from compiling (ranked first)
    explains_ms: float = 0.0  # the time per call it accounts for (ranks the rest)
    # a setting this run did not try, which nothing it measured points to: said last, as such
    untried: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            **{k: v for k, v in dataclasses.asdict(self).items() if k != "changes"},
            "changes": [c.to_dict() for c in self.changes],
        }

    def text(self) -> str:
        lines = [f"[{self.config}] {self.title}", f"  premise: {self.premise}", f"  evidence: {self.evidence}"]
        lines += [f"  apply and re-run: {c.description}" for c in self.changes]
        lines += [f"  {line}" for line in self.code.splitlines()]
        return "\n".join(lines)


def completed(result) -> bool:
    return result.status == JobStatus.COMPLETED


def already_ran(results, config: CompileConfig) -> bool:
    return any(r.config == config for r in results)


def measured_change(results, change: ConfigChange, config: CompileConfig) -> tuple[tuple[ConfigChange, ...], str]:
    """(the change as an action, "") or, when this run already measured its result, ((), a
    note naming that config): nothing to re-run, the user compares the two rows."""
    target = change.apply(config)
    if already_ran(results, target):
        note = f" This run measured it already: config {target.label}"
        if change.mark_dynamic or change.dynamic is not None:  # a dynamic-shape call: its recompiles, before and after
            before = next((len(r.recompiles) for r in results if r.config == config), None)
            after = next(len(r.recompiles) for r in results if r.config == target)
            if before is not None:
                note += f" (recompiles {before} without it, {after} with it)"
        return (), note + "."
    return (change,), ""


def figures(result) -> str:
    s = result.summary()
    if s["compiled_median_ms"] is None or s["eager_median_ms"] is None:
        return ""
    interval = (
        f" [95% CI {s['speedup_ci_low']:.2f}-{s['speedup_ci_high']:.2f}]" if s["speedup_ci_low"] is not None else ""
    )
    return (
        f"compiled {s['compiled_median_ms']:.3f} ms a call against eager {s['eager_median_ms']:.3f} ms "
        f"({s['speedup']:.2f}x{interval}, measured in this run)"
    )


def timing_trusted(result) -> bool:
    """The job's timing may carry advice (core.analysis.quality: not unusable, enough calls)."""
    return result.quality().trusted


def work_in_graphs(result) -> tuple[bool, str]:
    """(did dynamo compile the work of the model, the premise in words): not when it compiled
    nothing, nor when the op profile shows most of a compiled call outside compiled graphs
    (the frames that hold the work were skipped)."""
    from core.decide.recommend import compiled_nothing

    c = result.compile
    if c is None or compiled_nothing(result):
        return False, "dynamo compiled nothing"
    graphs = f"dynamo compiled {c.graph_count} graph{'s' if c.graph_count != 1 else ''} ({c.op_count} ops)"
    profile = result.op_profile
    p = profile.compiled if profile is not None else None
    if p is not None and p.ms_per_call:
        # the model's operator work, inside compiled graphs (kernels, operators) and outside them
        # (eager operators of skipped frames and of the code between graphs)
        inside, outside = p.kernels_ms + p.operators_in_graphs_ms, p.operators_outside_graphs_ms
        if outside > inside:
            return False, (
                f"the op profile shows more operator time outside compiled graphs ({outside:.3f} ms a "
                f"call) than inside ({inside:.3f} ms): the frames that hold the work ran eagerly"
            )
        return True, f"{graphs}, holding {inside:.3f} of {inside + outside:.3f} ms of operator time a call"
    return True, graphs


OUTSIDE_SHARE = 0.5  # "most of a call"
