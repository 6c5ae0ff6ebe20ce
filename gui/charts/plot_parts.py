"""A pyqtgraph plot made in pieces of a few milliseconds, for the views built one piece per turn of
the event loop after the window's show (gui.window.view_slot).

A `pg.PlotWidget()` is one call of 15–25 ms here: its ViewBox with the ViewBox's context menu,
four axes, then the PlotItem with its "Plot Options" menu. Made in one turn, each chart kept the
GUI thread from its timers, paints and input that long at launch (the launch's worst gaps, issue 22).
pyqtgraph lets a PlotItem take a ViewBox and axes made before it (`PlotItem(viewBox=, axisItems=)`)
and a PlotWidget take a PlotItem (`PlotWidget(plotItem=)`), so `PlotParts.steps()` makes the
ViewBox, its context menu, the axes, the PlotItem's "Plot Options" form and the PlotItem each
in a step of its own (each 1–6 ms here; the axes step makes all four, the hidden top and right
ones too); the view then
wraps or places `item` in a step of its own. The plot is the one `pg.PlotWidget()` makes: the same
items, menus and defaults. GUI thread only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

import pyqtgraph as pg

AXIS_SIDES = ("left", "bottom", "top", "right")


def _plot_item_module():
    """The module pyqtgraph's PlotItem class is defined in (its `ui_template` global is the
    "Plot Options" form's template), or None."""
    return sys.modules.get(getattr(pg.PlotItem, "__module__", ""))


class _MadeForm:
    """What `PlotItem.__init__` takes from `ui_template.Ui_Form()`: the "Plot Options" form made
    in an earlier step (its widgets, and whatever else the form has), with a `setupUi` that has
    nothing left to do."""

    def __init__(self, form):
        self._form = form

    def __getattr__(self, name):
        return getattr(self._form, name)

    def setupUi(self, widget) -> None:  # noqa: N802 (pyqtgraph's name)
        pass


class _MadeTemplate:
    """Stands for pyqtgraph's `ui_template` module while one PlotItem is made: its first
    `Ui_Form()` is the form made before, any later one the template's own (never one form in two
    PlotItems); everything else is the module's."""

    def __init__(self, template, form):
        self._template = template
        self._form = form

    def __getattr__(self, name):
        return getattr(self._template, name)

    def Ui_Form(self):  # noqa: N802 (pyqtgraph's name)
        form, self._form = self._form, None
        return self._template.Ui_Form() if form is None else _MadeForm(form)


class PlotParts:
    """One PlotItem, made by `steps()` run in order; `item` once the last has run.

    `axes`: an AxisItem class per side where pyqtgraph's own is not wanted (e.g. a LogAxis on
    the left; a top or right one given is shown, as PlotItem shows every axis it is given); `options`: what else PlotItem takes (e.g. `enableMenu=False`)."""

    def __init__(self, axes: dict[str, Callable[[str], pg.AxisItem]] | None = None, **options):
        self._axis_types = dict(axes or {})
        unknown = set(self._axis_types) - set(AXIS_SIDES)
        if unknown:
            raise ValueError(f"no such axis side: {sorted(unknown)} (sides: {', '.join(AXIS_SIDES)})")
        self._options = options
        self._menu = options.get("enableMenu", True)  # the ViewBox's context menu, a step of its own
        self._view_box: pg.ViewBox | None = None
        self._axes: dict[str, pg.AxisItem] | None = None
        self._options_form = None  # (form, the widget it was set up on): _make_options_form
        self.item: pg.PlotItem | None = None

    def steps(self, then: Callable[[pg.PlotItem], None] | None = None) -> list[Callable[[], None]]:
        """The steps; `then`: one more, given the PlotItem (the view's settings and its place)."""
        steps = [self._make_view_box, self._make_axes, self._make_options_form, self._make_item]
        if self._menu:
            steps.insert(1, self._make_view_box_menu)
        return steps if then is None else [*steps, lambda: then(self.item)]

    def make(self) -> pg.PlotItem:
        """Every step now (a plot made outside the launch's turns); the PlotItem."""
        for step in self.steps():
            step()
        return self.item

    def _make_view_box(self) -> None:
        # its context menu in a step of its own (_make_view_box_menu): the menu's two axis
        # forms are most of a ViewBox (5-7 ms of 7-9 here)
        self._view_box = pg.ViewBox(enableMenu=False)

    def _make_view_box_menu(self) -> None:
        if self._view_box is None:
            self._make_view_box()
        self._view_box.setMenuEnabled(True)  # pyqtgraph makes the menu as its constructor would

    def _make_axes(self) -> None:
        # all four: PlotItem makes the ones it is not given itself, hidden (two AxisItems, ~2.5 ms
        # of the PlotItem's step); it shows every one it is given, so the hidden ones are hidden
        # again in _make_item
        self._axes = {side: self._axis_types.get(side, pg.AxisItem)(side) for side in AXIS_SIDES}

    def _make_options_form(self) -> None:
        # the PlotItem's "Plot Options" form (~25 widgets from pyqtgraph's Designer template):
        # 2-3 ms of the PlotItem's 6-9 here. PlotItem makes it with `ui_template.Ui_Form()` and
        # `setupUi`; `_make_item` hands it this one instead. A pyqtgraph without that template
        # makes its own, as before.
        template = getattr(_plot_item_module(), "ui_template", None)
        if not hasattr(template, "Ui_Form"):
            return
        from PySide6.QtWidgets import QWidget

        form, holder = template.Ui_Form(), QWidget()
        form.setupUi(holder)
        self._options_form = (form, holder)

    def _make_item(self) -> None:
        if self._view_box is None:
            self._make_view_box()
            if self._menu:
                self._make_view_box_menu()
        if self._axes is None:
            self._make_axes()
        # taken here, used once: a PlotItem that raised is not handed its widgets again
        made, self._options_form = self._options_form, None
        module = _plot_item_module()
        template = getattr(module, "ui_template", None)
        swap = made is not None and template is not None
        if swap:
            module.ui_template = _MadeTemplate(template, made[0])  # GUI thread only, as every PlotItem
        try:
            self.item = pg.PlotItem(viewBox=self._view_box, axisItems=self._axes, **self._options)
        finally:
            if swap:
                module.ui_template = template
        for side in AXIS_SIDES:
            if side not in ("left", "bottom", *self._axis_types):
                self.item.hideAxis(side)
        # the form's groups now belong to the menu's actions (QWidgetAction.setDefaultWidget
        # takes them from their parent); the widget they were set up on goes, as PlotItem's own
        self._view_box = self._axes = None
