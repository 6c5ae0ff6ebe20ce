"""A view's place in the main window, and the chart views built after the window's first show.

The views that draw with pyqtgraph (the latency and distribution charts, the Resources, Time
breakdown, Shape sweep and Throughput tabs) cost the launch ~0.35 s before this: pyqtgraph's
import (its Qt module reads every PySide6 class, ~0.25 s) and their construction. The window
now shows with a slot in their place ("Loading…"), as it does for every tab not shown first
(their modules and construction were ~50 ms of the time to a visible window with cached
bytecode, ~100 ms without); `ChartsBuilder` imports pyqtgraph and
the views' modules on a worker thread (their imports create no Qt object, and the GUI thread
runs between their bytecodes), then builds the views one piece per turn of the GUI thread's
event loop: a view is made with `staged=True` when it lists `construction_steps()` (every view
here that draws with pyqtgraph: its plots in steps of a few ms, gui.charts.plot_parts), and
then takes one step per turn more. A slot asked for its view sooner (a test, a report opened
from the command line, the first event of a run) builds it at once, so what a view shows
never depends on when it was built. GUI thread only, except the import.
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtWidgets import QFrame, QLabel, QScrollArea, QVBoxLayout, QWidget

from gui.qt_compat import collect_garbage_on_gui_thread, import_modules
from gui.widgets.turns import one_per_turn

LOADING_TEXT = "Loading…"

# What a session emits as a run goes: an unbuilt slot builds its view on any of them
# (gui.run.session.ProfileSession). Not its reset: the window shows a new set of results in
# every view itself (`show_results`, which builds an unbuilt one), catching a report's value a
# view cannot show.
SESSION_SIGNALS = (
    "sig_samples_added",
    "sig_resource_sampled",
    "sig_phase_changed",
    "sig_job_changed",
    "sig_graph_breaks_changed",
    "sig_variant_measured",
    "sig_job_ended",
)


class ScrolledContentLayout(QVBoxLayout):
    """The layout of a scroll area's content: it scrolls only when its room is under its
    minimum size. With a height-for-width layout (a word-wrapped label anywhere inside) Qt's
    scroll area makes the content at least its preferred height for the width, which scrolled
    a panel that fitted."""

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt's name)
        return False


def scroll_area(content: QWidget, *, sideways: bool = True) -> QScrollArea:
    """`content` in a frameless scroll area that scrolls only when the room is under its
    minimum size (else it lays out as without one); `sideways`: also across."""
    holder = QWidget()
    layout = ScrolledContentLayout(holder)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(content)
    scroll = QScrollArea()
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.Shape.NoFrame)
    if not sideways:
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    scroll.setWidget(holder)
    return scroll


class ViewSlot(QWidget):
    """Holds one results view (gui.widgets.view.ResultsView) and passes the window's calls on
    to it; `deferred`: the view is built later (`build`), a placeholder shows until then;
    `scrolls`: a view taller or wider than the room it gets scrolls (a tab's page) rather than
    forcing a bigger window (the tallest tab's page made the window need ~750 px)."""

    def __init__(self, where: str, *, deferred: bool, scrolls: bool = False, parent: QWidget | None = None):
        """`where`: the view's class as "module:Class" (its module is imported when the view is
        built; ChartsBuilder imports a deferred one's off the GUI thread before)."""
        super().__init__(parent)
        self.module, _, self._class_name = where.partition(":")
        self._view = None
        self._session = None
        self._torch_info = None
        self._when_built: list[Callable] = []
        self._building = None  # the view while its construction steps run (build_step)
        self._steps: list[Callable] = []
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self._scroll: QScrollArea | None = None  # the page's scroll area (`scrolls`)
        if scrolls:  # scroll bars only when the room is under the view's minimum: else as without
            content = QWidget()
            self._scroll = scroll_area(content)
            layout.addWidget(self._scroll)
            layout = QVBoxLayout(content)
            layout.setContentsMargins(0, 0, 0, 0)
        self._content = layout  # where the placeholder, then the view, goes
        self._placeholder = None
        if deferred:
            self._placeholder = QLabel(LOADING_TEXT)
            self._placeholder.setAlignment(Qt.AlignmentFlag.AlignCenter)
            self._placeholder.setEnabled(False)  # greyed: nothing to read yet
            layout.addWidget(self._placeholder)
        else:
            self._build()

    # ------------------------------------------------------------------ the view
    @property
    def built(self) -> bool:
        return self._view is not None

    @property
    def building(self) -> bool:
        """Constructed, its construction steps not all run yet."""
        return self._view is None and self._building is not None

    @property
    def view(self):
        """The view, built now if it was not (showing the session's results)."""
        if self._view is None:
            self._build()
            self._show_current()
        return self._view

    def when_built(self, callback: Callable) -> None:
        """Call `callback(view)` once the view exists (now if it does)."""
        if self._view is not None:
            callback(self._view)
        else:
            self._when_built.append(callback)

    def build(self) -> None:
        """Build the view now (ChartsBuilder, after the first show); no-op when it is built."""
        _ = self.view

    def build_step(self) -> bool:
        """One piece of building the view (ChartsBuilder: one per event-loop turn): the view's
        own construction, each of its `construction_steps()`, then its place in the window;
        True once it is built. Nothing reaches the view (the session, torch's offer, results)
        until then."""
        if self._view is not None:
            return True
        if self._building is None:
            self._construct()
            return False  # its place in the window is the next piece: a shown widget lays out and polishes
        if self._steps:
            self._steps.pop(0)()
            return False
        self._build()
        self._show_current()
        return True

    def _construct(self) -> None:
        cls = getattr(importlib.import_module(self.module), self._class_name)
        if sys.modules.get("pyqtgraph") is not None:  # imported by a view that draws with it
            from gui.widgets.theme import apply_chart_theme

            # pyqtgraph's colours from the palette, before its first chart; not for a view
            # without charts, which would import pyqtgraph (~0.3 s) on the GUI thread for nothing
            apply_chart_theme()
        if hasattr(cls, "construction_steps"):  # built in pieces: the view leaves them to us
            self._building = cls(staged=True)
            self._steps = list(self._building.construction_steps())
        else:
            self._building = cls()
            self._steps = []

    def _build(self) -> None:
        if self._building is None:
            self._construct()
        while self._steps:
            self._steps.pop(0)()
        view, self._building = self._building, None
        if self._placeholder is not None:
            self._placeholder.hide()
            self._placeholder.deleteLater()  # not at once: this may run inside one of its parent's events
            self._placeholder = None
        self._content.addWidget(view)
        self._view = view
        if self._session is not None:
            view.bind(self._session)
        if self._torch_info is not None:
            view.set_torch_info(self._torch_info)
        callbacks, self._when_built = self._when_built, []
        for callback in callbacks:
            callback(view)

    def _show_current(self) -> None:
        if self._session is not None and self._session.results:
            self._view.show_results(self._session.results)

    def _on_session_changed(self, *args) -> None:
        if self._view is None:
            _ = self.view  # built with the session's results; it follows the session from now on

    # ------------------------------------------------------------------ what the window calls
    def bind(self, session) -> None:
        self._session = session
        if self._view is not None:
            self._view.bind(session)
            return
        for name in SESSION_SIGNALS:
            signal = getattr(session, name, None)
            if signal is not None:
                signal.connect(self._on_session_changed)

    def show_results(self, results: list) -> None:
        if self._view is None and not results:
            return  # nothing to show: the view is built later, empty
        if self._view is None:
            self._build()
        if self._scroll is not None:  # new results start at the page's left edge, not scrolled past it
            self._scroll.horizontalScrollBar().setValue(0)
        self._view.show_results(results)

    def request_refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if self._view is None:
            _ = self.view  # shows every result, this job's included
            return
        self._view.request_refresh(results, job_id, ended)

    def set_torch_info(self, torch_info) -> None:
        self._torch_info = torch_info
        if self._view is not None:
            self._view.set_torch_info(torch_info)


class ChartsBuilder(QObject):
    """After the window's first show: pyqtgraph, the deferred views' modules (and `also_import`:
    what a run's first events would otherwise import on the GUI thread) imported on a worker
    thread, then each deferred slot built, one piece per event-loop turn, those in sight first
    (the charts, the tab the last session left open). The charts were its first work; every
    deferred view is now. GUI thread only (`start`)."""

    sig_imported = Signal()
    sig_done = Signal()
    """Every slot is built."""

    def __init__(self, slots: list[ViewSlot], parent: QObject | None = None, also_import: tuple[str, ...] = ()):
        super().__init__(parent)
        self._slots = slots
        self._also_import = also_import
        self._started = False
        self.sig_imported.connect(self._build_next, Qt.ConnectionType.QueuedConnection)

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        # the app's garbage collection on the GUI thread before this thread allocates: a full
        # collection run by the import thread held the GIL ~30 ms (51,000 objects), the GUI
        # thread waiting (gui.qt_compat); and none while it imports (`imports_held`)
        self._collector = collect_garbage_on_gui_thread()
        threading.Thread(target=self._import, name="import-pyqtgraph", daemon=True).start()

    def _import(self) -> None:
        # all before the charts are built: the GUI thread then imports nothing this thread is
        # importing (the layers have no import cycle, but no two threads share an import here).
        # The views' own modules too: the Time breakdown tab's imported ~20 ms of modules in
        # the turn that built it (none makes a Qt object at import).
        views = [slot.module for slot in self._slots]
        with self._collector.imports_held():
            import_modules(("pyqtgraph", *self._also_import, *views))
        try:
            self.sig_imported.emit()
        except RuntimeError:  # the window closed meanwhile: nothing left to build
            pass

    def _build_next(self) -> None:
        pending = [slot for slot in self._slots if not slot.built]
        if not pending:
            self.sig_done.emit()
            return
        # the view being built, else one the user sees (the tab the last session left open),
        # else the first in the window's order
        slot = next((s for s in pending if s.building), None) or next((s for s in pending if s.isVisible()), pending[0])
        slot.build_step()
        # the next piece in a later turn, after the timers and paints due (gui.widgets.turns);
        # not once the window (and this) is gone
        one_per_turn(self, self._build_next)
