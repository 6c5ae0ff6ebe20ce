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
