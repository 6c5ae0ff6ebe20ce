"""Colours shared by every chart: the palette's own colours for axes and background, so
the charts follow the system's light or dark theme, and one colour per config.

GUI thread only (reads the application palette).
"""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

# Okabe–Ito colours: distinguishable for colour-blind readers, on light and dark grounds.
CONFIG_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")

# One colour per phase (core.vocab.records.PHASES): no two phases share one.
PHASE_COLORS = {
    "load": "#999999",
    "eager": "#56B4E9",
    "compile": "#D55E00",
    "compiled": "#009E73",
    "benchmark": "#E69F00",
    "sweep": "#CC79A7",
    "accuracy": "#0072B2",
    "op_profile": "#F0E442",
    "localize": "#7B3294",
}


def config_color(index: int) -> QColor:
    """The colour of the index-th config of a run (eager and compiled share it)."""
    return QColor(CONFIG_COLORS[index % len(CONFIG_COLORS)])


def _luminance(color: QColor) -> float:
    """WCAG relative luminance of an sRGB colour."""

    def channel(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    return 0.2126 * channel(color.redF()) + 0.7152 * channel(color.greenF()) + 0.0722 * channel(color.blueF())


def contrast(a: QColor, b: QColor) -> float:
    """WCAG contrast ratio of two colours (1 to 21; body text wants 4.5)."""
    la, lb = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


TEXT_CONTRAST = 4.5


def readable(color: QColor) -> QColor:
    """`color` darkened on a light ground (lightened on a dark one) until text in it reads
    (WCAG 4.5:1 against the palette's base): the palette's orange and yellow as text on white
    were hard to read."""
    base = QApplication.palette().color(QPalette.ColorRole.Base)
    color = QColor(color)
    for _ in range(12):
        if contrast(color, base) >= TEXT_CONTRAST:
            break
        color = color.darker(115) if base.lightness() >= 128 else color.lighter(115)
    return color


def config_text_color(index: int) -> QColor:
    """The index-th config's colour for text (labels, table cells): `config_color`, readable."""
    return readable(config_color(index))


def is_dark() -> bool:
    palette = QApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightness() < 128


def apply_chart_theme() -> None:
    """Make pyqtgraph's defaults follow the application palette (GUI thread; imports pyqtgraph,
    which only the charts need: gui.window.view_slot calls it before it builds the first one)."""
    import pyqtgraph as pg

    palette = QApplication.palette()
    pg.setConfigOptions(
        background=palette.color(QPalette.ColorRole.Base),
        foreground=palette.color(QPalette.ColorRole.Text),
        antialias=False,  # antialiasing costs ~3x per redraw with 10k-point curves
    )


def phase_brush(phase: str, alpha: int = 40) -> QColor:
    color = QColor(PHASE_COLORS.get(phase, "#999999"))
    color.setAlpha(alpha)
    return color


def over_chart_background(color: QColor) -> QColor:
    """`color` (translucent) as it looks over the charts' background, made opaque. For a band
    behind everything else (a phase, the warm-up calls): Qt's raster engine blends a translucent
    fill of more than ~96 lines on its worker threads while the GUI thread waits, which, with
    a job's threads on every core, was the largest part of the latency chart's paint during a
    run (py-spy); an opaque fill is a plain memory fill."""
    alpha = color.alphaF()
    back = QApplication.palette().color(QPalette.ColorRole.Base)
    return QColor.fromRgbF(
        back.redF() * (1 - alpha) + color.redF() * alpha,
        back.greenF() * (1 - alpha) + color.greenF() * alpha,
        back.blueF() * (1 - alpha) + color.blueF() * alpha,
    )


def error_color() -> str:
    return "#ff6b6b" if is_dark() else "#b00020"


def warning_color() -> str:
    """Orange for what is worth a look but not wrong (a noisy timing)."""
    return "#ffb74d" if is_dark() else "#b35900"
