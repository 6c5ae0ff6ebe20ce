"""A report against a saved baseline (the `compare` command's judgement, core.cli.compare).

Configs are matched by label. Per config: the change of the compiled and eager medians,
each median with a 95% bootstrap interval from its samples (do the intervals overlap?),
the speedup (with the summary's intervals), compile time, peak memory, accuracy, graph
breaks added and removed (by location and reason), recompiles, and a one-line verdict.

A regression is one of: the compiled median slower by more than the threshold with the
two medians' intervals apart (outside the noise); the accuracy check newly failing; a
config that completed in the baseline failing now; graph breaks added. A config that completed
in the baseline and is missing from the new report is no regression (nothing of it was measured,
so it is no slowdown): its verdict says MISSING, and it fails a gate as a regression does. With `--relative`
the compiled side is judged against the eager side of its own run instead (the speedup
falling by more than the threshold with the speedups' 95% intervals apart), so a machine that
is slower or busier as a whole (a shared CI runner) does not read as a regression; a change
that slows eager and compiled alike (in torch, say) then passes too, and the verdict says so. The exit code is 1
when any config regressed or went missing, so the command can gate CI, and 3 when none did but the
speed of some config could not be judged (a report with no timed calls, or a timing graded
unusable by core.analysis.quality, or neither report timed it: the verdict says CANNOT TELL), or
when no config is in both reports (whatever went missing); a noisy timing is warned about. Reports from a different torch
version, device, machine or thread count are still compared, with a warning naming the
difference. Reports that profile no model in common are not compared at all (report_match.model_mismatch:
configs matched by label would set one model's against another's). No Qt; `compare_reports` is
what the app calls.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from core.analysis.quality import NOISY
from core.analysis.quality_advice import CLI_FIELDS, RerunFields
from core.analysis.results import JobResult
from core.analysis.stats import median_interval
from core.decide.compare_timing import timing_problem
from core.decide.cudagraph_gate import judge_cudagraphs
from core.decide.report_match import environment_warnings
from core.vocab.records import JobStatus
from core.vocab.source_paths import display_path

DEFAULT_THRESHOLD_PCT = 5.0
CANNOT_TELL_EXIT = 3  # no regression found, but some config's speed could not be judged
COMPARE_COLUMNS = [
    "config",
    "verdict",
    "regression",
    "missing",
    "judged",
    "relative_change_pct",
    "compiled_median_base_ms",
    "compiled_median_new_ms",
    "compiled_change_pct",
    "compiled_ci_overlap",
    "eager_median_base_ms",
    "eager_median_new_ms",
    "eager_change_pct",
    "eager_ci_overlap",
    "speedup_base",
    "speedup_new",
    "speedup_ci_overlap",
    "compile_time_base_s",
    "compile_time_new_s",
    "compiled_peak_base_mb",
    "compiled_peak_new_mb",
    "accuracy_base",
    "accuracy_new",
    "graph_breaks_added",
    "graph_breaks_removed",
    "recompiles_base",
    "recompiles_new",
    "status_base",
    "status_new",
]


@dataclass(frozen=True)
class MedianChange:
    """One side's median in both reports with its 95% bootstrap interval; `overlap` is
    True when the intervals overlap (the change is within the noise)."""

    base_ms: float
    new_ms: float
    base_ci: tuple[float, float]
    new_ci: tuple[float, float]

    @property
    def change(self) -> float:
        return self.new_ms / self.base_ms - 1.0

    @property
    def overlap(self) -> bool:
        return self.base_ci[0] <= self.new_ci[1] and self.new_ci[0] <= self.base_ci[1]


@dataclass(frozen=True)
class ConfigComparison:
    """One config (by label) in both reports; `regression` and `verdict` as in the module
    docstring; the rest is the evidence. `base`/`new` are None where only one report has it."""

    config: str
    base: JobResult | None
    new: JobResult | None
    compiled: MedianChange | None = None
    eager: MedianChange | None = None
    breaks_added: tuple[str, ...] = ()
    breaks_removed: tuple[str, ...] = ()
    regression: bool = False
    verdict: str = ""
    relative: bool = False  # judged by --relative (the compiled side against eager)
    cannot_tell: bool = False  # its speed could not be judged (no calls, or an unusable timing)
    # completed in the baseline, not in the new report: not measured, so no regression, but a
    # gate does not pass it (the verdict says MISSING)
    missing: bool = False

    def row(self) -> dict[str, Any]:
        """compare.csv's row."""
        b = self.base.summary() if self.base else {}
        n = self.new.summary() if self.new else {}
        c, e = self.compiled, self.eager

        def overlap(key_low, key_high):
            if not b.get(key_low) or not n.get(key_low):
                return None
            return b[key_low] <= n[key_high] and n[key_low] <= b[key_high]

        return {
            "config": self.config,
            "verdict": self.verdict,
            "regression": self.regression,
            "missing": self.missing,
            "judged": ("relative" if self.relative else "absolute") if self.base and self.new else None,
            # compiled's change against eager (base speedup / new speedup - 1): what --relative judges
            "relative_change_pct": (
                100 * (b["speedup"] / n["speedup"] - 1) if b.get("speedup") and n.get("speedup") else None
            ),
            "compiled_median_base_ms": c and c.base_ms,
            "compiled_median_new_ms": c and c.new_ms,
            "compiled_change_pct": c and 100 * c.change,
            "compiled_ci_overlap": c and c.overlap,
            "eager_median_base_ms": e and e.base_ms,
            "eager_median_new_ms": e and e.new_ms,
            "eager_change_pct": e and 100 * e.change,
            "eager_ci_overlap": e and e.overlap,
            "speedup_base": b.get("speedup"),
            "speedup_new": n.get("speedup"),
            "speedup_ci_overlap": overlap("speedup_ci_low", "speedup_ci_high"),
            "compile_time_base_s": b.get("compile_time_s"),
            "compile_time_new_s": n.get("compile_time_s"),
            "compiled_peak_base_mb": b.get("compiled_peak_mb"),
            "compiled_peak_new_mb": n.get("compiled_peak_mb"),
            "accuracy_base": b.get("accuracy"),
            "accuracy_new": n.get("accuracy"),
            "graph_breaks_added": " | ".join(self.breaks_added),
            "graph_breaks_removed": " | ".join(self.breaks_removed),
            "recompiles_base": b.get("recompile_count"),
            "recompiles_new": n.get("recompile_count"),
            "status_base": b.get("status"),
            "status_new": n.get("status"),
        }


