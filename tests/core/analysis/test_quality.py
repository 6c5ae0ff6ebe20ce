"""The measurement-quality grade (core.analysis.quality): each reason on calls made to show it, the
speedup over several processes, and the grade carried through the files."""

import csv
import json

import numpy as np
import pytest

from core.analysis.quality import NOISY, QUIET, UNKNOWN, UNUSABLE, grade, side_spread
from core.analysis.quality_advice import banner
from core.analysis.results import JobResult
from core.analysis.stats import speedup_over_processes
from core.report.files import load_report, write_report
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from tests.core.fakes import fake_result


def made(eager, compiled, processes=None, others=None, precision=None):
    """A completed job from the given calls: lists of eager and compiled ms (process 0), more
    processes as {process: (eager, compiled)}; `others`: cores the rest of the machine used."""
    spec = JobSpec("q", ModelSpec("resnet18"), CompileConfig("inductor"), precision_pct=precision)
    r = JobResult(spec)
    r.apply(ev.JobStarted("q", environment={"cpu_count": 2}))
    samples = []
    for p, (e, c) in {0: (eager, compiled), **(processes or {})}.items():
        samples += [rec.LatencySample("eager", i, float(v), process=p) for i, v in enumerate(e)]
        samples += [rec.LatencySample("compiled", i, float(v), process=p) for i, v in enumerate(c)]
    r.apply(ev.LatencyMeasured("q", samples=tuple(samples)))
    if others is not None:
        for i in range(20):
            r.apply(
                ev.ResourceSampled(
                    "q",
                    sample=rec.ResourceSample(
                        i * 0.2, "benchmark", 200.0, 1.0, machine_cpu_percent=200.0 + 100 * others
                    ),
                )
            )
    r.apply(ev.JobCompleted("q"))
    return r


def normal(median, spread, n=200, seed=0):
    return median * (1 + spread * np.random.default_rng(seed).standard_normal(n))


def test_steady_calls_on_a_quiet_machine_are_quiet():
    q = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=0.05))
    assert q.grade == QUIET and q.reasons == () and q.trusted and q.sentence() == "quiet"
    assert q.others_cores == pytest.approx(0.05) and q.cores == 2


@pytest.mark.parametrize("others, expected", [(0.4, NOISY), (1.6, UNUSABLE)])
def test_other_processes_on_the_machine(others, expected):
    q = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=others))
    assert (
        q.grade == expected and q.reasons[0] == f"other processes used {others:.1f} of 2 cores while calls were timed"
    )


def test_a_long_tail_is_named_with_its_factor():
    """The reported case: compiled p90 six times its median, still given a break-even."""
    compiled = np.concatenate([normal(283, 0.01, n=170), np.full(30, 1669.0)])
    q = grade(made(normal(300, 0.01), np.random.default_rng(3).permutation(compiled)))
    assert q.grade == UNUSABLE and any(r.startswith("compiled p90 is 5.9x its median") for r in q.reasons)
    assert any("far slower than the rest" in r and "Tukey" in r for r in q.reasons)


def test_drift_counts_only_beyond_the_calls_own_spread():
    drifting = np.linspace(10, 14, 300)  # 40% slower by the end: noisy (quiet runs drifted up to 28%)
    q = grade(made(drifting, normal(5, 0.01, n=300)))
    assert q.grade == NOISY and any("drifted +" in r for r in q.reasons)
    q = grade(made(np.linspace(10, 20, 300), normal(5, 0.01, n=300)))  # twice as slow by the end
    assert q.grade == UNUSABLE and any("drifted +" in r for r in q.reasons)
    steady = grade(made(normal(10, 0.2, n=12), normal(5, 0.2, n=12, seed=2)))  # few, spread calls: no drift claim
    assert not any("drifted" in r for r in steady.reasons)


