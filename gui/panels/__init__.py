"""The tab views of the results, in tab order: adding a view means one file here and one entry
in TAB_VIEWS (see gui.widgets.view.ResultsView).

An entry names its view's class by module, so that listing the tabs (the command line's
`--tab`, the window's tab bar and View menu) imports none of them: the views that draw with
pyqtgraph (`charts`) are built after the window's first show (gui.window.view_slot), which
keeps pyqtgraph's import (~0.25 s) out of the time to a visible window (issue 22).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass


@dataclass(frozen=True)
class TabView:
    """One tab: its --tab name, its title (`&&` is a literal ampersand), its tooltip, where its
    class is ("module:Class") and whether it draws with pyqtgraph (built after the first show)."""

    name: str
    title: str
    where: str
    charts: bool = False
    tip: str = ""

    def load(self) -> type:
        """The view's class (imports its module)."""
        module, _, cls = self.where.partition(":")
        return getattr(importlib.import_module(module), cls)


TAB_VIEWS = (
    TabView("summary", "Summary", "gui.panels.summary:SummaryPanel"),
    TabView("decision", "Decision", "gui.panels.decision:DecisionPanel"),
    TabView("resources", "Resources", "gui.panels.resources:ResourcePanel", charts=True),
    TabView("graph-breaks", "Graph breaks && compile", "gui.panels.graph_breaks:GraphBreaksPanel"),
    TabView("time-breakdown", "Time breakdown", "gui.panels.time_breakdown:TimeBreakdownPanel", charts=True),
    TabView("graphs", "Graphs", "gui.panels.graphs:GraphsPanel"),
    TabView(
        "sweep",
        "Shape sweep",
        "gui.panels.sweep:SweepPanel",
        charts=True,
        tip="Shape sweeps: latency against input shape per config, recompiles with their guard failures, "
        "compile time and the recompile limit",
    ),
    TabView("throughput", "Throughput", "gui.panels.throughput:ThroughputPanel", charts=True),
)
TAB_NAMES = tuple(view.name for view in TAB_VIEWS)
