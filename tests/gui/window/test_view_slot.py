"""The chart views are built after the window's first show (gui.window.view_slot, issue 22):
the window shows without pyqtgraph, its slots say "Loading charts…", and whatever a view is
asked for before it is built (results, a run's events) it shows once built, as if it had been
there from the start."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from core import PROJECT_ROOT as ROOT
from core.vocab import events as ev
from core.vocab import records as rec
from gui.window.view_slot import LOADING_TEXT
from tests.gui.helpers import fake_result


def test_the_window_shows_first_and_builds_its_charts_after(qtbot, settings):
    from PySide6.QtWidgets import QLabel

    from gui.window.main_window import MainWindow

    window = MainWindow(settings)
    qtbot.addWidget(window)
    deferred = [slot for slot in window.views if not slot.built]
    # the two charts and every tab but the one shown first (the Summary), built with the window
    assert len(deferred) == 2 + len(window.tab_views) - 1
    assert window.latency_slot in deferred and window.distribution_slot in deferred
    assert window.view("summary") is window.tab_views[0].view and window.tab_views[0].built
    for slot in deferred:
        assert [label.text() for label in slot.findChildren(QLabel)] == [LOADING_TEXT]
    with qtbot.waitSignal(window.charts_builder.sig_done, timeout=60_000):
        window.show()
    assert all(slot.built for slot in window.views)
    # hidden at once, deleted by Qt's deferred delete (which need not come before the builder's
    # last turn): gone soon after, none left shown meanwhile
    assert not any(
        label.isVisible() for slot in deferred for label in slot.findChildren(QLabel) if label.text() == LOADING_TEXT
    )
    qtbot.waitUntil(
        lambda: not any(label.text() == LOADING_TEXT for slot in deferred for label in slot.findChildren(QLabel)),
        timeout=5000,
    )
    window.close_now()


def test_the_charts_import_waits_for_the_first_paint_and_torchs_offer(qtbot, settings, monkeypatch):
    """The charts' import thread holds the GIL the GUI thread asks for at every call into Python:
    it starts once the window has been painted and torch's offer is in from the cache (or a
    helper lists it), and torch's own loader once the window has been painted (issue 22: the
    launch's first paint and the pickers' filling had waited on it for 80-190 ms)."""
    from gui.window import view_slot
    from gui.window.main_window import MainWindow

    seen = []
    original = view_slot.ChartsBuilder.start

    def start(builder):
        window = builder.parent()
        seen.append((window._painted, window.torch_info_loader.settled))
        original(builder)

    monkeypatch.setattr(view_slot.ChartsBuilder, "start", start)
    window = MainWindow(settings)
    qtbot.addWidget(window)
    qtbot.wait(50)
    assert not window.torch_info_loader._started  # not before the window is painted
    window.show()
    qtbot.waitUntil(lambda: all(slot.built for slot in window.views), timeout=60_000)
    assert seen[0] == (True, True)


def test_a_slow_construction_does_not_start_torchs_loader_before_the_first_paint(qtbot, settings, monkeypatch):
    """The loader's fallback (a window shown minimized is not painted) counted from the window's
    construction: a construction slower than that (every module compiled at a first start) let
    the loader's thread start before the first paint, which then waited for the GIL (the window
    came ~0.3 s later). Now it counts from the show; a window never shown still loads torch's
    offer."""
    import time

    from gui.run.torch_info_loader import TorchInfoLoader
    from gui.window.main_window import LOADER_AT_LATEST_MS, MainWindow

    started_painted = []
    original = TorchInfoLoader.start

    def start(loader):
        if not loader._started:
            started_painted.append(loader.parent()._painted)
        original(loader)

    monkeypatch.setattr(TorchInfoLoader, "start", start)
    window = MainWindow(settings)
    qtbot.addWidget(window)
    time.sleep(LOADER_AT_LATEST_MS / 1000 + 0.1)  # a slow construction: the fallback is overdue
    window.show()
    qtbot.waitUntil(lambda: bool(started_painted), timeout=10_000)
    assert started_painted == [True]
    window.close_now()

    unshown = MainWindow(settings)
    qtbot.addWidget(unshown)
    qtbot.waitUntil(lambda: unshown.torch_info_loader._started, timeout=10_000)
    assert started_painted == [True, False]
    unshown.close_now()


def test_a_view_asked_before_it_was_built_shows_what_the_session_holds(qtbot, settings):
    from gui.window.main_window import MainWindow

    window = MainWindow(settings)  # never shown: nothing builds the charts but what asks for them
    qtbot.addWidget(window)
    assert not window.latency_slot.built
    window.session.load([fake_result("j1"), fake_result("j2", backend="aot_eager")], {}, "")
    # a set of results: the window shows them in every view, which builds the charts
    assert window.latency_slot.built and window.distribution_slot.built
    assert len(window.latency_chart._series) == 4  # eager and compiled of each job
    assert sum(series.data.n for series in window.latency_chart._series.values()) > 0
    window.close_now()


def test_a_chart_built_by_a_runs_event_shows_each_sample_once(qtbot, settings):
    """Built while the session emits a run's samples, the chart shows the session's samples
    and is not handed the same ones a second time by the signal that built it."""
    from gui.window.main_window import MainWindow

    window = MainWindow(settings)
    qtbot.addWidget(window)
    result = fake_result("j1", n=0)
    window.session._results = {"j1": result}  # a run under way, before any chart was built
    assert not window.latency_slot.built
    samples = tuple(rec.LatencySample("compiled", i, 1.0 + i * 0.01, False) for i in range(7))
    assert window.session.apply(ev.LatencyMeasured("j1", samples=samples))
    assert window.latency_slot.built
    shown = sum(series.data.n for series in window.latency_chart._series.values())
    assert shown == 2 + 7  # the fake job's two eager samples and the seven just measured
    window.close_now()


def test_the_launch_imports_no_chart_library_before_the_window_shows(tmp_path):
    """`--exit-after-show` waits for the charts; the window's show comes first, without pyqtgraph."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, "main.py"),
            "--exit-after-show",
            "--print-launch-time",
            "--print-footprint",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    window = float(re.search(r"launch_to_window_s: ([\d.]+)", proc.stdout).group(1))
    charts = float(re.search(r"launch_to_charts_s: ([\d.]+)", proc.stdout).group(1))
    assert window <= charts, proc.stdout
    at_window = next(line for line in proc.stdout.splitlines() if line.startswith("at window footprint:"))
    assert "pyqtgraph=False" in at_window and "torch=False" in at_window, at_window
    assert "pyqtgraph=True" in proc.stdout.splitlines()[-1], proc.stdout


