"""How far a run is: a fraction and a line of text, from the jobs' results so far.

The phase and the counts come from the jobs' own events (PhaseChanged with its step of
steps, the compiled benchmark samples); nothing is estimated from time. The app's progress
bar shows `describe`; nothing here knows Qt.
"""

from __future__ import annotations

from core.vocab.records import JobStatus

# Where each phase starts within one job's share of the whole. The compile usually dominates.
PHASE_START = {
    "": 0.0,
    "load": 0.02,
    "eager": 0.1,
    "compile": 0.2,
    "compiled": 0.65,
    "benchmark": 0.7,
    "sweep": 0.3,
    "accuracy": 0.97,
    "op_profile": 0.98,
    "localize": 0.99,
}


def sweep_progress(result) -> tuple[int, int]:
    """(variants done, variants in all) of a shape sweep."""
    done = len(result.variants)
    return done, max(result.phase_steps if result.phase == "sweep" else 0, done)


def job_fraction(result) -> float:
    """How far one job is, 0..1, from its phase and timed iterations, over its processes
    (each an equal share; processes the runner adds show the end of the bar, as they run
    only on what time is left)."""
    if result.ended:
        return 1.0
    processes = result.spec.timed_processes()
    start = PHASE_START.get(result.phase, 0.0)
    within = start
    planned = result.spec.planned_calls()
    if result.phase == "benchmark" and result.phase_steps:  # --iters auto: seconds of its time
        within = start + (PHASE_START["accuracy"] - start) * min(1.0, result.phase_step / result.phase_steps)
    elif result.phase == "benchmark" and planned:
        done = len(result.samples.by_process("compiled").get(result.phase_process, ()))
        within = start + (PHASE_START["accuracy"] - start) * min(1.0, done / planned)
    elif result.phase == "sweep":
        done, total = sweep_progress(result)
        within = start + (PHASE_START["accuracy"] - start) * (done / total if total else 0.0)
    return min(0.99, (result.phase_process + within) / processes)  # 1.0 only once ended


def describe(results) -> tuple[float, str]:
    """(fraction of the whole run, text) for a progress bar."""
    if not results:
        return 0.0, ""
    total = len(results)
    fraction = sum(job_fraction(r) for r in results) / total
    current = next((r for r in results if not r.ended and r.status != JobStatus.PENDING), None)
    if current is None:
        current = next((r for r in results if not r.ended), None)
    if current is None:
        ended = {
            s: sum(1 for r in results if r.status == s)
            for s in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)
        }
        return 1.0, ", ".join(f"{n} {s}" for s, n in ended.items() if n) or "done"
    number = results.index(current) + 1
    text = f"job {number}/{total} · {current.config.label} · {current.phase or 'starting'}"
    planned = current.spec.timed_processes()
    if current.phase_process >= planned:  # added by the runner: the processes disagreed
        text += f" (process {current.phase_process + 1}, added: the processes disagree)"
    elif planned > 1:
        text += f" (process {current.phase_process + 1}/{planned})"
    if current.phase == "benchmark" and current.spec.planned_calls():
        done = len(current.samples.by_process("compiled").get(current.phase_process, ()))
        text += f" {done}/{current.spec.planned_calls()}"
    elif current.phase == "benchmark" and " calls a side, speedup " in current.phase_detail:
        detail = current.phase_detail  # the interval as it narrows, without the process prefix
        text += " · " + (detail.split(": ", 1)[-1] if detail.startswith("process ") else detail)
    elif current.phase == "sweep":
        done, steps = sweep_progress(current)
        text += f" {done}/{steps} shapes"
    return fraction, text
