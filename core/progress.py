"""How far a run is: a fraction and a line of text, from the jobs' results so far.

The phase and the counts come from the jobs' own events (PhaseChanged with its step of
steps, the compiled benchmark samples); nothing is estimated from time. The app's progress
bar shows `describe`; nothing here knows Qt.
"""
from __future__ import annotations

from core.events import JobStatus

# Where each phase starts within one job's share of the whole. The compile usually dominates.
PHASE_START = {"": 0.0, "load": 0.02, "eager": 0.1, "compile": 0.2, "compiled": 0.65, "benchmark": 0.7,
               "sweep": 0.3, "accuracy": 0.97, "op_profile": 0.98}


def sweep_progress(result) -> tuple[int, int]:
    """(variants done, variants in all) of a shape sweep."""
    done = len(result.variants)
    return done, max(result.phase_steps if result.phase == "sweep" else 0, done)


def job_fraction(result) -> float:
    """How far one job is, 0..1, from its phase and timed iterations."""
    if result.ended:
        return 1.0
    start = PHASE_START.get(result.phase, 0.0)
    if result.phase == "benchmark" and result.spec.iters:
        done = result.samples.count("compiled")
        return start + (PHASE_START["accuracy"] - start) * min(1.0, done / result.spec.iters)
    if result.phase == "sweep":
        done, total = sweep_progress(result)
        return start + (PHASE_START["accuracy"] - start) * (done / total if total else 0.0)
    return start


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
        ended = {s: sum(1 for r in results if r.status == s)
                 for s in (JobStatus.COMPLETED, JobStatus.FAILED, JobStatus.CANCELLED)}
        return 1.0, ", ".join(f"{n} {s}" for s, n in ended.items() if n) or "done"
    number = results.index(current) + 1
    text = f"job {number}/{total} · {current.config.label} · {current.phase or 'starting'}"
    if current.phase == "benchmark":
        text += f" {current.samples.count('compiled')}/{current.spec.iters}"
    elif current.phase == "sweep":
        done, steps = sweep_progress(current)
        text += f" {done}/{steps} shapes"
    return fraction, text
