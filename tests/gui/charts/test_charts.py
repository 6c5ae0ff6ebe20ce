"""Charts: every sample kept, redraws throttled, smooth with 8 configs × 10,000 points;
resource panel and distribution fed from results; no empty GPU charts without a GPU."""

from __future__ import annotations

import time

import pytest

from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from gui.charts.distribution import DistributionChart
from gui.charts.latency import LatencyChart
from gui.panels.resources import ResourcePanel
from tests.gui.helpers import fake_result


def test_latency_chart_keeps_every_sample_and_throttles_redraws(qtbot):
    chart = LatencyChart()
    chart.resize(1000, 500)
    qtbot.addWidget(chart)
    chart.show()
    specs = [
        JobSpec(f"j{i}", ModelSpec("resnet18"), CompileConfig(backend=f"b{i}"), warmup=3, iters=10_000)
        for i in range(8)
    ]
    chart.reset([])
    for i, spec in enumerate(specs):
        chart.add_job(spec, i)
    start = time.perf_counter()
    for chunk in range(100):  # 100 batches of 100 calls per side per job, as the runner sends them
        for spec in specs:
            samples = tuple(
                s
                for it in range(chunk * 100, chunk * 100 + 100)
                for s in (rec.LatencySample("eager", it, 5.0 + it % 7), rec.LatencySample("compiled", it, 3.0 + it % 5))
            )
            chart.add_samples(spec.job_id, samples)
        qtbot.wait(1)
    add_s = time.perf_counter() - start
    qtbot.waitUntil(lambda: chart.drawn_count("j7", "compiled") == 10_000, timeout=5000)
    for spec in specs:
        for phase in ("eager", "compiled"):
            assert chart.point_count(spec.job_id, phase) == 10_000  # never dropped
    # 100 batches arrived in ~add_s seconds; the chart redraws on its ~15 Hz timer, not per batch
    assert 1 <= chart.redraw_count < 100
    assert chart.redraw_count <= add_s * 20 + 3
    # How long a full redraw takes is a benchmark figure (tests/gui/heartbeat.py), not asserted here.


def test_latency_curves_draw_one_peak_bin_a_pixel_and_keep_every_extreme(qtbot):
    """10,000 calls in a plot ~900 pixels wide: what is drawn is about two points (a bin's min
    and max) a pixel, not every call (pyqtgraph's default downsamples only past 5 points a
    pixel, and drawing the paths was most of a frame); the slowest and fastest calls are drawn."""
    import numpy as np

    chart = LatencyChart()
    chart.resize(1000, 400)
    qtbot.addWidget(chart)
    chart.show()
    from tests.core.fakes import fake_result as timed_result

    result = timed_result("inductor", eager_ms=10.0, compiled_ms=5.0, n=10_000)
    chart.reset([result])
    chart.grab()  # a paint: the view's size and range are known
    width = chart.plot.getViewBox().width()
    for side in ("eager", "compiled"):
        curve = chart._series[(result.job_id, side)].curve
        drawn_x, drawn_y = curve.getData()
        y = curve.yData
        assert len(y) == 10_000
        assert width < len(drawn_x) <= 2 * width + 4  # a bin's min and max a pixel
        assert float(np.max(drawn_y)) == float(np.max(y)) and float(np.min(drawn_y)) == float(np.min(y))


def test_compile_is_marked_not_plotted(qtbot):
    chart = LatencyChart()
    qtbot.addWidget(chart)
    result = fake_result()
    chart.reset([result])
    assert "j" not in chart._markers and result.job_id in chart._markers
    marker = chart._markers[result.job_id]
    assert "0.50 s" in marker.label.toPlainText()
    # warm-up calls sit before iteration 0; the compile marker before them
    assert chart.point_count(result.job_id, "eager") == 22
    assert marker.value() < -2
    chart.log_box.setChecked(True)
    chart.warmup_box.setChecked(False)
    assert chart.drawn_count(result.job_id, "eager") == 20


