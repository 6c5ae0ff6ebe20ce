"""`tune`: the candidate set, the budget (before a job and while it runs) and the command."""

import json
import subprocess
import sys

from core import PROJECT_ROOT as ROOT
from core.decide.tune import BudgetListener, Candidate, Estimator, candidate_specs, candidates
from core.run.runner import JobRunner, RunListener
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from tests.core.helpers import MLP_MODEL, make_spec

SLOW_MODEL = """\
import time
import torch


class Slow(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.2)
        return x + 1


def get_model():
    return Slow()


def get_example_inputs():
    return (torch.randn(2, 2),)
"""


def test_cpu_candidates_cheapest_first_then_the_references():
    """The references (never recommended) come last: a small budget went to the eager reference
    and cut inductor."""
    labels = [c.config.label for c in candidates("cpu", has_variants=False)]
    assert labels == ["inductor", "inductor/freezing=True", "inductor/max-autotune-no-cudagraphs", "eager", "aot_eager"]


def test_variants_add_dynamic_settings_and_the_gpu_its_cuda_graph_modes():
    cpu = [c.config.label for c in candidates("cpu", has_variants=True)]
    assert "inductor/dynamic=true" in cpu and "inductor/dynamic=false" in cpu
    gpu = [c.config.label for c in candidates("cuda", has_variants=False)]
    assert gpu[-4:] == ["inductor/max-autotune-no-cudagraphs", "inductor/max-autotune", "eager", "aot_eager"]
    assert "inductor/reduce-overhead" in gpu and "reduce-overhead" not in " ".join(
        c.config.label for c in candidates("cpu", True)
    )


def test_estimates_learn_from_the_jobs_before():
    from tests.core.fakes import fake_result

    inductor, freezing = CompileConfig("inductor"), CompileConfig("inductor", inductor_options=(("freezing", True),))
    est = Estimator({inductor: Candidate(inductor, "", 1.0), freezing: Candidate(freezing, "", 1.5)})
    spec = make_spec("resnet18", config=freezing, iters=50, warmup=5)
    before = est.estimate(spec)
    done = fake_result(inductor, eager_ms=20.0, compiled_ms=10.0, compile_s=4.0, n=50)
    est.learn(done, wall_s=4.0 + 2.0 + done.latencies("eager").sum() / 1000 + done.latencies("compiled").sum() / 1000)
    assert est.inductor_s == 4.0 and abs(est.call_ms - 20.0) < 0.5 and abs(est.overhead_s - 2.0) < 0.5
    after = est.estimate(spec)
    assert after < before and after > 4.0 * 1.5


def test_the_budget_skips_what_does_not_fit_and_stops_what_runs_past_it(write_model):
    slow = write_model(SLOW_MODEL, "slow.py")
    fits = CompileConfig("eager")
    too_big = CompileConfig("aot_eager")
    est = Estimator({fits: Candidate(fits, "", compile_s=0.1), too_big: Candidate(too_big, "", compile_s=10_000.0)})
    est.overhead_s, est.call_ms = 0.0, 1.0
    listener = BudgetListener(
        RunListener(), budget_s=20.0, estimator=est, quiet=True
    )  # a loaded machine starts a job slowly
    runner = JobRunner(listener=listener)
    listener.attach(runner)
    specs = [make_spec(slow, config=fits, iters=200, warmup=1), make_spec(slow, config=too_big, iters=2)]
    try:
        results = runner.run_all(specs)
    finally:
        runner.close()
        listener.close()
    running, skipped = results
    assert running.status == rec.JobStatus.CANCELLED and listener.budget_over
    assert listener.notes[running.job_id].startswith("stopped while running: the budget ran out during its")
    assert skipped.status == rec.JobStatus.CANCELLED
    assert listener.notes[skipped.job_id] == "not started: the budget had run out"
    assert listener.expected(running) and listener.expected(skipped)
    assert len(running.latencies("eager", include_warmup=True)) > 0  # what it measured before the budget ended stays


