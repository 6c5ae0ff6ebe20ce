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
    from gui.panels.summary_columns import ACCURACY_COLUMN, COLUMNS
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


def test_no_shortcut_is_taken_by_a_text_field_with_focus(window, qtbot):
    """Issue 44: Ctrl+Shift+Z (Open zoo report…) did nothing while a text field had focus: the
    field took it as Redo. Every action's shortcut reaches the window from any field of the form."""
    from PySide6.QtCore import QEvent
    from PySide6.QtGui import QAction, QKeyEvent
    from PySide6.QtWidgets import QApplication, QLineEdit, QSpinBox

    fields = [window.config_panel.dynamo_config, window.config_panel.warmup]
    assert isinstance(fields[0], QLineEdit) and isinstance(fields[1], QSpinBox)
    shortcuts = {key for action in window.findChildren(QAction) for key in action.shortcuts()}
    assert len(shortcuts) > 10
    for field in fields:
        for sequence in shortcuts:
            combo = sequence[0]
            event = QKeyEvent(QEvent.Type.ShortcutOverride, combo.key(), combo.keyboardModifiers())
            event.ignore()
            QApplication.sendEvent(field, event)
            assert not event.isAccepted(), f"{type(field).__name__} takes {sequence.toString()}"


def test_help_opens_this_checkouts_documents(window, qtbot, monkeypatch):
    """Issue 44: Help had only About. Its Documentation entries open the local docs/*.md files."""
    import os

    from core import PROJECT_ROOT
    from gui.window import layout

    opened = []
    monkeypatch.setattr(layout, "desktop_open", lambda path: opened.append(path) or True)
    entries = [a for a in window.menus.help.actions() if a.text().startswith("Documentation")]
    for name in ("app.md", "scripts.md"):
        entry = next(a for a in entries if a.statusTip().endswith(f"{name} (this checkout's documentation)"))
        entry.trigger()
        assert opened[-1] == os.path.join(PROJECT_ROOT, "docs", name) and os.path.isfile(opened[-1])
    assert all(os.path.isfile(os.path.join(PROJECT_ROOT, "docs", name)) for _, name in layout.DOCUMENTS)
    monkeypatch.setattr(layout, "desktop_open", lambda path: False)
    entries[0].trigger()
    assert window.status_label.text().startswith("Nothing could open ") and "app.md" in window.status_label.text()
