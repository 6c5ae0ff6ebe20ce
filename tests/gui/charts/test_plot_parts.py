"""A pyqtgraph plot made in steps (gui.charts.plot_parts) for the views built one piece per turn
after the window's show (issue 22): it must be the plot `pg.PlotWidget()` makes, pixel for pixel,
with the same axes shown and the same menus."""

from __future__ import annotations

import numpy as np
import pytest


def _pixels(widget) -> np.ndarray:
    from PySide6.QtGui import QImage

    image = widget.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes()).reshape(image.height(), -1).copy()


@pytest.mark.parametrize("left_log", [False, True])
def test_a_plot_made_in_steps_is_the_one_pyqtgraph_makes(qtbot, left_log):
    import pyqtgraph as pg

    from gui.charts.axes import LogAxis
    from gui.charts.plot_parts import PlotParts

    parts = PlotParts(axes={"left": LogAxis} if left_log else None)
    steps = parts.steps()
    assert len(steps) == 5  # the view box, its menu, the axes, the Plot Options form, the PlotItem
    for step in steps:
        assert parts.item is None  # made by the last step only
        step()
        if step == parts._make_options_form:
            form = parts._options_form[0]
    stepped = pg.PlotWidget(plotItem=parts.item)
    whole = pg.PlotWidget(axisItems={"left": LogAxis("left")} if left_log else None)
    for widget in (stepped, whole):
        qtbot.addWidget(widget)
        widget.resize(420, 260)
        widget.setLabel("left", "latency", units="ms")
        widget.setLabel("bottom", "iteration")
        widget.plot([1, 2, 3, 10], [5, 1, 4, 2])
    plots = stepped.getPlotItem(), whole.getPlotItem()
    for side in ("left", "bottom", "top", "right"):
        a, b = (p.getAxis(side) for p in plots)
        assert (type(a), a.isVisible()) == (type(b), b.isVisible()), side
    assert plots[0].getAxis("top").isVisible() is False  # shown only if given (PlotItem's rule)
    assert plots[0].vb.menu is not None and plots[0].ctrlMenu is not None
    assert [a.text() for a in plots[0].vb.menu.actions()] == [a.text() for a in plots[1].vb.menu.actions()]
    assert np.array_equal(_pixels(stepped), _pixels(whole))
    # the Plot Options form made in its own step is the PlotItem's: its menu and its controls
    # work once the widget it was set up on is gone
    import gc

    from gui.charts.plot_parts import _plot_item_module

    assert _plot_item_module().ui_template is pg.graphicsItems.PlotItem.plotConfigTemplate_generic  # put back
    assert plots[0].ctrl.yGridCheck is form.yGridCheck  # the form made in its step, not a second one
    gc.collect()
    assert [a.text() for a in plots[0].ctrlMenu.actions()] == [a.text() for a in plots[1].ctrlMenu.actions()]
    for plot in plots:
        plot.ctrl.yGridCheck.setChecked(True)  # Plot Options > Grid > Show Y grid
    assert plots[0].getAxis("left").grid == plots[1].getAxis("left").grid != False  # noqa: E712
    assert np.array_equal(_pixels(stepped), _pixels(whole))


def test_a_plot_without_menus_and_a_wrong_side():
    from gui.charts.plot_parts import PlotParts

    parts = PlotParts(enableMenu=False)
    assert len(parts.steps()) == 4  # no view box menu to make
    item = parts.make()
    assert item.vb.menu is None and not item.menuEnabled() and not item.vb.menuEnabled()
    with pytest.raises(ValueError, match="no such axis side"):
        PlotParts(axes={"west": object})


def test_the_options_form_is_handed_over_once_and_the_template_put_back_on_failure(qtbot, monkeypatch):
    """The form made in its step goes to the first `Ui_Form()` only (a second PlotItem made
    meanwhile gets pyqtgraph's own); a PlotItem that raises leaves pyqtgraph's template in
    place and the form used up, never handed to a retry."""
    import pyqtgraph as pg

    from gui.charts.plot_parts import PlotParts, _MadeForm, _plot_item_module

    module = _plot_item_module()
    real = module.ui_template
    asked = []

    class Failing(pg.PlotItem):
        def __init__(self, *args, **kwargs):
            asked.extend([module.ui_template.Ui_Form(), module.ui_template.Ui_Form()])
            raise RuntimeError("a PlotItem that fails")

    Failing.__module__ = pg.PlotItem.__module__
    monkeypatch.setattr(pg, "PlotItem", Failing)
    parts = PlotParts()
    *before, last = parts.steps()
    for step in before:
        step()
    with pytest.raises(RuntimeError, match="a PlotItem that fails"):
        last()
    assert module.ui_template is real
    assert isinstance(asked[0], _MadeForm) and isinstance(asked[1], real.Ui_Form)
    assert parts._options_form is None