WATCH = """
import importlib.abc, sys, threading
MAIN = threading.main_thread()  # the charts builder's thread imports on its own, after the show
late = []
class Watch(importlib.abc.MetaPathFinder):
    qt = False
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] in ("PySide6", "shiboken6"):
            Watch.qt = True
        elif Watch.qt and name.split(".")[0] in ("core", "numpy", "psutil") and threading.current_thread() is MAIN:
            late.append(name)
        return None
sys.meta_path.insert(0, Watch())
import gui.app
code = gui.app.main(["--exit-after-show"])
print("LATE", " ".join(late))
sys.exit(code)
"""


def test_the_engine_is_imported_before_qt(tmp_path):
    """PySide6 reads the source of every module imported after it (gui.app.ENGINE_MODULES): the
    GUI thread imports every core, numpy and psutil module it needs before Qt (the charts
    builder's thread imports pyqtgraph and RUN_MODULES after the show)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.run([sys.executable, "-c", WATCH], env=env, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    late = next(line for line in proc.stdout.splitlines() if line.startswith("LATE")).split()[1:]
    assert late == [], f"imported after Qt (add them to gui.app.ENGINE_MODULES): {late}"


def test_what_the_launch_made_is_frozen_out_of_full_collections(qtbot, window):
    """Once torch's offer is in and the charts are built, the launch's objects go to the
    collector's permanent generation (gui.qt_compat.freeze_long_lived): a full collection of
    the app then walked ~112k objects, ~44 ms of the GUI thread at a run's end."""
    import gc

    # sig_done comes a turn of the event loop after the last view is built: wait for the freeze
    qtbot.waitUntil(lambda: all(slot.built for slot in window.views) and gc.get_freeze_count() > 10_000, timeout=60_000)


