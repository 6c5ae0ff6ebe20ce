"""The Resources tab's wording and colours (issue 19 item 10)."""

from __future__ import annotations

from core.run.sampling import nvml_reason
from core.vocab.records import PHASES


def test_no_gpu_note_says_why_and_what_the_panel_would_show(qtbot):
    from gui.panels.resources import ResourcePanel

    panel = ResourcePanel()
    qtbot.addWidget(panel)
    panel.set_gpu(False, nvml_reason(type("NVMLError_LibraryNotFound", (Exception,), {})()))
    text = panel.gpu_note.text()
    assert "no NVIDIA driver on this machine" in text and "LibraryNotFound)" not in text
    assert "would also chart the job's GPU utilisation and GPU memory" in text


def test_every_phase_has_a_colour_of_its_own():
    from gui.widgets.theme import PHASE_COLORS

    assert set(PHASES) <= set(PHASE_COLORS)
    colours = [PHASE_COLORS[p] for p in PHASES]
    assert len(set(colours)) == len(colours)  # accuracy, op_profile and localize were all load's grey


def _panel_on_a_hidden_tab(qtbot):
    """A shown window whose Resources panel is on the tab not shown: (the window, kept by the
    caller, the tabs, the panel)."""
    from PySide6.QtWidgets import QMainWindow, QTabWidget, QWidget

    from gui.panels.resources import ResourcePanel

    window, tabs, panel = QMainWindow(), QTabWidget(), ResourcePanel()
    tabs.addTab(QWidget(), "shown")
    tabs.addTab(panel, "resources")
    window.setCentralWidget(tabs)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window, tabs, panel


def test_readings_on_a_tab_not_shown_are_drawn_when_it_is(qtbot):
    """Issue 22: the 5 Hz redraw of a hidden Resources tab no longer runs on the GUI thread."""
    from core.vocab.records import ResourceSample

    _window, tabs, panel = _panel_on_a_hidden_tab(qtbot)
    for i in range(3):
        panel.add_sample("job", ResourceSample(t_s=0.2 * i, phase="compile", cpu_percent=50.0 + i, rss_mb=100.0))
    panel._on_redraw()  # the redraw timer's slot
    curve = panel._tracks[("job", "cpu")].curve
    assert curve.getData()[1] is None or len(curve.getData()[1]) == 0  # not drawn while hidden
    tabs.setCurrentIndex(1)
    assert list(curve.getData()[1]) == [50.0, 51.0, 52.0]


def test_a_phases_shading_is_made_when_its_tab_is_drawn_not_when_the_reading_comes(qtbot):
    """Issue 22: each phase change made a shaded region in every chart (~3 ms each) in the turn
    that folded the reading, the tab shown or not; now at the tab's next redraw, one per phase
    and chart, spanning the phase's readings."""
    import pyqtgraph as pg

    from core.vocab.records import ResourceSample

    _window, tabs, panel = _panel_on_a_hidden_tab(qtbot)

    def regions():
        return [i for plot in panel._plots() for i in plot.items if isinstance(i, pg.LinearRegionItem)]

    for i, phase in enumerate(("load", "load", "compile", "compile", "benchmark")):
        panel.add_sample("job", ResourceSample(t_s=0.5 * i, phase=phase, cpu_percent=50.0, rss_mb=100.0))
    panel._on_redraw()
    assert regions() == []  # hidden: nothing made
    tabs.setCurrentIndex(1)
    made = regions()
    assert len(made) == 3 * len(panel._plots())  # load, compile, benchmark in each chart
    spans = sorted({tuple(round(v, 3) for v in r.getRegion()) for r in made})
    assert spans == [(0.0, 0.5), (0.5, 1.5), (1.5, 2.0)]
    panel.add_sample("job", ResourceSample(t_s=2.5, phase="benchmark", cpu_percent=50.0, rss_mb=100.0))
    panel._on_redraw()
    assert len(regions()) == len(made)  # the last phase grew, no new region
    assert max(r.getRegion()[1] for r in regions()) == 2.5


def test_the_memory_bars_are_drawn_again_only_when_their_figures_change(qtbot):
    """Each job's change and end redrew the peak-memory bars (~3 ms of the GUI thread each)."""
    import dataclasses

    from gui.panels.resources import ResourcePanel
    from tests.gui.helpers import fake_result

    panel = ResourcePanel()
    qtbot.addWidget(panel)
    result = fake_result()
    panel.reset([result])
    bars = list(panel._bars)
    assert bars
    panel.refresh([result], result.job_id, ended=True)
    assert panel._bars == bars  # the same figures: the same bars
    result.memory["compiled"] = dataclasses.replace(result.memory["compiled"], peak_rss_mb=900.0)
    panel.refresh([result], result.job_id)
    assert panel._bars != bars and not any(bar in panel.memory_plot.items for bar in bars)


def test_several_configs_number_their_bars_and_name_them_below(qtbot):
    """Config labels under the bars overlapped ("eageaot_eageinductor/freezing…") or vanished:
    with several configs the groups are numbered and the numbers named below the chart."""
    from gui.panels.resources import ResourcePanel
    from tests.gui.helpers import fake_result

    panel = ResourcePanel()
    qtbot.addWidget(panel)
    one = fake_result("a", "eager")
    panel.reset([one])
    assert panel.memory_key.isHidden()
    assert [t for _, t in panel.memory_plot.getAxis("bottom")._tickLevels[0]] == ["eager"]
    panel.reset([one, fake_result("b", "aot_eager")])
    assert [t for _, t in panel.memory_plot.getAxis("bottom")._tickLevels[0]] == ["1", "2"]
    key = panel.memory_key.text()
    assert not panel.memory_key.isHidden() and "<b>1</b>" in key and "eager" in key and "<b>2</b>" in key
    assert "aot_eager" in key