def test_processes_that_disagree_and_a_precision_not_reached():
    r = made(
        normal(26, 0.01),
        normal(33, 0.01, seed=1),
        {
            1: (normal(26, 0.01, seed=2), normal(25.2, 0.01, seed=3)),
            2: (normal(26, 0.01, seed=4), normal(33.1, 0.01, seed=5)),
        },
        precision=2.0,
    )
    q = grade(r)
    assert q.processes == 3 and len(q.process_speedups) == 3 and q.process_spread > 0.2
    assert q.grade == UNUSABLE and "the 3 processes disagree (speedups 0.79x, 1.03x, 0.79x)" in q.reasons[0]
    assert q.precision_target_pct == 2.0 and q.precision_reached is False
    assert any("wider than the ±2% asked for (--max-time ran out)" in r for r in q.reasons)
    from core.vocab import events as ev

    r.apply(ev.JobCancelled(r.job_id, phase="benchmark"))  # Ctrl+C: --max-time did not run out
    stopped = grade(r)
    assert any("wider than the ±2% asked for (the run was stopped before it got there)" in x for x in stopped.reasons)
    assert not any("--max-time" in x for x in stopped.reasons)


def test_processes_that_disagree_on_the_figure_but_not_the_side_keep_the_direction():
    """The reported case: 4 processes at 0.36x, 0.32x, 0.40x, 0.39x were graded unusable
    ("the processes disagree") and no verdict drawn, though each says compiled is ~2.7x slower.
    Every process and the interval (widened by their spread) on one side of 1: noisy, the
    direction first; where a process or the interval crosses 1, or the machine was busy with
    other work, still unusable."""
    medians = (0.36, 0.32, 0.40, 0.39)
    processes = {p: (normal(10, 0.01, seed=p), normal(10 / m, 0.01, seed=10 + p)) for p, m in enumerate(medians)}
    first = processes.pop(0)
    q = grade(made(*first, processes, others=0.05))
    assert q.process_spread > 0.2 and q.grade == NOISY and q.trusted
    assert q.reasons[0].startswith(
        "the figures vary, but the direction holds: compiled is slower in each of the 4 processes (0.32x-0.40x)"
    )
    assert any("the 4 processes disagree" in r for r in q.reasons[1:])  # what blurs the figure stays said
    assert q.direction_only
    for others in (1.6, 0.5, None):  # busy, a little busy, not recorded: not known quiet
        busy = grade(made(*first, processes, others=others))
        assert busy.grade == UNUSABLE and not busy.direction_only, others
        assert not any("direction holds" in r for r in busy.reasons)
    # calls spread widely within each process (a sub-millisecond model), the processes agree
    wide = {p: (normal(1, 0.6, seed=p).clip(0.2), normal(2.5, 0.6, seed=10 + p).clip(0.5)) for p in range(3)}
    q = grade(made(*wide.pop(0), wide, others=0.05))
    assert q.grade == NOISY and "compiled is slower in each of the 3 processes" in q.reasons[0]
    assert any("spread widely" in r for r in q.reasons)
    one = grade(made(normal(1, 0.6, seed=1).clip(0.2), normal(2.5, 0.6, seed=2).clip(0.5), others=0.05))
    assert one.grade == UNUSABLE  # one process is one draw: no direction from it alone


def test_a_timing_that_gives_the_direction_only_is_not_compared_with_another_report():
    """The review's case: processes at 0.36/0.32/0.40/0.39x against 0.33/0.31/0.35/0.34x read as
    a REGRESSION of +12% in the compiled median, inside the baseline's own processes' range."""
    from core.decide.compare import compare_config

    def run(medians):
        processes = {p: (normal(10, 0.01, seed=p), normal(10 / m, 0.01, seed=10 + p)) for p, m in enumerate(medians)}
        return made(*processes.pop(0), processes, others=0.05)

    base, new = run((0.36, 0.32, 0.40, 0.39)), run((0.33, 0.31, 0.35, 0.34))
    assert base.quality().direction_only and new.quality().grade == NOISY  # the new one agrees within 20%
    verdict = compare_config("inductor", base, new, 5.0)
    text = str(verdict)
    assert "REGRESSION" not in text and "gives the direction only" in text