def test_the_window_shortens_the_gil_switch_before_its_threads_start(qtbot, settings):
    """The GUI thread waited up to Python's 5 ms for the GIL at each hand-over while the charts
    builder's thread imported pyqtgraph: the launch's worst gaps were 21-43 ms with ~1 ms of GUI
    CPU in them (issue 22). The window sets the process's switch interval as it is made."""
    from gui import qt_compat
    from gui.window.main_window import MainWindow

    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.005)  # Python's default, whatever an earlier test set
    try:
        window = MainWindow(settings)
        qtbot.addWidget(window)
        assert sys.getswitchinterval() == pytest.approx(qt_compat.GIL_SWITCH_INTERVAL_S)
        assert qt_compat.GIL_SWITCH_INTERVAL_S <= 0.001
        sys.setswitchinterval(0.0002)  # a shorter one set by the user's code stays
        qt_compat.hand_gil_back_soon()
        assert sys.getswitchinterval() == pytest.approx(0.0002)
    finally:
        sys.setswitchinterval(previous)


def test_every_tab_has_its_title_and_tooltip_from_the_one_list(window):
    from gui.panels import TAB_VIEWS

    assert [window.tabs.tabText(i) for i in range(window.tabs.count())] == [tab.title for tab in TAB_VIEWS]
    for i, tab in enumerate(TAB_VIEWS):
        assert tab.tip and window.tabs.tabToolTip(i) == tab.tip, tab.name
    view_menu = [a.text() for a in window.menus.view.actions()]
    assert all(tab.title in view_menu for tab in TAB_VIEWS)


def test_a_staged_view_is_built_in_pieces_and_reached_only_once_whole(qtbot, settings):
    """The Resources tab's plots are made in steps of their own (one per event-loop turn after
    the show, a few ms each: gui.charts.plot_parts): the session, torch's offer and results
    reach the view only once every step ran, and asking for the view runs whatever steps are
    left."""
    from gui.panels import TAB_NAMES
    from gui.window.main_window import MainWindow

    window = MainWindow(settings)  # not shown: only what asks builds
    qtbot.addWidget(window)
    slot = window.tab_views[TAB_NAMES.index("resources")]
    assert not slot.built
    assert not slot.build_step()  # constructed: labels and layout, no plot
    panel = slot._building
    assert panel is not None and panel.cpu_plot is None
    planned = len(slot._steps)
    assert (
        planned == 3 * 6
    )  # per plot: its view box, the box's menu, its axes, its Plot Options form, its PlotItem, then its place
    steps = 0
    while not slot.build_step():
        steps += 1
        if panel.cpu_plot is not None and panel.memory_plot is None:  # one plot in: not reachable
            assert not slot.built and slot._view is None
    assert steps == planned  # then one more: its place in the window
    assert slot.view is panel
    assert slot.view.cpu_plot is not None and slot.view.rss_plot is not None and slot.view.memory_plot is not None
    # bound now: a resource reading of a run reaches it
    result = fake_result("j1", n=0)
    window.session._results = {"j1": result}
    window.session.apply(ev.ResourceSampled("j1", sample=rec.ResourceSample(0.1, "load", 50.0, 700.0)))
    assert slot.view._tracks

    other = MainWindow(settings)
    qtbot.addWidget(other)
    half = other.tab_views[TAB_NAMES.index("resources")]
    half.build_step()  # constructed, no plot yet
    half.build_step()  # the first plot's view box only
    half.build_step()  # and its menu
    assert half.view.memory_plot is not None  # asked for: the remaining steps run at once
    window.close_now()
    other.close_now()


@pytest.mark.parametrize(
    "name, part",
    [
        ("latency", "plot"),
        ("distribution", "plot"),
        ("time-breakdown", "chart"),
        ("throughput", "plot"),
        ("sweep", "chart"),
    ],
)
def test_a_charts_plot_is_made_in_steps_of_its_own(qtbot, settings, name, part):
    """The charts and the Time breakdown, Throughput and Shape sweep tabs took 20-65 ms each to
    build in one turn after the show (a pyqtgraph plot 15-25 ms of it): now the view is
    constructed without its plot, the plot is made in steps (view box, axes, PlotItem), then
    set up and placed; once built, the view shows a result as before."""
    from gui.panels import TAB_NAMES
    from gui.window.main_window import MainWindow

    window = MainWindow(settings)
    qtbot.addWidget(window)
    slots = {"latency": window.latency_slot, "distribution": window.distribution_slot}
    slot = slots.get(name) or window.tab_views[TAB_NAMES.index(name)]
    assert not slot.build_step()  # constructed: the labels and tables, not the plot
    assert getattr(slot._building, part) is None
    taken = 0
    while getattr(slot._building, part) is None:
        assert not slot.build_step()
        taken += 1
    assert taken >= 4  # at least the view box, the axes, the PlotItem and the plot in its place
    while not slot.build_step():  # what else the view makes after its plot, if anything
        pass
    assert slot.built
    result = fake_result("j1")
    slot.view.show_results([result])
    window.close_now()


