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


def nice_bound(value: float, up: bool) -> float:
    """The nearest round number at or above (`up`) or at or below `value` (1, 1.2, 1.5, 2, 2.5,
    3, 4, 5, 6, 8 times a power of ten); 0 and what is not a positive finite number stay as they are.
    A live chart's view range moves only when its data passes such a bound (LatencyChart)."""
    if not np.isfinite(value) or value <= 0:
        return float(value)
    decade = 10.0 ** np.floor(np.log10(value))
    mantissa = value / decade
    if up:
        step = next(s for s in NICE_STEPS if s >= mantissa - 1e-9)
    else:
        step = next(s for s in reversed(NICE_STEPS) if s <= mantissa + 1e-9)
    return float(step * decade)
