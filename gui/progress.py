"""The run's progress bar: which job, which phase, which iteration.

The phase and the iteration count come from the session's JobResults (the job's
PhaseChanged events and its compiled benchmark samples); nothing is estimated from time.
GUI thread only.
"""
from __future__ import annotations

import re

from PySide6.QtWidgets import QProgressBar

# Where each phase starts within one job's share of the bar. The compile usually dominates.
PHASE_START = {"": 0.0, "load": 0.02, "eager": 0.1, "compile": 0.2, "compiled": 0.65, "benchmark": 0.7,
               "sweep": 0.3}
STEPS = 1000
_VARIANT_OF = re.compile(r"variant (\d+)/(\d+)")


def _sweep_progress(result) -> tuple[int, int]:
    """(variants done, variants in all) of a shape sweep, from its PhaseChanged detail."""
    match = _VARIANT_OF.search(result.phase_detail or "")
    total = int(match.group(2)) if match else 0
    return len(result.variants), max(total, len(result.variants))


def job_fraction(result) -> float:
    """How far one job is, 0..1, from its phase and timed iterations."""
    if result.ended:
        return 1.0
    start = PHASE_START.get(result.phase, 0.0)
    if result.phase == "benchmark" and result.spec.iters:
        done = result.samples.count("compiled")
        return start + (1.0 - start) * min(1.0, done / result.spec.iters)
    if result.phase == "sweep":
        done, total = _sweep_progress(result)
        return start + (1.0 - start) * (done / total if total else 0.0)
    return start


def describe(results) -> tuple[float, str]:
    """(fraction of the whole run, text) for the bar."""
    if not results:
        return 0.0, ""
    total = len(results)
    fraction = sum(job_fraction(r) for r in results) / total
    current = next((r for r in results if not r.ended and r.status != "pending"), None)
    if current is None:
        current = next((r for r in results if not r.ended), None)
    if current is None:
        ended = {s: sum(1 for r in results if r.status == s) for s in ("completed", "failed", "cancelled")}
        return 1.0, ", ".join(f"{n} {s}" for s, n in ended.items() if n) or "done"
    number = results.index(current) + 1
    text = f"job {number}/{total} · {current.config.label} · {current.phase or 'starting'}"
    if current.phase == "benchmark":
        done = current.samples.count("compiled")
        text += f" {done}/{current.spec.iters}"
    elif current.phase == "sweep":
        done, total = _sweep_progress(current)
        text += f" {done}/{total} shapes"
    return fraction, text


class RunProgressBar(QProgressBar):
    """GUI thread only."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setRange(0, STEPS)
        self.setValue(0)
        self.setTextVisible(True)
        self.setFormat("idle")
        self.setMinimumWidth(360)
        self.setToolTip("Progress of the run: job, phase (load, eager, compile, compiled, benchmark or sweep) and "
                        "iteration or shape")

    def show_results(self, results) -> None:
        fraction, text = describe(results)
        self.setValue(int(fraction * STEPS))
        self.setFormat(text or "idle")
