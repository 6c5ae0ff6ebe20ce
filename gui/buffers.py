"""A growing numpy buffer for chart data: amortised O(1) appends, never drops a sample."""
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
        self._x[self.n:need] = xs
        self._y[self.n:need] = ys
        self.n = need

    @property
    def x(self) -> np.ndarray:
        return self._x[: self.n]

    @property
    def y(self) -> np.ndarray:
        return self._y[: self.n]
