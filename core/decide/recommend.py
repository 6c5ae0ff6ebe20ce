"""Which settings to ship: every config of a run costed for an expected number of calls,
the best one chosen, why and how sure, and the code that reproduces it.

Total time = compile time + calls × time per call, for each config and for not compiling
at all. Per-call times come from each job's speedup over its own eager side (the ratio is
what a job measures best: drift between jobs cancels out) applied to one eager reference
(the median of the jobs' eager medians), so the options are costed on one scale; the
speedup's 95% bootstrap interval gives each total an interval, widened by the compile's own
uncertainty (COMPILE_SPREAD: a compile is timed once). Options whose intervals overlap the best
one's cannot be told apart, nor can two configs tied a call whose compiles found the FX-graph
cache in different states (one hit, one cold: the compile times measure different things);
among them the cheapest compile wins (not compiling costs nothing; compiles within each other's
spread are equally cheap, and the best measured of them wins). A config whose outputs fail the
accuracy check is never chosen, nor are the debugging backends (eager, aot_eager), which serve
as references only.

No Qt; any thread. `recommend(results, calls)` is what the CLI and the app call.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from core.analysis.quality import UNUSABLE
from core.analysis.quality_advice import CLI_FIELDS, RerunFields, rerun_advice
from core.decide.codegen import compile_code, eager_code
from core.decide.per_call import per_call
from core.vocab.config import CompileConfig
from core.vocab.formatting import duration, fmt_ms
from core.vocab.records import AccuracyStatus, JobStatus

DEFAULT_CALLS = 10_000
# A compile is timed once (in the job's first process), so the run cannot give its spread. Three
# cold compiles each of mnasnet0_5 here, each in an empty cache, with inductor and with
# max-autotune-no-cudagraphs, spread 24.7-33.2 s and 23.2-29.4 s: about ±15% of their middle on a
# 2-core machine. A total's interval takes its compile as that uncertain, so a compile difference
# smaller than that never decides a verdict alone (it had made a tie a call read "clear").
COMPILE_SPREAD = 0.15
NOT_COMPILED = "not compiled"
CANNOT_TELL = "cannot tell"
REFERENCE_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "aot_eager_default_partitioner")


def reference_note(backend: str) -> str:
    """Why a reference backend's figures say nothing of whether compiling pays off."""
    return f"backend {backend} is a debugging reference, not a way to speed a model up"


@dataclass(frozen=True)
class Option:
    """One way to run the model, costed for the expected calls. `label` is the config's
    label ("not compiled" for eager); times in seconds; the interval comes from the speedup's
    95% interval. `eligible` is False for a config that may not be chosen, `why_not` says why."""

    label: str
    config: CompileConfig | None
    compile_time_s: float
    per_call_ms: float
    speedup: float
    speedup_ci_low: float
    speedup_ci_high: float
    total_s: float
    total_low_s: float
    total_high_s: float
    eligible: bool = True
    why_not: str = ""
    accuracy: str = ""
    timing: str = ""  # the job's measurement-quality grade (core.analysis.quality)
    timing_reason: str = ""
    cache: str = ""  # the FX-graph cache state of its compile ("hit", "miss", "partial"; "" or "n/a": none)

    @property
    def measurably_faster(self) -> bool:
        """The speedup's 95% interval lies above 1."""
        return self.config is not None and self.speedup_ci_low > 1.0

    @property
    def judged(self) -> bool:
        """Its timing may carry a verdict (not unusable)."""
        return self.timing != UNUSABLE

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["config"] = self.config.to_dict() if self.config else None
        return d


