"""The compile marker's label is whole on screen (issue 19 item 9: it read "ompile inductor…",
the marker sitting left of the view)."""

from __future__ import annotations

from gui.charts.latency import LatencyChart
from tests.gui.helpers import fake_result


def test_the_compile_marker_and_its_label_are_inside_the_view(qtbot):
    chart = LatencyChart()
    qtbot.addWidget(chart)
    chart.resize(900, 300)
    chart.show()
    result = fake_result()
    chart.reset([result])
    qtbot.wait(50)
    marker = chart._markers[result.job_id]
    (x0, x1), _ = chart.plot.viewRange()
    assert x0 <= marker.value() <= x1
    view = chart.plot.getViewBox().sceneBoundingRect()
    label = marker.label.sceneBoundingRect()
    assert view.left() <= label.left() and label.right() <= view.right() + 1
    chart.warmup_box.setChecked(False)  # the marker hides with the warm-up and leaves the view to the timed calls
    qtbot.wait(50)
    assert not marker.isVisible() and chart.plot.viewRange()[0][0] > marker.value()


def test_a_jobs_later_changes_keep_its_marker_and_a_new_compile_redraws_it(qtbot):
    """Every change and the end of a job asked for the marker again, and it was made anew
    (~3 ms of the GUI thread each); the same compile now keeps it, another one replaces it."""
    import dataclasses

    chart = LatencyChart()
    qtbot.addWidget(chart)
    result = fake_result()
    chart.reset([result])
    marker = chart._markers[result.job_id]
    chart.refresh([result], result.job_id, ended=True)
    assert chart._markers[result.job_id] is marker
    slower = dataclasses.replace(result.compile, compile_time_s=result.compile.compile_time_s + 1)
    chart.mark_compile(result.job_id, slower)
    assert chart._markers[result.job_id] is not marker and marker not in chart.plot.items