def test_five_compile_markers_in_a_short_chart_keep_their_labels_apart(qtbot):
    """A report of 5 configs opened under a long banner left the chart ~150 px tall; the labels
    sat 0.07 of it apart (10 px) and overwrote each other. Now a text line apart at least, also
    after the chart is resized."""
    from gui.charts.latency import marker_label_positions

    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 210)
    chart.show()
    backends = ("eager", "aot_eager", "inductor", "aot_eager_decomp_partition", "aot_eager_default_partitioner")
    chart.reset([fake_result(f"j{i}", backend=b) for i, b in enumerate(backends)])
    qtbot.waitUntil(lambda: chart.plot.getViewBox().height() > 0)

    def overlapping() -> list:
        """Pairs of labels whose text lines overlap (the items' rects less the text's margins)."""
        rects = []
        for marker in chart._markers.values():
            margin = marker.label.textItem.document().documentMargin()
            rects.append(marker.label.sceneBoundingRect().adjusted(0, margin, 0, -margin))
        return [(a, b) for i, a in enumerate(rects) for b in rects[i + 1 :] if a.intersects(b)]

    assert chart.plot.getViewBox().height() < 160 and len(chart._markers) == 5
    qtbot.waitUntil(lambda: not overlapping())  # once laid out; before the change they stayed 10 px apart
    chart.resize(900, 300)
    qtbot.waitUntil(lambda: chart.plot.getViewBox().height() > 160)
    qtbot.waitUntil(lambda: not overlapping())
    assert marker_label_positions(3, 1000, 14)[0] == pytest.approx([0.92, 0.85, 0.78])  # tall: the old steps
    assert marker_label_positions(3, 0, 14) == (pytest.approx([0.92, 0.85, 0.78]), None)
    places, more = marker_label_positions(20, 100, 14)  # 6 lines fit: 5 labels and "+15 more"
    assert places[:5] == pytest.approx([0.92 - 0.16 * k for k in range(5)]) and places[5:] == [None] * 15
    assert more == pytest.approx(0.92 - 0.16 * 5)


def test_eleven_configs_in_a_short_chart_stay_readable(qtbot):
    """A report of 11 configs: the compile labels past the view's height wrapped to the top and
    overwrote the first ones, the legend ran below the chart, and the header took three lines.
    Now the labels that fit, one line counting the rest; a legend that fits, its last line
    counting the rest; text on a backdrop over the curves; the header counts the configs."""
    from PySide6.QtCore import Qt

    from gui.charts.latency import CROWDED_CONFIGS, more_compiles_text, more_configs_text
    from gui.panels.results_header import ResultsHeader

    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 210)
    chart.show()
    results = [fake_result(f"j{i}", backend=f"backend_{i}") for i in range(11)]
    chart.reset(results)
    qtbot.waitUntil(lambda: chart.plot.getViewBox().height() > 0)

    def layout() -> tuple[list, list]:
        shown = [m.label for m in chart._markers.values() if m.label.isVisible()]
        if chart._more is not None and chart._more.isVisible():
            shown.append(chart._more.label)
        rects = []
        for label in shown:
            margin = label.textItem.document().documentMargin()
            rects.append(label.sceneBoundingRect().adjusted(0, margin, 0, -margin))
        overlaps = [(a, b) for i, a in enumerate(rects) for b in rects[i + 1 :] if a.intersects(b)]
        return shown, overlaps

    qtbot.waitUntil(lambda: layout()[0] and not layout()[1])
    view = chart.plot.getViewBox().sceneBoundingRect()
    shown, _ = layout()
    assert all(view.top() - 1 <= label.sceneBoundingRect().center().y() <= view.bottom() for label in shown)
    hidden = sum(not m.label.isVisible() for m in chart._markers.values())
    assert hidden > 0 and len(shown) == 11 - hidden + 1
    assert chart._more.label.textItem.toPlainText() == more_compiles_text(hidden)
    names = [label.text for _, label in chart.legend.items]
    assert len(names) < 11 and names[-1] == more_configs_text(11 - len(names) + 1)
    assert names[:-1] == [r.config.label for r in results[: len(names) - 1]]
    assert chart.legend.boundingRect().height() <= chart.plot.getViewBox().height()
    no_brush = Qt.BrushStyle.NoBrush
    assert len(results) > CROWDED_CONFIGS
    assert chart.legend.opts["brush"].style() != no_brush and shown[0].fill.style() != no_brush
    chart.resize(900, 600)  # taller: every label and legend entry fits again
    qtbot.waitUntil(lambda: all(m.label.isVisible() for m in chart._markers.values()))
    qtbot.waitUntil(lambda: len(chart.legend.items) == 11)
    assert not chart._more.isVisible()
    qtbot.waitUntil(lambda: not layout()[1])  # once laid out in the taller view
    chart.reset(results[:2])  # a few configs: the curves show through the legend, no backdrop
    assert chart.legend.opts["brush"].style() == no_brush
    # but the compile labels, among the curves, keep theirs (a second config's label was unreadable)
    assert chart._markers and all(m.label.fill.style() != no_brush for m in chart._markers.values())

    header = ResultsHeader()
    qtbot.addWidget(header)
    header.set_results(results)
    assert "11 configs: backend_0, backend_1, backend_2, backend_3, …" in header.title.text()
    assert "backend_10" in header.title.toolTip()


