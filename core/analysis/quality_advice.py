"""What the app and the command line say about timings that are not quiet: the re-run advice
(`rerun_advice`, naming the settings as the command line or the app's form does: `RerunFields`)
and the banner above such results (`banner`). The grades themselves are core.analysis.quality's.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.analysis.quality import NOISY, OTHERS_NOISY_CORES, OUTLIER_RULE, UNUSABLE, MeasurementQuality, load_when


def machine_was_busy(quality: MeasurementQuality | None) -> bool:
    """Other programs used the CPU while the calls were timed (noisy or worse on that count)."""
    return quality is not None and quality.others_cores is not None and quality.others_cores >= OTHERS_NOISY_CORES


@dataclass(frozen=True)
class RerunFields:
    """How re-run advice names the settings it asks to change: the command line's flags
    (`CLI_FIELDS`) or the app's form fields (`FORM_FIELDS`), which has no --precision or
    --max-time: advice quoting them sent the user after fields that are not there."""

    more_auto: str  # more of what, for a timing that ran until its precision (--iters auto)
    more_fixed: str  # ...and for a fixed number of timed calls
    longer_tune: str  # what measures an inductor config when only references ran
    processes: str  # the setting that times more fresh processes
    iters: str  # ...more calls: "more {iters} (or {iters} auto)"
    max_time: str  # ...a longer timing under --iters auto ("" where there is no such setting)
    tune: str = "tune"  # what measures the other settings worth trying (tune's candidates)


CLI_FIELDS = RerunFields(
    "more --processes or a tighter --precision and a longer --max-time",
    "more --processes and more --iters (or --iters auto, which times calls until the speedup is precise)",
    "tune: a longer --budget",
    "--processes",
    "--iters",
    "--max-time",
)
FORM_FIELDS = RerunFields(
    "more Processes",
    "more Processes and more Iterations (or Iterations auto, which times calls until the speedup is precise)",
    "Find best settings: a longer Budget",
    "Processes",
    "Iterations",
    "",
    "Find best settings",
)


def rerun_advice(qualities, fields: RerunFields = CLI_FIELDS) -> str:
    """What a re-run should change, from the timings' own figures: a quieter machine only where
    other programs used the CPU while calls were timed (a sub-millisecond model's calls spread
    on an idle machine too, and "close other programs" then sent the user after nothing).
    `fields`: how the settings are named (the command line's flags, or the app's fields)."""
    qualities = [q for q in qualities if q is not None]
    busy = [q for q in qualities if machine_was_busy(q)]
    # "while calls were timed" only where every reading it rests on was (a tiny model's calls are
    # shorter than a reading: its grade read the whole job's load)
    when = load_when(all(q.load_while_timed for q in (busy or qualities)))
    more = fields.more_auto
    if any(q.precision_target_pct is None for q in qualities):  # a fixed --iters: those two do nothing
        more = fields.more_fixed
    if busy:
        return (
            f"re-run on a quiet machine, with {more}: other programs used up to "
            f"{max(q.others_cores for q in busy):.1f} cores {when}"
        )
    if qualities and all(q.others_cores is not None for q in qualities):
        return f"re-run with {more} (the machine was quiet {when}: closing other programs will not help)"
    return f"re-run with {more}"


BANNER_REASONS = 2  # configs a brief banner gives a noisy timing's reason for; past that, only unusable ones


def banner(results, brief: bool = False, fields: RerunFields = CLI_FIELDS) -> str:
    """What the app says above results whose timing is not quiet ("" when all are quiet or
    ungraded): each such config with its grade and first reason, and what follows. `brief`:
    past BANNER_REASONS such configs, a noisy one's reason is left to its Timing cell (five
    configs' reasons made a six-line banner that squeezed the chart to 100 px). `fields`: how
    the re-run advice names the settings (rerun_advice)."""
    shown, unusable, graded = [], [], []
    rule = f" ({OUTLIER_RULE})"  # said once at the end, not after every config it applies to
    for r in results:
        if not r.ended:
            continue
        q = r.quality()
        if q.grade in (NOISY, UNUSABLE):
            shown.append((f"{r.config.label} {q.grade}", f" ({q.reasons[0].replace(rule, '')})", q.grade))
            graded.append(q)
            if q.grade == UNUSABLE:
                unusable.append(r.config.label)
    if not shown:
        return ""
    terse = brief and len(shown) > BANNER_REASONS
    said = [name + (why if not terse or grade == UNUSABLE else "") for name, why, grade in shown]
    advice = rerun_advice(graded, fields)
    if unusable:  # the others' figures still carry what verdict there is
        which = "that timing" if len(unusable) == 1 else "those timings"
        tail = f"no verdict is drawn from {which} ({', '.join(unusable)}): {advice}"
    else:
        tail = f"its figures stand with their intervals (to narrow them, {advice})"
    ruled = any(rule in q.reasons[0] for q in graded if not terse or q.grade == UNUSABLE)  # a reason shown
    far_out = f" Far slower: {OUTLIER_RULE}." if ruled else ""
    why = " Each config's Timing cell says why." if terse else ""
    return f"Timing not quiet: {'; '.join(said)}. {tail[0].upper() + tail[1:]}.{far_out}{why}"
