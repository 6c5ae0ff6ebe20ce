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
