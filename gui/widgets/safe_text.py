"""Showing report text as text in Qt.

Qt renders a label, tooltip, message box or pyqtgraph legend as HTML when the text looks
like HTML (`Qt::mightBeRichText`), so a report that names a config `<img src=...>` could
show a picture or a link. Every string that comes from a report or a job goes through
here: `plain` labels, `tooltip` for tooltips, `markup` inside our own rich text, `legend_text`
for pyqtgraph item names and axis labels. GUI thread only (`plain` touches a widget).
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt

from core.report.safety import as_html


def plain(label):
    """`label` (a QLabel or QMessageBox) set to show its text as plain text; returns it."""
    label.setTextFormat(Qt.TextFormat.PlainText)
    return label


def markup(text) -> str:
    """Untrusted text for use inside our own rich text: shows exactly that text."""
    return as_html(text)


def tooltip(text) -> str:
    """A tooltip that shows `text` exactly, line breaks and indentation kept ('' for none).
    Qt guesses the format of a tooltip from its first line, so it is always given as
    escaped rich text."""
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(str(text), quote=True)}</p>"


def legend_text(text) -> str:
    """Untrusted text for a pyqtgraph legend entry or axis label (rendered as HTML)."""
    return html.escape(str(text), quote=True)


def line_label(text) -> str:
    """Untrusted text for a pyqtgraph InfiniteLine label: plain text, but a format string
    (`{value}` is replaced), so braces are doubled."""
    return str(text).replace("{", "{{").replace("}", "}}")
