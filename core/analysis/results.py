"""Folding a job's events into one result, and the per-config summary row.

`JobResult.apply(event)` is the single place where events become state, used alike by the
command line, the desktop app and report loading; `JobResult.summary()` derives every
figure a table shows, so no front end computes its own.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from core.analysis.graph_break_rows import fold_graph_break, is_ordinary
from core.analysis.stats import (
    LatencyStats,
    break_even_iterations,
    process_speedups,
    speedup_over_processes,
    summarize,
)
from core.analysis.summary_columns import (
    accuracy_columns,
    batch_columns,
    break_even_column,
    call_cost_columns,
    memory_ratio,
    stats_columns,
    throughput_columns,
)
from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from core.vocab.records import JobStatus
from core.vocab.samples import SampleStore
from core.vocab.source_paths import display_path


@dataclass
class JobResult:
    """Everything received from one job so far. Partial results stay after a failure."""

    spec: JobSpec
    status: JobStatus = JobStatus.PENDING
    phase: str = ""
    phase_detail: str = ""
    phase_step: int = 0
    phase_steps: int = 0
    phase_process: int = 0  # which of the job's processes is at `phase`
    failure_reason: str = ""
    failure_detail: str = ""
    environment: dict = field(default_factory=dict)
    model_info: ev.ModelLoaded | None = None
    samples: SampleStore = field(default_factory=SampleStore)
    compile: rec.CompileResult | None = None
    graph_breaks: list[rec.GraphBreak] = field(default_factory=list)
    recompiles: list[rec.Recompile] = field(default_factory=list)
    # sizes torch made symbolic and then fixed to one value (core.capture.graphs)
    specializations: list[rec.Specialization] = field(default_factory=list)
    cudagraph_skips: list[rec.CudagraphSkip] = field(default_factory=list)
    memory: dict[str, rec.MemoryPeak] = field(default_factory=dict)
    resources: list[rec.ResourceSample] = field(default_factory=list)
    variants: list[rec.VariantResult] = field(default_factory=list)
    accuracy: rec.AccuracyResult | None = None
    graphs: list[rec.CompiledGraph] = field(default_factory=list)
    op_profile: oprec.OpProfile | None = None
    processes_ended: list[ev.ProcessEnded] = field(default_factory=list)  # the job's further processes
    call_costs: list[rec.CallCost] = field(default_factory=list)  # page faults and CPU time, per process and side
    wall_time_s: float = 0.0
    # --timing both: the throughput phase's blocks (time a call), apart from the latency samples
    throughput: list[rec.LatencySample] = field(default_factory=list)
    _speedup_cache: tuple | None = field(default=None, repr=False, compare=False)
    _quality_cache: tuple | None = field(default=None, repr=False, compare=False)
    _verdict_cache: tuple | None = field(default=None, repr=False, compare=False)
    # compile id → the (key, logged, per_call) of the ordinary breaks received with it, while
    # events arrive (see _add_graph_break)
    _breaks_by_compile: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def job_id(self) -> str:
        return self.spec.job_id

    @property
    def config(self) -> CompileConfig:
        return self.spec.config

    @property
    def ended(self) -> bool:
        """Completed, failed or cancelled: nothing more will arrive."""
        return self.status.ended

    def headline(self) -> str:
        """How the job ended, in one line that names the config and its backend, so a failed
        compile of the config labelled 'eager' never reads as a failed eager phase."""
        what = self.failure_reason or self.status
        if self.status == JobStatus.FAILED and not self.failure_reason:
            what = "failed"
        return f"config '{self.config.label}' (backend {self.config.backend}): {what}"

    # ----------------------------------------------------------------- folding

    def apply(self, event: ev.Event) -> bool:
        """Fold one event in. Returns False (and changes nothing) for another job's event."""
        if event.job_id != self.job_id:
            return False
        if isinstance(event, ev.JobStarted):
            self.status = JobStatus.RUNNING
            self.environment = dict(event.environment)
        elif isinstance(event, ev.PhaseChanged):
            self.phase, self.phase_detail = event.phase, event.detail
            self.phase_step, self.phase_steps = event.step, event.steps
            self.phase_process = event.process
        elif isinstance(event, ev.ModelLoaded):
            self.model_info = event
        elif isinstance(event, ev.LatencyMeasured):
            self.samples.extend(event.samples)
        elif isinstance(event, ev.CompileFinished):
            self.compile = event.result
        elif isinstance(event, ev.GraphBreakFound) and event.graph_break is not None:
            self._add_graph_break(event.graph_break)
        elif isinstance(event, ev.SpecializationFound) and event.specialization is not None:
            self.specializations.append(event.specialization)
        elif isinstance(event, ev.RecompileFound) and event.recompile is not None:
            self.recompiles.append(event.recompile)
        elif isinstance(event, ev.CudagraphSkipped) and event.skip is not None:
            self.cudagraph_skips.append(event.skip)
        elif isinstance(event, ev.VariantMeasured) and event.variant is not None:
            self.variants.append(event.variant)
        elif isinstance(event, ev.AccuracyChecked) and event.accuracy is not None:
            self.accuracy = event.accuracy
        elif isinstance(event, ev.GraphCompiled) and event.graph is not None:
            self.graphs = [g for g in self.graphs if g.graph != event.graph.graph] + [event.graph]
        elif isinstance(event, ev.OpProfileMeasured) and event.profile is not None:
            self.op_profile = event.profile
            self._count_passes()
        elif isinstance(event, ev.MemoryMeasured) and event.peak is not None:
            self.memory[event.peak.phase] = event.peak
        elif isinstance(event, ev.ResourceSampled) and event.sample is not None:
            self.resources.append(event.sample)
        elif isinstance(event, ev.ProcessEnded):
            self.processes_ended.append(event)
        elif isinstance(event, ev.CallCostsMeasured):
            self.call_costs.extend(event.costs)
        elif isinstance(event, ev.ThroughputMeasured):
            self.throughput.extend(event.samples)
        elif isinstance(event, ev.JobCompleted):
            self.status, self.wall_time_s = JobStatus.COMPLETED, event.wall_time_s
        elif isinstance(event, ev.JobFailed):
            self.status = JobStatus.FAILED
            self.failure_reason, self.failure_detail = event.reason, event.detail
        elif isinstance(event, ev.JobCancelled):
            self.status = JobStatus.CANCELLED
            self.failure_reason = (
                "cancelled before it started"
                if event.phase == "queue"
                else f"cancelled during {event.phase or 'start-up'}"
            )
        return True

    def _add_graph_break(self, gb: rec.GraphBreak) -> None:
        """Fold one graph-break event into the table (fold_graph_break), then take the op
        profile's pass counts (see _count_passes)."""
        fold_graph_break(self.graph_breaks, self._breaks_by_compile, gb)
        self._count_passes()

    def _count_passes(self) -> None:
        """per_call of the ordinary breaks as the op profile counted them in its calls (every
        run of the compiled code that broke there: a frame run again from dynamo's cache, in a
        loop or per mask, passes its break again); rows it did not count keep the compile's."""
        passes = {b.key: b.per_call for b in self.op_profile.break_passes} if self.op_profile else {}
        if not passes:
            return
        for i, gb in enumerate(self.graph_breaks):
            if is_ordinary(gb) and gb.key in passes and gb.per_call != passes[gb.key]:
                self.graph_breaks[i] = dataclasses.replace(gb, per_call=passes[gb.key])

    def per_call_counted(self, gb: rec.GraphBreak) -> bool:
        """Whether this row's per_call was counted in the op profile's calls (False: from the
        compile alone, which counts a frame run again from dynamo's cache once)."""
        p = self.op_profile
        return is_ordinary(gb) and p is not None and any(b.key == gb.key for b in p.break_passes)

    # ----------------------------------------------------------------- figures

    def latencies(self, side: str, include_warmup: bool = False):
        """A numpy array of one side's latencies (ms), timed calls only unless asked."""
        return self.samples.latencies(side, include_warmup)

    def stats(self, side: str) -> LatencyStats | None:
        return summarize(self.latencies(side))

    def summary(self, ci: bool = True) -> dict[str, Any]:
        """One row of summary.csv: the figures every front end shows for this config.

        `ci=False` skips the bootstrap (2,000 resamples: ~1 s at 10,000 iterations) and
        leaves the interval empty: for live refreshes of a running job."""
        eager, compiled = self.latencies("eager"), self.latencies("compiled")
        es, cs = summarize(eager), summarize(compiled)
        sp = self._speedup(eager, compiled, ci)
        compile_s = self.compile.compile_time_s if self.compile else None
        if self.variants:  # a shape sweep: every compile and recompile it paid for
            compile_s = sum(v.compile_time_s for v in self.variants)
        be = break_even_iterations(compile_s, es and es.median, cs and cs.median)
        c = self.compile
        mem = self.memory
        eager_peak = mem["eager"].peak_rss_mb if "eager" in mem else None
        compiled_peak = mem["compiled"].peak_rss_mb if "compiled" in mem else None
        return {
            "config": self.config.label,
            "model": self.spec.model.source,
            "backend": self.config.backend,
            "mode": self.config.mode,
            "dynamic": self.config.dynamic,
            "fullgraph": self.config.fullgraph,
            "device": self.spec.device,
            "dtype": self.spec.dtype,
            "autocast": self.spec.autocast,
            "status": self.status,
            "failure_reason": self.failure_reason,
            **stats_columns("eager", es),
            **stats_columns("compiled", cs),
            "speedup": sp and sp.value,
            "speedup_ci_low": sp.ci_low if sp and ci else None,
            "speedup_ci_high": sp.ci_high if sp and ci else None,
            "timing_method": self.spec.timing,
            **throughput_columns(self, ci),
            **self.quality(ci).columns(),
            **accuracy_columns(self),
            "compile_time_s": compile_s,
            "cache_state": c.cache_state if c else None,
            "dynamo_s": c.dynamo_s if c else None,
            "aot_autograd_s": c.aot_autograd_s if c else None,
            "inductor_s": c.inductor_s if c else None,
            "codegen_s": c.codegen_s if c else None,
            "task": self.spec.task,
            "forward_compile_s": c.forward_compile_s if c else None,
            "backward_compile_s": c.backward_compile_s if c else None,
            **batch_columns(self),
            # every graph compiled over the job (graphs.csv); before the compile's figures
            # arrive (a crash, a timeout), the graphs received
            "graph_count": c.graph_count if c else (len(self.graphs) if self.graphs else None),
            "op_count": c.op_count if c else None,
            "guard_count": c.guard_count if c else None,
            # distinct places, and breaks one call passes (counted in the op profile's calls,
            # else from the compile alone); skipped frames (frames_skipped) and compiles that
            # made torch raise are not breaks; known before the compile ends (cancel, timeout)
            "graph_break_sites": len({g.key for g in self.graph_breaks if is_ordinary(g)})
            if c or self.graph_breaks
            else None,
            "graph_break_per_call": sum(g.per_call for g in self.graph_breaks if is_ordinary(g))
            if c or self.graph_breaks
            else None,
            "recompile_count": len(self.recompiles),
            # graphs torch did not record as CUDA graphs (None: the config records none)
            "cudagraph_skips": len(self.cudagraph_skips) if self.config.records_cudagraphs and c else None,
            # the compiled calls' GPU time in CUDA-graph replays (0-1), from the op profile on a GPU
            "cudagraph_coverage": self.cudagraph_coverage(),
            "frames_skipped": c.frames_skipped if c else None,
            "coverage": c.coverage if c else (self.model_info.note if self.model_info else None),
            # the verdict from these figures when they are the ones it uses (its interval
            # exactly when the job has ended); else it computes its own
            **self._op_profile_columns((es, cs, sp if es and cs else None) if ci == self.ended else None),
            "eager_peak_mb": eager_peak,
            "compile_peak_mb": mem["compile"].peak_rss_mb if "compile" in mem else None,
            "compiled_peak_mb": compiled_peak,
            "memory_ratio": memory_ratio(self),
            "cuda_eager_max_allocated_mb": mem["eager"].cuda_max_allocated_mb if "eager" in mem else None,
            "cuda_compiled_max_allocated_mb": mem["compiled"].cuda_max_allocated_mb if "compiled" in mem else None,
            "break_even_iters": break_even_column(self, be, sp if ci else None, bool(es and cs and c)),
            "iterations": len(compiled),
            "threads": self.environment.get("threads"),
            **call_cost_columns(self),
        }

    def cudagraph_coverage(self) -> float | None:
        """The share of the compiled calls' GPU time that ran in CUDA-graph replays (the op
        profile's, core.analysis.cudagraph_coverage); None on a CPU, without an op profile, or
        for a config that records no CUDA graphs."""
        p = self.op_profile
        if not self.config.records_cudagraphs or p is None or p.cudagraphs is None:
            return None
        return p.cudagraphs.share

    def cudagraph_state(self) -> tuple[str, str]:
        """CUDA graphs of this job: (a word for tables, the whole story: torch's reasons and
        where they point). ("", "") when the config records none."""
        if not self.config.records_cudagraphs or self.compile is None:
            return "", ""
        n = len(self.cudagraph_skips)
        if self.spec.device == "cpu":
            return "none (CPU)", (
                "CUDA graphs exist on a GPU only; this ran on the CPU"
                + (f" (torch counted {n} skip{'s' if n != 1 else ''})." if n else ".")
            )
        cov = self.op_profile.cudagraphs if self.op_profile is not None else None
        share = cov.share if cov is not None else None
        covered = f"{share:.0%} in graphs" if share is not None else ""
        measured = (cov.text() + ".\n") if cov is not None else "Not profiled: no coverage measured.\n"
        if not n:
            return covered or "no skip reported", measured + (
                "torch reported no CUDA-graph skip for this config (with graph partitioning, "
                "torch's default, some graphs are left out of CUDA graphs without a report)."
            )
        lines = [measured + f"torch skipped CUDA graphs {n} time{'s' if n != 1 else ''}:"]
        for k in self.cudagraph_skips:
            where = f" ({display_path(k.file)}:{k.line})" if k.file else ""
            lines.append(f"- {k.reason or UNLOGGED_CUDAGRAPH_SKIP}{where}")
        return (f"{covered}, " if covered else "") + f"{n} skipped", "\n".join(lines)

    # ----------------------------------------------------------------- where the time goes

    def break_cost(self, gb: rec.GraphBreak) -> oprec.BreakCost | None:
        """What a graph-break row costs per compiled call, from the op profile (None: not
        profiled, a skipped frame, or the break never split two graphs while profiled)."""
        if self.op_profile is None or gb.frame_skipped:
            return None
        return next((b for b in self.op_profile.break_costs if b.key == gb.key), None)

    def graphs_around(self, gb: rec.GraphBreak) -> tuple[list[rec.CompiledGraph], list[rec.CompiledGraph]]:
        """The compiled graphs on either side of a graph break: (those ending at it, those
        starting after it). From the op profile when it saw the break split graphs; else
        from the compile: the graph of the frame compile that logged it, and the resume
        functions torch made for its line ("torch_dynamo_resume_in_forward_at_15")."""
        by_id = {g.graph: g for g in self.graphs}
        cost = self.break_cost(gb)
        if cost is not None:
            return (
                [by_id[i] for i in cost.graphs_before if i in by_id],
                [by_id[i] for i in cost.graphs_after if i in by_id],
            )
        if gb.frame_skipped:
            return [], []
        before = [g for g in self.graphs if g.graph == gb.compile_id]
        after = [
            g
            for g in self.graphs
            if g.file == gb.file
            and g.function.startswith("torch_dynamo_resume_in_")
            and g.function.endswith(f"_at_{gb.line}")
        ]
        return before, after

    def graph_time(self, graph: str) -> oprec.GraphTime | None:
        """Time inside compiled graph `graph` ("0/0") per compiled call, from the op profile."""
        if self.op_profile is None:
            return None
        return next((t for t in self.op_profile.graph_times if t.graph == graph), None)

    def time_verdict(self) -> str:
        """One sentence on why compiled is faster or slower (core.analysis.time_breakdown), from the
        op profile and the timed medians; "" without an op profile."""
        return self._time_verdict(None)

    def _time_verdict(self, timed: tuple | None) -> str:
        """`time_verdict`; `timed`: (eager summary, compiled summary, speedup) as `summary()` has
        just computed them for this state, its speedup with the interval exactly when the job has
        ended (what the verdict alone computes), or None."""
        from core.analysis.time_breakdown import time_verdict

        if self.op_profile is None:
            return ""
        # Computed once per state: the app's Summary asks every second while a job runs, and
        # the sentence (with its speedup interval) took ~40 ms of the GUI thread each time.
        key = (len(self.samples), tuple(self.graph_breaks), self.ended)  # breaks are replaced in place (per_call)
        cached = self._verdict_cache
        if cached is not None and cached[0] is self.op_profile and cached[1] == key:
            return cached[2]
        if timed is not None:  # the summary's own figures: the same medians, not computed twice
            es, cs, sp = timed
        else:
            eager, compiled = self.latencies("eager"), self.latencies("compiled")
            es, cs = summarize(eager), summarize(compiled)
            # The interval only once the job has ended, as the summary has it: while the further
            # processes still time calls it would be a 2,000-resample bootstrap per refresh.
            sp = self._speedup(eager, compiled, ci=self.ended) if es and cs else None
        tied = bool(sp and sp.ci_low is not None and sp.ci_low <= 1.0 <= sp.ci_high)
        # an unusable timing gives no direction: no "compiled is slower"
        unusable = self.ended and self.quality().grade == "unusable"
        verdict = time_verdict(
            self.op_profile, es and es.median, cs and cs.median, self.graph_breaks, tied, unusable=unusable
        )
        self._verdict_cache = (self.op_profile, key, verdict)
        return verdict

    def call_cost(self, side: str, process: int | None = None) -> rec.CallCost | None:
        """The page faults and CPU time of one side's timed calls, over every process (or one)."""
        mine = [c for c in self.call_costs if c.side == side and (process is None or c.process == process)]
        if not mine:
            return None
        return rec.CallCost(
            side,
            sum(c.calls for c in mine),
            sum(c.minor_faults for c in mine),
            sum(c.major_faults for c in mine),
            sum(c.user_ms for c in mine),
            sum(c.sys_ms for c in mine),
            mine[0].process if process is not None else -1,
        )

    def _op_profile_columns(self, timed: tuple | None = None) -> dict[str, Any]:
        p = self.op_profile
        e, c = (p.eager, p.compiled) if p else (None, None)
        return {
            "eager_operators_per_call": e and e.operators_per_call,
            "compiled_operators_per_call": c and c.operators_per_call,
            "compiled_kernels_per_call": c and c.kernels_per_call,
            "outside_graphs_ms": c and c.outside_graphs_ms,
            "guard_checks_ms": c and c.guard_checks_ms,
            "time_verdict": self._time_verdict(timed) if p else None,
        }

    def accuracy_verdict(self) -> rec.AccuracyResult | None:
        """The accuracy check's result; for a job that ended without one, "not checked" with
        why (None while the job runs)."""
        if self.accuracy is not None:
            return self.accuracy
        if not self.ended:
            return None
        if self.status == JobStatus.COMPLETED:
            why = "the report was written by a version without the accuracy check"
        else:
            why = f"the job ended before the check ({self.failure_reason or self.status})"
        return rec.AccuracyResult(rec.AccuracyStatus.NOT_CHECKED.value, why)

    def _speedup(self, eager, compiled, ci: bool):
        """The speedup over the job's processes (core.analysis.stats.speedup_over_processes; one process:
        the ratio of medians), its interval computed once per sample count (a report writes
        the summary twice; the app refreshes it on every redraw)."""
        key = (len(eager), len(compiled))
        if ci and self._speedup_cache is not None and self._speedup_cache[0] == key:
            return self._speedup_cache[1]
        by_e, by_c = self.samples.by_process("eager"), self.samples.by_process("compiled")
        value = speedup_over_processes(by_e, by_c, resamples=2000 if ci else 0)
        if ci:
            self._speedup_cache = (key, value)
        return value

    def process_speedups(self) -> dict[int, float]:
        """Each timing process's own speedup (process index → eager median / compiled median)."""
        return process_speedups(self.samples.by_process("eager"), self.samples.by_process("compiled"))

    def speedup_interval_owed(self) -> bool:
        """Whether `summary_speedup()` would compute its interval now: calls on both sides, and
        none computed for these counts yet (it is kept per sample count). The app has it computed
        off its GUI thread before the job's end is shown (gui.run.worker)."""
        eager, compiled = self.latencies("eager"), self.latencies("compiled")
        cached = self._speedup_cache
        return bool(len(eager) and len(compiled)) and (cached is None or cached[0] != (len(eager), len(compiled)))

    def summary_speedup(self, ci: bool = True):
        """The speedup with its 95% interval (None without calls on both sides)."""
        eager, compiled = self.latencies("eager"), self.latencies("compiled")
        if not len(eager) or not len(compiled):
            return None
        return self._speedup(eager, compiled, ci)

    def quality(self, ci: bool = True):
        """How far the timing can be trusted (core.analysis.quality.MeasurementQuality); `ci=False`
        leaves out the interval's precision (live refreshes). Computed once per state."""
        from core.analysis.quality import grade

        key = (ci, len(self.samples), len(self.resources), len(self.variants), self.status)
        if self._quality_cache is None or self._quality_cache[0] != key:
            self._quality_cache = (key, grade(self, ci))
        return self._quality_cache[1]


# A skip torch counted without logging why (see core.capture.live).
UNLOGGED_CUDAGRAPH_SKIP = (
    "counted by torch without a logged reason (it counts so for graphs with no GPU device, "
    "and replays a cached compile's counts)"
)

SUMMARY_COLUMNS = list(JobResult(JobSpec("", ModelSpec(""))).summary(ci=False))
"""summary.csv's columns, in order: the keys of JobResult.summary(), defined there alone."""
