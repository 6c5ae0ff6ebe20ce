"""The main window's layout at the sizes users have (issue 19: at 1400x900 the latency charts
above the tabs were ~60 px high and unreadable)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("size", [(1400, 900), (1280, 800)])
def test_the_charts_keep_a_readable_height(window, qtbot, size):
    from gui.window.layout import CHARTS_MIN_HEIGHT

    window.resize(*size)
    qtbot.waitUntil(lambda: window.size().height() == size[1] and window.size().width() == size[0], timeout=5000)
    qtbot.wait(50)
    charts, tabs = window.charts_splitter, window.tabs
    assert charts.height() >= CHARTS_MIN_HEIGHT and window.latency_chart.height() >= CHARTS_MIN_HEIGHT
    assert tabs.height() >= 300  # and the tabs keep the rest
    assert window.right_splitter.sizes()[0] < window.right_splitter.sizes()[1]