@dataclass(frozen=True)
class Recommendation:
    """The decision for `calls` expected calls. `config` is None when not compiling is best
    (or nothing could be decided). `sentence` says what and why in one sentence;
    `confidence` is "clear" (ahead of every other option beyond the noise),
    "indistinguishable" (compiled configs tied within the noise with `tied`, all ahead of
    eager; the cheapest compile chosen), "only option" (no config may be chosen: not
    compiling is all that is left), CANNOT_TELL (the measurements cannot decide: eager is
    within the noise of the best compiled config, or their timing was unusable; `rerun` says
    what a re-run needs) or "none" (nothing measured). `code` is the ready-to-paste
    torch.compile call (core.decide.codegen); empty when nothing was decided."""

    calls: int
    choice: str
    config: CompileConfig | None
    sentence: str
    confidence: str
    tied: tuple[str, ...] = ()
    break_even_calls: float | None = None
    memory: str = ""
    memory_delta_mb: float | None = None
    code: str = ""
    options: tuple[Option, ...] = field(default_factory=tuple)
    rerun: str = ""  # why a re-run could decide what this one cannot ("" when it decided)
    # the config a run needs to decide, when running the same configs again cannot (only
    # references were measured): the app offers to profile it instead of a re-run
    try_config: CompileConfig | None = None
    unjudged: tuple[str, ...] = ()  # configs whose timing was unusable, so not weighed
    # a config faster a call than the choice beyond the noise, that lost on its compile at `calls`,
    # and the calls after which it overtakes the choice (`_longer_run`); "" and None without one
    faster_per_call: str = ""
    overtakes_after_calls: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["config"] = self.config.to_dict() if self.config else None
        d["options"] = [o.to_dict() for o in self.options]
        return d

    @property
    def how_sure(self) -> str:
        """`confidence` in words, saying when configs were left unweighed: "clear" beside
        "not judged, its timing was unusable" read as a contradiction."""
        if self.unjudged and self.confidence not in (CANNOT_TELL, "none"):
            n = len(self.unjudged)
            return f"{self.confidence} among the configs judged ({n} not judged: {'its' if n == 1 else 'their'} timing unusable)"
        return self.confidence

    @property
    def per_call_basis(self) -> str:
        """How the options' time a call is made, which is not each config's own compiled median
        ("" without a compiled option): a user checking the arithmetic found 0.084 ms a call
        beside that config's median of 0.067 ms."""
        if not self.options or not any(o.config is not None for o in self.options):
            return ""
        return (
            f"A config's time a call here is the run's eager median ({fmt_ms(self.options[0].per_call_ms)}) "
            "over that config's own speedup, not its compiled median: each config's eager calls were timed "
            "beside its compiled ones, so speedups compare across configs where medians from different "
            "processes need not."
        )

    def text(self) -> str:
        """recommendation.txt: the sentence, the memory cost, the code and every option."""
        lines = [self.sentence]
        if self.memory:
            lines.append(self.memory)
        if self.code:  # nothing decided: no empty block between two blank lines
            lines += ["", self.code]
        if not self.options:  # nothing measured: no heading over an empty list
            return "\n".join(lines) + "\n"
        lines += ["", f"Every option at {self.calls:,} calls:"]
        if self.per_call_basis:
            lines.append(f"({self.per_call_basis})")
        # the options weighed first, then those not judged (their timing unusable: the sentence
        # left them out, and listed first without a word they read as the answer), then the rest
        for o in sorted(self.options, key=lambda o: (not o.eligible, not o.judged, o.total_s)):
            mark = ""
            if not o.eligible:
                mark = f"; not eligible: {o.why_not}"
            elif not o.judged:
                mark = f"; not judged, its timing was unusable: {o.timing_reason.split('; ')[0]}"
            lines.append(
                f"  {o.label}: {duration(o.total_s)} [{duration(o.total_low_s)}-{duration(o.total_high_s)}]"
                f" = compile {o.compile_time_s:.2f} s + {o.per_call_ms:.3f} ms a call"
                + (f" ({o.speedup:.2f}x)" if o.config else "")
                + mark
            )
        return "\n".join(lines) + "\n"


NOTHING_COMPILED = "nothing was compiled (dynamo skipped every frame, so it ran eagerly)"


def _why_not(result) -> str:
    if result.status != JobStatus.COMPLETED:
        return f"it did not complete ({result.failure_reason or result.status})"
    accuracy = result.accuracy_verdict()
    if accuracy is not None and accuracy.status == AccuracyStatus.FAIL.value:
        return f"its outputs differ from eager: {accuracy.reason}"
    if result.config.backend in REFERENCE_BACKENDS:
        return reference_note(result.config.backend)
    if compiled_nothing(result):
        return NOTHING_COMPILED
    return ""


def compiled_nothing(result) -> bool:
    """Dynamo made no graph for this job (every frame skipped or run eagerly): its "compiled"
    calls were eager calls, and any difference from eager is noise."""
    c = result.compile
    if c is None:
        return False
    if result.variants:
        return c.graph_count == 0 and not any(v.compiles for v in result.variants[1:])
    return c.graph_count == 0


