"""Suggestions from measurements: what to try next, the evidence, and the change as data.

Each rule reads a run's JobResults and returns `Suggestion`s; each carries its evidence in
words and, where a config change can test it, `ConfigChange`s the app offers as "apply and
re-run" (`change.apply(config)` gives the CompileConfig to queue). Rules:

- `freezing`: inductor on the CPU for inference without `freezing=True`;
- `dynamic_shapes`: recompiles from size mismatches → `dynamic=True` or `mark_dynamic`;
- `dynamo_config`: torch's graph-break hints that name a `torch._dynamo.config` setting
  (allow_rnn, capture_scalar_outputs, ...) not yet set;
- `cudagraphs_on_cpu`: a CUDA-graph mode (reduce-overhead, max-autotune) run on the CPU,
  where CUDA graphs do nothing;
- `cudagraphs_skipped`: on a GPU, torch skipped CUDA graphs for some graphs of a CUDA-graph
  mode, with torch's reason (core.capture.live records it) and what to change in the model;
- `compile_cache`: compile time dominates the total at the expected calls → the FX-graph and
  AOTAutograd caches, `torch.compiler.save_cache_artifacts`;
- `time_outside_graphs`: compiled is measurably slower and the op profile (core.measure.op_profile)
  shows most of a call outside compiled graphs, or a large share in guard checks;
- `fullgraph_failed`: a fullgraph=True compile failed on a graph break.

Advice comes only from evidence of this run: each suggestion states its `premise` (what
this run measured that makes it apply), and a rule that needs the timing stays silent when
the job's timing was unusable (core.analysis.quality) or its speedup is within the noise. No figure
measured elsewhere is ever cited. `suggest` ranks what blocks compilation first (a skipped
frame's hint such as allow_rnn, a fullgraph failure, the recompile limit), then the rest by
the time each explains per call (`explains_ms`).

No Qt; any thread (the `dynamo_config` rule reads the installed torch's config keys when
torch is importable).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from core.capture.live import SKIP_PREFIX
from core.vocab.config import CompileConfig
from core.vocab.events import JobStatus
from core.vocab.source_paths import display_path
from core.decide.recommend import DEFAULT_CALLS
from core.analysis.results import UNLOGGED_CUDAGRAPH_SKIP

# torch's hints spell a setting as "torch._dynamo.config.capture_scalar_outputs = True"
# (sometimes in backquotes); the value is a bool or a whole number.
HINTED_SETTING = re.compile(r"torch\._dynamo\.config\.(\w+)`?\s*=\s*`?(True|False|-?\d+)\b")
SIZE_MISMATCH = re.compile(r"tensor '([^']+)' size mismatch at index (\d+)")


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

    def apply(self, config: CompileConfig) -> CompileConfig:
        fields = {k: getattr(self, k) for k in ("backend", "mode", "dynamic", "fullgraph")
                  if getattr(self, k) is not None}
        new = dataclasses.replace(config, **fields)
        if self.dynamo_config:
            new = dataclasses.replace(new, dynamo_config=tuple(sorted({**dict(new.dynamo_config),
                                                                       **dict(self.dynamo_config)}.items())))
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

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in dataclasses.asdict(self).items() if k != "changes"},
                "changes": [c.to_dict() for c in self.changes]}

    def text(self) -> str:
        lines = [f"[{self.config}] {self.title}", f"  premise: {self.premise}", f"  evidence: {self.evidence}"]
        lines += [f"  apply and re-run: {c.description}" for c in self.changes]
        lines += [f"  {line}" for line in self.code.splitlines()]
        return "\n".join(lines)


def _completed(result) -> bool:
    return result.status == JobStatus.COMPLETED


def _already_ran(results, config: CompileConfig) -> bool:
    return any(r.config == config for r in results)


def _measured(results, change: ConfigChange, config: CompileConfig) -> tuple[tuple[ConfigChange, ...], str]:
    """(the change as an action, "") or, when this run already measured its result, ((), a
    note naming that config): nothing to re-run, the user compares the two rows."""
    target = change.apply(config)
    if _already_ran(results, target):
        return (), f" This run measured it already: config {target.label}."
    return (change,), ""


def _figures(result) -> str:
    s = result.summary()
    if s["compiled_median_ms"] is None or s["eager_median_ms"] is None:
        return ""
    interval = (f" [95% CI {s['speedup_ci_low']:.2f}-{s['speedup_ci_high']:.2f}]"
                if s["speedup_ci_low"] is not None else "")
    return (f"compiled {s['compiled_median_ms']:.3f} ms a call against eager {s['eager_median_ms']:.3f} ms "
            f"({s['speedup']:.2f}x{interval}, measured in this run)")


def _timing_trusted(result) -> bool:
    """The job's timing may carry advice (core.analysis.quality: not unusable, enough calls)."""
    return result.quality().trusted