def test_tune_command_on_a_tiny_model_stays_in_budget_and_says_when_nothing_recommendable_fit(write_model, tmp_path):
    """A budget too short for anything: the first candidate that could be recommended (inductor)
    starts all the same (never cut on the priors alone) and is stopped when the budget ends; the
    rest are not started; tune keeps in its budget, names what the budget did, and exits 1 so that
    a script does not read the unanswered question as a result."""
    path = write_model(MLP_MODEL)
    out = tmp_path / "tune"
    proc = subprocess.run(
        [sys.executable, "main.py", "tune", path, "--budget", "0.02", "--iters", "5", "--processes", "1"]
        + ["--warmup", "1", "--op-profile", "0", "--calls", "100", "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    doc = json.loads((out / "report.json").read_text())
    tune = doc["tune"]
    fates = {row["config"]: row["fate"] for row in tune["candidates"]}
    assert set(fates.values()) == {"cut by the budget"}, fates  # 1.2 s: not even a process start and torch's import
    assert tune["elapsed_s"] <= 1.2 + 20  # the budget, the first job's stop and the report
    assert doc["recommendation"]["calls"] == 100 and doc["recommendation"]["sentence"]
    assert (out / "recommendation.txt").read_text().startswith(doc["recommendation"]["sentence"])
    assert "Candidates (budget 0.02 min" in proc.stdout and "Recommendation for 100 calls" in proc.stdout
    assert "error: tune measured no candidate that could be recommended" in proc.stderr
    import csv

    with open(out / "summary.csv", newline="") as fh:
        reasons = {row["config"]: row["failure_reason"] for row in csv.DictReader(fh)}
    assert reasons["inductor"].startswith("cut by the budget: stopped while running: the budget ran out during")
    assert reasons["eager"] == "cut by the budget: not started: the budget had run out"
    text = (out / "recommendation.txt").read_text()
    assert "Candidates (budget 0.02 min" in text and "Give it a longer budget" in text


def test_tune_refuses_profile_only_options():
    proc = subprocess.run(
        [sys.executable, "main.py", "tune", "resnet18", "--backend", "eager", "--out", "/tmp/x"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "unrecognized arguments: --backend" in proc.stderr


def test_candidate_specs_keep_the_template_but_the_compile_settings():
    template = make_spec(
        "resnet18", config=CompileConfig("eager", mode="default", dynamo_config=(("recompile_limit", 16),)), iters=33
    )
    pairs = candidate_specs(template, has_variants=True)
    assert [c.config.label.split("/")[0] for _, c in pairs][-2:] == ["eager", "aot_eager"]
    assert all(
        s.iters == 33 and s.sweep_shapes and s.config.dynamo_config == (("recompile_limit", 16),) for s, _ in pairs
    )
    assert len({s.job_id for s, _ in pairs}) == len(pairs)


def test_a_budget_that_is_not_a_finite_positive_time_is_refused_before_anything_runs(tmp_path):
    """The reported case: `tune --budget inf` printed a traceback from the budget's timer thread
    and exited 0."""
    for budget in ("inf", "nan", "-1", "0", "1e308"):
        out = tmp_path / f"tune_{budget}"
        proc = subprocess.run(
            [sys.executable, "main.py", "tune", "examples:mlp", "--budget", budget, "--out", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert "error: --budget must be more than 0 and at most 10,080 minutes (a week), not " in proc.stderr
        assert "Traceback" not in proc.stderr and not out.exists()


def test_a_small_budget_keeps_its_time_for_a_config_that_could_be_recommended():
    """A reference backend (eager, aot_eager: never recommended) is not started when it would
    leave too little for the cheapest candidate that could be; when that one cannot fit anyway,
    the reference runs (its graph breaks are still worth seeing)."""
    eager, inductor = CompileConfig("eager"), CompileConfig("inductor")
    est = Estimator({eager: Candidate(eager, "", compile_s=1.0), inductor: Candidate(inductor, "")})
    est.overhead_s, est.call_ms, est.inductor_s = 10.0, 1.0, 30.0
    cancelled = []

    class Runner:
        def cancel(self, all_jobs=False):
            cancelled.append(all_jobs)

    def started(budget_s, config):
        listener = BudgetListener(RunListener(), budget_s=budget_s, estimator=est, quiet=True)
        listener.attach(Runner())
        spec = make_spec("m.py", config=config, iters=10, warmup=1)
        listener.on_job_started(1, 2, spec)
        listener.close()
        return listener.notes.get(spec.job_id)

    need_eager = est.estimate(make_spec("m.py", config=eager, iters=10, warmup=1))
    need_inductor = est.estimate(make_spec("m.py", config=inductor, iters=10, warmup=1))
    assert need_inductor > need_eager > 10.0
    note = started(need_inductor + need_eager / 2, eager)  # inductor fits alone, not after eager
    assert note.startswith("not started: a reference, never recommended;") and "kept for inductor" in note
    assert cancelled == [False]
    assert started(need_inductor + need_eager + 5, eager) is None  # room for both: the reference runs
    assert started(need_inductor - 1, eager) is None  # inductor cannot fit anyway: the reference runs
    assert started(need_inductor + 1, inductor) is None  # the rule is for references only
    # the first job never waits on the priors: it starts whatever its estimate, and runs until the
    # budget ends; the next one is cut on an estimate that rests on what the first measured
    listener = BudgetListener(RunListener(), budget_s=need_inductor / 10, estimator=est, quiet=True)
    listener.attach(Runner())
    first, second = (make_spec("m.py", config=inductor, iters=10, warmup=1) for _ in range(2))
    listener.on_job_started(1, 2, first)
    listener.on_job_started(2, 2, second)
    listener.close()
    assert first.job_id not in listener.notes
    assert listener.notes[second.job_id].startswith("not started: estimated")


def test_a_reports_tune_entry_is_read_as_untrusted():
    from core.decide.tune import tune_lines

    row = {"config": "inductor", "why": "inductor's default", "fate": "ran", "estimate_s": 40.0, "took_s": 22.4}
    good = {"budget_s": 120, "elapsed_s": 61.0, "candidates": [{**row, "note": None}], "advice": ""}
    assert tune_lines(good) == [
        "Candidates (budget 2 min, used 1.0 min):",
        "  inductor (inductor's default): ran in 22 s (estimated 40 s)",
    ]
    unreadable = "This report's tune entry (what the budget did to each candidate) cannot be read"
    for bad in (
        None,
        [],
        "x",
        {**good, "budget_s": "2"},
        {**good, "candidates": [{**row, "why": None}]},
        {**good, "candidates": [{**row, "took_s": "soon"}]},
        {**good, "advice": 3},
    ):
        assert tune_lines(bad)[0].startswith(unreadable), bad


def test_a_candidate_cancelled_before_it_started_is_said_so_with_no_time_of_its_own():
    """Ctrl+C while a candidate waits in the queue: it never ran, so the list gives it no
    "cancelled in 0 s"; when the budget ran out between two jobs, it reads "not started"."""
    import time

    from core.analysis.results import JobResult
    from core.decide.tune import TuneRun, tune_lines
    from core.vocab import events as ev

    inductor = CompileConfig("inductor")
    cand = Candidate(inductor, "inductor's default")
    for budget_over, note in (
        (False, ": cancelled before it started"),
        (True, ": not started: the budget had run out"),
    ):
        est = Estimator({inductor: cand})
        listener = BudgetListener(RunListener(), budget_s=60.0, estimator=est, quiet=True)
        spec = make_spec("m.py", config=inductor, iters=10, warmup=1)
        listener.on_job_started(1, 1, spec)
        listener.budget_over = budget_over
        cancelled = ev.JobCancelled(spec.job_id, phase="queue")
        listener.on_job_ended(1, 1, spec, cancelled)
        listener.close()
        result = JobResult(spec)
        result.apply(cancelled)
        run = TuneRun(60.0, {spec.job_id: cand}, listener, started=time.monotonic())
        row = run.section([result])["candidates"][0]
        assert row["took_s"] is None
        line = tune_lines(run.section([result]))[1]
        assert line.endswith(note) and " in 0 s" not in line, line


def test_after_ctrl_c_tune_says_it_was_interrupted_not_to_give_it_a_longer_budget():
    """The reported case: after Ctrl+C, tune advised "Give it a longer budget"."""
    import time

    from core.analysis.results import JobResult
    from core.decide.tune import TuneRun
    from core.vocab import events as ev

    inductor, freezing = CompileConfig("inductor"), CompileConfig("inductor", inductor_options=(("freezing", True),))
    cands = {c: Candidate(c, "") for c in (inductor, freezing)}
    listener = BudgetListener(RunListener(), budget_s=60.0, estimator=Estimator(cands), quiet=True)
    specs = [make_spec("m.py", config=c, iters=10, warmup=1) for c in (inductor, freezing)]
    results = []
    for i, (spec, phase) in enumerate(zip(specs, ("compile", "queue")), 1):
        listener.on_job_started(i, 2, spec)
        cancelled = ev.JobCancelled(spec.job_id, phase=phase)
        listener.on_job_ended(i, 2, spec, cancelled)
        results.append(JobResult(spec))
        results[-1].apply(cancelled)
    listener.notes[specs[1].job_id] = "not started: estimated 90 s, 40 s of the budget left"  # the budget's cut
    listener.close()
    run = TuneRun(60.0, {s.job_id: cands[s.config] for s in specs}, listener, started=time.monotonic())
    advice = run.budget_advice(results)
    assert "the run was interrupted before inductor finished" in advice and "longer budget" not in advice
