"""A new run's charts start from empty axes (issue 44, item 7): the distribution chart kept the
last run's view, bins' range and tallest count (the next run's histograms were binned over the
old range, its count axis held at the old top), and the sweep chart's empty plot kept the last
sweep's range and log axis."""

from __future__ import annotations

import dataclasses

from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab import records as rec
from gui.charts.distribution import DistributionChart
from gui.charts.latency import LatencyChart
from gui.charts.sweep import SweepChart
from tests.gui.helpers import fake_spec, fake_sweep_result


def _calls(chart, result: JobResult, n: int, ms: float, live: bool = True) -> None:
    for i in range(n):
        batch = tuple(rec.LatencySample(side, i, ms + (i % 5) * ms / 15, False) for side in ("eager", "compiled"))
        result.apply(ev.LatencyMeasured(result.job_id, samples=batch))
        if isinstance(chart, DistributionChart):
            chart._on_samples_added(result.job_id, batch)
        else:
            chart.add_samples(result.job_id, batch, live=live)


def test_the_distribution_of_a_new_run_forgets_the_last_runs_range_and_counts(qtbot):
    chart = DistributionChart()
    qtbot.addWidget(chart)
    chart.resize(700, 300)
    chart.show()
    first = JobResult(fake_spec("a", "inductor", 400))
    chart.reset([first])
    _calls(chart, first, 400, 300.0)
    chart._on_redraw()
    (x0, _), (_, top) = chart.plot.viewRange()
    assert x0 > 250 and top >= 80  # the first run: around 300 ms, ~80 calls a bin
    second = JobResult(fake_spec("b", "eager", 20))
    chart.reset([second])  # a new run: nothing measured yet
    (x0, x1), (y0, y1) = chart.plot.viewRange()
    assert x1 < 250 and y1 < 80, chart.plot.viewRange()  # not the last run's axes
    _calls(chart, second, 20, 2.0)
    chart._on_redraw()
    (x0, x1), (_, top) = chart.plot.viewRange()
    assert 1 < x0 and x1 < 4 and top <= 10, chart.plot.viewRange()  # binned and held on its own calls


def test_an_empty_sweep_chart_forgets_the_last_sweeps_axes(qtbot):
    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.resize(700, 300)
    chart.show()
    result = fake_sweep_result()
    # a sweep whose latencies span more than 10x: a log axis
    result.variants = [
        dataclasses.replace(v, eager_ms=tuple(m * 100 for m in v.eager_ms)) if v.index == 3 else v
        for v in result.variants
    ]
    chart.reset([result])
    assert chart.log_box.isChecked()
    chart.reset([])
    assert not chart.log_box.isChecked()
    assert chart.plot.viewRange() == [[0.0, 1.0], [0.0, 1.0]]
    assert chart.plot.getAxis("bottom").labelText == "variant"


def test_a_new_run_on_the_latency_chart_forgets_a_zoom_of_the_last_one(qtbot):
    """(It did already: a guard for its reset, now LiveRange.forget as the others.)"""
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(700, 300)
    chart.show()
    first = JobResult(fake_spec("a", "inductor", 200))
    chart.reset([])
    chart.add_job(first.spec, 0)
    _calls(chart, first, 200, 300.0)
    qtbot.waitUntil(lambda: chart.drawn_count("a", "compiled") == 200)
    chart.plot.getViewBox().sigRangeChangedManually.emit([True, True])  # the user zoomed
    chart.plot.setRange(xRange=(50, 60), yRange=(290, 300), padding=0)
    second = JobResult(fake_spec("b", "eager", 20))
    chart.reset([])
    assert chart.plot.viewRange() == [[-1.0, 10.0], [0.0, 1.0]]
    chart.add_job(second.spec, 0)
    _calls(chart, second, 20, 2.0)
    qtbot.waitUntil(lambda: chart.drawn_count("b", "compiled") == 20)
    (x0, x1), (y0, y1) = chart.plot.viewRange()
    assert x1 < 50 and y1 < 10, chart.plot.viewRange()  # the new run's calls, not the old zoom
