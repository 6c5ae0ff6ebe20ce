"""A script's runs folded and compared, from events made here (no process, no torch): first calls
set apart, the verdict from the interval and the grade, the pay-back, runs that took other paths,
and events that cannot be read."""

from __future__ import annotations

import numpy as np

from core.analysis import quality as q
from core.analysis.script_results import (
    CANNOT_TELL,
    FASTER,
    NOT_TIMED,
    SLOWER,
    result_from_runs,
    summary_lines,
)
from core.analysis.script_runs import fold_run
from core.vocab.script_job import FLAG_COMPILED, FLAG_NEW_SHAPE, STANCE_COMPILED, STANCE_EAGER, ScriptEvents


def events(first_ms: float, steady: list[float], name="step", others=0.0, exit_code=0, extra=(), between=None):
    """A run's events: a first call that compiles, then steady ones; `between`: the script's own
    time after each call before the next (each call's start recorded), else no starts (a
    report from before they were)."""
    ms = [first_ms, *steady]
    flags = [FLAG_NEW_SHAPE | FLAG_COMPILED] + [0] * len(steady)
    calls = {"t": "calls", "id": 0, "first": 0, "ms": ms, "flags": flags}
    if between is not None:
        calls["at"] = list(np.cumsum([0.0] + [m + g for m, g in zip(ms[:-1], between)]))
    ev = [
        {"t": "start", "torch": "2.14"},
        {"t": "entry", "id": 0, "name": name, "file": "/w/train.py", "line": 12, "kind": "function", "settings": {}},
        calls,
        {"t": "compile", "id": 0, "call": 0, "frames": [{"compile_s": first_ms / 1000.0 * 0.9}]},
        *extra,
        {"t": "end", "exit": exit_code, "error": "", "wall_s": 3.0, "totals": {"0": [len(ms), sum(ms)]}},
    ]
    return ScriptEvents(events=ev, exit_code=exit_code, others_cores=[others] * 4)


def noisy(center: float, n: int, rng) -> list[float]:
    return list(center * (1 + 0.02 * rng.standard_normal(n)))


def compared(compiled_raw, eager_raw):
    return result_from_runs(
        "/w/train.py",
        (),
        False,
        "/w",
        (),
        fold_run(compiled_raw, STANCE_COMPILED),
        fold_run(eager_raw, STANCE_EAGER) if eager_raw else None,
    )


def test_a_faster_function_pays_back_its_first_calls_after_the_calls_its_saving_needs():
    rng = np.random.default_rng(0)
    result = compared(events(2000.0, noisy(1.0, 400, rng)), events(3.0, noisy(2.0, 400, rng)))
    (f,) = result.functions
    assert f.verdict == FASTER and 1.9 < f.speedup.value < 2.1 and f.speedup.ci_low > 1
    # 2,000 ms first call against a 1 ms steady one, less eager's (3 - 2 ms): 1.998 s extra; 1 ms saved a call
    assert abs(f.first_calls_extra_s - 1.998) < 0.01
    assert 1990 < f.payback_calls < 2010 and f.payback_calls > f.compiled.calls
    assert "not paid back within this run" in f.payback_line() and "this run made 401" in f.payback_line()
    result = compared(events(200.0, noisy(1.0, 400, rng)), events(3.0, noisy(2.0, 400, rng)))
    (f,) = result.functions  # 198 ms extra, ~1 ms saved a call: after about 199 calls of 401
    assert 195 <= f.payback_calls <= 205 and f.payback_line().startswith(f"paid back after call {f.payback_calls}; ")


def test_a_slower_function_never_pays_back_and_a_tie_cannot_tell():
    rng = np.random.default_rng(1)
    (slow,) = compared(events(50.0, noisy(2.0, 200, rng)), events(3.0, noisy(1.0, 200, rng))).functions
    assert slow.verdict == SLOWER and slow.payback_calls is None
    assert slow.payback_line().startswith("pay-back: never, compiled is slower")
    (tie,) = compared(events(50.0, noisy(1.0, 200, rng)), events(3.0, noisy(1.0, 200, rng))).functions
    assert tie.verdict == CANNOT_TELL and "interval spans 1" in tie.verdict_line()


def test_a_busy_machine_makes_the_timing_unusable_and_the_verdict_cannot_tell():
    rng = np.random.default_rng(2)
    (f,) = compared(events(50.0, noisy(1.0, 200, rng), others=1.2), events(3.0, noisy(2.0, 200, rng))).functions
    assert f.grade.grade == q.UNUSABLE and "other processes used 1.2 cores during the compiled run" in f.grade.reason
    assert f.verdict == CANNOT_TELL and f.payback_calls is None


def test_too_few_steady_calls_are_not_timed_and_other_paths_are_named():
    rng = np.random.default_rng(3)
    (f,) = compared(events(50.0, noisy(1.0, 3, rng)), events(3.0, noisy(2.0, 9, rng))).functions
    assert f.verdict == NOT_TIMED and "too few steady calls to time (3 compiled, 9 eager" in f.why
    assert f.paths_differ == "4 calls compiled, 10 eager"
    result = compared(events(50.0, noisy(1.0, 3, rng)), events(3.0, noisy(2.0, 9, rng)))
    assert any("the runs took different paths (4 calls compiled, 10 eager)" in w for w in result.warnings())


