"""What a generation profile found (core.vocab.generation): time to first token, per-token decode
latency, tokens/s, eager against compiled, and when the compile and the recompiles came.

The figures stand on the script's own clock: each generation's streamer stamps every new token
(the first stamp is the time to first token; the gaps between stamps are the decode steps as the
user waits for them, generate()'s own work included). The warm-up generations are set apart (the
first one pays the compile); the timed ones give the medians, p90 and the speedups with their
95% bootstrap intervals (core.analysis.stats.speedup), graded with the script timing's limits
(core.analysis.script_results.grade_timing). What torch compiled, and at which call, comes from
the profiled forward's calls (core.analysis.script_runs): each generation makes `new_tokens`
forward calls, the first being the prefill, so a compile at call k of a generation is "during
prefill" (k = 0) or "at decode step k". No torch, no Qt.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field

import numpy as np

from core.analysis import quality as q
from core.analysis.script_results import (
    CANNOT_TELL,
    FASTER,
    NOT_TIMED,
    SLOWER,
    ScriptResult,
    TimingGrade,
    grade_timing,
)
from core.analysis.script_runs import ScriptRun
from core.analysis.stats import Speedup, speedup
from core.vocab.formatting import ms_or_missing, seconds, speedup_interval
from core.vocab.generation import GenerationSpec


@dataclass
class SideFigures:
    """One side's timed generations at one prompt length."""

    ttft_ms: list[float] = field(default_factory=list)
    token_ms: list[float] = field(default_factory=list)  # every decode step's gap, all generations
    tokens_per_s: list[float] = field(default_factory=list)
    per_generation_token_ms: list[np.ndarray] = field(default_factory=list)
    per_pid_token_ms: dict[int, list[float]] = field(default_factory=dict)  # each run's (process's) gaps
    first_total_s: float | None = None  # the first warm-up generation: the compile's, on the compiled side
    first_ttft_ms: float | None = None
    steady_total_s: float | None = None  # the median timed generation
    short: int = 0  # generations that made fewer tokens than asked

    def median(self, values: list[float]) -> float | None:
        return float(np.median(values)) if values else None


@dataclass
class CompileMoment:
    """A frame torch compiled during the generations: where (prompt length, generation, step)."""

    prompt_len: int
    generation: int
    step: int  # 0: the prefill
    seconds: float
    recompile_reason: str = ""
    warmup: bool = True

    def where(self) -> str:
        when = "during prefill" if self.step == 0 else f"at decode step {self.step}"
        gen = f"generation {self.generation + 1}" + (" (warm-up)" if self.warmup else " (timed)")
        return f"prompt {self.prompt_len}, {gen}, {when}"


@dataclass
class PromptFigures:
    """Eager against compiled at one prompt length."""

    prompt_len: int
    compiled: SideFigures
    eager: SideFigures | None
    ttft: Speedup | None = None
    decode: Speedup | None = None
    grade: TimingGrade = field(default_factory=lambda: TimingGrade(q.UNKNOWN))
    verdict: str = NOT_TIMED
    why: str = ""
    break_even_tokens: float | None = None

    def p90(self, side: SideFigures | None) -> float | None:
        return float(np.percentile(side.token_ms, 90)) if side is not None and side.token_ms else None


@dataclass
class GenerationResult:
    """One generation config (a cache and a compile config) profiled."""

    spec: GenerationSpec
    label: str
    script: ScriptResult
    prompts: list[PromptFigures] = field(default_factory=list)
    compiles: list[CompileMoment] = field(default_factory=list)
    placed: bool = True  # the forward's calls could be placed in their generations
    script_path: str = ""

    @property
    def compile_s(self) -> float:
        run = self.script.compiled
        return run.compile_s if run is not None else 0.0

    @property
    def recompiles(self) -> list[CompileMoment]:
        return [c for c in self.compiles if c.recompile_reason]


@dataclass(frozen=True)
class GenerationChange:
    """A change that removes a config's recompiles while it generates, to apply and re-run: the
    cache to use instead, or the `dynamic` setting (CompileConfig.dynamic); "" keeps it."""

    name: str  # for a button: "static cache"
    flag: str  # the command line's way: "--cache static"
    cache: str = ""
    dynamic: str = ""


def recompile_changes(r: GenerationResult) -> list[GenerationChange]:
    """What removes the recompiles of a dynamic cache (it grows with every token, and each new
    length failed a guard): the static cache, or compiling with dynamic shapes from the start.
    Nothing for a config without recompiles, or for the static cache's one recompile between the
    prefill and the first decode step (a different call signature, not a growing shape)."""
    if not r.recompiles or r.spec.cache != "dynamic":
        return []
    changes = [GenerationChange("static cache (cache_implementation='static')", "--cache static", cache="static")]
    if "dynamic=true" not in r.label:
        changes.append(GenerationChange("dynamic=True", "--dynamic true", dynamic="true"))
    return changes


