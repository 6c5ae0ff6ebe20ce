"""Finding the best settings within a time budget (the `tune` command, core.cli.tune, and the
app's Find best settings).

A candidate set suited to the device (`candidates`), cheapest compile first, each run as a
normal job through `core.run.runner.JobRunner.run_all` (its own process, cancellable, progress
as `profile` shows it), then the recommendation of core.decide.recommend. The budget is kept two
ways: before a candidate starts, its time is estimated from what the jobs before it measured
(`Estimator`) and a candidate that no longer fits is not started; when the budget runs out,
the running job is cancelled (a timer calls `runner.cancel`). The report says which
candidates ran, which the budget cut and why (report.json "tune", and on stdout).
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from dataclasses import dataclass

from core.analysis.results import JobResult
from core.run.runner import JobRunner, RunListener
from core.vocab import events as ev
from core.vocab.config import AUTOTUNE_MODE, CompileConfig, JobSpec
from core.vocab.records import JobStatus

DEFAULT_BUDGET_MIN = 10.0
# Priors before anything is measured (seconds), from ../shared/FACTS.md on this kind of CPU:
# resnet18 inductor 34 s cold, 2.4 s warm; eager 0.1 s, aot_eager 0.2 s; a 3-layer MLP 22 s cold.
INDUCTOR_COMPILE_PRIOR_S = 40.0
JOB_OVERHEAD_PRIOR_S = 8.0  # process start, model load, warm-ups, accuracy check, op profile
WARM_COMPILE_PRIOR_S = 5.0  # a further process compiles again from the warm FX-graph cache
MAX_BUDGET_MIN = 7 * 24 * 60.0  # a week
EAGER_CALL_PRIOR_MS = 50.0


@dataclass(frozen=True)
class Candidate:
    """One config tune tries: `why` it is in the set, and its compile cost relative to
    inductor's default (`relative_compile`) or in seconds (`compile_s`, for the backends
    that do not generate code)."""

    config: CompileConfig
    why: str
    relative_compile: float = 1.0
    compile_s: float | None = None


def candidates(device: str, has_variants: bool) -> list[Candidate]:
    """The candidate set for `device`: those that could be recommended, cheapest compile first,
    then the references."""
    inductor = CompileConfig("inductor")
    found = [
        Candidate(inductor, "inductor's default"),
        Candidate(
            dataclasses.replace(inductor, inductor_options=(("freezing", True),)),
            "weights folded in as constants (inference)",
            1.3,
        ),
    ]
    if has_variants:
        found += [
            Candidate(dataclasses.replace(inductor, dynamic="true"), "input sizes vary: one compile for all", 1.4),
            Candidate(dataclasses.replace(inductor, dynamic="false"), "input sizes vary: one compile per size", 3.0),
        ]
    if device == "cuda":
        found += [
            Candidate(dataclasses.replace(inductor, mode="reduce-overhead"), "CUDA graphs: less launch overhead", 1.5)
        ]
    found.append(
        Candidate(dataclasses.replace(inductor, mode=AUTOTUNE_MODE), "autotuned kernels (slow to compile)", 3.0)
    )
    if device == "cuda":
        found.append(
            Candidate(
                dataclasses.replace(inductor, mode="max-autotune"),
                "autotuned kernels and CUDA graphs (slowest to compile)",
                4.0,
            )
        )
    # the references last: they are never recommended (every candidate's job times its own eager
    # side), so a small budget goes to what could be recommended first
    found += [
        Candidate(
            CompileConfig("eager"), "reference: dynamo's tracing alone (graph breaks, guard overhead)", compile_s=1.0
        ),
        Candidate(CompileConfig("aot_eager"), "reference: dynamo and AOTAutograd, no code generation", compile_s=2.0),
    ]
    return found


def candidate_specs(template: JobSpec, has_variants: bool) -> list[tuple[JobSpec, Candidate]]:
    """A job per candidate with everything but the compile settings from `template` (model,
    iterations, device, threads; its dynamo overrides kept): what the app's "Find best
    settings" queues from its form. Every job runs the shape sweep when the model has
    variants, so all candidates measure the same workload."""
    import uuid

    out = []
    for cand in candidates(template.device, has_variants):
        config = dataclasses.replace(cand.config, dynamo_config=template.config.dynamo_config)
        out.append(
            (dataclasses.replace(template, job_id=uuid.uuid4().hex[:8], config=config, sweep_shapes=has_variants), cand)
        )
    return out


class Estimator:
    """How long a candidate's job will take, learned from the jobs before it: the process
    overhead, eager's time per call, and inductor's compile time (candidates scale it)."""

    def __init__(self, by_config: dict[CompileConfig, Candidate]):
        self.by_config = by_config
        self.overhead_s = JOB_OVERHEAD_PRIOR_S
        self.call_ms = EAGER_CALL_PRIOR_MS
        self.inductor_s: float | None = None
        self.bench_s: float | None = None  # what an --iters auto benchmark took last

    def estimate(self, spec: JobSpec) -> float:
        cand = self.by_config.get(spec.config)
        if cand is not None and cand.compile_s is not None:
            compile_s = cand.compile_s
        else:
            unit = self.inductor_s if self.inductor_s is not None else INDUCTOR_COMPILE_PRIOR_S
            compile_s = unit * (cand.relative_compile if cand else 1.0)
        planned = spec.planned_calls()
        calls = spec.warmup_calls("eager") + spec.warmup_calls("compiled") + 2 * (planned or 0)
        calls += 2 * spec.op_profile_calls + 4  # the op profile and the accuracy check
        timed_s = calls * self.call_ms / 1000.0 * (3 if spec.sweep_shapes else 1)
        if planned is None:  # --iters auto: until precise, at most max_time_s over all processes
            timed_s += self.bench_s if self.bench_s is not None else spec.max_time_s
        further = spec.timed_processes() - 1  # each: a process start and a warm compile, warm-ups
        warm_compile = min(compile_s, WARM_COMPILE_PRIOR_S)
        return self.overhead_s + compile_s + timed_s + further * (self.overhead_s + warm_compile)

    def learn(self, result: JobResult, wall_s: float) -> None:
        if result.status != JobStatus.COMPLETED:
            return
        s = result.summary()
        if s["eager_median_ms"]:
            self.call_ms = max(s["eager_median_ms"], s["compiled_median_ms"] or 0.0)
        compile_s = s["compile_time_s"] or 0.0
        timed_s = float(result.latencies("eager", True).sum() + result.latencies("compiled", True).sum()) / 1000.0
        if result.spec.auto_iters:
            self.bench_s = float(result.latencies("eager").sum() + result.latencies("compiled").sum()) / 1000.0
        processes = result.spec.timed_processes()
        self.overhead_s = max(1.0, (wall_s - compile_s - timed_s) / processes)
        cand = self.by_config.get(result.config)
        if result.config.backend == "inductor" and cand is not None and cand.compile_s is None and compile_s:
            if self.inductor_s is None or result.config == CompileConfig("inductor", dynamic=result.config.dynamic):
                self.inductor_s = compile_s / cand.relative_compile


class BudgetListener(RunListener):
    """Keeps a tune run inside its budget around the profile command's Progress listener:
    skips a candidate whose estimate no longer fits (cancelling it before it starts) and
    cancels the run when the budget ends. `notes` says per job what the budget did."""

    def __init__(self, inner: RunListener, budget_s: float, estimator: Estimator, quiet: bool = False):
        self.inner, self.budget_s, self.estimator, self.quiet = inner, budget_s, estimator, quiet
        self.runner: JobRunner | None = None
        self.notes: dict[str, str] = {}  # job id → what the budget did to it
        self.estimates: dict[str, float] = {}
        self.took: dict[str, float] = {}  # job id → seconds it ran
        self.budget_over = False
        self._deadline = None
        self._timer: threading.Timer | None = None
        self._skipping: set[str] = set()
        self._current: JobResult | None = None
        self._started = 0.0
        # The first job is never cut on the priors alone (a cold compile's prior of 40 s and a
        # whole --max-time cut every candidate of a 1-minute budget before anything ran): it runs
        # until the budget ends; the estimates of the next ones rest on what it measured.
        self.estimates_known = False

    def attach(self, runner: JobRunner) -> None:
        self.runner = runner

    def _left(self) -> float:
        if self._deadline is None:  # the clock starts with the first job
            self._deadline = time.monotonic() + self.budget_s
            self._timer = threading.Timer(self.budget_s, self._on_budget_over)
            self._timer.daemon = True
            self._timer.start()
        return self._deadline - time.monotonic()

    def _on_budget_over(self) -> None:
        self.budget_over = True
        if self.runner is not None:
            self.runner.cancel(all_jobs=True)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def on_job_started(self, index: int, total: int, spec: JobSpec) -> None:
        left = self._left()
        need = self.estimator.estimate(spec)
        self.estimates[spec.job_id] = need
        if self.budget_over:
            self.notes[spec.job_id] = "not started: the budget had run out"
            self._skipping.add(spec.job_id)
            return
        kept = self._kept_for(spec)
        if kept is not None and kept[1] <= left < need + kept[1]:
            # a reference (eager, aot_eager) is never recommended: with a small budget it must not
            # spend the time the first config that could be recommended needs (when that one
            # does not fit anyway, the reference runs: its graph breaks are still worth seeing)
            self.notes[spec.job_id] = (
                f"not started: a reference, never recommended; the {max(0.0, left):.0f} s of the budget left are "
                f"kept for {kept[0]} (estimated {kept[1]:.0f} s)"
            )
        elif need > left and self.estimates_known:
            self.notes[spec.job_id] = f"not started: estimated {need:.0f} s, {max(0.0, left):.0f} s of the budget left"
        if spec.job_id in self.notes:
            self._skipping.add(spec.job_id)
            self.runner.cancel(all_jobs=False)
            if not self.quiet:
                print(
                    f"[{index}/{total}] {spec.config.label}: cut by the budget, {self.notes[spec.job_id]}",
                    file=sys.stderr,
                    flush=True,
                )
            return
        self.estimates_known = True  # from the second job on, the estimates rest on one measured
        self._current, self._started = JobResult(spec), time.monotonic()
        self.inner.on_job_started(index, total, spec)

    def _kept_for(self, spec: JobSpec) -> tuple[str, float] | None:
        """For a reference backend's job: the cheapest candidate that could be recommended (its
        label and estimate), whose time the reference must leave; None for any other job, or
        when the candidates hold none that could be recommended."""
        from core.decide.recommend import REFERENCE_BACKENDS

        if spec.config.backend not in REFERENCE_BACKENDS:
            return None
        real = [c for c in self.estimator.by_config if c.backend not in REFERENCE_BACKENDS]
        if not real:
            return None
        estimates = [(self.estimator.estimate(dataclasses.replace(spec, config=c)), c.label) for c in real]
        need, label = min(estimates)
        return label, need

    def on_event(self, event: ev.Event) -> None:
        if event.job_id in self._skipping:
            return
        if self._current is not None:
            self._current.apply(event)
        self.inner.on_event(event)

    def on_job_ended(self, index: int, total: int, spec: JobSpec, terminal: ev.Event) -> None:
        if spec.job_id in self._skipping:
            return
        never_ran = isinstance(terminal, ev.JobCancelled) and terminal.phase == "queue"
        if isinstance(terminal, ev.JobCancelled) and self.budget_over:
            self.notes[spec.job_id] = (
                "not started: the budget had run out"
                if never_ran
                else f"stopped while running: the budget ran out during its {terminal.phase or 'start-up'}"
            )
        if never_ran:  # cancelled before it started (Ctrl+C, or the budget between two jobs): no time of its own
            self.inner.on_job_ended(index, total, spec, terminal)
            return
        self.took[spec.job_id] = time.monotonic() - self._started
        if self._current is not None:
            self.estimator.learn(self._current, self.took[spec.job_id])
        self.inner.on_job_ended(index, total, spec, terminal)

    def on_status(self, status) -> None:
        self.inner.on_status(status)

    def annotate(self, results: list[JobResult]) -> None:
        """Each job the budget cut or stopped gives that as its reason (summary.csv, report.json,
        the summary on stdout): it read "cancelled before it started" where stdout said the
        budget had cut it."""
        for r in results:
            note = self.notes.get(r.job_id)
            if note and r.status == JobStatus.CANCELLED:
                r.failure_reason = f"cut by the budget: {note}"

    def expected(self, result: JobResult) -> bool:
        """A job that did not complete because of the budget is no error."""
        return result.job_id in self.notes


@dataclass
class TuneRun:
    """What tune decided and did: the candidates by job id and what the budget did."""

    budget_s: float
    candidates: dict[str, Candidate]
    listener: BudgetListener
    started: float = 0.0
    unanswered: bool = False  # the budget cut every candidate that could be recommended (exit 1)

    def section(self, results: list[JobResult]) -> dict:
        """report.json's "tune" entry: each candidate, why it is there, its estimate and fate."""
        rows = []
        for r in results:
            cand, cut = self.candidates[r.job_id], self.listener.notes.get(r.job_id)
            rows.append(
                {
                    "config": r.config.label,
                    "why": cand.why,
                    "fate": "cut by the budget" if cut else "ran" if r.status == JobStatus.COMPLETED else str(r.status),
                    "estimate_s": round(self.listener.estimates.get(r.job_id, 0.0), 1),
                    "took_s": round(self.listener.took[r.job_id], 1) if r.job_id in self.listener.took else None,
                    "note": cut or r.failure_reason,
                }
            )
        return {
            "budget_s": self.budget_s,
            "elapsed_s": round(time.monotonic() - self.started, 1),
            "budget_over": self.listener.budget_over,
            "candidates": rows,
            "advice": self.budget_advice(results),
        }

    def print_candidates(self, results: list[JobResult]) -> None:
        section = self.section(results)
        self.unanswered = bool(section["advice"])
        print()
        for line in tune_lines(section):
            print(line)

    def budget_advice(self, results: list[JobResult]) -> str:
        """What to change when the budget kept every candidate that could be recommended from
        running ("" otherwise): the budget their estimates need."""
        from core.decide.recommend import REFERENCE_BACKENDS

        real = [r for r in results if r.config.backend not in REFERENCE_BACKENDS]
        if not real or any(r.status == JobStatus.COMPLETED for r in real):
            return ""
        cut = [r for r in real if r.job_id in self.listener.notes]
        # cancelled, and not by the budget: the user stopped the run (Ctrl+C), no budget would have helped
        stopped = [r for r in real if r.status == JobStatus.CANCELLED and r.job_id not in self.listener.notes]
        if stopped:
            return (
                f"Nothing that could be recommended was measured: the run was interrupted before "
                f"{', '.join(r.config.label for r in stopped)} finished. Run tune again to measure "
                f"{'it' if len(stopped) == 1 else 'them'}."
            )
        if not cut:
            return ""
        need = sum(self.listener.estimates.get(r.job_id, 0.0) for r in results) / 60.0
        return (
            f"Nothing that could be recommended was measured: the budget cut "
            f"{', '.join(r.config.label for r in cut)}. Give it a longer budget (these candidates were estimated "
            f"at {need:.1f} min in all)."
        )


