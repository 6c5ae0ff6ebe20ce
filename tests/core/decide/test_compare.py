"""`compare BASELINE NEW`: an injected regression is flagged, a rerun within noise passes."""

import csv
import dataclasses
import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT
from core.analysis.quality_advice import FORM_FIELDS
from core.analysis.stats import median_interval
from core.decide.compare import compare_reports
from core.report.files import load_report, write_report
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from tests.core.fakes import fake_result

BREAK = rec.GraphBreak("Data-dependent branching", "GB0170", file="/models/net.py", line=13, source="if x.sum() > 0:")
FREEZING = CompileConfig("inductor", inductor_options=(("freezing", True),))


def saved(tmp_path, name, results, **kwargs):
    folder = tmp_path / name
    write_report(results, str(folder), {"calls": 1000}, **kwargs)
    return str(folder)


def compare(*args):
    return subprocess.run(
        [sys.executable, "main.py", "compare", *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def baseline():
    return [fake_result("inductor", compiled_ms=5.0, seed=1), fake_result(FREEZING, compiled_ms=3.0, seed=2)]


def test_thirty_percent_slower_with_a_new_graph_break_is_flagged(tmp_path):
    base = saved(tmp_path, "base", baseline())
    slower = [
        fake_result("inductor", compiled_ms=6.5, seed=3, graph_breaks=(BREAK,)),
        fake_result(FREEZING, compiled_ms=3.0, seed=4),
    ]
    new = saved(tmp_path, "new", slower)
    proc = compare(base, new, "--threshold", "10", "--out", str(tmp_path / "cmp"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("inductor:"))
    assert (
        "REGRESSION" in line
        and "compiled 30.1% slower" in line
        and "outside the noise" in line
        and "graph break added" in line
    )
    assert "+ graph break GB0170 at " in proc.stdout and "net.py:13: Data-dependent branching" in proc.stdout
    assert next(x for x in proc.stdout.splitlines() if x.startswith(FREEZING.label)).startswith(f"{FREEZING.label}: ok")
    with open(tmp_path / "cmp" / "compare.csv", newline="") as fh:
        rows = {r["config"]: r for r in csv.DictReader(fh)}
    row = rows["inductor"]
    assert row["regression"] == "true" and row["compiled_ci_overlap"] == "false"
    assert abs(float(row["compiled_change_pct"]) - 30) < 3 and "GB0170" in row["graph_breaks_added"]
    assert rows[FREEZING.label]["regression"] == "false"


def test_two_runs_of_the_same_config_within_noise_pass(tmp_path):
    base = saved(tmp_path, "base", baseline())
    rerun = saved(
        tmp_path,
        "new",
        [
            fake_result("inductor", compiled_ms=5.02, seed=11, noise=0.05),
            fake_result(FREEZING, compiled_ms=2.98, seed=12, noise=0.05),
        ],
    )
    proc = compare(base, os.path.join(rerun, "report.json"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert all(line.split(": ", 1)[1].startswith("ok") for line in proc.stdout.splitlines() if ": " in line)


def test_slower_within_the_noise_is_not_a_regression(tmp_path):
    noisy = [fake_result("inductor", compiled_ms=5.0, noise=0.2, n=12, seed=5)]
    noisier = [fake_result("inductor", compiled_ms=5.6, noise=0.2, n=12, seed=6)]
    (c,) = compare_reports(noisy, {}, noisier, {}, threshold_pct=5).configs
    assert c.compiled.change > 0.05 and c.compiled.overlap and not c.regression and "within the noise" in c.verdict


def test_accuracy_failure_and_a_failed_job_are_regressions():
    (c,) = compare_reports([fake_result("inductor")], {}, [fake_result("inductor", accuracy="fail")], {}).configs
    assert c.regression and "accuracy fails now" in c.verdict
    (c,) = compare_reports([fake_result("inductor")], {}, [fake_result("inductor", status="failed")], {}).configs
    assert c.regression and "failed now" in c.verdict


def test_different_torch_device_or_threads_warn_naming_the_difference(tmp_path):
    base = saved(tmp_path, "base", [fake_result("inductor", environment={"threads": 2})])
    new = saved(
        tmp_path,
        "new",
        [fake_result("inductor", environment={"threads": 8, "torch": "2.15.0"}), fake_result("aot_eager")],
    )
    results = [load_report(base), load_report(new)]
    comparison = compare_reports(*results[0], *results[1])
    text = " ".join(comparison.warnings)
    assert "thread count: baseline 2, new 8" in text and "torch version: baseline 2.14.1, new 2.15.0" in text
    only_new = next(c for c in comparison.configs if c.config == "aot_eager")
    assert only_new.verdict == "in the new report only: nothing to compare" and not only_new.regression
    proc = compare(base, new)
    assert "warning: the reports differ in thread count" in proc.stderr


def test_unreadable_report_is_refused_with_exit_2(tmp_path):
    proc = compare(str(tmp_path / "missing"), str(tmp_path / "missing"))
    assert proc.returncode == 2 and "cannot open" in proc.stderr


def test_median_interval_brackets_the_median():
    median, low, high = median_interval([1.0, 2.0, 3.0, 4.0, 100.0])
    assert low <= median == 3.0 <= high


def test_trends_colour_a_regression_worse_and_a_rerun_within_noise():
    from core.decide.compare import BETTER, NOISE, WORSE, trends

    slower = [
        fake_result("inductor", compiled_ms=6.5, seed=3, graph_breaks=(BREAK,)),
        fake_result(FREEZING, compiled_ms=2.0, seed=4),
    ]
    result = compare_reports(baseline(), {}, slower, {}, 10.0)
    by = {c.config: trends(c, 10.0) for c in result.configs}
    assert by["inductor"]["compiled"] == WORSE and by["inductor"]["graph_breaks"] == WORSE
    assert by["inductor"]["eager"] == NOISE
    assert by[FREEZING.label]["compiled"] == BETTER and by[FREEZING.label]["graph_breaks"] == NOISE
    same = compare_reports(baseline(), {}, [fake_result("inductor", compiled_ms=5.02, seed=11, noise=0.05)], {}, 10.0)
    inductor = next(c for c in same.configs if c.config == "inductor")
    assert trends(inductor, 10.0)["compiled"] == NOISE
    assert trends(next(c for c in same.configs if c.config == FREEZING.label), 10.0) == {}  # baseline only


def test_relative_judges_compiled_against_eager_so_a_slower_machine_passes(tmp_path):
    base = saved(tmp_path, "base", [fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, seed=1)])
    machine = saved(tmp_path, "machine", [fake_result("inductor", eager_ms=13.0, compiled_ms=6.5, seed=2)])
    proc = compare(base, machine)  # absolute: both sides 30% slower is flagged, with the hint
    assert proc.returncode == 1 and "eager +30" in proc.stdout and "--relative" in proc.stdout, proc.stdout
    proc = compare(base, machine, "--relative")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    line = proc.stdout.splitlines()[0]
    assert line.startswith("inductor: ok") and "relative to eager (speedup 2.00× → 2.00×)" in line, line
    assert "absolute: compiled +30" in line
    # compiled alone 30% slower: flagged by the relative rule too
    compiled_only = saved(tmp_path, "compiled", [fake_result("inductor", eager_ms=10.0, compiled_ms=6.5, seed=3)])
    proc = compare(base, compiled_only, "--relative")
    assert proc.returncode == 1 and "REGRESSION: compiled +30" in proc.stdout and "outside the noise" in proc.stdout


def test_relative_without_speedups_falls_back_and_says_so():
    variants = [rec.VariantResult(0, ("x[4×8]",), 1, False, eager_ms=(2.0, 2.1, 2.0), compiled_ms=(1.0, 1.1, 1.0))]
    base = [fake_result("inductor", compiled_ms=5.0, seed=1, sweep=True, variants=variants)]
    new = [fake_result("inductor", compiled_ms=5.0, seed=2, sweep=True, variants=variants)]
    (c,) = compare_reports(base, {}, new, {}, relative=True).configs
    assert "judged on its own" in c.verdict and not c.regression


def test_a_config_gone_from_the_new_report_is_missing_not_a_slowdown_and_fails_a_gate(tmp_path):
    """The new user's case: a config gone from the new report read "REGRESSION: missing" and,
    with --relative, "regression in eager (…; a slowdown counts beyond 5%)", though nothing
    was measured, let alone slowed down. It reads MISSING, and a gate does not pass it (exit 1)."""
    base = saved(tmp_path, "base", baseline())
    new = saved(tmp_path, "new", [fake_result("inductor", compiled_ms=5.0, seed=3)])
    for relative in ((), ("--relative",)):
        proc = compare(base, new, "--out", str(tmp_path / "cmp"), *relative)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        line = next(x for x in proc.stdout.splitlines() if x.startswith(f"{FREEZING.label}:"))
        assert line.startswith(f"{FREEZING.label}: MISSING: in the baseline, not in the new report"), line
        assert (
            "REGRESSION" not in proc.stdout and "regression" not in proc.stderr and "slowdown counts" not in proc.stderr
        )
        last = proc.stderr.splitlines()[-1]
        assert last.startswith(f"missing from the new report: {FREEZING.label} (") and last.endswith("exit code 1")
    with open(tmp_path / "cmp" / "compare.csv", newline="") as fh:
        rows = {r["config"]: r for r in csv.DictReader(fh)}
    assert rows[FREEZING.label]["missing"] == "true" and rows[FREEZING.label]["regression"] == "false"
    assert rows["inductor"]["judged"] == "relative" and rows["inductor"]["missing"] == "false"
    assert abs(float(rows["inductor"]["relative_change_pct"])) < 5
    comparison = compare_reports(baseline(), {}, [fake_result("inductor", compiled_ms=5.0, seed=3)], {})
    assert comparison.missing == [FREEZING.label] and not comparison.regressed
    # a regression beside it: each said on its own line, the exit code after the last
    slower = saved(tmp_path, "slower", [fake_result("inductor", compiled_ms=6.5, seed=4)])
    proc = compare(base, slower)
    assert proc.returncode == 1 and "inductor: REGRESSION: compiled 30" in proc.stdout
    assert "regression in inductor (each config's line above says why" in proc.stderr
    assert proc.stderr.splitlines()[-1].startswith(f"missing from the new report: {FREEZING.label}")
    # only in the new report: said, not a regression; in the baseline only but not completed there:
    # said, not missing
    (c,) = compare_reports([], {}, [fake_result("inductor")], {}).configs
    assert not c.regression and not c.missing and "in the new report only" in c.verdict
    (c,) = compare_reports([fake_result("inductor", status="cancelled")], {}, [], {}).configs
    assert not c.missing and c.verdict == "in the baseline only (cancelled there): nothing to compare"


def test_a_missing_config_beside_an_undecided_one_exits_1_and_the_lines_agree(tmp_path):
    base = saved(tmp_path, "base", baseline())
    new = saved(tmp_path, "new", [fake_result("inductor", n=0, seed=3)])
    proc = compare(base, new)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "inductor: CANNOT TELL: the new report has no timed calls" in proc.stdout
    closing = proc.stderr.splitlines()[-2:]
    assert closing[0] == "cannot tell whether these regressed (see above): inductor", closing
    assert closing[1].startswith(f"missing from the new report: {FREEZING.label}") and closing[1].endswith(
        "; exit code 1"
    )
    assert "exit code 3" not in proc.stderr


def test_with_no_config_in_both_reports_a_missing_one_is_not_called_a_regression(tmp_path):
    """The new user's case: "aot_eager: REGRESSION: missing from the new report" above
    "cannot tell: no config is in both reports …; exit code 3"."""
    proc = compare(saved(tmp_path, "a", [fake_result("aot_eager")]), saved(tmp_path, "b", [fake_result("inductor")]))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "REGRESSION" not in proc.stdout and "regression" not in proc.stderr
    assert proc.stdout.splitlines()[0].startswith("aot_eager: MISSING: in the baseline, not in the new report")
    assert proc.stderr.splitlines()[-1].startswith("cannot tell: no config is in both reports (the baseline has ")


def _direction_only(seed, speedups, asked=3):
    """A timing whose processes disagree beyond use but all say compiled is slower (graded
    noisy, direction only), run with --iters auto and `asked` processes (the rest added)."""
    r = fake_result(
        "inductor",
        eager_ms=10.0,
        compiled_ms=10 / speedups[0],
        others_cores=0.05,
        seed=seed,
        processes={p: 10 / s for p, s in enumerate(speedups[1:], 1)},
    )
    r.spec = dataclasses.replace(r.spec, processes=asked, precision_pct=2.0)
    assert r.quality().direction_only
    return r


def test_a_direction_only_timing_advises_from_the_processes_the_runs_already_timed():
    """The new user's case: two runs that had already added processes up to --iters auto's cap
    were told to "re-run with more --processes", and why read ": other programs left the
    machine quiet while calls were timed"."""
    ten = (0.40, 0.32, 0.37, 0.38, 0.33, 0.41, 0.35, 0.39, 0.34, 0.36)
    base, new = _direction_only(1, ten), _direction_only(2, ten[::-1])
    (c,) = compare_reports([base], {}, [new], {}).configs
    assert c.cannot_tell and not c.regression and "gives the direction only" in c.verdict
    assert "and that of the new report too" in c.verdict
    assert "more --processes" not in c.verdict and "left the machine quiet" not in c.verdict, c.verdict
    assert "re-run it with --processes above 10 and a --max-time above 60 s" in c.verdict, c.verdict
    assert "both reports timed 10 processes: 3 asked for, 7 added while they disagreed, the most" in c.verdict
    assert "--max-time 60 s ran out before the ±2% asked for" in c.verdict
    # one report only, fewer processes: named as what it did
    (c,) = compare_reports([_direction_only(3, ten[:4])], {}, [fake_result("inductor", seed=4)], {}).configs
    assert (
        "re-run it with --processes above 4 and" in c.verdict
        and "(it timed 4 processes: 3 asked for, 1 added" in c.verdict
    )


def test_threshold_range_includes_its_ends(tmp_path):
    base = saved(tmp_path, "base", baseline())
    assert compare(base, base, "--threshold", "1000").returncode == 0
    proc = compare(base, base, "--threshold", "100000000")
    assert proc.returncode == 2 and "must be from 0 to 1000 percent, not 100,000,000." in proc.stderr


def test_out_naming_a_file_is_refused_before_any_work(tmp_path):
    base = saved(tmp_path, "base", baseline())
    (tmp_path / "plain").write_text("x")
    proc = compare(base, base, "--out", str(tmp_path / "plain"))
    assert proc.returncode == 2 and "is a file; name a folder for compare.csv" in proc.stderr
    assert proc.stdout == ""


def test_a_config_still_running_in_the_app_is_not_missing():
    base = baseline()
    (c, _) = compare_reports(
        base, {}, [fake_result("inductor", compiled_ms=5.0, seed=3)], {}, pending=frozenset({FREEZING.label})
    ).configs[::-1]
    assert c.config == FREEZING.label and not c.regression and "not finished yet" in c.verdict


def test_a_report_with_no_timed_calls_or_an_unusable_timing_cannot_tell_and_a_gate_does_not_pass(tmp_path):
    """The reported case: against a report with zero samples compare said "ok: same" and exited 0."""
    base = saved(tmp_path, "base", baseline())
    empty = saved(tmp_path, "empty", [fake_result("inductor", n=0, seed=3), fake_result(FREEZING, compiled_ms=3.0)])
    proc = compare(base, empty)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    line = next(x for x in proc.stdout.splitlines() if x.startswith("inductor:"))
    assert line.startswith("inductor: CANNOT TELL: the new report has no timed calls for it")
    assert "cannot tell whether these regressed (see above): inductor" in proc.stderr
    busy = saved(
        tmp_path,
        "busy",
        [fake_result("inductor", compiled_ms=9.0, others_cores=1.5), fake_result(FREEZING, compiled_ms=3.0)],
    )
    proc = compare(base, busy)
    assert proc.returncode == 3 and "the timing of the new report was unusable (other processes used 1.5" in proc.stdout
    worse = saved(
        tmp_path,
        "worse",
        [
            fake_result("inductor", compiled_ms=9.0, others_cores=1.5, accuracy="fail"),
            fake_result(FREEZING, compiled_ms=3.0),
        ],
    )
    assert compare(base, worse).returncode == 1  # what can be judged (accuracy) still fails the gate


def test_a_noisy_report_is_warned_about():
    noisy = [fake_result("inductor", compiled_ms=5.0, others_cores=0.4, seed=7)]
    comparison = compare_reports([fake_result("inductor", compiled_ms=5.0, seed=8)], {}, noisy, {})
    assert any(
        w.startswith("new: the timing of inductor was noisy (other processes used 0.4") for w in comparison.warnings
    )


def test_a_config_label_with_terminal_escapes_is_printed_escaped(tmp_path):
    """The reported case: compare printed a config label's ESC and OSC 52 sequences raw."""
    evil = CompileConfig("inductor", dynamo_config=(("x", "\x1b]52;c;ZXZpbA==\x07\x1b[2J"),))
    base = saved(tmp_path, "base", [fake_result(evil, seed=1)])
    new = saved(tmp_path, "new", [fake_result(evil, seed=2)])
    proc = compare(base, new)
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    assert "\\x1b]52;c;ZXZpbA==\\x07" in proc.stdout


def test_reports_that_timed_nothing_in_common_do_not_pass_a_gate(tmp_path):
    """Both reports failed the config (zero samples each), or one report is empty: compare said
    "ok: same" (or nothing) and exited 0."""
    failed = saved(tmp_path, "f1", [fake_result("inductor", n=0, status="failed", seed=1)])
    failed_too = saved(tmp_path, "f2", [fake_result("inductor", n=0, status="failed", seed=2)])
    proc = compare(failed, failed_too)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "inductor: CANNOT TELL: neither report has timed calls for it (baseline failed, new failed)" in proc.stdout
    empty = saved(tmp_path, "empty", [])
    proc = compare(empty, saved(tmp_path, "new", baseline()))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert (
        "cannot tell: no config is in both reports (the baseline has none; the new report inductor, inductor/freezing=True)"
        in proc.stderr
    )
    # a setting changed (the label with it): the baseline's config is missing from the new report,
    # but nothing was compared, so it is "cannot tell" (3), as --help says, not a regression (1)
    changed = dataclasses.replace(CompileConfig("inductor"), inductor_options=(("freezing", True),))
    proc = compare(saved(tmp_path, "one", [fake_result("inductor")]), saved(tmp_path, "two", [fake_result(changed)]))
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "configs are matched by their label, and a changed setting changes it" in proc.stderr
    fixed = compare_reports([fake_result("inductor", n=0, status="failed")], {}, [fake_result("inductor")], {})
    assert fixed.configs[0].verdict.startswith("ok: completes now (failed in the baseline") and not fixed.undecided


def test_reports_of_different_models_are_refused_not_set_against_each_other(tmp_path):
    """The new user's case: a baseline of one model against a report of another read as
    "REGRESSION: missing" and a speed change of the same-named config; compare refuses it."""
    base = saved(tmp_path, "base", baseline())
    other = saved(tmp_path, "other", [fake_result("inductor", model="mobilenet_v2", seed=4)])
    proc = compare(base, other)
    assert proc.returncode == 2 and proc.stdout == "", proc.stdout + proc.stderr
    assert "The baseline profiles resnet18 and the new report mobilenet_v2: no model is in both" in proc.stderr
    # a model file is known by its file name: a copy in another folder is the same model
    from core.decide.report_match import model_mismatch

    here = [fake_result("inductor", model=str(tmp_path / "a" / "net.py"))]
    there = [fake_result("inductor", model=str(tmp_path / "b" / "net.py"))]
    assert model_mismatch(here, there) is None
    assert "net.py" in model_mismatch(here, [fake_result("inductor", model=str(tmp_path / "net2.py"))])
    # an empty report is not a mismatch (compare says it compared nothing, exit 3)
    assert model_mismatch([], here) is None


def test_compare_help_names_every_exit_code():
    out = subprocess.run(
        [sys.executable, os.path.join(ROOT, "main.py"), "compare", "--help"], capture_output=True, text=True
    ).stdout
    text = " ".join(out.split())
    assert "Exit codes: 0 no config regressed; 1 a config regressed, or one that completed in the baseline is" in text
    assert "missing from the new report (MISSING: not measured, so no slowdown, but no pass either); 3 no" in text
    assert "a timing graded unusable or giving the direction only, or no timed calls" in text
    assert "2 a refused command line, an unreadable report, or reports of different models" in text


def test_a_median_of_zero_ms_cannot_be_told_not_a_traceback(tmp_path):
    """The reported case: a report whose latencies made a median of 0 ms ended `compare` with a
    ZeroDivisionError traceback (the speedup, then the change against the baseline)."""
    base = saved(tmp_path, "base", [fake_result("inductor", compiled_ms=5.0, seed=1)])
    zero_compiled = saved(tmp_path, "zero_compiled", [fake_result("inductor", compiled_ms=0.0, seed=2)])
    zero_eager = saved(tmp_path, "zero_eager", [fake_result("inductor", eager_ms=0.0, seed=3)])
    for pair, side in (((base, zero_compiled), "compiled"), ((zero_eager, base), "eager")):
        proc = compare(*pair)
        assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
        assert proc.returncode == 3
        assert f"gives 0 ms as the {side} median, which no change can be measured against" in proc.stdout


def test_a_compiled_median_of_zero_makes_an_infinite_speedup_not_an_exception():
    from core.analysis.stats import speedup

    assert speedup([1.0, 1.0], [0.0, 0.0]).value == float("inf") and speedup([0.0], [1.0]).value == 0.0


def test_the_apps_comparison_names_the_forms_fields_not_the_command_lines_flags():
    """The app's compare dialog quoted --processes and --max-time, which its form does not have."""
    ten = (0.40, 0.32, 0.37, 0.38, 0.33, 0.41, 0.35, 0.39, 0.34, 0.36)
    base, new = _direction_only(1, ten), _direction_only(2, ten[::-1])
    (c,) = compare_reports([base], {}, [new], {}, fields=FORM_FIELDS).configs
    assert "re-run it with Processes above 10 (" in c.verdict, c.verdict
    assert "--" not in c.verdict, c.verdict
    assert "the timing ran out of time before the ±2% asked for" in c.verdict
