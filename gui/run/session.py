"""The results of the run on screen (or of a reopened report), folded from runner events.

`ProfileSession` owns one `core.analysis.results.JobResult` per job and is the only place the GUI
applies events (`JobResult.apply`). Panels listen to its signals and read the results;
none of them folds events or computes a figure itself. Events of a job the session does
not know (a stale one from a cancelled earlier run) are dropped. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, Signal

from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab.config import JobSpec


class ProfileSession(QObject):
    """An ordered set of JobResults, keyed by job id."""

    sig_reset = Signal()
    """The set of jobs was replaced (a new run, or a report opened); redraw everything."""

    sig_samples_added = Signal(str, object)
    """(job_id, tuple of LatencySample) arrived for a job."""

    sig_resource_sampled = Signal(str, object)
    """(job_id, ResourceSample) was read from a job's process."""

    sig_phase_changed = Signal(str, str, str)
    """(job_id, phase, detail): a job entered a phase."""

    sig_job_changed = Signal(str)
    """A job's result changed in a way the tables show (compile, breaks, memory, status); not
    for its terminal event, which `sig_job_ended` alone says (the views refreshed twice at every
    job's end, on the GUI thread)."""

    sig_graph_breaks_changed = Signal()
    """The graph breaks or recompiles of some job changed."""

    sig_variant_measured = Signal(str, object)
    """(job_id, VariantResult): a shape-sweep variant of a job is done."""

    sig_job_ended = Signal(str)
    """A job reached its terminal event (finished, failed or cancelled): its result changed too."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._results: dict[str, JobResult] = {}
        self.options: dict = {}
        self.origin = ""  # the report.json the results were read from; '' for a run
        self.warnings: list[str] = []  # what that report's header warned about
        # The folder holding the jobs' files (graphs/, traces/, compile_log/: core.vocab.artifacts):
        # the run's own folder, or the folder of the report.json opened; never a path a
        # report names.
        self.artifacts_dir = ""

    # ---------------------------------------------------------------- contents
    @property
    def results(self) -> list[JobResult]:
        return list(self._results.values())

    def result(self, job_id: str) -> JobResult | None:
        return self._results.get(job_id)

    def start(self, specs: list[JobSpec], options: dict | None = None, artifacts_dir: str = "", keep=()) -> None:
        """Begin a new run (its jobs write their files into `artifacts_dir`): forget the
        previous results but those in `keep` (ended JobResults shown beside the new ones, e.g.
        the config an "apply and re-run" changed; their files must be in `artifacts_dir` too)."""
        self._results = {r.job_id: r for r in keep}
        self._results.update({s.job_id: JobResult(s) for s in specs})
        self.options = dict(options or {})
        self.origin, self.warnings = "", []
        self.artifacts_dir = artifacts_dir
        self.sig_reset.emit()

    def load(self, results: list[JobResult], options: dict | None = None, origin: str = "", warnings=()) -> None:
        """Show results read back from a report (`origin`, with its header's `warnings`)."""
        self._results = {r.job_id: r for r in results}
        self.options = dict(options or {})
        self.origin, self.warnings = origin, list(warnings)
        self.artifacts_dir = os.path.dirname(os.path.abspath(origin)) if origin else ""
        self.sig_reset.emit()

    # ---------------------------------------------------------------- folding
    def apply(self, event: ev.Event) -> bool:
        """Fold an event into its job; False (nothing changes) for an unknown job."""
        result = self._results.get(event.job_id)
        if result is None or not result.apply(event):
            return False
        job = event.job_id
        if isinstance(event, ev.LatencyMeasured):
            self.sig_samples_added.emit(job, event.samples)
        elif isinstance(event, ev.VariantMeasured) and event.variant is not None:
            self.sig_variant_measured.emit(job, event.variant)
            self.sig_job_changed.emit(job)
        elif isinstance(event, ev.ResourceSampled) and event.sample is not None:
            self.sig_resource_sampled.emit(job, event.sample)
        elif isinstance(event, ev.PhaseChanged):
            self.sig_phase_changed.emit(job, event.phase, event.detail)
        elif isinstance(event, (ev.GraphBreakFound, ev.RecompileFound, ev.CudagraphSkipped)):
            self.sig_graph_breaks_changed.emit()
            self.sig_job_changed.emit(job)
        elif isinstance(event, ev.TERMINAL_EVENTS):
            self.sig_job_ended.emit(job)
        elif isinstance(event, (ev.CompileFinished, ev.MemoryMeasured, ev.JobStarted, ev.ModelLoaded)):
            self.sig_job_changed.emit(job)
        return True
