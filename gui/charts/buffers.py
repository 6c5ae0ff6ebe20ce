"""Chart data helpers: a growing numpy buffer (amortised O(1) appends, never drops a sample)
and the test for when a log axis reads better."""

from __future__ import annotations

import numpy as np


class GrowingSeries:
    """x/y float64 arrays that double their capacity when full. GUI thread only."""

    def __init__(self, capacity: int = 256):
        self._x = np.empty(capacity)
        self._y = np.empty(capacity)
        self.n = 0

    def extend(self, xs, ys) -> None:
        xs = np.asarray(xs, dtype=float)
        ys = np.asarray(ys, dtype=float)
        need = self.n + xs.size
        if need > self._x.size:
            capacity = max(need, 2 * self._x.size)
            self._x = np.resize(self._x, capacity)
            self._y = np.resize(self._y, capacity)
        self._x[self.n : need] = xs
        self._y[self.n : need] = ys
        self.n = need

    @property
    def x(self) -> np.ndarray:
        return self._x[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.n]


def suggests_log(values, ratio: float = 10.0) -> bool:
    """True when a few large values would squash the rest on a linear axis: the largest is
    more than `ratio` times the median (tiny models: one slow call among 1 ms ones)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size < 2:
        return False
    return float(values.max()) > ratio * float(np.median(values))


NICE_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)
COARSE_STEPS = (1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)


def nice_bound(value: float, up: bool, steps: tuple[float, ...] = NICE_STEPS) -> float:
    """The nearest round number at or above (`up`) or at or below `value` (one of `steps`, by
    default 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, times a power of ten); 0 and what is not a positive
    finite number stay as they are. A live chart's view range moves only when its data passes
    such a bound (LatencyChart); COARSE_STEPS move it less often (each move rebuilds an axis), the
    data then filling at least 60% of the range."""
    if not np.isfinite(value) or value <= 0:
        return float(value)
    decade = 10.0 ** np.floor(np.log10(value))
    mantissa = value / decade
    if up:
        step = next(s for s in steps if s >= mantissa - 1e-9)
    else:
        step = next(s for s in reversed(steps) if s <= mantissa + 1e-9)
    return float(step * decade)


ROUND_OUT_STEPS = 20


def round_out(low: float, high: float, log: bool = False) -> tuple[float, float]:
    """`low` and `high` moved out to multiples of a round step (1, 2 or 5 times a power of ten)
    of about a ROUND_OUT_STEPS-th of their span, so a range that follows data as it comes moves
    only when the data passes a step: its ends then lie within ~5% of the span from the data's,
    so the data keeps the chart. `log`: steps of the logarithm (a log axis). What has no span,
    or no positive ends on a log axis, stays as it is. A live chart's view range (issue 22: a
    range that moves makes pyqtgraph rebuild both axes' ticks, three times a still paint)."""
    if log:
        if not (low > 0 and high > 0):
            return float(low), float(high)
        a, b = round_out(float(np.log10(low)), float(np.log10(high)))
        return float(10.0**a), float(10.0**b)
    span = high - low
    if not (np.isfinite(low) and np.isfinite(high) and span > 0):
        return float(low), float(high)
    raw = span / ROUND_OUT_STEPS
    decade = 10.0 ** np.floor(np.log10(raw))
    step = next(m * decade for m in (1.0, 2.0, 5.0, 10.0) if m * decade >= raw * (1 - 1e-9))
    out_low, out_high = float(np.floor(low / step) * step), float(np.ceil(high / step) * step)
    if low > 0 and out_low <= 0:  # a positive range stays positive (a log axis toggled later)
        out_low = float(low)
    return out_low, out_high


class HeldRange:
    """A live chart's extent that only grows, and then out to a round step (round_out): data
    whose ends wander inside it (a histogram's percentile range, its tallest bin as the calls
    regroup) leave the view where it is. `clear` for another set of data. GUI thread only."""

    def __init__(self):
        self.low: float | None = None
        self.high: float | None = None

    def hold(self, low: float, high: float, log: bool = False) -> tuple[float, float]:
        if self.low is None or self.high is None:
            self.low, self.high = round_out(low, high, log)
        elif low < self.low or high > self.high:
            self.low, self.high = round_out(min(low, self.low), max(high, self.high), log)
        return self.low, self.high

    def clear(self) -> None:
        self.low = self.high = None