def _side(records: list[dict], prompt_len: int, new_tokens: int, batch: int = 1) -> SideFigures:
    fig = SideFigures()
    mine = [r for r in records if r.get("prompt_len") == prompt_len]
    warm = [r for r in mine if r.get("warmup")]
    timed = [r for r in mine if not r.get("warmup")]
    if warm:
        first = min(warm, key=lambda r: r.get("generation", 0))
        fig.first_total_s = float(first.get("total_s") or 0.0)
        stamps = first.get("stamps") or []
        fig.first_ttft_ms = float(stamps[0]) * 1000 if stamps else None
    totals = []
    for r in timed:
        stamps = [float(t) for t in r.get("stamps") or []]
        if not stamps:
            continue
        if int(r.get("tokens") or 0) < new_tokens:
            fig.short += 1
        fig.ttft_ms.append(stamps[0] * 1000)
        gaps = np.diff(np.asarray(stamps)) * 1000
        fig.token_ms += [float(g) for g in gaps]
        fig.per_generation_token_ms.append(gaps)
        fig.per_pid_token_ms.setdefault(int(r.get("pid") or 0), []).extend(float(g) for g in gaps)
        total = float(r.get("total_s") or 0.0)
        totals.append(total)
        if total > 0:  # every sequence of the batch makes its tokens
            fig.tokens_per_s.append(batch * int(r.get("tokens") or len(stamps)) / total)
    fig.steady_total_s = float(np.median(totals)) if totals else None
    return fig


def _place(spec: GenerationSpec, run: ScriptRun) -> tuple[list[CompileMoment], bool]:
    """The compiled run's frames, each at the generation and step whose forward call compiled it."""
    entries = list(run.entries.values())
    if not entries:
        return [], False
    forward = max(entries, key=lambda e: e.calls)
    per_prompt = (spec.warmup + spec.generations) * spec.new_tokens
    placed = forward.calls == per_prompt * len(spec.prompt_lens)
    moments = []
    for f in forward.frames:
        call = int(f.get("call", 0))
        if placed:
            p, rest = divmod(call, per_prompt)
            g, step = divmod(rest, spec.new_tokens)
            prompt = spec.prompt_lens[min(p, len(spec.prompt_lens) - 1)]
        else:
            prompt, g, step = spec.prompt_lens[0], 0, call
        reason = str(f.get("recompile_reason") or "").split("\n")[0].split("  #")[0].strip()
        moments.append(CompileMoment(prompt, g, step, float(f.get("compile_s") or 0.0), reason, g < spec.warmup))
    return moments, placed


def fold_generation(
    spec: GenerationSpec, label: str, script: ScriptResult, records: list[dict], script_path: str = ""
) -> GenerationResult:
    """The figures of one generation config from its script's profile and its results records."""
    result = GenerationResult(spec, label, script, script_path=script_path)
    pairs = [(c, e) for c, e in script.pairs if c is not None]
    compiled_pids = {c.pid for c, _ in pairs}
    eager_pids = {e.pid for _, e in pairs if e is not None}
    ours = [r for r in records if isinstance(r, dict) and r.get("pid") in compiled_pids]
    theirs = [r for r in records if isinstance(r, dict) and r.get("pid") in eager_pids]
    if script.compiled is not None:
        result.compiles, result.placed = _place(spec, script.compiled)
    for prompt_len in spec.prompt_lens:
        c = _side(ours, prompt_len, spec.new_tokens, spec.batch_size)
        e = _side(theirs, prompt_len, spec.new_tokens, spec.batch_size) if eager_pids else None
        fig = PromptFigures(prompt_len, c, e)
        result.prompts.append(fig)
        if e is None:
            fig.why = "no eager baseline"
            continue
        if len(c.token_ms) < q.MIN_CALLS or len(e.token_ms) < q.MIN_CALLS:
            fig.why = "too few timed tokens (more --generations or --new-tokens)"
            continue
        fig.ttft = speedup(e.ttft_ms, c.ttft_ms) if c.ttft_ms and e.ttft_ms else None
        fig.decode = speedup(e.token_ms, c.token_ms)
        full = [(a, b) for a, b in pairs if b is not None]
        c_runs = [np.asarray(c.per_pid_token_ms.get(a.pid, []), dtype=float) for a, _ in full]
        e_runs = [np.asarray(e.per_pid_token_ms.get(b.pid, []), dtype=float) for _, b in full]
        speeds = [float(np.median(y) / np.median(x)) for x, y in zip(c_runs, e_runs) if x.size and y.size]
        fig.grade = grade_timing(full, c_runs, e_runs, speeds if len(speeds) > 1 else ())
        sp = fig.decode
        if fig.grade.grade == q.UNUSABLE:
            fig.verdict, fig.why = CANNOT_TELL, f"the timing is unusable: {fig.grade.reason}"
        elif sp.ci_low > 1.0:
            fig.verdict = FASTER
        elif sp.ci_high < 1.0:
            fig.verdict = SLOWER
        else:
            fig.verdict, fig.why = CANNOT_TELL, "its interval spans 1 (no measurable difference)"
        saved = (fig_median(e.token_ms) or 0.0) - (fig_median(c.token_ms) or 0.0)
        if fig.verdict == FASTER and saved > 0 and None not in (c.first_total_s, c.steady_total_s):
            extra_c = c.first_total_s - c.steady_total_s
            extra_e = (e.first_total_s - e.steady_total_s) if None not in (e.first_total_s, e.steady_total_s) else 0.0
            extra_ms = max(0.0, extra_c - extra_e) * 1000.0
            fig.break_even_tokens = math.ceil(extra_ms / saved)
    return result