def _work_in_graphs(result) -> tuple[bool, str]:
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
            return False, (f"the op profile shows more operator time outside compiled graphs ({outside:.3f} ms a "
                           f"call) than inside ({inside:.3f} ms): the frames that hold the work ran eagerly")
        return True, f"{graphs}, holding {inside:.3f} of {inside + outside:.3f} ms of operator time a call"
    return True, graphs


def freezing(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if (not _completed(result) or cfg.backend != "inductor" or result.spec.device != "cpu"
            or dict(cfg.inductor_options).get("freezing") or result.spec.sweep_shapes
            or result.spec.sweep_batch or result.spec.task == "training"  # freezing is inference-only
            or (result.model_info is not None and result.model_info.parameters == 0)
            or not _timing_trusted(result)):
        return []
    compiled, where = _work_in_graphs(result)
    if not compiled:
        return []
    change = ConfigChange("add torch._inductor.config.freezing=True (options={'freezing': True})",
                          inductor_options=(("freezing", True),))
    if _already_ran(results, change.apply(cfg)):
        return []
    frozen = [r for r in results if r is not result and _completed(r) and dict(r.config.inductor_options).get(
        "freezing") and r.summary()["speedup"]]
    measured = "".join(f"; this run measured {r.config.label} at {r.summary()['speedup']:.2f}x eager"
                       for r in frozen[:2])
    profile = result.op_profile
    explains = profile.compiled.operators_in_graphs_ms if profile is not None and profile.compiled else 0.0
    return [Suggestion(
        "freezing", cfg.label, "Try freezing: inductor on the CPU for inference can run faster with the "
        "weights folded in as constants",
        f"{_figures(result)}; this ran without freezing, so every weight stays a graph input (no conv-batchnorm "
        f"folding, no prepacked oneDNN weights){measured}; what freezing gains depends on the model and the CPU, "
        "and only a re-run here measures it.",
        code="torch._inductor.config.freezing = True  # or torch.compile(..., options={\"freezing\": True})",
        changes=(change,), premise=f"inductor inference on the CPU without freezing; {where}",
        explains_ms=explains)]


def dynamic_shapes(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    reasons = [r for rc in result.recompiles for r in rc.reasons]
    reasons += [r for v in result.variants for r in v.recompile_reasons]
    sizes = [(m.group(1), int(m.group(2)), r) for r in dict.fromkeys(reasons) if (m := SIZE_MISMATCH.search(r))]
    if cfg.dynamic == "true" or not sizes:
        return []
    count = max(len(result.recompiles), sum(1 for v in result.variants if v.recompiled))
    evidence = f"{count} recompile{'s' if count != 1 else ''} from input sizes, e.g. \"{sizes[0][2]}\""
    cost = sum(v.compile_time_s for v in result.variants if v.recompiled)
    if cost:
        evidence += f"; they cost {cost:.1f} s of compiling"
    if any(v.recompile_limit_hit for v in result.variants):
        evidence += "; the recompile limit was hit, after which torch ran new shapes eagerly"
    dims = dict.fromkeys((_arg_name(name), index) for name, index, _ in sizes)
    code = "\n".join(f"torch._dynamo.mark_dynamic({name}, {index})  # before the first compiled call"
                      for name, index in dims if name)
    if any(not name for name, _ in dims):
        evidence += ("; a changing tensor is made inside the model (passed across a graph break), where "
                     "mark_dynamic cannot reach it: dynamic=True can")
    changes, note = _measured(results, ConfigChange("compile with dynamic=True (every size symbolic from the start)",
                                                    dynamic="true"), cfg)
    limit = any(v.recompile_limit_hit for v in result.variants)
    return [Suggestion("dynamic_shapes", cfg.label,
                       "Compile for changing sizes: dynamic=True, or mark the changing dimension dynamic",
                       evidence + "." + note, code=code, changes=changes,
                       premise=f"this run recompiled {count} time{'s' if count != 1 else ''} for new input sizes"
                               + ("; the recompile limit was hit" if limit else ""),
                       blocking=limit, explains_ms=1000.0 * cost / max(1, calls))]


def _arg_name(guard_name: str) -> str:
    """The forward's argument behind a guard's tensor name ("x", "L['x']", "args[0]"), or
    "" for a tensor made inside the model (dynamo's own names start with "___")."""
    m = re.fullmatch(r"L\['(\w+)'\]", guard_name)
    if m:
        return m.group(1)
    m = re.fullmatch(r"args\[(\d+)\]", guard_name)
    if m:
        return f"inputs[{m.group(1)}]"
    return guard_name if re.fullmatch(r"[A-Za-z]\w*", guard_name) else ""


def _dynamo_keys() -> set[str] | None:
    """The installed torch's dynamo settings, when torch is loaded already (the CLI and the
    app have it; a process that only writes a report must not pay seconds to import it);
    None means unknown, and a hint's setting is then not checked against them."""
    import sys

    if "torch" not in sys.modules:
        return None
    try:
        from core.vocab.config import dynamo_config_defaults

        return set(dynamo_config_defaults())
    except Exception:
        return None


def dynamo_config(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    applied = {k: str(v) for k, v in cfg.dynamo_config}
    found: dict[str, tuple[str, list]] = {}
    for gb in result.graph_breaks:
        for hint in gb.hints:
            for key, value in HINTED_SETTING.findall(hint):
                if applied.get(key) != value:
                    found.setdefault(key, (value, []))[1].append((gb, hint))
    known = _dynamo_keys()
    out = []
    for key, (value, breaks) in found.items():
        if known is not None and key not in known:
            continue
        gb, hint = breaks[0]
        file, line = (gb.user_file, gb.user_line) if gb.user_file else (gb.file, gb.line)
        where = f"{display_path(file)}:{line}" if file else "?"
        what = (f"frame skipped ({gb.eager_function or 'a function'} ran eagerly)" if gb.frame_skipped
                else f"graph break ({gb.per_call} per call)")
        literal = {"True": True, "False": False}.get(value, None)
        typed = literal if literal is not None else int(value)
        change = ConfigChange(f"set torch._dynamo.config.{key} = {value}", dynamo_config=((key, typed),))
        more = f" and {len(breaks) - 1} more" if len(breaks) > 1 else ""
        changes, note = _measured(results, change, cfg)
        skipped = any(b.frame_skipped for b, _ in breaks)
        cost = sum(c.cost_ms_per_call for b, _ in breaks if (c := result.break_cost(b)) is not None)
        out.append(Suggestion(
            "dynamo_config", cfg.label, f"Set torch._dynamo.config.{key} = {value}, as torch's hint says",
            f"{what} {gb.gb_code or ''} at {where}{more}: {gb.reason}; torch's hint: {hint}".replace("  ", " ") + note,
            code=f"torch._dynamo.config.{key} = {value}", changes=changes,
            premise=f"torch logged this hint for a {'frame it skipped' if skipped else 'graph break'} in this run",
            blocking=skipped, explains_ms=cost))
    return out


def _without_cudagraphs(cfg: CompileConfig) -> tuple[ConfigChange, str, str]:
    """(the change that stops recording CUDA graphs, what it is called, the code for it)."""
    if cfg.inductor_options:  # options, no mode (torch.compile takes one or the other)
        options = {**dict(cfg.inductor_options), "triton.cudagraphs": False}
        return (ConfigChange("set the inductor option triton.cudagraphs=False",
                             inductor_options=(("triton.cudagraphs", False),)),
                "options with triton.cudagraphs=False", f"torch.compile(model, options={options!r})")
    instead = "default" if cfg.mode == "reduce-overhead" else "max-autotune-no-cudagraphs"
    return (ConfigChange(f"use mode={instead!r}", mode=instead), f"mode {instead!r}",
            f"torch.compile(model, mode={instead!r})")


def _mode_name(cfg: CompileConfig) -> str:
    return f"mode={cfg.mode!r}" if not cfg.inductor_options else "triton.cudagraphs=True"


def cudagraphs_on_cpu(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if result.spec.device != "cpu" or not cfg.records_cudagraphs:
        return []
    change, instead, code = _without_cudagraphs(cfg)
    changes, note = _measured(results, change, cfg)
    skips = len(result.cudagraph_skips)
    confirmed = (f" torch confirms it: it counted {skips} CUDA-graph skip{'s' if skips != 1 else ''} (graphs "
                 "with no GPU device)." if skips else "")
    return [Suggestion(
        "cudagraphs_on_cpu", cfg.label, f"{_mode_name(cfg)} has no effect on the CPU: use {instead}",
        f"{_mode_name(cfg)} records CUDA graphs to cut launch overhead on a GPU; this ran on the CPU, where there "
        f"are none, so it measured {instead} under another name.{confirmed}{note}",
        code=code, changes=changes, premise=f"this run used {_mode_name(cfg)} on the CPU")]


# torch's skip reasons (words of torch/_inductor/cudagraph_utils.py, lowering.py, compile_fx.py)
# → (what to do, in a line; why and how); the first match wins, an unknown reason stands alone.
CUDAGRAPH_ADVICE = (
    ("mutat", "update inputs out of place",
     "the graph changes an input in place (a buffer updated in forward(), an in-place op on an argument); CUDA "
     "graphs replay fixed memory, so torch will not record it: make that update out of place, or do it outside "
     "the compiled model"),
    ("cpu device", "move the CPU tensors to the GPU",
     "part of the graph runs on the CPU (a CPU tensor or buffer, or an op that returns one): move it to the GPU, "
     "e.g. register it as a buffer so .to(device) moves it"),
    ("multiple devices", "keep the compiled model on one GPU", "the graph uses more than one device"),
    ("incompatible op", "move the op out of the compiled region",
     "an op CUDA graphs cannot capture (its output size depends on data, or it syncs with the CPU): move it out "
     "of the compiled region or replace it"),
    ("symbolic shapes", "compile for fixed shapes",
     "the graph has dynamic shapes and cudagraph_skip_dynamic_graphs is set: compile for fixed shapes "
     "(dynamic=False, inputs padded to a few sizes) to get CUDA graphs"),
    ("control flow operator", "keep torch.cond / while_loop out of CUDA-graph modes",
     "graphs with torch.cond / torch.while_loop on the GPU are not recorded"),
    ("index_put_", "use torch.where instead of a masked assignment",
     "an in-place assignment through a boolean mask (x[mask] = v) cannot be recorded: use torch.where(mask, v, x)"),
    ("caching allocator", "turn the CUDA caching allocator back on",
     "the CUDA caching allocator is off (PYTORCH_NO_CUDA_MEMORY_CACHING set?) and CUDA graphs need it"),
    ("re-recording limit", "give the graph stable inputs between calls",
     "torch re-recorded this graph more often than cudagraph_unexpected_rerecord_limit allows (inputs at new "
     "addresses or of new shapes on each call, e.g. tensors made fresh per call or dynamic shapes) and now "
     "runs it without CUDA graphs: keep inputs in the same tensors, or pad shapes to a few sizes"),
    ("non-tensor inputs", "pass tensors, not Python values, into the compiled region",
     "the graph takes inputs that are not tensors (Python numbers or objects torch could not make symbolic)"),
    ("cpp-wrapper", "drop cpp_wrapper, or graph partitioning, for CUDA graphs",
     "inductor's cpp_wrapper does not support graph partitioning with CUDA graphs yet"),
    ("mempool", "keep user CUDA MemPool contexts out of the compiled region",
     "allocations inside a user CUDA MemPool context cannot be captured"),
)


def cudagraph_advice(reason: str) -> tuple[str, str]:
    """(what to do in a line, why and how) for torch's skip reason; ("", "") when unknown."""
    low = reason.lower()
    return next(((fix, why) for key, fix, why in CUDAGRAPH_ADVICE if key in low), ("", ""))


def cudagraphs_skipped(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if result.spec.device == "cpu" or not cfg.records_cudagraphs or not result.cudagraph_skips:
        return []
    groups: dict[str, list] = {}  # reason → its skips, first seen first
    for skip in result.cudagraph_skips:
        groups.setdefault(skip.reason, []).append(skip)
    parts = []
    for reason, skips in groups.items():
        where = next((f" at {display_path(k.file)}:{k.line}" for k in skips if k.file), "")
        said = f"torch: {reason!r}" if reason else UNLOGGED_CUDAGRAPH_SKIP
        parts.append(f"{said}{where}{f' ({len(skips)} times)' if len(skips) > 1 else ''}")
    first = next((r for r in groups if r), "")
    fix, advice = cudagraph_advice(first)
    n = len(result.cudagraph_skips)
    # torch counts a skip per graph, partition and recompile (forward and backward apart) and
    # does not say how many it recorded: whether any graph still runs as a CUDA graph is what
    # the re-run without them measures.
    change, instead, code = _without_cudagraphs(cfg)
    changes, note = _measured(results, change, cfg)
    tail = (f" Graphs torch skipped run without CUDA graphs; re-running with {instead} measures what the "
            f"CUDA graphs that were recorded, if any, bring.")
    short = SKIP_PREFIX.sub("", first, count=1)
    return [Suggestion(
        "cudagraphs_skipped", cfg.label,
        f"CUDA graphs were skipped {n} time{'s' if n != 1 else ''}" + (f" ({short})" if short else "")
        + (f": {fix}" if fix else ""),
        "; ".join(parts) + "." + (f" What to change: {advice}." if advice else "") + tail + note,
        changes=changes, premise=f"torch reported {n} CUDA-graph skip{'s' if n != 1 else ''} in this run")]


CACHE_CODE = """\
# after the first compiled call (the compile is done):
artifacts = torch.compiler.save_cache_artifacts()
if artifacts is not None:
    with open("compile_cache.bin", "wb") as fh:
        fh.write(artifacts[0])
# in a new process, before the first compiled call:
with open("compile_cache.bin", "rb") as fh:
    torch.compiler.load_cache_artifacts(fh.read())"""


def _compile_share(result, calls: int) -> tuple[float, float, float] | None:
    """(compile s, compiled ms a call, the compile's share of the total at `calls`) when the
    compile dominates that total for a completed inductor config, else None."""
    s = result.summary()
    compile_s, per_call = s["compile_time_s"], s["compiled_median_ms"]
    if not _completed(result) or result.config.backend != "inductor" or compile_s is None or per_call is None:
        return None
    running = calls * per_call / 1000.0
    return (compile_s, per_call, compile_s / (compile_s + running)) if compile_s > running else None


def compile_cache(result, results, calls: int) -> list[Suggestion]:
    """One suggestion for the run (the first config it applies to), with every such config's
    figures: the advice is the same for all of them."""
    mine = _compile_share(result, calls)
    if mine is None:
        return []
    dominated = [(r, share) for r in results if (share := _compile_share(r, calls)) is not None]
    # said for a cold compile first (its re-run measures the warm cache), else the first
    cold = [d for d in dominated if d[0].summary()["cache_state"] == "miss"]
    if (cold or dominated)[0][0] is not result:
        return []
    dominated = [d for d in dominated if d[0] is result] + [d for d in dominated if d[0] is not result]
    compile_s, per_call, share = mine
    running = calls * per_call / 1000.0
    evidence = (f"compiling took {compile_s:.1f} s, {share:.0%} of the total at {calls:,} calls "
                f"({calls:,} x {per_call:.3f} ms = {running:.1f} s)")
    cache = result.summary()["cache_state"]
    changes = ()
    if cache == "miss":
        evidence += ("; this compile was cold (FX-graph cache miss): the FX-graph and AOTAutograd caches "
                     "(TORCHINDUCTOR_CACHE_DIR, on by default) keep its result, so the next process on this "
                     "machine compiles faster; the re-run measures by how much")
        changes = (ConfigChange("re-run unchanged to measure the compile with a warm cache", rerun_only=True),)
    else:
        evidence += f" even with the FX-graph cache {cache}"
    others = [f"{r.config.label} {c:.1f} s ({sh:.0%})" for r, (c, _, sh) in dominated[1:]]
    if others:
        evidence += f"; the same holds for {', '.join(others)}"
    return [Suggestion(
        "compile_cache", result.config.label,
        "Compile time dominates: reuse compiled artifacts across processes and machines",
        evidence + "; torch.compiler.save_cache_artifacts() packs them for another machine or container.",
        code=CACHE_CODE, changes=changes,
        premise=f"this run's compile took {share:.0%} of the total at {calls:,} calls",
        explains_ms=1000.0 * compile_s / max(1, calls))]


OUTSIDE_SHARE = 0.5  # "most of a call"
GUARD_SHARE = 0.2
GUARD_CODE = """\
# once every input shape the model will see has been compiled (warmed up):
torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)  # unsafe: read torch's docs first"""


def time_outside_graphs(result, results, calls: int) -> list[Suggestion]:
    profile = result.op_profile
    s = result.summary()
    if (not _completed(result) or profile is None or profile.compiled is None or not profile.compiled.ms_per_call
            or not s["speedup"] or s["speedup_ci_high"] is None or s["speedup_ci_high"] >= 1.0
            or not _timing_trusted(result)):
        return []  # "compiled is slower" only when the interval says so, from a timing that can say it
    c, label, out = profile.compiled, result.config.label, []
    verdict = result.time_verdict()
    outside = c.outside_graphs_ms / c.ms_per_call
    if outside >= OUTSIDE_SHARE:
        worst = profile.break_costs[0] if profile.break_costs else None
        fix = (f"; the costliest graph break is {worst.reason} at {display_path(worst.file)}:{worst.line} "
               f"({worst.cost_ms_per_call:.3f} ms a call)" if worst else "")
        out.append(Suggestion(
            "time_outside_graphs", label, "Compiled is slower: most of each call runs outside compiled graphs; "
            "remove the graph breaks (costliest first) or do not compile this model",
            f"{_figures(result)}; under the profiler {c.outside_graphs_ms:.3f} of {c.ms_per_call:.3f} ms per call "
            f"({outside:.0%}) ran outside compiled graphs{fix}. {verdict}".strip(),
            premise="compiled is measurably slower than eager in this run, and its op profile shows most of a call "
                    "outside compiled graphs", explains_ms=c.outside_graphs_ms))
    guards = c.guard_checks_ms / c.ms_per_call
    if guards >= GUARD_SHARE:
        out.append(Suggestion(
            "time_outside_graphs", label, "Compiled is slower: guard checks take a large share of each call",
            f"{_figures(result)}; guard checks (dynamo's cache lookup before each graph) cost {c.guard_checks_ms:.3f} "
            f"of {c.ms_per_call:.3f} ms per call ({guards:.0%}); fewer graph breaks mean fewer guard checks. "
            f"{verdict}".strip(), code=GUARD_CODE,
            premise="compiled is measurably slower than eager in this run, and its op profile shows guard checks "
                    f"taking {guards:.0%} of a call", explains_ms=c.guard_checks_ms))
    return out


def fullgraph_failed(result, results, calls: int) -> list[Suggestion]:
    """fullgraph=True refused a graph break: nothing compiled; the same config without
    fullgraph shows where and why it breaks."""
    cfg = result.config
    if not cfg.fullgraph or result.status != JobStatus.FAILED or "fullgraph" not in result.failure_reason:
        return []
    changes, note = _measured(results, ConfigChange("compile with fullgraph=False (breaks allowed, each one "
                                                    "reported)", fullgraph=False), cfg)
    return [Suggestion(
        "fullgraph_failed", cfg.label, "fullgraph=True failed on a graph break: re-run without it to see every break",
        f"{result.failure_reason}.{note}", changes=changes, premise="this run's fullgraph compile failed",
        blocking=True)]


RULES = (fullgraph_failed, freezing, dynamic_shapes, dynamo_config, cudagraphs_on_cpu, cudagraphs_skipped,
         compile_cache, time_outside_graphs)


def suggest(results, calls: int = DEFAULT_CALLS) -> list[Suggestion]:
    """Every rule over every config of a run (results: JobResults): what blocks compilation
    first, then by the time each explains per call (rule order among equals)."""
    out: list[Suggestion] = []
    for rule in RULES:
        for result in results:
            try:
                out += rule(result, results, calls)
            except UnknownModeError:  # a report's mode this torch does not know costs that suggestion,
                continue  # never the report
    order = {rule.__name__: i for i, rule in enumerate(RULES)}
    return sorted(out, key=lambda s: (not s.blocking, -s.explains_ms, order.get(s.rule, 99)))