def test_without_a_baseline_nothing_is_compared_and_nothing_compiled_is_said():
    rng = np.random.default_rng(4)
    (f,) = compared(events(50.0, noisy(1.0, 30, rng)), None).functions
    assert f.verdict == NOT_TIMED and f.why == "no eager baseline"
    empty = ScriptEvents(events=[{"t": "end", "exit": 0, "error": "", "wall_s": 1.0}], exit_code=0)
    result = compared(empty, None)
    assert result.headline().startswith("the script compiled nothing")


def test_damaged_or_unknown_event_lines_are_counted_never_raised():
    rng = np.random.default_rng(5)
    raw = events(
        50.0,
        noisy(1.0, 30, rng),
        extra=(
            {"t": "calls", "id": 7, "first": 0, "ms": [1.0], "flags": [0]},  # no such entry point
            {"t": "calls", "id": 0, "first": 31, "ms": [1.0, 2.0], "flags": [0]},  # lengths differ
            {"t": "who knows"},
            {"t": "break", "id": 0, "gb": "not a dict"},
        ),
    )
    run = fold_run(raw, STANCE_COMPILED)
    assert run.unreadable == 4 and run.finished and len(next(iter(run.entries.values())).ms) == 31
    assert any("4 event line(s) of the compiled run could not be read" in w for w in compared(raw, None).warnings())


def test_a_run_that_crashed_before_its_end_event_says_so():
    raw = events(50.0, [1.0] * 10)
    raw.events = raw.events[:-1]
    raw.exit_code = -9
    result = compared(raw, None)
    assert "the process ended without a word (exit code -9)" in "\n".join(summary_lines(result))


def test_pairs_are_pooled_and_runs_that_put_different_sides_ahead_cannot_tell():
    rng = np.random.default_rng(6)

    def pair(c_ms, e_ms):
        return fold_run(events(50.0, noisy(c_ms, 200, rng)), STANCE_COMPILED), fold_run(
            events(3.0, noisy(e_ms, 200, rng)), STANCE_EAGER
        )

    (c1, e1), (c2, e2) = pair(1.0, 2.0), pair(2.0, 1.0)
    split = result_from_runs("/w/train.py", (), False, "/w", (), c1, e1, [(c2, e2)])
    (f,) = split.functions
    assert f.runs == 2 and [round(v, 1) for v in f.pair_speedups] == [2.0, 0.5]
    assert f.grade.grade == q.UNUSABLE and "the runs disagree (speedups 0.50x to" in f.grade.reason
    assert f.verdict == CANNOT_TELL
    (c3, e3) = pair(1.0, 1.6)
    agree = result_from_runs("/w/train.py", (), False, "/w", (), c1, e1, [(c3, e3)])
    (g,) = agree.functions
    assert g.grade.grade == q.NOISY and "all on one side" in g.grade.reason and g.verdict == FASTER
    assert "2 run pairs pooled; each pair's speedup: " in "\n".join(summary_lines(agree))
    assert "calls vary" not in g.grade.reason  # each run's calls are steady; only the runs differ


def test_the_loops_iteration_around_the_calls_is_timed_on_both_sides():
    """A training loop: the compiled forward is 2x faster, but the backward and optimizer step
    between calls (8 ms, the same on both sides) make the iteration only 1.2x faster."""
    rng = np.random.default_rng(7)
    compiled = events(500.0, noisy(2.0, 300, rng), between=noisy(8.0, 300, rng))
    eager = events(5.0, noisy(4.0, 300, rng), between=noisy(8.0, 300, rng))
    (f,) = compared(compiled, eager).functions
    it = f.iteration
    assert f.verdict == FASTER and 1.9 < f.speedup.value < 2.1
    assert it.verdict == FASTER and abs(it.compiled_ms - 10.0) < 0.3 and abs(it.eager_ms - 12.0) < 0.3
    assert 1.15 < it.speedup.value < 1.25 and it.speedup.ci_low > 1
    line = f.iteration_line()
    assert line.startswith("per iteration (from a call's start to the next call's") and "faster: 1.2" in line
    assert "the call is 20% of a compiled iteration, 33% of an eager iteration" in line
    assert line in "\n".join(summary_lines(compared(compiled, eager)))
    # of 301 calls: the first call's iteration (it compiled) is set apart, the last has no next call
    assert f.compiled.steady_iterations().size == 299


