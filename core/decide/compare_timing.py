"""Whether a config's speed can be compared between two reports, and what a re-run of it should
change when it cannot (core.decide.compare's judgement leans on these): a report with no timed
calls, a 0 ms median, a timing graded unusable or giving the direction only
(core.analysis.quality), said with the first such report's reason; the re-run advice names what
the runs already did (processes added, a precision not reached) in the command line's flags or
the app's fields. No torch, no Qt.
"""

from __future__ import annotations

import numpy as np

from core.analysis.quality import UNUSABLE, MeasurementQuality
from core.analysis.quality_advice import CLI_FIELDS, RerunFields, machine_was_busy, rerun_advice
from core.analysis.results import JobResult
from core.vocab.limits import AUTO_PROCESSES_CAP, LIMITS
from core.vocab.records import SIDES, JobStatus


def timing_problem(base: JobResult, new: JobResult, fields: RerunFields = CLI_FIELDS) -> str:
    """Why the speed of a config cannot be compared ("" when it can): a report with no timed
    calls on a side, or a timing graded unusable or giving the direction only
    (core.analysis.quality); the first such report with its reason, the other named when its
    timing is so too, and what a re-run of the config should change (rerun_it)."""
    graded = []  # (report, result, quality, what its timing does)
    for name, r in (("the baseline", base), ("the new report", new)):
        no_calls = not len(r.latencies("eager")) or not len(r.latencies("compiled"))
        if r.status == JobStatus.COMPLETED and not r.variants and no_calls:
            return f"{name} has no timed calls for it, so its speed is not compared"
        zero = [side for side in SIDES if len(r.latencies(side)) and not np.median(r.latencies(side)) > 0]
        if zero:
            return (
                f"{name} gives 0 ms as the {zero[0]} median, which no change can be measured against, so its "
                "speed is not compared; re-run the config to measure it (a timer too coarse for the call, or an "
                "edited report?)"
            )
        quality = r.quality()
        if quality.direction_only:  # which side is faster is known, not a figure to set against another's
            graded.append((name, r, quality, "gives the direction only"))
        elif quality.grade == UNUSABLE:
            graded.append((name, r, quality, "was unusable"))
    if graded:
        name, _, quality, what = graded[0]
        also = ""
        if len(graded) > 1:
            other, _, _, other_what = graded[1]
            also = f", and that of {other} {'too' if other_what == what else other_what}"
        return f"the timing of {name} {what} ({quality.reasons[0]}){also}, so its speed is not compared; " + rerun_it(
            [(n, r, q) for n, r, q, _ in graded], fields
        )
    if not timed(base) and not timed(new):  # both failed, say: nothing measured to pass a gate on
        return (
            f"neither report has timed calls for it (baseline {base.status}, new {new.status}), "
            "so nothing about it is compared"
        )
    return ""


def rerun_it(graded: list[tuple[str, JobResult, MeasurementQuality]], fields: RerunFields = CLI_FIELDS) -> str:
    """What a re-run of this config should change, from what the runs graded (report, result,
    quality) already did: on a busy machine core.analysis.quality's advice (a quiet machine
    first); else more processes than they timed (with --iters auto the runner may already have
    added processes, up to AUTO_PROCESSES_CAP, so "more --processes" names a number above
    those) and, where the speedup's precision was not reached, a longer --max-time (more --iters
    for a fixed number of calls)."""
    qualities = [q for _, _, q in graded]
    if any(machine_was_busy(q) or r.spec.sweep_shapes or r.spec.sweep_batch for _, r, q in graded):
        return rerun_advice(qualities, fields).replace("re-run", "re-run it", 1)  # a sweep runs in one process
    changes, said = [], []
    ran = max(q.processes for q in qualities)
    if ran < LIMITS["processes"].high:
        changes.append(f"{fields.processes} above {ran}")
    timed = {}  # what each report's run did: {said: reports}
    for name, r, q in graded:
        asked = r.spec.timed_processes()
        did = f"timed {q.processes} process{'es' if q.processes != 1 else ''}"
        if q.processes > asked:
            did += f": {asked} asked for, {q.processes - asked} added while they disagreed" + (
                f", the most {fields.iters} auto adds ({AUTO_PROCESSES_CAP} in all)"
                if q.processes >= AUTO_PROCESSES_CAP
                else ""
            )
        timed.setdefault(did, []).append(name)
    for did, names in timed.items():
        who = "it" if len(graded) == 1 else "both reports" if len(names) > 1 else names[0]
        said.append(f"{who} {did}")
    if any(not r.spec.auto_iters for _, r, _ in graded):
        changes.append(f"more {fields.iters} (or {fields.iters} auto)")
    else:
        short = [(r.spec, q) for _, r, q in graded if q.precision_reached is False]
        if short:
            spec, q = short[0]
            if fields.max_time:
                changes.append(f"a {fields.max_time} above {max(spec.max_time_s for spec, _ in short):g} s")
                said.append(
                    f"{fields.max_time} {spec.max_time_s:g} s ran out before the ±{q.precision_target_pct:g}% asked for"
                )
            else:
                said.append(f"the timing ran out of time before the ±{q.precision_target_pct:g}% asked for")
    if not changes:  # every setting at its end: nothing a re-run here would change
        return f"a re-run with the same settings may not tell either ({'; '.join(said)})"
    return f"re-run it with {' and '.join(changes)} ({'; '.join(said)})"


def timed(r: JobResult) -> bool:
    return bool(len(r.latencies("eager")) or len(r.latencies("compiled")) or r.variants)