def test_distribution_and_resources_from_results(qtbot):
    results = [fake_result("a"), fake_result("b", backend="aot_eager")]
    dist = DistributionChart()
    qtbot.addWidget(dist)
    dist.reset(results)
    assert len(dist._curves) == 4  # eager and compiled per config
    curves = dict(dist._curves)
    results[0].apply(ev.LatencyMeasured("a", samples=(rec.LatencySample("compiled", 99, 1.05),)))
    dist._on_redraw()
    assert dist._curves == curves  # the same items, given new data (not recreated)
    assert sum(dist._curves[("a", "compiled")].getData()[1]) == len(results[0].latencies("compiled"))
    panel = ResourcePanel()
    qtbot.addWidget(panel)
    panel.set_gpu(False, "no GPU (LibraryNotFound)")
    panel.reset(results)
    assert "No GPU charts" in panel.gpu_note.text() and panel.gpu_util_plot is None
    assert len(panel._tracks) == 4  # cpu and rss per job
    assert len(panel._bars) == 3  # eager, compile, compiled peaks
    # the second job follows the first on one time axis
    assert panel._tracks[("b", "cpu")].data.x[0] > panel._tracks[("a", "cpu")].data.x[-1]


def test_log_axis_labels_plain_numbers_without_crowding():
    import math

    from gui.charts.axes import LogAxis, log_labels

    decade = [math.log10(m * 10) for m in range(1, 10)]  # 10, 20, ..., 90
    assert log_labels(decade) == ["10", "20", "", "", "50", "", "", "", ""]
    wide = [math.log10(m * 10**d) for d in range(-1, 4) for m in (1, 2, 5)]  # five decades: decades only
    assert [x for x in log_labels(wide) if x] == ["0.1", "1", "10", "100", "1,000"]
    assert log_labels([math.log10(0.05), 6.0]) == ["0.05", "1e6"]
    axis = LogAxis("left")
    assert axis.tickStrings([1.0, 2.0], 1.0, 1.0) == ["1", "2"]  # linear mode: pyqtgraph's own
    axis.setLogMode(False, True)
    assert axis.tickStrings([1.0, 2.0], 1.0, 1.0) == ["10", "100"]


def test_log_axis_labels_survive_positions_no_float_holds():
    import math

    from gui.charts.axes import log_labels

    # a linear range of 400 ms read as log10: 10^400 overflows a float (issue 19, item 5)
    assert log_labels([400.0, 401.0]) == ["1e400", "1e401"]
    assert log_labels([-400.0]) == ["1e-400"]
    assert log_labels([math.inf, math.nan, -math.inf, 1.0]) == ["", "", "", "10"]