WORSE, BETTER, NOISE = "worse", "better", "noise"


def _median_trend(m: MedianChange | None, threshold: float) -> str:
    if m is None:
        return ""
    if abs(m.change) > threshold and not m.overlap:
        return WORSE if m.change > 0 else BETTER
    return NOISE


def trends(c: ConfigComparison, threshold_pct: float) -> dict[str, str]:
    """Which way each figure of a config moved, for colouring a compare table: per
    compare.csv column stem ("compiled", "eager", "speedup", "compile_time", "compiled_peak",
    "accuracy", "graph_breaks", "recompiles") WORSE, BETTER, NOISE (within the noise or the
    threshold) or "" (not in both reports). Medians by the verdict's rule (threshold and
    bootstrap intervals apart); speedup by the --relative rule (compiled's change against
    eager, sb / sn - 1, beyond the threshold with the speedups' 95% intervals apart), which
    also colours the compiled median of a comparison judged relative; compile time and peak
    memory (single measurements) by the threshold alone."""
    if c.base is None or c.new is None:
        return {}
    threshold = threshold_pct / 100.0
    row, out = c.row(), {"compiled": _median_trend(c.compiled, threshold), "eager": _median_trend(c.eager, threshold)}
    sb, sn = row["speedup_base"], row["speedup_new"]
    if sb and sn:
        change = sb / sn - 1
        out["speedup"] = (
            NOISE
            if row["speedup_ci_overlap"] is not False or abs(change) <= threshold
            else (WORSE if change > 0 else BETTER)
        )
        if c.relative:
            out["compiled"] = out["speedup"]
    for stem in ("compile_time", "compiled_peak"):
        unit = "s" if stem == "compile_time" else "mb"
        b, n = row[f"{stem}_base_{unit}"], row[f"{stem}_new_{unit}"]
        if b and n is not None:
            out[stem] = NOISE if abs(n / b - 1) <= threshold else (WORSE if n > b else BETTER)
    acc_b, acc_n = row["accuracy_base"], row["accuracy_new"]
    out["accuracy"] = (
        WORSE if acc_n == "fail" and acc_b != "fail" else BETTER if acc_b == "fail" and acc_n == "pass" else NOISE
    )
    out["graph_breaks"] = WORSE if c.breaks_added else BETTER if c.breaks_removed else NOISE
    rb, rn = row["recompiles_base"], row["recompiles_new"]
    if rb is not None and rn is not None:
        out["recompiles"] = WORSE if rn > rb else BETTER if rn < rb else NOISE
    return out