@pytest.mark.parametrize(
    "name, parts", [("graphs", ("code", "output_code")), ("graph-breaks", ("detail", "compile_panel"))]
)
def test_the_graphs_and_graph_breaks_tabs_are_built_in_steps(qtbot, settings, name, parts):
    """The Graphs tab (five code views, the monospace font's first use) and the Graph breaks
    tab (the detail browser, the compile tables) took 15-31 ms each in one turn after the show:
    now each part is a step of its own, and the tab, once built, shows a result as before."""
    from gui.panels import TAB_NAMES
    from gui.window.main_window import MainWindow

    window = MainWindow(settings)
    qtbot.addWidget(window)
    slot = window.tab_views[TAB_NAMES.index(name)]
    assert not slot.build_step()  # constructed: the table, not the parts
    made = []
    while not slot.build_step():
        made.append(tuple(hasattr(slot._building, part) for part in parts) if slot._building is not None else None)
    assert made[0] == (True, False)  # one part a step
    assert slot.built and all(hasattr(slot.view, part) for part in parts)
    slot.view.show_results([fake_result("j1")])
    window.close_now()


def test_no_collection_while_the_launch_imports_and_what_they_made_is_frozen(qapp):
    """The charts builder's thread imports pyqtgraph and the views' modules (~70,000 objects,
    nearly all kept for good): a young-generation collection of them on the GUI thread's
    collector timer held it ~25 ms. The first time (the launch), no collection while the imports
    run, and what they made is frozen after; later times collect as ever."""
    import gc

    from gui.qt_compat import GarbageCollector

    collector = GarbageCollector(interval_s=3600)
    collector.timer.stop()
    frozen = gc.get_freeze_count()
    with collector.imports_held():
        made = [[] for _ in range(5_000)]  # past generation 0's threshold (700)
        collector.check()
        assert gc.get_count()[0] >= 5_000  # nothing collected meanwhile
    assert gc.get_freeze_count() >= frozen + 5_000  # frozen: never walked again
    with collector.imports_held():  # not the launch any more: collected as ever
        more = [[] for _ in range(5_000)]
        collector.check()
        assert gc.get_count()[0] < 5_000
    assert len(made) == len(more)


def test_the_tab_left_open_is_built_first_and_a_hidden_tab_waits_for_the_show(qtbot, settings):
    """Every tab but the Summary is built after the first show (their modules and construction
    were ~50-100 ms of the time to a visible window): each shows "Loading…" until then, and the
    one the last session left open is built with the charts, before the hidden ones."""
    from PySide6.QtWidgets import QLabel

    from gui.panels import TAB_NAMES
    from gui.window.main_window import MainWindow

    settings.setValue("window/tab", TAB_NAMES.index("graphs"))
    window = MainWindow(settings)
    qtbot.addWidget(window)
    graphs, decision = window.slot("graphs"), window.slot("decision")
    assert window.tabs.currentWidget() is graphs and not graphs.built and not decision.built
    assert [label.text() for label in graphs.findChildren(QLabel)] == [LOADING_TEXT]
    order = []
    for slot in window.views:
        if not slot.built:
            slot.when_built(lambda view, slot=slot: order.append(slot))
    with qtbot.waitSignal(window.charts_builder.sig_done, timeout=60_000):
        window.show()
    # what is in sight first (the two charts above the tabs, the tab), then the window's order
    assert order[:3] == [window.latency_slot, window.distribution_slot, graphs]
    assert order[3:] == [slot for slot in window.views if slot in order[3:]] and decision in order[3:]
    assert decision.built and len(order) == len([slot for slot in window.views if slot is not window.slot("summary")])
    window.close_now()


def test_a_tab_page_scrolled_sideways_starts_at_its_left_edge_with_new_results(qtbot):
    """Issue 44: a page scrolled sideways (a small window) stayed so for the next results."""
    from PySide6.QtWidgets import QScrollArea

    from gui.window.view_slot import ViewSlot

    slot = ViewSlot("gui.panels.summary:SummaryPanel", deferred=False, scrolls=True)
    qtbot.addWidget(slot)
    slot.view.setMinimumWidth(900)
    slot.resize(300, 300)
    slot.show()
    bar = slot.findChild(QScrollArea).horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    bar.setValue(bar.maximum())
    slot.show_results([fake_result("a", "eager")])
    assert bar.value() == 0