def _timed_result(job_id: str, ms: float | None, status_event=None):
    from core.analysis.results import JobResult

    r = JobResult(JobSpec(job_id, ModelSpec("model.py"), CompileConfig(backend="eager"), warmup=0))
    r.apply(ev.JobStarted(job_id, pid=1))
    if ms is not None:
        samples = tuple(rec.LatencySample(side, i, ms) for i in range(20) for side in ("eager", "compiled"))
        r.apply(ev.LatencyMeasured(job_id, samples=samples))
        r.apply(ev.CompileFinished(job_id, result=rec.CompileResult(1.0)))
    r.apply(status_event or ev.JobCompleted(job_id, wall_time_s=1.0))
    return r


def test_every_chart_survives_empty_failed_and_mixed_results_in_both_axis_modes(qtbot):
    """A zoo member's report (slow calls: a 2,500 ms range), then a model file that fails, then
    Ctrl+L: the axis kept its labels and nothing raised (pytest-qt fails on an exception in
    paint). Then every other state, drawn in both modes."""
    from gui.charts.sweep import SweepChart

    failed = _timed_result("failed", None, ev.JobFailed("failed", reason="model file: SyntaxError", phase="load"))
    slow = _timed_result("slow", 2500.0)
    chart = LatencyChart()
    chart.resize(700, 400)
    qtbot.addWidget(chart)
    chart.show()
    for results in ([slow], [failed]):
        chart.reset(results)
        chart.grab()
    chart.set_log(True)
    chart.grab()
    low, high = chart.plot.viewRange()[1]
    assert high < 10, "an empty chart in log mode shows a small default range, not 10^2500"
    labels = [s for _, strings in chart.plot.getAxis("left").tickValues(low, high, 300) for s in strings]
    assert labels
    sweep = SweepChart()
    sweep.resize(700, 400)
    qtbot.addWidget(sweep)
    sweep.show()
    for log in (True, False, True):
        chart.set_log(log)
        sweep.log_box.setChecked(log)
        for results in ([], [failed], [slow, failed], [failed, _timed_result("fast", 0.02)], []):
            chart.reset(results)
            sweep.reset(results)
            chart.grab()
            sweep.grab()


def test_a_reports_processes_follow_one_another_on_the_latency_chart(qtbot):
    """A job timed in 3 processes, shown at once (a report opened, the window's reset): each
    further process's calls continue after the last process's, as during a run (every process
    was drawn from iteration 0, and the curve's line then ran back across the chart)."""
    import numpy as np

    from core.analysis.results import JobResult

    spec = JobSpec("j3", ModelSpec("resnet18"), CompileConfig(), warmup=2, iters=10, processes=3)
    result = JobResult(spec)
    samples = tuple(
        rec.LatencySample(side, i, 10.0 + p + i * 0.01, warmup, p)
        for p in range(3)
        for side in ("eager", "compiled")
        for warmup, count in ((True, 2), (False, 10))
        for i in range(count)
    )
    result.apply(ev.LatencyMeasured("j3", samples=samples))
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.reset([result])
    for side in ("eager", "compiled"):
        x = chart._series[("j3", side)].data.x
        assert list(x[:2]) == [-2.0, -1.0]  # the first process's warm-up only, before iteration 0
        assert np.all(np.diff(x) > 0) and list(x[2:]) == [float(i) for i in range(30)]


def ranges_y_top(chart) -> float:
    return chart.plot.viewRange()[1][1]


def _live_latency_chart(qtbot, warmup: int):
    """A shown latency chart with one live job of 60 planned calls a side."""
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 400)
    chart.show()
    spec = JobSpec("live", ModelSpec("resnet18"), CompileConfig(), warmup=warmup, iters=60)
    chart.reset([])
    chart.add_job(spec, 0)
    return chart, spec


