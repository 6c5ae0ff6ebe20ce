"""The queue's status cells read whole (issue 19 item 9: "cance…hmark")."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.vocab.config import CompileConfig


def test_status_cells_are_not_cut(window, qtbot):
    panel = window.config_panel
    queue, view = panel.queue, panel.queue_view
    configs = [CompileConfig(backend="eager"), CompileConfig(backend="aot_eager"), CompileConfig(backend="inductor")]
    for c in configs:
        queue.add(c)
    queue.set_status(configs[0], "benchmark")
    queue.set_status(configs[1], "cancelled")
    reason = "torch raised while compiling: a very long reason that no cell can hold " * 3
    queue.set_status(configs[2], "failed", reason)
    qtbot.wait(50)
    metrics = view.fontMetrics()
    width = view.columnWidth(1)
    for row in range(queue.rowCount()):
        index = queue.index(row, 1)
        text = index.data()
        assert metrics.horizontalAdvance(text) < width, text  # whole in its cell
    failed = queue.index(queue.rowCount() - 1, 1)
    assert failed.data().startswith("failed: torch raised") and failed.data().endswith("…")
    assert reason.strip()[:60] in failed.data(Qt.ItemDataRole.ToolTipRole)  # the whole reason on hover
    assert view.columnWidth(0) >= 80  # the config keeps room
