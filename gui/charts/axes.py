"""A value axis that stays readable in log mode.

pyqtgraph labels a log axis as powers (2·10¹) and labels every minor tick of a decade, which
crowd into one smear when a decade is short on screen. `LogAxis` labels plain numbers (20, 50,
100) and, per decade, only 1, 2 and 5, or only the decades when more than three are visible.
In linear mode it is pyqtgraph's axis unchanged. GUI thread only.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

LABELLED_MANTISSAS = (1, 2, 5)
MAX_DECADES_WITH_MINOR_LABELS = 3


def plain_number(x: float) -> str:
    """20, 0.05, 1500, 2e+06: what a reader of milliseconds expects on an axis."""
    if x >= 1e5 or x < 1e-3:
        return f"{x:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{x:.3g}" if x < 1 else f"{x:,.0f}"


def power_label(mantissa: int, decade: int) -> str:
    """mantissa·10^decade as an axis label; past what a float holds ("1e400") written as such
    (a view range left from linear mode can reach there: 10**400 overflows)."""
    if -300 < decade < 300:
        return plain_number(mantissa * 10.0**decade)
    return f"{mantissa}e{decade}"


def log_labels(values: list[float]) -> list[str]:
    """Labels for log10 tick positions: plain numbers at 1, 2 and 5 of each decade (only
    the decades when more than three are in view), '' elsewhere and for positions that are
    not finite numbers."""
    finite = [float(v) for v in values if math.isfinite(v)]
    decades = {math.floor(v + 1e-9) for v in finite}
    keep = (1,) if len(decades) > MAX_DECADES_WITH_MINOR_LABELS else LABELLED_MANTISSAS
    out = []
    for v in values:
        if not math.isfinite(v):
            out.append("")
            continue
        decade = math.floor(v + 1e-9)
        mantissa = 10 ** (float(v) - decade)  # in [1, 10): never overflows
        nearest = round(mantissa)
        out.append(power_label(nearest, decade) if nearest in keep and abs(mantissa - nearest) < 1e-3 else "")
    return out


class LogAxis(pg.AxisItem):
    """pyqtgraph's AxisItem with readable labels in log mode (module docstring)."""

    def tickStrings(self, values, scale, spacing):
        if not self.logMode:
            return super().tickStrings(values, scale, spacing)
        return log_labels(list(values))