def test_a_live_charts_range_moves_in_round_steps_and_a_report_is_fitted(qtbot):
    """While calls stream in, the latency chart's view range moves only when the data passes a
    round step (each range change rebuilt both axes' ticks: most of a paint during a run): the
    iteration axis ends at the run's planned last call from the first redraw, the latency axis
    moves in round steps of its span; every call stays in view; a whole set of results is
    fitted to its data."""
    from core.analysis.results import JobResult

    chart, spec = _live_latency_chart(qtbot, warmup=2)
    ranges = set()
    for i in range(60):
        batch = tuple(rec.LatencySample(side, i, 30.0 + (i % 7) * 0.5, False) for side in ("eager", "compiled"))
        chart.add_samples("live", batch)
        chart._on_redraw()
        chart.plot.vb.updateAutoRange()
        (x0, x1), (y0, y1) = chart.plot.viewRange()
        assert x1 >= i and y0 <= 30.0 and y1 >= 30.0 + (i % 7) * 0.5  # every call in view
        ranges.add((round(x0, 6), round(x1, 6), round(y0, 6), round(y1, 6)))
    # 60 redraws, each growing the data (60 ranges before); now the x end is the 60th call from
    # the start, and the latency range moves when a new slowest call passes a step (30 to 33 ms)
    assert len({r[:2] for r in ranges}) == 1 and min(r[1] for r in ranges) >= 59, sorted(ranges)[:3]
    assert len(ranges) <= 8, len(ranges)
    assert ranges_y_top(chart) < 33.5  # the latency axis stays near the data's own: curves keep the height

    result = JobResult(spec)
    result.apply(
        ev.LatencyMeasured("live", samples=tuple(rec.LatencySample("eager", i, 30.0, False) for i in range(60)))
    )
    chart.reset([result])
    chart.plot.vb.updateAutoRange()
    assert not chart._range.managing  # a report: pyqtgraph fits it
    assert chart.plot.viewRange()[0][1] < 62  # fitted to its 60 calls, not held out to a round 80


def test_round_bounds():
    from gui.charts.buffers import nice_bound

    assert [nice_bound(v, up=True) for v in (31, 60, 61, 0.033, 1.0, 999)] == [40, 60, 80, 0.04, 1.0, 1000]
    assert [nice_bound(v, up=False) for v in (31, 25, 0.033, 9.99)] == [30, 25, 0.03, 8]
    assert nice_bound(-1.0, up=True) == -1.0 and nice_bound(0.0, up=True) == 0.0


def test_ranges_round_out_by_a_step_of_their_span():
    """round_out: the ends move out to a 1, 2 or 5 step of about a 20th of the span, so a narrow
    range keeps the chart (30.0-30.8 ms stays itself; nice_bound would have made it 30-40)."""
    from pytest import approx

    from gui.charts.buffers import round_out

    assert round_out(4.39, 10.69) == approx((4.0, 11.0))  # span 6.3: steps of 0.5
    assert round_out(30.01, 30.79) == approx((30.0, 30.8))  # span 0.78: steps of 0.05
    assert round_out(4.4, 10.6) == round_out(4.3, 10.7)  # a new extreme within the step: no move
    assert round_out(0.01, 10.0) == approx((0.01, 10.0))  # a positive range stays positive
    low, high = round_out(0.05, 500.0, log=True)  # decades: steps of 0.2 in log10
    assert 0 < low <= 0.05 and high >= 500 and high / low < 10**4.5
    assert round_out(5.0, 5.0) == (5.0, 5.0) and round_out(0.0, 1.0, log=True) == (0.0, 1.0)