def test_too_few_calls_cannot_be_graded():
    q = grade(made([1.0, 1.1], [0.5]))
    assert q.grade == UNKNOWN and not q.trusted and "too few timed calls" in q.reasons[0]


def test_side_spread_takes_the_worst_process():
    spread = side_spread({0: normal(10, 0.01), 1: normal(10, 0.2, seed=1)})
    assert 0.2 < spread.iqr_ratio < 0.35


def test_the_speedup_over_processes_widens_with_their_spread():
    agree = {p: normal(26, 0.01, seed=p) for p in range(3)}
    same = speedup_over_processes(agree, {p: normal(33, 0.01, seed=10 + p) for p in range(3)})
    split = speedup_over_processes(agree, {0: normal(33, 0.01), 1: normal(25.2, 0.01), 2: normal(33, 0.01)})
    assert same.ci_high < 1.0 and same.ci_high - same.ci_low < 0.03
    assert split.ci_low < 0.8 < 1.0 < split.ci_high
    one = speedup_over_processes({0: normal(10, 0.01)}, {0: normal(5, 0.01)})
    assert one.value == pytest.approx(2.0, rel=0.01) and one.ci_low < one.value < one.ci_high


def test_the_grade_is_in_summary_csv_report_json_and_read_back(tmp_path):
    busy = fake_result("inductor", others_cores=1.2, processes={1: 5.1, 2: 5.0})
    write_report([busy], str(tmp_path), {})
    with open(tmp_path / "summary.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert row["timing_quality"] == "unusable" and row["others_cpu_cores"] == "1.2" and row["processes"] == "3"
    assert row["timing_quality_reason"].startswith("other processes used 1.2 of 2 cores")
    job = json.loads((tmp_path / "report.json").read_text())["jobs"][0]
    assert job["quality"]["grade"] == "unusable" and job["quality"]["processes"] == 3
    (back,), _ = load_report(str(tmp_path))
    assert back.quality().grade == "unusable" and back.samples.processes() == [0, 1, 2]
    assert banner([back]).startswith("Timing not quiet: inductor unusable (other processes used 1.2")


def test_a_report_from_before_processes_reads_as_one_process(tmp_path):
    write_report([fake_result("inductor")], str(tmp_path), {})
    doc = json.loads((tmp_path / "report.json").read_text())
    del doc["jobs"][0]["samples"]["process"]
    for r in doc["jobs"][0]["resources"]:
        r.pop("machine_cpu_percent", None)
    (tmp_path / "report.json").write_text(json.dumps(doc))
    (back,), _ = load_report(str(tmp_path))
    assert back.samples.processes() == [0] and back.quality().processes == 1


def test_an_interval_wider_than_the_speedup_itself_is_said_not_known():
    """Two processes at 2.00x and 0.54x gave "speedup known within ±202339.5%": past
    UNKNOWN_PRECISION_PCT the line and the details say the speedup is not known."""
    from core.analysis.quality import UNKNOWN_PRECISION_PCT, MeasurementQuality

    wide = MeasurementQuality("unusable", processes=2, process_speedups=(2.0, 0.54), precision_pct=202339.5)
    assert "speedup not known: its 95% interval is wider than ±100%" in wide.line()
    assert "202339" not in wide.line() and "202339" not in wide.details()
    assert "The speedup's 95% interval is wider than ±100%." in wide.details()
    narrow = MeasurementQuality("good", precision_pct=2.3)
    assert "speedup known within ±2.3%" in narrow.line() and UNKNOWN_PRECISION_PCT == 100.0


def test_the_banner_names_the_timings_without_a_verdict_and_the_advice_fits_the_machine():
    """The banner said "no verdict is drawn from an unusable timing: re-run on a quiet machine"
    beside a clear recommendation (only a reference config was unusable), and told a user whose
    machine was idle (0.05 cores) to close other programs."""
    from core.analysis.quality_advice import rerun_advice

    tail = np.concatenate([normal(1.0, 0.01, n=170), np.full(30, 6.0)])  # a long tail, one process
    unusable = made(normal(2, 0.01), np.random.default_rng(3).permutation(tail), others=0.05)
    quiet = made(normal(10, 0.01), normal(5, 0.01, seed=1), others=0.05)
    text = banner([unusable, quiet])
    assert "No verdict is drawn from that timing (inductor)" in text
    assert "(the machine was quiet while calls were timed: closing other programs will not help)" in text
    assert "quiet machine" not in text
    busy = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6))
    assert rerun_advice([busy]).startswith("re-run on a quiet machine") and "1.6 cores" in rerun_advice([busy])
    noisy = made(normal(10, 0.01), normal(5, 0.01, seed=1), others=0.4)
    assert "Its figures stand with their intervals (to narrow them, re-run on a quiet machine" in banner([noisy])


