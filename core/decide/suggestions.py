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

import re

from core.analysis.quality import faults_between_processes
from core.decide.advice import (
    OUTSIDE_SHARE,
    ConfigChange,
    Suggestion,
    UnknownModeError,
    already_ran,
    completed,
    figures,
    measured_change,
    timing_trusted,
    work_in_graphs,
)
from core.decide.cudagraph_rules import cudagraphs_on_cpu, cudagraphs_skipped
from core.decide.recommend import CANNOT_TELL, DEFAULT_CALLS, NOT_COMPILED, REFERENCE_BACKENDS, reference_note
from core.vocab.records import JobStatus
from core.vocab.source_paths import display_path

# torch's hints spell a setting as "torch._dynamo.config.capture_scalar_outputs = True"
# (sometimes in backquotes); the value is a bool or a whole number.
HINTED_SETTING = re.compile(r"torch\._dynamo\.config\.(\w+)`?\s*=\s*`?(True|False|-?\d+)\b")


def freezing(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if (
        not completed(result)
        or cfg.backend != "inductor"
        or result.spec.device != "cpu"
        or dict(cfg.inductor_options).get("freezing")
        or result.spec.sweep_shapes
        or result.spec.sweep_batch
        or result.spec.task == "training"  # freezing is inference-only
        or (result.model_info is not None and result.model_info.parameters == 0)
        or not timing_trusted(result)
    ):
        return []
    compiled, where = work_in_graphs(result)
    if not compiled:
        return []
    change = ConfigChange(
        "add torch._inductor.config.freezing=True (options={'freezing': True})", inductor_options=(("freezing", True),)
    )
    if already_ran(results, change.apply(cfg)):
        return []
    frozen = [
        r
        for r in results
        if r is not result
        and completed(r)
        and dict(r.config.inductor_options).get("freezing")
        and r.summary()["speedup"]
    ]
    faster = [r for r in frozen if _measurably_faster(r, result)]
    if frozen and not faster:
        return []  # this run measured freezing and it did not beat this config: no "try freezing"
    measured = "".join(
        f"; this run measured {r.config.label} at {r.summary()['speedup']:.2f}x eager, measurably faster than "
        f"{cfg.label} ({result.summary()['speedup']:.2f}x)"
        for r in faster[:2]
    )
    profile = result.op_profile
    explains = profile.compiled.operators_in_graphs_ms if profile is not None and profile.compiled else 0.0
    return [
        Suggestion(
            "freezing",
            cfg.label,
            "Try freezing: inductor on the CPU for inference can run faster with the weights folded in as constants",
            f"{figures(result)}; this ran without freezing, so every weight stays a graph input (no conv-batchnorm "
            f"folding, no prepacked oneDNN weights){measured}; what freezing gains depends on the model and the CPU, "
            "and only a re-run here measures it.",
            code='torch._inductor.config.freezing = True  # or torch.compile(..., options={"freezing": True})',
            changes=(change,),
            premise=f"inductor inference on the CPU without freezing; {where}",
            explains_ms=explains,
        )
    ]


def _measurably_faster(a, b) -> bool:
    """`a`'s speedup over its own eager side is above `b`'s beyond both 95% intervals, from
    timings that can say so."""
    sa, sb = a.summary(), b.summary()
    low, high = sa["speedup_ci_low"], sb["speedup_ci_high"]
    return timing_trusted(a) and timing_trusted(b) and low is not None and high is not None and low > high


def dynamic_shapes(result, results, calls: int) -> list[Suggestion]:
    """Recompiles for new input sizes: exactly the dimensions to mark (core.analysis.dynamic_dims,
    min/max from the sizes seen), with the code, applied and re-run as a config that marks them;
    dynamic=True second (it reaches tensors made inside the model too); or, when every guard
    that failed is on something else than a size, that dynamic shapes cannot help."""
    from core.analysis.dynamic_dims import analyse, cannot_help

    cfg = result.config
    if cfg.dynamic == "true":
        return []
    a = analyse(result)
    if not a.recompiles or not (a.to_mark or a.internal or a.not_sizes or a.specialized):
        return []
    limit = any(v.recompile_limit_hit for v in result.variants)
    count = a.recompiles
    premise = f"this run recompiled {count} time{'s' if count != 1 else ''}" + (
        "; the recompile limit was hit, after which torch ran new shapes eagerly" if limit else ""
    )
    cost = f"; they cost {a.compile_s:.1f} s of compiling" if a.compile_s else ""
    why_not = cannot_help(a)
    if why_not:
        return [
            Suggestion(
                "dynamic_shapes",
                cfg.label,
                "Dynamic shapes cannot help these recompiles",
                f"{count} recompile{'s' if count != 1 else ''}{cost}: {why_not}. "
                + (
                    "Change the code there so it does not need the exact size (a tensor operation instead of a "
                    "Python loop or int() over it), or keep the size fixed (pad the inputs to a few sizes)."
                    if a.specialized
                    else "Find what changes between calls in those guards and keep it fixed."
                ),
                premise=premise,
                blocking=limit,
            )
        ]
    parts = []
    for r in a.to_mark:
        failed = f", torch's guard failed {r.guard_failures}x" if r.guard_failures else ""
        parts.append(f"{r.where}: sizes {', '.join(map(str, r.values))} ({r.recompiles} recompile(s){failed})")
    evidence = "; ".join(parts) or "no input's size changed"
    if a.internal:
        evidence += (
            f'; a tensor made inside the model changed size ("{a.internal[0]}"): mark_dynamic cannot reach it, '
            "dynamic=True can"
        )
    changes: tuple = ()
    note = ""
    if a.to_mark:
        marks = ", ".join(r.where for r in a.to_mark)
        marked, note = measured_change(
            results,
            ConfigChange(
                f"mark {marks} dynamic before the first call (mark_dynamic={','.join(m.label for m in a.marks())})",
                mark_dynamic=a.marks(),
            ),
            cfg,
        )
        changes += marked
    everything, note2 = measured_change(
        results, ConfigChange("compile with dynamic=True (every size symbolic from the start)", dynamic="true"), cfg
    )
    changes += everything
    return [
        Suggestion(
            "dynamic_shapes",
            cfg.label,
            "Mark the dimensions that change dynamic"
            if a.to_mark
            else "Compile for changing sizes: dynamic=True (the changing tensor is made inside the model)",
            f"{count} recompile{'s' if count != 1 else ''} for new sizes{cost}: {evidence}." + note + note2,
            code=a.code(),
            changes=changes,
            premise=premise,
            blocking=limit,
            explains_ms=1000.0 * a.compile_s / max(1, calls),
        )
    ]


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


def _hinted_settings(result) -> dict[str, tuple[str, list]]:
    """The dynamo settings torch's hints name for this job's breaks and skipped frames, not
    already set in its config: key → (value, [(break, hint), ...])."""
    applied = {k: str(v) for k, v in result.config.dynamo_config}
    found: dict[str, tuple[str, list]] = {}
    for gb in result.graph_breaks:
        for hint in gb.hints:
            for key, value in HINTED_SETTING.findall(hint):
                if applied.get(key) != value:
                    found.setdefault(key, (value, []))[1].append((gb, hint))
    return found


def dynamo_config(result, results, calls: int) -> list[Suggestion]:
    """Once a run per setting (a tune listed the same hint for five configs): for the first
    config it applies to, a compiling one before a reference, naming the others."""
    cfg = result.config
    found = _hinted_settings(result)
    known = _dynamo_keys()
    out = []
    for key, (value, breaks) in found.items():
        if known is not None and key not in known:
            continue
        sharing = sorted(
            (r for r in results if (h := _hinted_settings(r).get(key)) is not None and h[0] == value),
            key=lambda r: r.config.backend in REFERENCE_BACKENDS,
        )
        if sharing and sharing[0] is not result:
            continue
        others = [r.config.label for r in sharing if r is not result]
        also = f"; the same hint came for {', '.join(others)}" if others else ""
        gb, hint = breaks[0]
        file, line = (gb.user_file, gb.user_line) if gb.user_file else (gb.file, gb.line)
        where = f"{display_path(file)}:{line}" if file else "?"
        what = (
            f"frame skipped ({gb.eager_function or 'a function'} ran eagerly)"
            if gb.frame_skipped
            else f"graph break ({gb.per_call} per call)"
        )
        literal = {"True": True, "False": False}.get(value, None)
        typed = literal if literal is not None else int(value)
        change = ConfigChange(f"set torch._dynamo.config.{key} = {value}", dynamo_config=((key, typed),))
        more = f" and {len(breaks) - 1} more" if len(breaks) > 1 else ""
        changes, note = measured_change(results, change, cfg)
        skipped = any(b.frame_skipped for b, _ in breaks)
        cost = sum(c.cost_ms_per_call for b, _ in breaks if (c := result.break_cost(b)) is not None)
        out.append(
            Suggestion(
                "dynamo_config",
                cfg.label,
                f"Set torch._dynamo.config.{key} = {value}, as torch's hint says",
                f"{what} {gb.gb_code or ''} at {where}{more}: {gb.reason}; torch's hint: {hint.rstrip('. ')}".replace(
                    "  ", " "
                )
                + also
                + note,
                code=f"torch._dynamo.config.{key} = {value}",
                changes=changes,
                premise=f"torch logged this hint for a {'frame it skipped' if skipped else 'graph break'} in this run",
                blocking=skipped,
                explains_ms=cost,
            )
        )
    return out


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
    compile dominates that total for a completed inductor config whose timing can carry advice
    (the share rests on the compiled call's median), else None."""
    s = result.summary()
    compile_s, per_call = s["compile_time_s"], s["compiled_median_ms"]
    if not completed(result) or result.config.backend != "inductor" or compile_s is None or per_call is None:
        return None
    if not timing_trusted(result):
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
    evidence = (
        f"compiling took {compile_s:.1f} s, {share:.0%} of the total at {calls:,} calls "
        f"({calls:,} x {per_call:.3f} ms = {running:.1f} s)"
    )
    cache = result.summary()["cache_state"]
    changes = ()
    if cache == "miss":
        evidence += (
            "; this compile was cold (FX-graph cache miss): the FX-graph and AOTAutograd caches "
            "(TORCHINDUCTOR_CACHE_DIR, on by default) keep its result, so the next process on this "
            "machine compiles faster; the re-run measures by how much"
        )
        changes = (ConfigChange("re-run unchanged to measure the compile with a warm cache", rerun_only=True),)
    else:
        evidence += f" even with the FX-graph cache {cache}"
    others = [f"{r.config.label} {c:.1f} s ({sh:.0%})" for r, (c, _, sh) in dominated[1:]]
    if others:
        evidence += f"; the same holds for {', '.join(others)}"
    return [
        Suggestion(
            "compile_cache",
            result.config.label,
            "Compile time dominates: reuse compiled artifacts across processes and machines",
            evidence + "; torch.compiler.save_cache_artifacts() packs them for another machine or container.",
            code=CACHE_CODE,
            changes=changes,
            premise=f"this run's compile took {share:.0%} of the total at {calls:,} calls",
            explains_ms=1000.0 * compile_s / max(1, calls),
        )
    ]


GUARD_SHARE = 0.2
GUARD_CODE = """\
# once every input shape the model will see has been compiled (warmed up):
torch.compiler.set_stance("default", skip_guard_eval_unsafe=True)  # unsafe: read torch's docs first"""


def _torch_says(result, cost) -> str:
    """What torch logged about the break at a cost's place: its explanation (which names the
    call, e.g. `print`) and its first hint that says what to change."""
    for g in result.graph_breaks:
        if (g.reason, g.file, g.line) == (cost.reason, cost.file, cost.line):
            said = f"; torch: {g.explanation.rstrip('. ')}" if g.explanation and g.explanation != g.reason else ""
            return said + (f"; its hint: {g.advice[0].rstrip('. ')}" if g.advice else "")
    return ""


def time_outside_graphs(result, results, calls: int) -> list[Suggestion]:
    profile = result.op_profile
    s = result.summary()
    if (
        not completed(result)
        or profile is None
        or profile.compiled is None
        or not profile.compiled.ms_per_call
        or not s["speedup"]
        or s["speedup_ci_high"] is None
        or s["speedup_ci_high"] >= 1.0
        or not timing_trusted(result)
    ):
        return []  # "compiled is slower" only when the interval says so, from a timing that can say it
    c, label, out = profile.compiled, result.config.label, []
    verdict = result.time_verdict()
    outside = c.outside_graphs_ms / c.ms_per_call
    if outside >= OUTSIDE_SHARE:
        worst = profile.break_costs[0] if profile.break_costs else None
        fix = (
            f"; the costliest graph break is {worst.reason} at {display_path(worst.file)}:{worst.line} "
            f"({worst.cost_ms_per_call:.3f} ms a call){_torch_says(result, worst)}"
            if worst
            else ""
        )
        breaks = [g for g in result.graph_breaks if not g.frame_skipped]
        reference = result.config.backend in REFERENCE_BACKENDS
        if worst or breaks:
            title = "Compiled is slower: most of each call runs outside compiled graphs; remove the graph breaks (costliest first)"
            title += f" ({reference_note(result.config.backend)})" if reference else " or do not compile this model"
        elif reference:  # it saves nothing inside the graph: its being slower says nothing of compiling
            title = (
                "Compiled is slower: most of each call runs outside the compiled graph, and no graph break was "
                f"logged to remove; {reference_note(result.config.backend)}: profile inductor to learn whether "
                "compiling pays off"
            )
        else:
            title = (
                "Compiled is slower: most of each call runs outside the compiled graph, and no graph break was "
                "logged to remove; what compiling saves inside the graph does not cover the compiled call's own "
                "cost here: do not compile this model"
            )
        out.append(
            Suggestion(
                "time_outside_graphs",
                label,
                title,
                f"{figures(result)}; under the profiler {c.outside_graphs_ms:.3f} of {c.ms_per_call:.3f} ms per call "
                f"({outside:.0%}) ran outside compiled graphs{fix}. {verdict}".strip(),
                premise="compiled is measurably slower than eager in this run, and its op profile shows most of a call "
                "outside compiled graphs",
                explains_ms=c.outside_graphs_ms,
            )
        )
    guards = c.guard_checks_ms / c.ms_per_call
    if guards >= GUARD_SHARE:
        out.append(
            Suggestion(
                "time_outside_graphs",
                label,
                "Compiled is slower: guard checks take a large share of each call",
                f"{figures(result)}; guard checks (dynamo's cache lookup before each graph) cost {c.guard_checks_ms:.3f} "
                f"of {c.ms_per_call:.3f} ms per call ({guards:.0%}); fewer graph breaks mean fewer guard checks. "
                f"{verdict}".strip(),
                code=GUARD_CODE,
                premise="compiled is measurably slower than eager in this run, and its op profile shows guard checks "
                f"taking {guards:.0%} of a call",
                explains_ms=c.guard_checks_ms,
            )
        )
    return out


def fullgraph_failed(result, results, calls: int) -> list[Suggestion]:
    """fullgraph=True refused a graph break: nothing compiled; the same config without
    fullgraph shows where and why it breaks."""
    cfg = result.config
    if not cfg.fullgraph or result.status != JobStatus.FAILED or "fullgraph" not in result.failure_reason:
        return []
    changes, note = measured_change(
        results, ConfigChange("compile with fullgraph=False (breaks allowed, each one reported)", fullgraph=False), cfg
    )
    return [
        Suggestion(
            "fullgraph_failed",
            cfg.label,
            "fullgraph=True failed on a graph break: re-run without it to see every break",
            f"{result.failure_reason}.{note}",
            changes=changes,
            premise="this run's fullgraph compile failed",
            blocking=True,
        )
    ]


FAULTS_PER_CALL = 500  # compiled minor page faults a call from which the rule speaks
SYS_SHARE = 0.05  # ... when the kernel's time a call is at least this share of the compiled median
KEEP_MEMORY_CODE = """\
# keep glibc from handing freed memory back to the kernel after every call (set before Python starts):
#   GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432 python serve.py
# or, in the program, before the model runs:
import ctypes
libc = ctypes.CDLL("libc.so.6")
libc.mallopt(-1, 268435456)  # M_TRIM_THRESHOLD
libc.mallopt(-3, 33554432)  # M_MMAP_THRESHOLD"""


def page_faults(result, results, calls: int) -> list[Suggestion]:
    """The compiled calls keep faulting in fresh memory (measured with getrusage between timed
    blocks): the kernel's time, not the generated code's, makes them slower (docs/BENCHMARKS.md,
    "One process is one draw")."""
    compiled, eager = result.call_cost("compiled"), result.call_cost("eager")
    median = result.summary()["compiled_median_ms"]
    if not completed(result) or compiled is None or not compiled.calls or median is None:
        return []
    faults, sys_ms, user_ms = (compiled.per_call(f) for f in ("minor_faults", "sys_ms", "user_ms"))
    e_faults = eager.per_call("minor_faults") if eager and eager.calls else 0.0
    e_sys = eager.per_call("sys_ms") if eager and eager.calls else 0.0
    e_user = eager.per_call("user_ms") if eager and eager.calls else None
    if faults < FAULTS_PER_CALL or faults < 5 * max(e_faults, 1.0) or sys_ms < SYS_SHARE * median:
        return []
    cfg = result.config
    changes: tuple[ConfigChange, ...] = ()
    if (
        cfg.backend == "inductor"
        and result.spec.device == "cpu"
        and result.spec.task == "inference"
        and not dict(cfg.inductor_options).get("freezing")
    ):
        changes, _ = measured_change(
            results,
            ConfigChange(
                "add torch._inductor.config.freezing=True (options={'freezing': True})",
                inductor_options=(("freezing", True),),
            ),
            cfg,
        )
    user = f"; user-space time a call: compiled {user_ms:.2f} ms, eager {e_user:.2f} ms" if e_user is not None else ""
    differ = faults_between_processes(result)
    return [
        Suggestion(
            "page_faults",
            cfg.label,
            f"Compiled calls spend {sys_ms:.2f} ms a call in the kernel on page faults: keep the memory between calls",
            f"this run's compiled calls took {faults:,.0f} page faults and {sys_ms:.2f} ms of kernel time a call, "
            f"eager's {e_faults:,.0f} and {e_sys:.2f} ms{user}{differ}. The compiled graph allocates its buffers afresh "
            "every call (inductor without freezing also copies weights into its own layout), and glibc hands the "
            "freed memory back to the kernel after the call, so the next call faults it in again. Freezing lays the "
            "weights out once; keeping glibc from trimming (its trim and mmap thresholds) keeps the memory. The torch "
            "profiler puts this cost on the operators that first touch the fresh memory (the convolutions), which "
            "makes them look slower than they are.",
            code=KEEP_MEMORY_CODE,
            changes=changes,
            premise=f"this run measured {faults:,.0f} page faults a compiled call against {e_faults:,.0f} eager",
            explains_ms=max(0.0, sys_ms - e_sys),
        )
    ]


RULES = (
    fullgraph_failed,
    page_faults,
    freezing,
    dynamic_shapes,
    dynamo_config,
    cudagraphs_on_cpu,
    cudagraphs_skipped,
    compile_cache,
    time_outside_graphs,
)


SUGGESTIONS_HEADING = "Suggestions from the measurements"


def suggestions_heading(rec) -> str:
    """The suggestions' heading under a recommendation (core.decide.recommend): under "not
    compiled" it says so, since a suggestion that speeds up compiling reads as a contradiction
    of it otherwise ("Compile time dominates: reuse compiled artifacts" under "do not compile")."""
    if (
        rec is not None
        and rec.config is None
        and rec.choice == NOT_COMPILED
        and rec.confidence
        not in (
            CANNOT_TELL,
            "none",
        )
    ):
        return (
            f"Not compiling is the choice at {rec.calls:,} calls. What the measurements suggest, "
            "should you compile anyway"
        )
    return SUGGESTIONS_HEADING


TIMED_RULES = "freezing, compile caches, time outside compiled graphs"  # the rules that need a usable timing


def held_back_note(results) -> str:
    """What the suggestions leave out for lack of a usable timing: the rules that rest on it
    (TIMED_RULES) say nothing of a completed config whose timing was unusable or too short to
    grade, and "Suggestions: none" on a busy machine read as "nothing to try". "" when every
    completed config's timing could carry advice."""
    # a reference backend (eager, aot_eager) is not what those rules advise on
    held = [r for r in results if completed(r) and r.config.backend not in REFERENCE_BACKENDS and not timing_trusted(r)]
    if not held:
        return ""
    shown = []
    for r in held:
        q = r.quality()
        shown.append(f"{r.config.label} ({q.grade}: {q.reasons[0]})" if q.reasons else f"{r.config.label} ({q.grade})")
    whose = "its timing" if len(held) == 1 else "their timings"
    return (
        f"Held back: the suggestions that rest on the timing ({TIMED_RULES}) for {'; '.join(shown)}, "
        f"as {whose} can carry no advice; a re-run with a usable timing can make them."
    )


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