def test_a_live_histograms_range_holds_between_round_numbers(qtbot):
    """The distribution chart while a run's calls come: the tallest bar grows at every redraw,
    and the view (so both axes' ticks) moves only when it passes a round number."""
    from core.analysis.results import JobResult

    spec = JobSpec("live", ModelSpec("resnet18"), CompileConfig(), warmup=0, iters=400)
    result = JobResult(spec)
    chart = DistributionChart()
    qtbot.addWidget(chart)
    chart.reset([result])
    tops, ranges = set(), set()
    for i in range(400):
        batch = tuple(rec.LatencySample(side, i, 30.0 + (i % 5) * 0.2, False) for side in ("eager", "compiled"))
        result.apply(ev.LatencyMeasured("live", samples=batch))
        chart._on_samples_added("live", batch)
        chart._on_redraw()
        chart.plot.vb.updateAutoRange()
        (x0, x1), (_, top) = chart.plot.viewRange()
        assert top >= max(float(max(c.yData)) for c in chart._curves.values())  # every bar in view
        tops.add(round(top, 6))
        ranges.add((round(x0, 6), round(x1, 6), round(top, 6)))
    # the tallest bar grew from 1 to 80 calls in 400 redraws: 80 view ranges before, 28 with
    # round numbers (each change followed by a second one, pyqtgraph's pixel padding), 17 tops
    # and 20 ranges once the held range only grew (the bins regrouping the calls as they come
    # made the tallest bar shrink and grow again), 12 tops and 15 ranges with the coarser steps
    # (1, 1.5, 2, 3, 4, 6: each new top rebuilt the count axis; 1, 2, 5 made 7, but left the
    # tallest bar at 40-50% of the chart's height); the bins' range grew thrice with the first calls
    assert len(tops) <= 12 and len(ranges) <= 15, (len(tops), len(ranges))
    assert chart._range.changes == len(ranges)  # one view set per range, none a paint later
    result.apply(ev.JobCompleted("live"))
    chart.refresh([result], "live", ended=True)
    chart._on_redraw()
    chart.plot.vb.updateAutoRange()
    assert chart.plot.viewRange()[1][1] < 85  # every job ended: fitted to the tallest bar (80), not held


def test_a_live_histogram_bins_on_its_held_range_and_redraws_only_the_running_job(qtbot):
    """While a job's calls come, the bins span the chart's held range (growing in round steps), so
    an ended job's counts stay and its curves are not given data again (each setData makes a
    curve's paths and bounds anew: most of a paint, python -m tests.bench charts); once every job
    has ended the bins are the 1st to 99th percentile of all calls again, as in a report."""
    import numpy as np

    from core.analysis.results import JobResult
    from core.analysis.stats import histograms

    done = fake_result("done", n=2000)  # with the running job's, over 3,600 calls: 60 bins from the start
    running = JobResult(JobSpec("live", ModelSpec("resnet18"), CompileConfig(), warmup=0, iters=300))
    chart = DistributionChart()
    qtbot.addWidget(chart)
    chart.reset([done, running])
    given, held = [], {}  # the curves given data at a redraw; each curve's data after it
    rng = np.random.default_rng(3)
    bins = set()
    for i in range(300):
        batch = tuple(
            rec.LatencySample(side, i, float(ms * (1 + 0.02 * rng.standard_normal())), False)
            for side, ms in (("eager", 10.0), ("compiled", 5.0))
        )
        running.apply(ev.LatencyMeasured("live", samples=batch))
        chart._on_samples_added("live", batch)
        chart._on_redraw()
        bins.add(tuple(chart._curves[("live", "compiled")].xData))
        given += [key for key, curve in chart._curves.items() if held.get(key) is not curve.yData]
        held = {key: curve.yData for key, curve in chart._curves.items()}
    edges = chart._curves[("live", "compiled")].xData
    low, high = chart._held_bins.low, chart._held_bins.high
    assert (edges[0], edges[-1]) == (low, high)  # the held range, round numbers
    assert "rounded out while calls come" in chart.title.text()
    # the ended job's curves were given data only when the bins moved (from the reset's, then the held
    # range grew)
    assert given.count((done.job_id, "compiled")) == given.count((done.job_id, "eager")) == len(bins) < 15
    # the running job's at nearly every redraw (a call outside the held range leaves its counts as they were)
    assert given.count(("live", "compiled")) >= 250
    running.apply(ev.JobCompleted("live"))
    chart.refresh([done, running], "live", ended=True)
    chart._on_redraw()
    exact = histograms({(r.job_id, s): r.latencies(s) for r in (done, running) for s in ("eager", "compiled")})
    assert np.array_equal(chart._curves[("live", "compiled")].xData, exact.edges)
    for key, counts in exact.counts.items():
        assert np.array_equal(chart._curves[key].yData, counts)
    assert "rounded out" not in chart.title.text()


