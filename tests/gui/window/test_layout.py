"""The main window's layout at the sizes users have (issue 19: at 1400x900 the latency charts
above the tabs were ~60 px high and unreadable)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt


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


def test_summary_shows_memory_and_accuracy_without_scrolling_sideways(window, qtbot):
    """Issue 19 item 9: peak memory and accuracy needed sideways scrolling at 1400x900."""
    from gui.panels.summary import ACCURACY_COLUMN, COLUMNS
    from tests.gui.helpers import fake_result

    window.resize(1400, 900)
    window.session.load([fake_result("a", backend="inductor"), fake_result("b", backend="aot_eager")], {})
    window.show_tab("summary")
    qtbot.waitUntil(lambda: window.size().width() == 1400, timeout=5000)
    qtbot.wait(50)
    table = window.summary_panel.table
    peak = next(i for i, c in enumerate(COLUMNS) if c.header.startswith("Peak MB"))
    for column in (peak, ACCURACY_COLUMN):
        right = table.columnViewportPosition(column) + table.columnWidth(column)
        assert 0 <= table.columnViewportPosition(column) and right <= table.viewport().width(), COLUMNS[column].header


def test_the_break_table_keeps_its_columns_readable(window, qtbot):
    """Issue 19 item 9: at 1400x900 the first hint was cut to "For th…" and the table scrolled."""
    from gui.panels.graph_breaks import HINT_COLUMN
    from tests.gui.helpers import fake_result

    window.resize(1400, 900)
    window.session.load([fake_result("a", backend="inductor")], {})
    window.show_tab("graph-breaks")
    qtbot.waitUntil(lambda: window.size().width() == 1400, timeout=5000)
    qtbot.wait(50)
    table = window.graph_breaks_panel.table
    assert table.model().rowCount() >= 1
    assert table.columnWidth(HINT_COLUMN) >= 150
    assert not table.horizontalScrollBar().isVisible()
    for column in range(table.model().columnCount()):
        if not table.isColumnHidden(column):
            header = table.model().headerData(column, Qt.Orientation.Horizontal)
            widest = max(table.fontMetrics().horizontalAdvance(line) for line in header.split("\n"))
            assert table.columnWidth(column) >= widest, header  # every header reads whole


@pytest.mark.parametrize("size", [(1400, 900), (1280, 800)])
def test_the_config_form_is_not_cut_at_the_right(window, qtbot, size):
    """Issue 19 item 9: the form was 449 px wide in a 385 px pane: the Processes field and the
    queue's statuses ("cance…hmark") were cut."""
    from PySide6.QtWidgets import QScrollArea

    window.resize(*size)
    qtbot.waitUntil(lambda: window.size().width() == size[0], timeout=5000)
    qtbot.wait(50)
    panel = window.config_panel
    scroll = next(a for a in window.findChildren(QScrollArea) if a.widget() is panel)
    assert panel.width() <= scroll.viewport().width()
    assert panel.processes.isVisibleTo(window)
    right = panel.processes.mapTo(scroll.viewport(), panel.processes.rect().topRight()).x()
    assert right <= scroll.viewport().width()