def options_for(results, calls: int = DEFAULT_CALLS) -> list[Option]:
    """Every costed option: not compiling first, then each config with a per-call time.
    Shape sweeps and ordinary runs measure different workloads: when a run holds both, the
    sweeps are costed apart (not eligible)."""
    measured = [(r, pc) for r in results if (pc := per_call(r)) is not None]
    if not measured:
        return []
    kinds = {bool(r.variants) for r, _ in measured}
    workload = False in kinds and True in kinds
    same = [(r, pc) for r, pc in measured if not (workload and r.variants)]
    # the eager reference from the jobs whose timing can be judged: a config added with an unusable
    # timing moved it (1.25 -> 1.32 ms) and turned another config's clear verdict into "cannot tell"
    judged = [pc[0] for r, pc in same if r.quality().grade != UNUSABLE]
    eager_ref = float(np.median(judged or [pc[0] for _, pc in same]))
    options = [Option(NOT_COMPILED, None, 0.0, eager_ref, 1.0, 1.0, 1.0, *([calls * eager_ref / 1000] * 3))]
    for r, (_, _, sp, low, high) in measured:
        summary = r.summary()
        compile_s = summary["compile_time_s"] or 0.0
        cost = lambda s, c=compile_s: c + calls * eager_ref / s / 1000  # noqa: E731
        why = _why_not(r) or (
            "measured on the shape sweep's inputs, not the example inputs the others ran"
            if workload and r.variants
            else ""
        )
        accuracy = r.accuracy_verdict()
        quality = r.quality()
        options.append(
            Option(
                r.config.label,
                r.config,
                compile_s,
                eager_ref / sp,
                sp,
                low,
                high,
                cost(sp),
                cost(high, compile_s * (1 - COMPILE_SPREAD)),
                cost(low, compile_s * (1 + COMPILE_SPREAD)),
                eligible=not why,
                why_not=why,
                accuracy=accuracy.status if accuracy else "",
                timing=quality.grade,
                timing_reason="; ".join(quality.reasons),
                cache=summary["cache_state"] or "",
            )
        )
    return options


def recommend(results, calls: int = DEFAULT_CALLS, fields: RerunFields = CLI_FIELDS) -> Recommendation:
    """The best option for `calls` expected calls (see the module docstring). Never a firm
    verdict from a timing graded unusable (core.analysis.quality) or from totals within the noise of
    not compiling: those say CANNOT_TELL, why, and what a re-run needs (`fields`: how that names
    the settings, the command line's flags or the app's fields)."""
    calls = max(1, int(calls))
    options = options_for(results, calls)
    advice = rerun_advice((r.quality() for r in results if r.ended), fields)
    if not options:
        return Recommendation(
            calls,
            "",
            None,
            "No recommendation: no config has both an eager and a compiled "
            "time (every job failed or was cancelled before its benchmark).",
            "none",
            rerun="a run whose jobs reach their benchmark",
        )
    eager = options[0]
    compiled = [o for o in options if o.config is not None]
    unjudged = [o for o in compiled if o.eligible and not o.judged]
    eligible = [eager] + [o for o in compiled if o.eligible and o.judged]
    unjudged_note = _unjudged_note(unjudged, advice)
    if len(eligible) == 1 and unjudged:
        return Recommendation(
            calls,
            "",
            None,
            f"Cannot tell which settings to ship: {unjudged_note[2:]}.",
            CANNOT_TELL,
            rerun=advice,
            unjudged=tuple(o.label for o in unjudged),
            options=tuple(options),
        )
    if len(eligible) == 1 and not _decides_without(compiled):
        measured = "; ".join(f"{o.label}: {o.why_not}" for o in compiled[:3])
        return Recommendation(
            calls,
            "",
            None,
            f"Cannot tell whether compiling pays off: no compiled config was measured that could be "
            f"chosen ({measured}).",
            CANNOT_TELL,
            rerun=f"profile an inductor config ({fields.longer_tune})",
            options=tuple(options),
            try_config=CompileConfig("inductor"),
        )
    best = min(eligible, key=lambda o: o.total_s)
    tied = [
        o
        for o in eligible
        if o is not best
        and (
            (o.total_low_s <= best.total_high_s and best.total_low_s <= o.total_high_s)
            or (_tied_a_call(o, best) and not _compiles_comparable(o, best))
        )
    ]
    chosen = _cheapest_compile(best, tied)
    others = [o for o in [best, *tied] if o is not chosen]
    by_label = {r.config.label: r for r in results}
    if chosen.config is None and others and all(o.speedup < 1.0 for o in others):
        # every compiled config is slower by its point estimate; those within the noise of eager
        # are so only by their wide intervals, which must not make one of them "the best compiled
        # config": not compiling is the clear choice (nothing measured is faster)
        return Recommendation(
            calls,
            NOT_COMPILED,
            None,
            _with_note(_not_faster_sentence(eligible, others, calls), unjudged_note),
            "clear",
            (),
            None,
            *_memory(None),
            code=eager_code(),
            options=tuple(options),
            rerun=advice if unjudged else "",
            unjudged=tuple(o.label for o in unjudged),
        )
    if chosen.config is None and others:  # eager within the noise of a compiled config
        rival = min(others, key=lambda o: o.total_s)
        sentence = (
            f"Cannot tell whether compiling pays off at {calls:,} calls: the best compiled config, "
            f"{rival.label} ({rival.speedup:.2f}x per call [95% CI {rival.speedup_ci_low:.2f}-"
            f"{rival.speedup_ci_high:.2f}]), is within the noise of not compiling ("
            f"{duration(rival.total_s)} against {duration(eager.total_s)}). Not compiling costs nothing "
            f"meanwhile; a longer or quieter run can decide{unjudged_note}."
        )
        return Recommendation(
            calls,
            NOT_COMPILED,
            None,
            sentence,
            CANNOT_TELL,
            tuple(o.label for o in others),
            rerun=advice,
            unjudged=tuple(o.label for o in unjudged),
            options=tuple(options),
        )
    confidence = "indistinguishable" if others else "clear" if len(eligible) > 1 else "only option"
    faster, overtakes, longer = _longer_run(chosen, eligible)
    return Recommendation(
        calls,
        chosen.label,
        chosen.config,
        _with_note(_sentence(chosen, others, eligible, options, calls, fields), unjudged_note) + longer,
        confidence,
        tuple(o.label for o in others),
        _break_even(chosen, eager),
        *_memory(by_label.get(chosen.label)),
        code=_code(chosen, by_label.get(chosen.label), results),
        options=tuple(options),
        rerun=advice if unjudged else "",
        unjudged=tuple(o.label for o in unjudged),
        faster_per_call=faster,
        overtakes_after_calls=overtakes,
    )