def test_the_banner_says_the_far_out_rule_once_for_every_config_it_applies_to():
    """Five noisy configs each repeated "(beyond the upper quartile plus 3 interquartile ranges
    (Tukey's far-out rule))" in the app's banner: now each says its count, the rule comes once."""
    from core.analysis.quality import OUTLIER_RULE

    def spiky(seed):
        calls = np.concatenate([normal(10, 0.01, n=190, seed=seed), np.full(10, 60.0)])
        return np.random.default_rng(seed).permutation(calls)

    results = [
        made(spiky(1), normal(5, 0.01, seed=2), others=0.05),
        made(spiky(3), normal(5, 0.01, seed=4), others=0.05),
    ]
    reasons = [grade(r).reasons[0] for r in results]
    assert all(OUTLIER_RULE in reason for reason in reasons), reasons  # the CLI's timing line keeps it
    text = banner(results)
    assert text.count(OUTLIER_RULE) == 1 and text.endswith(f"Far slower: {OUTLIER_RULE}."), text
    assert text.count("eager calls far slower than the rest") == 2


def test_the_cli_line_says_the_far_out_rule_once_when_both_sides_have_far_out_calls():
    """`profile` printed "(Tukey's far-out rule: ...)" after the eager and again after the compiled count."""
    from core.analysis.quality import OUTLIER_RULE

    def spiky(mean, seed):
        calls = np.concatenate([normal(mean, 0.01, n=180, seed=seed), np.full(20, mean * 6)])
        return np.random.default_rng(seed).permutation(calls)

    q = grade(made(spiky(10, 1), spiky(5, 2), others=0.05))
    assert [OUTLIER_RULE in r for r in q.reasons[:2]] == [True, True], q.reasons
    line = q.sentence()
    assert line.count(OUTLIER_RULE) == 1 and line.count("calls far slower than the rest") == 2, line
    assert line.index("eager calls far slower") < line.index("compiled calls far slower") < line.index(OUTLIER_RULE)


def test_the_cli_line_says_whether_the_precision_asked_was_reached_in_words():
    """It read "speedup known within ±2.0% of ±2% asked, reached"."""
    from core.analysis.quality import MeasurementQuality

    met = MeasurementQuality("quiet", precision_pct=1.4, precision_target_pct=2.0)
    assert "speedup known within ±1.4%, within the ±2% asked" in met.line(), met.line()
    missed = MeasurementQuality("noisy", precision_pct=3.1, precision_target_pct=2.0)
    assert "speedup known within ±3.1%, wider than the ±2% asked" in missed.line(), missed.line()


def test_the_rerun_advice_names_the_options_that_act_on_the_run_it_judges():
    """Runs with --iters 30 were told to use "a tighter --precision and a longer --max-time",
    which act only with --iters auto."""
    from core.analysis.quality_advice import rerun_advice

    fixed = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6))
    auto = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6, precision=2.0))
    assert fixed.precision_target_pct is None and auto.precision_target_pct == 2.0
    assert "--precision" not in rerun_advice([fixed]) and "more --iters (or --iters auto" in rerun_advice([fixed])
    assert "a tighter --precision and a longer --max-time" in rerun_advice([auto])


