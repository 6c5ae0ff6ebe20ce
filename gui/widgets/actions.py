"""Menu and toolbar actions, made one way everywhere. GUI thread only."""

from __future__ import annotations

from PySide6.QtGui import QAction, QKeySequence


def make_action(window, text: str, shortcut, tip: str, slot) -> QAction:
    """An action whose tooltip names its shortcut."""
    action = QAction(text, window)
    if shortcut:
        action.setShortcut(QKeySequence(shortcut))
    shortcut_text = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
    action.setToolTip(f"{tip} ({shortcut_text})" if shortcut_text else tip)
    action.setStatusTip(tip)
    action.triggered.connect(slot)
    return action