def test_no_iteration_without_the_calls_starts_and_damaged_starts_are_counted():
    rng = np.random.default_rng(8)
    (f,) = compared(events(50.0, noisy(1.0, 30, rng)), events(3.0, noisy(2.0, 30, rng))).functions
    assert f.iteration is None and f.iteration_line() == ""  # a report from before they were recorded
    raw = events(
        50.0,
        [1.0] * 30,
        between=[1.0] * 30,
        extra=({"t": "calls", "id": 0, "first": 31, "ms": [1.0], "flags": [0], "at": [1, 2]},),
    )
    run = fold_run(raw, STANCE_COMPILED)
    (entry,) = run.entries.values()
    assert run.unreadable == 1 and len(entry.at) == len(entry.ms) == 31


def test_the_pay_back_counts_what_compiled_between_calls_where_the_iteration_is_timed():
    """torch compiles a compiled forward's backward in the first loss.backward(), between the
    first call and the next: 1.9 s that the first call's extra time left out (measured on a
    real training loop). The pay-back rests on the first iterations and the iteration's saving."""
    rng = np.random.default_rng(9)
    between_c = [1900.0 + 8.0] + noisy(8.0, 300, rng)[1:]  # the first gap holds the backward's compile
    compiled = events(1000.0, noisy(2.0, 300, rng), between=between_c)
    eager = events(5.0, noisy(4.0, 300, rng), between=noisy(8.0, 300, rng))
    (f,) = compared(compiled, eager).functions
    assert abs(f.first_calls_extra_s - 0.997) < 0.01  # the call alone
    assert abs(f.first_iterations_extra_s - 2.897) < 0.02 and f.by_iteration
    # 2.9 s over 2 ms saved an iteration: about 1,450 iterations, more than the run's 301
    assert 1400 < f.payback_calls < 1500
    line = f.payback_line()
    assert line.startswith(
        f"not paid back within this run: at this speedup it would need {f.payback_calls:,} iterations"
    )
    assert "1.9 s of it between calls (what ran there for the first time: torch compiles a compiled forward's" in line
    assert f.payback_cell() == f"not in this run (needs {f.payback_calls:,} of 301 iterations)"


def two_functions(model_ms: list[float], loss_ms: list[float], gap: float) -> ScriptEvents:
    """A training step calling a compiled model, then a compiled loss 0.1 ms after the model's
    end, then `gap` ms of the rest of the step (backward, optimizer)."""
    model_at, loss_at, t = [], [], 0.0
    for m, loss in zip(model_ms, loss_ms):
        model_at.append(t)
        loss_at.append(t + m + 0.1)
        t += m + 0.1 + loss + gap
    flags = [FLAG_NEW_SHAPE | FLAG_COMPILED] + [0] * (len(model_ms) - 1)
    ev = [
        {"t": "entry", "id": 0, "name": "model", "file": "/w/train.py", "line": 5, "kind": "module"},
        {"t": "entry", "id": 1, "name": "loss_fn", "file": "/w/train.py", "line": 6, "kind": "function"},
        {"t": "calls", "id": 0, "first": 0, "ms": model_ms, "flags": flags, "at": model_at},
        {"t": "calls", "id": 1, "first": 0, "ms": loss_ms, "flags": flags, "at": loss_at},
        {"t": "end", "exit": 0, "error": "", "wall_s": 3.0},
    ]
    return ScriptEvents(events=ev, exit_code=0, others_cores=[0.0] * 4)


def test_another_functions_compile_inside_an_iteration_is_its_own_and_a_loop_of_only_calls_has_none():
    """model and loss_fn both compiled: the loss's first call (its compile) falls inside the
    model's first iteration; it is the loss's to pay back. And where the call is nearly all of
    its iteration (an inference loop), the iteration adds nothing and is not said."""
    rng = np.random.default_rng(12)
    n = 200
    compiled = two_functions([900.0] + noisy(2.0, n, rng), [700.0] + noisy(0.5, n, rng), 6.0)
    eager = two_functions([3.0] + noisy(3.0, n, rng), [1.0] + noisy(1.0, n, rng), 6.0)
    model = next(f for f in compared(compiled, eager).functions if f.name == "model")
    # the model's first iteration: its own 898 ms extra, not the loss's 700 ms compile inside it
    # (less eager's: its first iteration no longer than its steady ones)
    assert model.iteration is not None and model.first_iterations_extra_s is not None
    assert abs(model.first_iterations_extra_s - 0.898) < 0.02, model.first_iterations_extra_s
    # an inference loop: the call is all of its iteration
    only = compared(
        events(50.0, noisy(2.0, 100, rng), between=[0.01] * 100),
        events(3.0, noisy(4.0, 100, rng), between=[0.01] * 100),
    )
    assert only.functions[0].iteration is None and only.functions[0].iteration_line() == ""


def test_starts_that_are_not_times_are_left_out():
    rng = np.random.default_rng(13)
    raw = events(50.0, noisy(1.0, 30, rng), between=[5.0] * 30)
    raw.events[2]["at"][5] = float("nan")
    entry = next(iter(fold_run(raw, STANCE_COMPILED).entries.values()))
    gaps = entry.steady_iterations()
    assert gaps.size == 27 and np.isfinite(gaps).all()  # 29 steady gaps, the two around the damaged start gone
    assert np.isfinite(entry.first_iterations()).all()