_CACHE_WORDS = {
    "hit": "read the FX-graph cache (hit)",
    "miss": "compiled cold (FX-graph cache miss)",
    "partial": "partly read the FX-graph cache (partial)",
}


def _cheapest_compile(best: Option, tied: list[Option]) -> Option:
    """Among options the noise cannot tell apart, the cheapest compile; compiles within each
    other's spread (COMPILE_SPREAD) are equally cheap, and of those the best measured wins
    (mnasnet0_5: 16.2 s against 16.6 s chose the config a call 9% slower)."""
    group = [best, *tied]
    cheapest = min(o.compile_time_s for o in group)
    cheap = [o for o in group if o.compile_time_s * (1 - COMPILE_SPREAD) <= cheapest * (1 + COMPILE_SPREAD)]
    return min(cheap, key=lambda o: (o.total_s, o.compile_time_s))


def _tied_a_call(a: Option, b: Option) -> bool:
    """Two compiled configs whose speedups' intervals overlap."""
    return (
        a.config is not None
        and b.config is not None
        and a.speedup_ci_low <= b.speedup_ci_high
        and b.speedup_ci_low <= a.speedup_ci_high
    )


def _compiles_comparable(a: Option, b: Option) -> bool:
    """Their compile times measure the same thing: both found the FX-graph cache in the same state
    (a hit against a cold miss compares a cache read with a compile)."""
    known = {a.cache, b.cache} - {"", "n/a"}
    return len(known) <= 1 or a.cache == b.cache


def _longer_run(chosen: Option, eligible: list[Option]) -> tuple[str, float | None, str]:
    """The config a longer run should use: the fastest a call of those faster than the choice
    beyond the noise (their intervals apart), which lost at these calls only to its longer compile,
    with the calls after which it overtakes the choice and a sentence saying so ("" without one).
    On the verdicts bench the default picked plain inductor for 10,000 calls where
    max-autotune-no-cudagraphs ran 2.49x against 2.23x a call: the figure a user running for
    longer needs."""
    faster = [
        o
        for o in eligible
        if o is not chosen
        and o.config is not None
        and o.speedup_ci_low > chosen.speedup_ci_high
        and o.compile_time_s > chosen.compile_time_s
    ]
    if not faster:
        return "", None, ""
    rival = max(faster, key=lambda o: o.speedup)
    calls = _calls_to_overtake(chosen, rival)
    if chosen.config is None:
        what, compiles = "pays its compile back", f"its compile {rival.compile_time_s:.1f} s"
    else:
        what = "overtakes it"
        compiles = f"its compile {rival.compile_time_s:.1f} s against {chosen.compile_time_s:.1f} s"
    return (
        rival.label,
        calls,
        f" For a longer run: {rival.label} is faster a call ({rival.speedup:.2f}x [95% CI "
        f"{rival.speedup_ci_low:.2f}-{rival.speedup_ci_high:.2f}] against {chosen.speedup:.2f}x) and {what} "
        f"after {calls:,.0f} calls ({compiles}).",
    )


