"""Run progress: fraction and words from the jobs' own events, never from time."""

from __future__ import annotations

from core.analysis.results import JobResult
from core.run.progress import PHASE_START, describe, job_fraction
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec


def _result(job_id: str, iters: int = 10) -> JobResult:
    return JobResult(JobSpec(job_id, ModelSpec("m.py"), CompileConfig(backend="eager"), iters=iters))


def test_benchmark_progress_counts_compiled_timed_calls():
    r = _result("a", iters=10)
    r.apply(ev.JobStarted("a"))
    r.apply(ev.PhaseChanged("a", phase="benchmark"))
    start = job_fraction(r)
    r.apply(
        ev.LatencyMeasured(
            "a",
            samples=tuple(rec.LatencySample("compiled", i, 1.0) for i in range(5))
            + (rec.LatencySample("compiled", 0, 1.0, warmup=True),),
        )
    )
    assert job_fraction(r) > start
    fraction, text = describe([r])
    assert text == "job 1/1 · eager · benchmark 5/10" and 0 < fraction < 1


def test_sweep_progress_from_the_phase_steps_not_its_words():
    r = _result("a")
    r.apply(ev.JobStarted("a"))
    r.apply(ev.PhaseChanged("a", phase="sweep", detail="anything at all", step=3, steps=11))
    for i in range(2):
        r.apply(ev.VariantMeasured("a", variant=rec.VariantResult(i, ("float32[2]",), 0, False)))
    assert describe([r])[1].endswith("sweep 2/11 shapes")
    assert PHASE_START["sweep"] < job_fraction(r) < 1
    r.apply(ev.PhaseChanged("a", phase="sweep", step=4, steps=11))
    for i in range(2, 11):
        r.apply(ev.VariantMeasured("a", variant=rec.VariantResult(i, ("float32[2]",), 0, False)))
    assert job_fraction(r) > PHASE_START["sweep"] + 0.5


def test_the_current_job_and_the_end():
    a, b = _result("a"), _result("b")
    a.apply(ev.JobCompleted("a"))
    b.apply(ev.JobStarted("b"))
    b.apply(ev.PhaseChanged("b", phase="compile"))
    fraction, text = describe([a, b])
    assert text.startswith("job 2/2") and fraction == (1 + PHASE_START["compile"]) / 2
    b.apply(ev.JobFailed("b", reason="x"))
    assert describe([a, b]) == (1.0, "1 completed, 1 failed")
    assert describe([]) == (0.0, "")


def test_a_process_the_runner_added_is_named_so_and_the_bar_waits_for_the_end():
    """--iters auto, 3 processes asked for, a fourth added because they disagreed."""
    r = JobResult(JobSpec("a", ModelSpec("m.py"), CompileConfig(backend="eager"), processes=3, precision_pct=2.0))
    r.apply(ev.JobStarted("a"))
    r.apply(ev.PhaseChanged("a", phase="benchmark", detail="process 2 of 3: ...", process=1))
    assert describe([r])[1] == "job 1/1 · eager · benchmark (process 2/3)"
    r.apply(ev.PhaseChanged("a", phase="benchmark", detail="...", process=3, step=1, steps=5))
    fraction, text = describe([r])
    assert text == "job 1/1 · eager · benchmark (process 4, added: the processes disagree)"
    assert fraction == 0.99
