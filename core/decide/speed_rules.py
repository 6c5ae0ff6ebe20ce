"""The suggestion rules on where the compiled calls' time goes (core.decide.suggestions runs
them); all but `page_faults` rest on a timing that can carry advice (advice.timing_trusted):

- `freezing`: inductor on the CPU for inference without `freezing=True`: a setting not tried, said
  last and once (for the fastest such config), unless this run measured freezing faster;
- `autotune`: plain inductor on the CPU for inference → the max-autotune-no-cudagraphs mode;
- `compile_cache`: compile time dominates the total at the expected calls, and compiled is not
  slower a call beyond the noise → the FX-graph and AOTAutograd caches,
  `torch.compiler.save_cache_artifacts`;
- `time_outside_graphs`: compiled is measurably slower and the op profile shows most of a call
  outside compiled graphs, or a large share in guard checks;
- `page_faults`: the compiled calls fault in many pages a call and the kernel's time shows it."""

from __future__ import annotations

from core.analysis.quality import faults_between_processes
from core.decide.advice import (
    OUTSIDE_SHARE,
    ConfigChange,
    Suggestion,
    already_ran,
    completed,
    figures,
    timing_trusted,
    work_in_graphs,
)
from core.decide.recommend import REFERENCE_BACKENDS, reference_note
from core.vocab.config import AUTOTUNE_MODE
from core.vocab.source_paths import display_path


def _inductor_cpu_inference(result) -> bool:
    """A completed inductor job on the CPU, inference without a sweep (freezing is inference-only),
    whose timing can carry advice: where the freezing and autotune rules may speak."""
    spec = result.spec
    return (
        completed(result)
        and result.config.backend == "inductor"
        and spec.device == "cpu"
        and not spec.sweep_shapes
        and not spec.sweep_batch
        and spec.task != "training"
        and timing_trusted(result)
    )


def _freezing_may_speak(result) -> bool:
    """Inductor CPU inference without freezing, on a model with weights."""
    return (
        _inductor_cpu_inference(result)
        and not dict(result.config.inductor_options).get("freezing")
        and not (result.model_info is not None and result.model_info.parameters == 0)
    )