def tune_lines(section: object) -> list[str]:
    """report.json's "tune" entry (`TuneRun.section`) as the lines the `tune` command prints after
    its jobs and the app's Decision tab shows, for a run just made or a report opened. A report's
    entry is read as untrusted (core.vocab.schema.check): one that is not what this version
    writes gives one line saying so."""
    from core.vocab.schema import check

    try:
        budget_min = check(float, section["budget_s"], "tune.budget_s") / 60
        used_min = check(float, section["elapsed_s"], "tune.elapsed_s") / 60
        lines = [f"Candidates (budget {budget_min:g} min, used {used_min:.1f} min):"]
        for row in section["candidates"]:
            config, why, fate = (check(str, row[k], f"tune.{k}")[:500] for k in ("config", "why", "fate"))
            took = ""
            if row.get("took_s") is not None:
                took_s, estimate_s = (check(float, row[k], f"tune.{k}") for k in ("took_s", "estimate_s"))
                took = f" in {took_s:.0f} s (estimated {estimate_s:.0f} s)"
            note = f": {check(str, row['note'], 'tune.note')[:500]}" if row.get("note") else ""
            lines.append(f"  {config} ({why}): {fate}{took}{note}")
        if section.get("advice"):
            lines.append(check(str, section["advice"], "tune.advice")[:500])
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError):  # SchemaError is a ValueError
        return [
            "This report's tune entry (what the budget did to each candidate) cannot be read: it is not "
            "what this version writes."
        ]
    return lines
