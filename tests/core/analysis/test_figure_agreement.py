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