def freezing(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if not _freezing_may_speak(result):
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
    if not faster:
        # Nothing measured points to it. On the verdicts bench it was the top suggestion on 6 of 6
        # models and never beat plain inductor beyond the noise (nor, applied where compiled lost,
        # moved the speedup): said once, last, as a setting not tried (issue 45).
        rivals = [
            r for r in results if r is not result and _freezing_may_speak(r) and r.summary()["speedup"] is not None
        ]
        mine = result.summary()["speedup"] or 0.0
        if any((r.summary()["speedup"] or 0.0) > mine for r in rivals):
            return []
        return [
            Suggestion(
                "freezing",
                cfg.label,
                "Not tried: freezing (the weights folded in as constants); nothing this run measured points to it",
                f"{figures(result)}; this ran without freezing, so every weight stays a graph input (no "
                "conv-batchnorm folding, no prepacked oneDNN weights). Nothing this run measured says whether "
                "freezing would help: on some models and CPUs it makes inductor faster, on others no faster or "
                "slower, and only a re-run here measures it.",
                code='torch._inductor.config.freezing = True  # or torch.compile(..., options={"freezing": True})',
                changes=(change,),
                premise=f"inductor inference on the CPU without freezing; {where}",
                untried=True,
            )
        ]
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


def autotune(result, results, calls: int) -> list[Suggestion]:
    """Plain inductor on the CPU for inference, its work in compiled graphs: the autotuning mode may
    be faster (the verdicts bench: beyond the noise of plain inductor on 5 of 13 models, timm's
    convnext_atto from 0.96x to 1.60x), with no options to fold a mode into."""
    cfg = result.config
    if (
        not _inductor_cpu_inference(result)
        or cfg.mode != "default"
        or cfg.inductor_options
        or result.summary()["speedup"] is None
    ):
        return []
    compiled, where = work_in_graphs(result)
    if not compiled:
        return []
    change = ConfigChange(f"compile with mode={AUTOTUNE_MODE!r}", mode=AUTOTUNE_MODE)
    target = change.apply(cfg)
    tried = [r for r in results if r.config == target and completed(r) and r.summary()["speedup"]]
    if tried:
        return []  # this run measured it: its row says how it did
    # the time it may retune: the generated kernels and the operators inside the graphs (freezing's
    # is the operators alone), so it ranks above freezing, as the bench found it more often helps
    profile = result.op_profile
    p = profile.compiled if profile is not None else None
    explains = (p.kernels_ms + p.operators_in_graphs_ms) if p is not None else 0.0
    return [
        Suggestion(
            "autotune",
            cfg.label,
            f"Try mode={AUTOTUNE_MODE!r}: inductor times candidate kernels on this CPU and keeps the fastest",
            f"{figures(result)}; this ran inductor's default kernels, chosen without timing them here; the "
            "autotuning mode benchmarks matrix-multiplication templates and tunes kernel parameters by "
            "coordinate descent at compile time (a longer compile, kept by the FX-graph cache); what it "
            "gains depends on the model and the CPU, and only a re-run here measures it.",
            code=f'model = torch.compile(model, mode="{AUTOTUNE_MODE}")',
            changes=(change,),
            premise=f"plain inductor on the CPU for inference; {where}",
            explains_ms=explains,
        )
    ]


def _measurably_faster(a, b) -> bool:
    """`a`'s speedup over its own eager side is above `b`'s beyond both 95% intervals, from
    timings that can say so."""
    sa, sb = a.summary(), b.summary()
    low, high = sa["speedup_ci_low"], sb["speedup_ci_high"]
    return timing_trusted(a) and timing_trusted(b) and low is not None and high is not None and low > high


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
    if s["speedup_ci_high"] is not None and s["speedup_ci_high"] < 1.0:
        # slower a call than eager beyond the noise: a cached compile still never pays back (the
        # verdicts bench found it the top suggestion where only the graph break could help)
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
    # No apply-and-re-run change: freezing, offered here before, kept 3,800-4,800 faults a call in 5
    # of 5 processes of timm's resnet18 on the verdicts bench (0 in 2 of 2 of torchvision's earlier),
    # and a run whose processes all drew the fast mode read it as a 1.18x gain against the truth's
    # 0.87x. What keeps the memory is glibc's thresholds (the code), set before the process starts.
    user = f"; user-space time a call: compiled {user_ms:.2f} ms, eager {e_user:.2f} ms" if e_user is not None else ""
    differ = faults_between_processes(result)
    return [
        Suggestion(
            "page_faults",
            cfg.label,
            f"Compiled calls spend {sys_ms:.2f} ms a call in the kernel on page faults: keep the memory between calls",
            f"this run's compiled calls took {faults:,.0f} page faults and {sys_ms:.2f} ms of kernel time a call, "
            f"eager's {e_faults:,.0f} and {e_sys:.2f} ms{user}{differ}. The compiled graph allocates its buffers afresh "
            "every call, and glibc hands the freed memory back to the kernel after the call, so the next call faults "
            "it in again; keeping glibc from trimming (its trim and mmap thresholds, below) keeps the memory. Whether "
            "a process falls into this depends on how its heap happens to lie, so another run (or freezing) may "
            "draw the fast mode by chance: compare page faults a call, not only the speed. The torch "
            "profiler puts this cost on the operators that first touch the fresh memory (the convolutions), which "
            "makes them look slower than they are.",
            code=KEEP_MEMORY_CODE,
            premise=f"this run measured {faults:,.0f} page faults a compiled call against {e_faults:,.0f} eager",
            explains_ms=max(0.0, sys_ms - e_sys),
        )
    ]