@dataclass(frozen=True)
class Comparison:
    """Every config of both reports, and the warnings about what differs between them."""

    configs: tuple[ConfigComparison, ...]
    warnings: tuple[str, ...]
    threshold_pct: float
    relative: bool = False

    @property
    def regressed(self) -> bool:
        return any(c.regression for c in self.configs)

    @property
    def nothing_compared(self) -> bool:
        """No config is in both reports (one of them empty, say): a gate must not pass that."""
        return not any(c.base is not None and c.new is not None for c in self.configs)

    @property
    def missing(self) -> list[str]:
        """The configs that completed in the baseline and are missing from the new report."""
        return [c.config for c in self.configs if c.missing]

    @property
    def undecided(self) -> list[str]:
        """The configs whose speed could not be judged (no regression found in them either)."""
        return [c.config for c in self.configs if c.cannot_tell]


def _median_change(base: JobResult, new: JobResult, side: str) -> MedianChange | None:
    b, n = base.latencies(side), new.latencies(side)
    if not len(b) or not len(n):
        return None
    bm, bl, bh = median_interval(b)
    nm, nl, nh = median_interval(n)
    if not bm > 0:  # no change relative to 0 ms (timing_problem says why)
        return None
    return MedianChange(bm, nm, (bl, bh), (nl, nh))


def _break_label(gb) -> str:
    where = f"{display_path(gb.file)}:{gb.line}" if gb.file else "?"
    kind = "frame skipped" if gb.frame_skipped else "graph break"
    return f"{kind} {gb.gb_code or ''} at {where}: {gb.reason}".replace("  ", " ")


def _breaks(result: JobResult | None) -> dict[tuple, str]:
    if result is None:
        return {}
    return {(g.reason, os.path.basename(g.file), g.line, g.frame_skipped): _break_label(g) for g in result.graph_breaks}


def _relative_change(b: dict, n: dict) -> tuple[float, bool] | None:
    """(how much slower compiled got relative to eager: base speedup / new speedup - 1, do
    the speedups' 95% intervals overlap), from the two summaries; None without both speedups."""
    if not b["speedup"] or not n["speedup"]:
        return None
    intervals = (b["speedup_ci_low"], b["speedup_ci_high"], n["speedup_ci_low"], n["speedup_ci_high"])
    overlap = None in intervals or (intervals[0] <= intervals[3] and intervals[2] <= intervals[1])
    return b["speedup"] / n["speedup"] - 1.0, overlap


def _judge_compiled(compiled: MedianChange, threshold: float, problems: list, notes: list) -> None:
    pct, size = f"{100 * compiled.change:+.1f}%", f"{100 * abs(compiled.change):.1f}%"  # the word says which way
    if compiled.change > threshold and not compiled.overlap:
        problems.append(
            f"compiled {size} slower ({compiled.base_ms:.3f} → {compiled.new_ms:.3f} ms, outside the noise)"
        )
    elif compiled.change < -threshold and not compiled.overlap:
        notes.append(f"compiled {size} faster")
    elif abs(compiled.change) > threshold:
        notes.append(f"compiled {pct}, within the noise")
    else:
        notes.append(f"compiled {pct}")