def _not_faster_sentence(eligible: list[Option], within_noise: list[Option], calls: int) -> str:
    """Do not compile, when no compiled config is faster than eager even by its point estimate."""
    compiled = [o for o in eligible if o.config is not None]
    slower = [o for o in compiled if o not in within_noise]

    def figure(o: Option) -> str:
        return f"{o.label} {o.speedup:.2f}x [95% CI {o.speedup_ci_low:.2f}-{o.speedup_ci_high:.2f}]"

    parts = []
    if slower:
        parts.append("clearly slower: " + ", ".join(figure(o) for o in slower))
    parts.append(
        "slower by the point estimate, within the noise of eager: " + ", ".join(figure(o) for o in within_noise)
    )
    return f"Do not compile: at {calls:,} calls no config measured is faster than eager ({'; '.join(parts)})."


def _decides_without(compiled: list[Option]) -> bool:
    """With no compiled config left to choose, not compiling is still a decision when some
    compiled config was measured and ruled out for what it did (outputs that differ from
    eager, nothing compiled), not merely left unmeasured or used as a reference."""
    return any(o.accuracy == AccuracyStatus.FAIL.value or o.why_not == NOTHING_COMPILED for o in compiled)


def _with_note(sentence: str, note: str) -> str:
    """The sentence with the unjudged configs' note inside its last full stop ("…0.35x); not
    judged, …" rather than "…0.35x).; not judged, …")."""
    if not note:
        return sentence
    return sentence[:-1] + note + "." if sentence.endswith(".") else sentence + note


def _unjudged_note(unjudged: list[Option], advice: str) -> str:
    if not unjudged:
        return ""
    names = "; ".join(f"{o.label} ({o.timing_reason.split('; ')[0]})" for o in unjudged[:3])
    return (
        f"; not judged, their timing was unusable: {names}; {advice}"
        if len(unjudged) > 1
        else f"; not judged, its timing was unusable: {names}; {advice}"
    )


