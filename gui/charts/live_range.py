"""A live chart's view range, set by the chart itself while a run's data streams in.

pyqtgraph's auto-range walks every item's bounds at each paint after new data, and a range that
moves makes it rebuild both axes' ticks (three times the paint of a still view). While a run
streams, the latency and distribution charts hold their extent in round steps
(gui.charts.buffers) and give it to `LiveRange.show`, which sets the view only when that
extent changes, with no auto-range in between: one range change where pyqtgraph's auto-range
made two (its pixel padding depends on the view's scale, so a new range was followed by a
second, slightly different one a paint later). A user who zooms or pans keeps their view until
they ask for auto-range again (pyqtgraph's "A" button); `release` gives the view back to
auto-range (a report, or every job ended).

And the chart's value axes keep the widest width their labels have needed (pyqtgraph's
`autoReduceTextSpace` off): a new range whose labels were narrower or wider ("40" after "1000")
changed the axis's width, which resized the view, which made pyqtgraph rebuild all four axes and
move every item again: 40 changes between ranges of such labels resized the view 26 times, and
took 11.9 ms of the GUI thread's a change (median) against 6.8 ms once the width held (/tmp
script of issue 22's twelfth session). The width now grows when a label needs more and never
shrinks back, for as long as the chart lives (a report opened after a run keeps the run's
widest). GUI thread only.
"""

from __future__ import annotations

import math

import pyqtgraph as pg

VALUE_AXES = ("left", "right")  # the axes whose width follows their labels' (the module's docstring)


class LiveRange:
    def __init__(self, plot: pg.PlotItem):
        self._plot = plot
        self._applied: tuple | None = None
        self._user_moved = False
        self.managing = False
        """The chart sets the view (a live run); False: pyqtgraph's auto-range or the user's."""
        self.changes = 0  # view ranges set (tests)
        for side in VALUE_AXES:
            plot.getAxis(side).setStyle(autoReduceTextSpace=False)
        plot.getViewBox().sigRangeChangedManually.connect(self._on_user_moved)

    def _on_user_moved(self, *args) -> None:
        self._user_moved = True

    def show(self, x: tuple[float, float], y: tuple[float, float], log_y: bool = False) -> None:
        """Show data ranging over `x` and `y` (in data units; `log_y`: the y axis is logarithmic)."""
        box = self._plot.getViewBox()
        auto = any(box.autoRangeEnabled())
        if self._user_moved:
            if not auto:
                return  # the user's zoom or pan stays
            self._user_moved = False  # they asked for auto-range again: follow the data
        if log_y:
            if not (y[0] > 0 and y[1] > 0):
                return
            y = (math.log10(y[0]), math.log10(y[1]))
        target = (tuple(x), tuple(y))
        if not all(math.isfinite(v) for v in (*target[0], *target[1])):
            return
        self.managing = True
        if target == self._applied and not auto:
            return
        self._applied = target
        self.changes += 1
        self._plot.setRange(xRange=target[0], yRange=target[1])  # turns auto-range off

    def forget(self, x: tuple[float, float] = (0.0, 1.0), y: tuple[float, float] = (0.0, 1.0)) -> None:
        """Another run or results: nothing held, nothing the user chose of the last one's view,
        which shows `x` and `y` until there is data (pyqtgraph keeps the last range over an
        empty plot: a new run's empty chart showed the previous run's axes) and then fits it."""
        self.managing, self._applied, self._user_moved = False, None, False
        self._plot.setRange(xRange=x, yRange=y, padding=0)
        self._plot.enableAutoRange()

    def release(self) -> None:
        """Auto-range from now on (not over a view the user chose)."""
        if not self.managing:
            return
        self.managing, self._applied = False, None
        if not self._user_moved:
            self._plot.enableAutoRange()