def _judge_relative(base: JobResult, new: JobResult, threshold: float, problems: list, notes: list) -> bool:
    """The --relative rule; False when the reports lack the speedups it needs."""
    b, n = base.summary(), new.summary()
    rel = _relative_change(b, n)
    if rel is None:
        return False
    change, overlap = rel
    sb, sn = b["speedup"], n["speedup"]
    said = f"compiled {100 * change:+.1f}% relative to eager (speedup {sb:.2f}× → {sn:.2f}×"
    if change > threshold and not overlap:
        problems.append(said + ", outside the noise)")
    elif abs(change) > threshold and overlap:
        notes.append(said + ", within the noise)")
    else:
        notes.append(said + ")")
    return True


# Not a measured slowdown (nothing of it is in the new report), so not a REGRESSION; a gate
# does not pass it all the same (the command's exit code 1, or 3 when no config is in both)
MISSING_VERDICT = (
    "MISSING: in the baseline, not in the new report (it completed in the baseline; nothing of it was "
    "measured in the new report, so its speed is not compared)"
)


def compare_config(
    label: str,
    base: JobResult | None,
    new: JobResult | None,
    threshold_pct: float,
    relative: bool = False,
    pending: bool = False,
    fields: RerunFields = CLI_FIELDS,
    require_cudagraphs: bool = False,
) -> ConfigComparison:
    """One config of both reports; `pending`: the new run has it queued or running (the app
    compares while a run goes on), so its absence is no regression; `fields`: how re-run advice
    names the settings (the command line's flags, or the app's form fields); `require_cudagraphs`:
    CUDA-graph coverage is gated too (core.decide.cudagraph_gate)."""
    if new is None and pending:
        return ConfigComparison(label, base, new, verdict="not finished yet in the new run: nothing to compare")
    if new is None and base is not None and base.status == JobStatus.COMPLETED:  # a gate must not pass it
        return ConfigComparison(label, base, new, verdict=MISSING_VERDICT, missing=True)
    if base is None or new is None:
        where = "the new report only" if base is None else f"the baseline only ({base.status} there)"
        return ConfigComparison(label, base, new, verdict=f"in {where}: nothing to compare")
    compiled, eager = _median_change(base, new, "compiled"), _median_change(base, new, "eager")
    old_breaks, new_breaks = _breaks(base), _breaks(new)
    added = tuple(v for k, v in new_breaks.items() if k not in old_breaks)
    removed = tuple(v for k, v in old_breaks.items() if k not in new_breaks)
    threshold = threshold_pct / 100.0
    problems, notes, unknown = [], [], []
    if base.status == JobStatus.COMPLETED and new.status != JobStatus.COMPLETED:
        problems.append(f"{new.status} now ({new.failure_reason})")
    acc_b, acc_n = base.accuracy_verdict(), new.accuracy_verdict()
    if acc_n is not None and acc_n.status == "fail" and (acc_b is None or acc_b.status != "fail"):
        problems.append(f"accuracy fails now: {acc_n.reason}")
    timing = timing_problem(base, new, fields)  # a busy machine or no calls: the speed is not judged
    if timing:
        unknown.append(timing)
    judged = not timing and relative and _judge_relative(base, new, threshold, problems, notes)
    if relative and not judged and not timing:
        notes.append("no speedup in both reports to judge compiled against eager: judged on its own")
    if compiled is not None and not timing:
        if judged:
            notes.append(f"absolute: compiled {100 * compiled.change:+.1f}%")
        else:
            _judge_compiled(compiled, threshold, problems, notes)
    if eager is not None and not timing and abs(eager.change) > threshold and not eager.overlap:
        notes.append(
            f"eager {100 * eager.change:+.1f}%"
            + (" too (the machine or torch changed? --relative judges compiled against eager)" if not judged else "")
        )
    if added:
        problems.append(f"{len(added)} graph break{'s' if len(added) > 1 else ''} added ({added[0]})")
    if removed:
        notes.append(f"{len(removed)} graph break{'s' if len(removed) > 1 else ''} removed")
    if base.status != JobStatus.COMPLETED and new.status == JobStatus.COMPLETED:
        notes.append(f"completes now ({base.status} in the baseline, so only the new report timed it)")
    if len(new.recompiles) != len(base.recompiles):
        notes.append(f"recompiles {len(base.recompiles)} → {len(new.recompiles)}")
    if require_cudagraphs:
        judge_cudagraphs(base, new, problems, notes, unknown)
    if problems:
        verdict = "REGRESSION: " + "; ".join(problems + unknown + notes)
    elif unknown:
        verdict = "CANNOT TELL: " + "; ".join(unknown + notes)
    else:
        verdict = "ok: " + "; ".join(notes or ["same"])
    return ConfigComparison(
        label,
        base,
        new,
        compiled,
        eager,
        added,
        removed,
        bool(problems),
        verdict,
        relative=judged,
        cannot_tell=bool(unknown) and not problems,
    )