def test_a_brief_banner_of_many_configs_keeps_only_the_unusable_ones_reasons():
    """Five configs' reasons made a six-line banner above a 100 px chart; the app's brief one
    names each config and grade, and gives a reason only for a timing no verdict is drawn from."""
    import dataclasses

    tail = np.concatenate([normal(1.0, 0.01, n=170), np.full(30, 6.0)])
    unusable = made(normal(2, 0.01), np.random.default_rng(3).permutation(tail), others=0.05)
    noisy = []
    for i, backend in enumerate(("eager", "aot_eager", "aot_eager_decomp_partition")):
        r = made(normal(10, 0.01), normal(5, 0.01, seed=1), others=0.4)
        r.spec = dataclasses.replace(r.spec, job_id=f"n{i}", config=CompileConfig(backend))
        noisy.append(r)
    full, brief = banner([unusable, *noisy]), banner([unusable, *noisy], brief=True)
    reason = grade(noisy[0]).reasons[0]
    assert full.count(reason) == 3 and reason not in brief
    assert "eager noisy; aot_eager noisy; aot_eager_decomp_partition noisy" in brief
    assert f"inductor unusable ({grade(unusable).reasons[0].split(' (')[0]}" in brief
    assert brief.endswith("Each config's Timing cell says why.") and len(brief) < len(full)
    assert banner([unusable, noisy[0]], brief=True) == banner([unusable, noisy[0]])  # two: all said


def test_the_rerun_advice_can_name_the_apps_fields_not_flags_the_form_lacks():
    """Issue 44: the app quoted `--precision` and `--max-time`, which its form does not have."""
    from core.analysis.quality_advice import FORM_FIELDS, rerun_advice

    fixed = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6))
    auto = grade(made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6, precision=2.0))
    for quality in (fixed, auto):
        advice = rerun_advice([quality], FORM_FIELDS)
        assert "--" not in advice and "more Processes" in advice and advice.startswith("re-run on a quiet machine")
    assert "more Iterations (or Iterations auto" in rerun_advice([fixed], FORM_FIELDS)
    unusable = made(normal(10, 0.01), normal(5, 0.01, seed=1), others=1.6)
    assert "--" not in banner([unusable], fields=FORM_FIELDS) and "--processes" in banner([unusable])


def test_timed_calls_shorter_than_one_reading_are_graded_on_the_jobs_load():
    """Two busy loops on 2 cores went unseen behind 40 calls of 10 µs (no reading fell in the
    benchmark), and a firm verdict came from a timing graded only noisy."""
    r = made(normal(10, 0.01), normal(5, 0.01, seed=1))
    for i, phase in enumerate(("load", "eager", "compile", "compile", "accuracy")):
        r.apply(
            ev.ResourceSampled(
                "q", sample=rec.ResourceSample(i * 0.2, phase, 200.0, 1.0, machine_cpu_percent=200.0 + 100 * 1.7)
            )
        )
    q = grade(r)
    assert q.grade == UNUSABLE and q.others_cores == pytest.approx(1.7)
    assert (
        q.reasons[0] == "other processes used 1.7 of 2 cores while the job ran (its timed calls were too short to read)"
    )
    from core.analysis.quality_advice import rerun_advice

    advice = rerun_advice([q])  # the advice names when the load was read, as the reason does
    assert advice.endswith("1.7 cores while the job ran (its timed calls were too short to read)")
    assert "while calls were timed" not in advice
    # readings in the benchmark are what counts when there are some
    r.apply(
        ev.ResourceSampled(
            "q", sample=rec.ResourceSample(2.0, "benchmark", 200.0, 1.0, machine_cpu_percent=200.0 + 100 * 0.05)
        )
    )
    assert grade(r).grade == QUIET