def test_a_users_zoom_during_a_run_stays_until_they_ask_for_auto_range(qtbot):
    """While live the chart sets its view itself (gui.charts.live_range); a user who zooms keeps
    their view as the calls come, and pyqtgraph's "A" (auto-range) hands it back to the chart."""
    chart, _ = _live_latency_chart(qtbot, warmup=0)

    def calls(i):
        chart.add_samples("live", tuple(rec.LatencySample(s, i, 30.0 + i, False) for s in ("eager", "compiled")))
        chart._on_redraw()

    calls(0)
    box = chart.plot.vb
    box.setRange(xRange=(0, 5), yRange=(29, 31), padding=0)  # the user's zoom (a mouse wheel, a drag)
    box.sigRangeChangedManually.emit([True, True])
    for i in range(1, 10):
        calls(i)
    (x0, x1), (y0, y1) = chart.plot.viewRange()
    assert (x0, x1, y0, y1) == pytest.approx((0, 5, 29, 31))
    box.enableAutoRange()  # the "A" button
    calls(10)
    (_, x1), (_, y1) = chart.plot.viewRange()
    assert x1 >= 59 and y1 >= 40  # the chart follows the run again: its 60 calls, the slowest in view


def test_a_live_ranges_narrower_labels_keep_the_axis_width_so_the_view_is_not_resized(qtbot):
    """A live range whose value labels are narrower than before ("0.5" after "1000") kept the
    axis as wide: a narrower axis resized the view, and pyqtgraph rebuilt all four axes and moved
    every item again (a range change's paint 12 ms instead of 8). Wider labels still widen it."""
    import pyqtgraph as pg

    from gui.charts.live_range import LiveRange

    widget = pg.PlotWidget()
    widget.resize(700, 300)
    qtbot.addWidget(widget)
    widget.show()
    plot = widget.getPlotItem()
    plot.plot([0, 10], [1, 2])
    live = LiveRange(plot)
    resized = []
    plot.getViewBox().sigResized.connect(lambda *a: resized.append(1))
    axis = plot.getAxis("left")

    def show(low, high):
        live.show((0.0, 10.0), (low, high))
        for _ in range(3):  # the paint measures the labels; the layout follows
            widget.grab()
            qtbot.wait(5)
        return axis.width()

    narrow = show(0.5, 2.5)
    wide = show(100000.0, 900000.0)
    assert wide > narrow  # wider labels get their room
    resized.clear()
    assert show(0.5, 2.5) == wide and resized == []  # narrower ones again: the same width, no resize


def test_the_latency_title_keeps_to_one_line_in_a_narrow_chart(qtbot):
    """At a 1000-pixel window the title wrapped into a five-line column above a 50 px chart;
    now one line, the longest of its texts that fits."""
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(1000, 300)
    chart.show()
    qtbot.waitUntil(lambda: "(faded: eager" in chart.title.text())
    one_line = chart.title.height()
    chart.resize(330, 300)
    qtbot.waitUntil(lambda: "(faded" not in chart.title.text())
    assert chart.title.text() in ("<b>Latency per iteration</b>", "<b>Latency</b>")
    assert chart.title.text_width(chart.title.text()) <= chart.title.contentsRect().width()
    assert chart.title.height() <= one_line + 2
    chart.resize(1000, 300)
    qtbot.waitUntil(lambda: "(faded: eager" in chart.title.text())