def fig_median(values: list[float]) -> float | None:
    return float(np.median(values)) if values else None


def result_lines(r: GenerationResult) -> list[str]:
    """One generation config, as the command line and summary.txt say it."""
    s = r.spec
    lines = [f"{r.label}: {s.source}, batch {s.batch_size}, {s.new_tokens} new tokens, greedy, {s.cache} cache"]
    c_run = r.script.compiled
    if c_run is not None and (c_run.exit_code not in (0, None) or c_run.ended or not c_run.finished):
        lines.append(f"  the compiled run {c_run.how_it_ended()}")
    e_run = r.script.eager
    if e_run is not None and (e_run.exit_code not in (0, None) or e_run.ended or not e_run.finished):
        lines.append(f"  the eager run {e_run.how_it_ended()}")
    for p in r.prompts:
        c, e = p.compiled, p.eager
        lines.append(f"  prompt {p.prompt_len} tokens:")
        ttft = f"    time to first token: {ms_or_missing(fig_median(c.ttft_ms))} compiled"
        if e is not None:
            ttft += f", {ms_or_missing(fig_median(e.ttft_ms))} eager"
            if p.ttft is not None:
                ttft += f": {speedup_interval(p.ttft)}"
        lines.append(ttft)
        decode = f"    decode: {ms_or_missing(fig_median(c.token_ms))} a token (p90 {ms_or_missing(p.p90(c))}) compiled"
        if e is not None:
            decode += f", {ms_or_missing(fig_median(e.token_ms))} (p90 {ms_or_missing(p.p90(e))}) eager"
            if p.decode is not None:
                decode += f": {speedup_interval(p.decode)}"
        lines.append(decode)
        verdict = p.verdict if p.verdict in (FASTER, SLOWER) else f"{p.verdict}: {p.why}"
        grade = f"; timing {p.grade.grade}" + (
            f" ({p.grade.reason})" if p.grade.reason and p.grade.grade != q.UNUSABLE else ""
        )
        lines.append(
            f"    per-token decode {verdict}" + (grade if p.decode is not None and p.grade.grade != q.UNUSABLE else "")
        )
        tps = f"    tokens/s: {fig_median(c.tokens_per_s) or 0:,.0f} compiled"
        if e is not None:
            tps += f", {fig_median(e.tokens_per_s) or 0:,.0f} eager"
        lines.append(tps + " (median generation, prefill included)")
        first = f"    first generation (it compiles): {seconds(c.first_total_s) if c.first_total_s is not None else '-'} compiled"
        if e is not None and e.first_total_s is not None:
            first += f", {seconds(e.first_total_s)} eager"
        lines.append(first)
        if p.break_even_tokens is not None:
            lines.append(f"    break-even: after {p.break_even_tokens:,} generated tokens of the faster decode")
        if c.short or (e is not None and e.short):
            lines.append("    some generations made fewer tokens than asked; their figures are kept")
    paid = [m for m in r.compiles if not m.recompile_reason]
    if paid:
        by_place = {}
        for m in paid:
            by_place[m.where()] = by_place.get(m.where(), 0.0) + m.seconds
        lines.append(
            f"  compile (torch's figure) {seconds(r.compile_s)}: "
            + "; ".join(f"{seconds(sec)} {where}" for where, sec in by_place.items())
        )
    for m in r.recompiles[:10]:
        lines.append(f"  recompile {m.where()} ({seconds(m.seconds)}): {m.recompile_reason[:200]}")
    if len(r.recompiles) > 10:
        lines.append(f"  ... {len(r.recompiles) - 10} more recompiles (recompiles.csv)")
    changes = recompile_changes(r)
    if changes:
        lines.append(
            "  advice: the dynamic cache grows with every token and recompiles the decode step; try "
            + ", or ".join(
                f"{c.flag} (cache_implementation='static')" if c.cache == "static" else c.flag for c in changes
            )
        )
    if not r.placed and r.compiles:
        lines.append("  (the forward's calls did not divide into the generations: compiles are placed by call only)")
    breaks = [gb for e in (c_run.entries.values() if c_run else ()) for gb in e.graph_breaks]
    for gb in breaks[:5]:
        lines.append(f"  graph break: {gb.reason} at {os.path.basename(gb.file)}:{gb.line}, logged {gb.logged}x")
    return lines