def _sentence(
    chosen: Option, tied: list[Option], eligible: list[Option], options: list[Option], calls: int, fields: RerunFields
) -> str:
    eager = options[0]
    at = f"at {calls:,} calls"
    if chosen.config is None:
        compiled = [o for o in eligible if o.config is not None]
        if not compiled:
            excluded = [o for o in options if o.config is not None]
            why = "; ".join(f"{o.label}: {o.why_not}" for o in excluded[:3])
            return f"Do not compile: no config can be recommended ({why})." if why else "Do not compile."
        rival = min(compiled, key=lambda o: o.total_s)  # ahead of eager beyond the noise (ties cannot tell)
        if all(o.speedup_ci_high < 1.0 for o in compiled):
            # slower a call too: no number of calls, and no compile cache, pays the compile back
            closest = max(compiled, key=lambda o: o.speedup)
            # one config tried says nothing of the others (timm's convnext_atto: plain inductor 0.96x,
            # max-autotune-no-cudagraphs 1.60x on the verdicts bench)
            head = (
                f"Do not compile with these settings: the one config tried, {closest.label}, was"
                if len(compiled) == 1
                else f"Do not compile this model here: all {len(compiled)} configs tried were"
            )
            other = f" Other settings may be faster ({fields.tune} measures them)." if len(compiled) == 1 else ""
            name = "" if len(compiled) == 1 else f"the closest, {closest.label}, "
            return (
                f"{head} slower than eager on every call, beyond the noise "
                f"({name}{closest.speedup:.2f}x [95% CI {closest.speedup_ci_low:.2f}-"
                f"{closest.speedup_ci_high:.2f}]: {closest.per_call_ms:.3f} ms a call against "
                f"{eager.per_call_ms:.3f} ms); at {calls:,} calls eager takes {duration(eager.total_s)} in all, "
                f"{closest.label} {duration(closest.total_s)} with its {closest.compile_time_s:.1f} s compile.{other}"
            )
        return (
            f"Do not compile: {at} eager takes {duration(eager.total_s)} in all, the best compiled config, "
            f"{rival.label}, {duration(rival.total_s)} (compile {rival.compile_time_s:.1f} s + "
            f"{rival.per_call_ms:.3f} ms a call, {rival.speedup:.2f}x)."
        )
    head = (
        f"Compile with {chosen.label}: {at} it takes {duration(chosen.total_s)} in all (compile "
        f"{chosen.compile_time_s:.1f} s + {chosen.per_call_ms:.3f} ms a call) against {duration(eager.total_s)} "
        f"eager, {chosen.speedup:.2f}x per call [95% CI {chosen.speedup_ci_low:.2f}-{chosen.speedup_ci_high:.2f}]"
    )
    if tied:
        names = ", ".join(o.label for o in tied)
        apart = [o for o in tied if not _compiles_comparable(o, chosen)]
        if apart:
            sure = (
                f"; tied a call with {names} (their speedups' intervals overlap), and their compiles are not "
                f"comparable: {chosen.label}'s {_CACHE_WORDS.get(chosen.cache, chosen.cache)}, "
                + ", ".join(f"{o.label}'s {_CACHE_WORDS.get(o.cache, o.cache)}" for o in apart)
                + "; the cheaper compile is chosen, and a re-run with both cached, or both cold, compares them"
            )
        elif chosen.total_s <= min(o.total_s for o in tied):
            cheapest = chosen.compile_time_s <= min(o.compile_time_s for o in tied)
            sure = f"; the best measured, but within the noise of {names} (their intervals overlap), " + (
                "and the cheapest of them to compile" if cheapest else "and their compiles within each other's noise"
            )
        else:
            sure = (
                f"; it cannot be told apart from {names} within the noise (their intervals overlap), "
                "so the cheaper compile is chosen"
            )
    else:
        rest = sorted((o for o in eligible if o is not chosen and o.config is not None), key=lambda o: o.total_s)
        sure = (
            f"; clearly ahead of the next best, {rest[0].label} ({duration(rest[0].total_s)})"
            if rest
            else "; clearly ahead of eager beyond the noise"
        )
        if not rest and len([o for o in options if o.config is not None]) == 1:
            # one compiled config measured: settings it did not try may be faster a call (the
            # verdicts bench: the autotuning mode or freezing, on 5 of 13 models)
            sure += f", the one compiled config this run measured ({fields.tune} measures other settings)"
    caveat = ""
    if chosen.accuracy and chosen.accuracy != AccuracyStatus.PASS.value:
        caveat = f" (its outputs were not confirmed against eager: accuracy {chosen.accuracy})"
    return head + sure + caveat + "."


def _break_even(chosen: Option, eager: Option) -> float | None:
    """Calls after which the compile has paid for itself; only for a speedup measurably above 1."""
    if chosen.config is None or eager.per_call_ms <= chosen.per_call_ms or not chosen.measurably_faster:
        return None
    return _calls_to_overtake(eager, chosen)


def _calls_to_overtake(slower: Option, faster: Option) -> float:
    """Calls after which `faster` (a shorter time a call) has made up its longer compile over
    `slower`: the compile difference over the saving a call."""
    return (faster.compile_time_s - slower.compile_time_s) * 1000.0 / (slower.per_call_ms - faster.per_call_ms)


def _memory(result) -> tuple[str, float | None]:
    if result is None:
        return "", None
    s = result.summary()
    cuda_e, cuda_c = s["cuda_eager_max_allocated_mb"], s["cuda_compiled_max_allocated_mb"]
    if cuda_e is not None and cuda_c is not None:
        what, eager, compiled = "GPU memory allocated at peak", cuda_e, cuda_c
    elif s["eager_peak_mb"] is not None and s["compiled_peak_mb"] is not None:
        what, eager, compiled = "peak RSS", s["eager_peak_mb"], s["compiled_peak_mb"]
    else:
        return "", None
    delta = compiled - eager
    text = f"Memory: {what} {compiled:,.0f} MB running compiled against {eager:,.0f} MB eager ({delta:+,.0f} MB)"
    if s["compile_peak_mb"] is not None:
        text += f"; {s['compile_peak_mb']:,.0f} MB while compiling"
    return text + ".", delta


def _code(chosen: Option, result, results) -> str:
    any_result = result or next(iter(results), None)
    spec = any_result.spec if any_result is not None else None
    if chosen.config is None:
        return eager_code()
    return compile_code(chosen.config, spec, any_result.environment if any_result is not None else {})