def change_effect(before: JobResult, after: JobResult, what: str) -> str:
    """The measured effect of an applied change (`what`, e.g. "freezing"), "before" and
    "after" being two jobs of this machine: the compiled median and the speedup, each change
    said to be beyond the noise only when the 95% intervals are apart; "cannot tell" when
    either timing was unusable; compile time when it moved."""
    head = f"{what}: {before.config.label} → {after.config.label}"
    if after.status != JobStatus.COMPLETED:
        return f"{head}: the new config did not complete ({after.failure_reason or after.status})."
    timing = (
        timing_problem(before, after)
        .replace("the baseline", "the earlier run")
        .replace("the new report", "the new run")
        .replace("both reports", "both runs")
    )
    parts = []
    compiled = _median_change(before, after, "compiled")
    if timing:
        parts.append(f"cannot tell ({timing})")
    elif compiled is not None:
        noise = "within the noise" if compiled.overlap else "beyond the noise"
        parts.append(
            f"compiled {compiled.base_ms:.3f} → {compiled.new_ms:.3f} ms ({100 * compiled.change:+.1f}%, {noise})"
        )
        b, n = before.summary(), after.summary()
        if b["speedup"] and n["speedup"]:
            rel = _relative_change(b, n)
            apart = rel is not None and not rel[1]
            parts.append(
                f"speedup {b['speedup']:.2f}x → {n['speedup']:.2f}x ("
                f"{'intervals apart' if apart else 'intervals overlap'})"
            )
    cb, cn = before.summary()["compile_time_s"], after.summary()["compile_time_s"]
    if cb is not None and cn is not None:
        parts.append(f"compile {cb:.1f} s → {cn:.1f} s")
    return f"{head}: " + "; ".join(parts) + "."


def compare_reports(
    base: list[JobResult],
    base_header: dict,
    new: list[JobResult],
    new_header: dict,
    threshold_pct: float = DEFAULT_THRESHOLD_PCT,
    relative: bool = False,
    pending: frozenset[str] = frozenset(),
    fields: RerunFields = CLI_FIELDS,
    require_cudagraphs: bool = False,
) -> Comparison:
    by_base = {r.config.label: r for r in base}
    by_new = {r.config.label: r for r in new}
    labels = list(dict.fromkeys([*by_base, *by_new]))
    configs = tuple(
        compare_config(
            label,
            by_base.get(label),
            by_new.get(label),
            threshold_pct,
            relative,
            label in pending,
            fields,
            require_cudagraphs,
        )
        for label in labels
    )
    warnings = environment_warnings(base_header.get("environment") or {}, new_header.get("environment") or {})
    models = {r.spec.model.source for r in base} ^ {r.spec.model.source for r in new}
    if models:
        warnings.append(f"the reports profile different models ({', '.join(sorted(models))})")
    warnings += [f"baseline: {w}" for w in base_header.get("warnings", [])]
    warnings += [f"new: {w}" for w in new_header.get("warnings", [])]
    for name, results in (("baseline", base), ("new", new)):
        for r in results:
            quality = r.quality()
            if quality.grade == NOISY:
                warnings.append(
                    f"{name}: the timing of {r.config.label} was noisy ({quality.reasons[0]}); "
                    "small changes in it may be noise"
                )
    return Comparison(configs, tuple(warnings), threshold_pct, relative)
