"""The latency chart's compile labels and legend stay whole and readable (issue 44, item 7): a new
user's narrow window showed the labels drawn over the legend's entries, a live run's labels cut
at the chart's left edge (the marker left of the view), and a legend wider than the view ran off
its left edge."""

from __future__ import annotations

from core.vocab import records as rec
from gui.charts.latency import LatencyChart
from tests.gui.helpers import fake_result

LONG = "inductor mode=max-autotune-no-cudagraphs"


def _live_chart(qtbot, width: int, height: int, backends, iters: int = 20, planned: int = 200) -> LatencyChart:
    """A chart fed as a run feeds it: the jobs, then each job's warm-up, compile and timed calls."""
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(width, height)
    chart.show()
    results = [fake_result(f"j{i}", backend=b, n=planned) for i, b in enumerate(backends)]
    chart.reset([])
    for i, result in enumerate(results):
        chart.add_job(result.spec, i)
    for i, result in enumerate(results):
        warm = tuple(rec.LatencySample(side, k, 30.0 + k, True) for side in ("eager", "compiled") for k in range(2))
        chart.add_samples(result.job_id, warm)
        chart.mark_compile(result.job_id, result.compile)
        timed = tuple(
            rec.LatencySample(side, k, (5.0 if side == "eager" else 3.0) + i + (k % 7) * 0.1)
            for side in ("eager", "compiled")
            for k in range(iters)
        )
        chart.add_samples(result.job_id, timed)
    qtbot.waitUntil(lambda: chart.drawn_count(results[-1].job_id, "compiled") > 0)
    qtbot.wait(50)
    return chart


def _labels(chart: LatencyChart) -> list:
    """The compile labels shown (and the line counting the others), as text rectangles in the scene."""
    shown = [m.label for m in chart._markers.values() if m.isVisible() and m.label.isVisible()]
    if chart._more is not None and chart._more.isVisible():
        shown.append(chart._more.label)
    rects = []
    for label in shown:
        margin = label.textItem.document().documentMargin()
        rects.append(label.sceneBoundingRect().adjusted(margin, margin, -margin, -margin))
    return rects


def _whole_and_clear(chart: LatencyChart) -> list[str]:
    """What is wrong with the labels' layout: outside the view, over the legend, over each other."""
    view = chart.plot.getViewBox().sceneBoundingRect().adjusted(-1, -1, 1, 1)
    legend = chart.legend.sceneBoundingRect()
    rects = _labels(chart)
    wrong = [f"outside the view: {r}" for r in rects if not view.contains(r)]
    wrong += [f"over the legend: {r}" for r in rects if r.intersects(legend)]
    wrong += [f"overlapping: {a} {b}" for i, a in enumerate(rects) for b in rects[i + 1 :] if a.intersects(b)]
    if not view.contains(legend):
        wrong.append(f"legend outside the view: {legend}")
    return wrong


def test_compile_labels_in_a_narrow_chart_keep_clear_of_the_legend(qtbot):
    chart = _live_chart(qtbot, 480, 300, ["aot_eager", "inductor", LONG])
    assert len(_labels(chart)) == 3
    qtbot.waitUntil(lambda: not _whole_and_clear(chart), timeout=2000)
    chart.resize(1000, 350)  # wide: the labels go back up beside the legend
    qtbot.waitUntil(lambda: chart.plot.getViewBox().width() > 900)
    qtbot.waitUntil(lambda: not _whole_and_clear(chart), timeout=2000)
    top = chart.plot.getViewBox().sceneBoundingRect().top()
    assert min(r.top() for r in _labels(chart)) < top + 0.15 * chart.plot.getViewBox().height()


def test_a_live_runs_compile_markers_are_in_the_view_and_their_labels_whole(qtbot):
    """20 calls a side: the view held to the calls' extent left the markers (left of the first
    warm-up call) outside, and their labels were cut at the left edge."""
    chart = _live_chart(qtbot, 700, 300, ["eager", "aot_eager", "inductor"], iters=20, planned=20)
    (x0, x1), _ = chart.plot.viewRange()
    assert all(x0 <= m.value() <= x1 for m in chart._markers.values())
    assert not _whole_and_clear(chart)


def test_labels_stay_whole_when_their_marker_leaves_the_view_and_long_ones_are_shortened(qtbot):
    chart = _live_chart(qtbot, 330, 220, ["aot_eager", "inductor", LONG])
    qtbot.waitUntil(lambda: not _whole_and_clear(chart), timeout=2000)
    long_label = chart._markers["j2"].label
    assert "…" in long_label.toPlainText() and long_label.toPlainText().endswith(": 0.50 s")
    assert long_label.toolTip() == f"compile {LONG}: 0.50 s"  # the whole text on hover
    assert LONG in chart.legend.toolTip()  # the legend's entries shortened too: whole on hover
    chart.plot.setXRange(5, 150, padding=0)  # panned: every marker left of the view
    qtbot.wait(50)
    assert chart.plot.viewRange()[0][0] > max(m.value() for m in chart._markers.values())
    qtbot.waitUntil(lambda: not _whole_and_clear(chart), timeout=2000)


def test_label_places_skip_the_lines_beside_the_legend():
    from gui.charts.compile_markers import marker_label_positions

    # a 200 px view, 14 px lines; a legend from x 100 to 190, y 10 to 70 (3 entries)
    legend = (100.0, 10.0, 190.0, 70.0)
    places, more = marker_label_positions(3, 200, 14, [(0, 80)] * 3, legend, (0, 80))
    assert places == [0.92, 0.92 - 0.08, 0.92 - 0.16] and more is None  # left of it: no change
    places, more = marker_label_positions(3, 200, 14, [(0, 150)] * 3, legend, (0, 150))
    assert more is None and all((1 - p) * 200 - 7 >= 70 for p in places)  # under it
    places, more = marker_label_positions(6, 120, 14, [(0, 150)] * 6, legend, (0, 150))
    shown = [p for p in places if p is not None]
    assert more is not None and shown and all((1 - p) * 120 - 7 >= 70 for p in [*shown, more])
