"""The keyboard reaches past the config queue: Tab leaves a table (arrows move between its
cells); with Qt's default, Tab walked every cell and a user needed 27 presses to leave a queue."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.vocab.config import CompileConfig
from gui.form.config_panel import ConfigPanel


def test_tab_leaves_the_config_queue(qtbot):
    panel = ConfigPanel()
    qtbot.addWidget(panel)
    panel.show()
    for backend in ("eager", "aot_eager", "inductor"):
        panel.queue.add(CompileConfig(backend))
    view = panel.queue_view
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    view.setCurrentIndex(panel.queue.index(0, 0))
    qtbot.keyClick(view, Qt.Key.Key_Tab)
    assert not view.hasFocus()
    assert not view.tabKeyNavigation() and "QTableView:focus" in view.styleSheet()
