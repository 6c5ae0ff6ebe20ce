"""The timed medians against the profiled calls (issue 19 item 11): resnet18 on a busy machine
was profiled at 16 ms eager and 25 ms compiled while its timed medians were 283 / 259 ms, and
nothing said so."""

from __future__ import annotations

from core.analysis.figure_agreement import figures_disagree


def test_the_reported_figures_are_flagged_both_ways():
    problems = figures_disagree(283.0, 259.0, 16.0, 25.0)
    assert len(problems) == 3
    assert problems[0].startswith("the eager timed median (283 ms) is 17.7× the eager profiled call (16.00 ms)")
    assert "compiled timed median (259 ms) is 10.4×" in problems[1]
    assert problems[2] == "the timed calls say compiled is 1.09× faster, the profiled calls that it is 1.56× slower"


def test_the_profilers_own_slowdown_is_no_disagreement():
    assert figures_disagree(10.0, 5.0, 14.0, 8.0) == []  # profiled slower, same direction
    assert figures_disagree(10.0, 9.8, 10.5, 10.6) == []  # both within the noise of 1×
    assert figures_disagree(10.0, 5.0, None, 8.0) == [] and figures_disagree(0.0, 5.0, 1.0, 1.0) == []


def test_a_speedup_that_is_not_the_pooled_medians_ratio_says_why():
    """The reported row: eager 118.6 ms, compiled 30.1 ms, speedup 1.68x (three processes at
    different speeds): a reader divided the medians and distrusted the tool."""
    from core.analysis.figure_agreement import medians_note
    from core.cli.output import config_lines
    from tests.core.fakes import fake_result

    note = medians_note({"eager_median_ms": 118.6, "compiled_median_ms": 30.1, "speedup": 1.68})
    assert "combines each process's own eager/compiled ratio" in note and "= 3.94x" in note
    assert medians_note({"eager_median_ms": 10.0, "compiled_median_ms": 5.0, "speedup": 2.05}) == ""
    # three processes whose compiled side ran at very different speeds: the pooled ratio is not the speedup
    r = fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, processes={1: 2.0, 2: 9.0})
    s = r.summary()
    lines = "\n".join(config_lines(r, s))
    assert abs(s["eager_median_ms"] / s["compiled_median_ms"] / s["speedup"] - 1) > 0.10
    assert "(the speedup (2.23x) combines each process's own eager/compiled ratio" in lines
