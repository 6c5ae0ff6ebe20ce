"""The tab views of the results, in tab order: adding a view means one file here and one entry
in TAB_VIEWS (see gui.widgets.view.ResultsView).

An entry names its view's class by module, so that listing the tabs (the command line's
`--tab`, the window's tab bar and View menu) imports none of them: every view but the tab shown
first (`at_launch`) is built after the window's first show (gui.window.view_slot), which keeps
pyqtgraph's import (~0.25 s) and the hidden tabs' modules and construction (~50 ms with cached
bytecode, ~100 ms without) out of the time to a visible window.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TabView:
    """One tab: its --tab name, its title (`&&` is a literal ampersand), its tooltip, where its
    class is ("module:Class") and whether it is built with the window (`at_launch`: the tab
    shown first); the others are built after the window's first show (gui.window.view_slot)."""

    name: str
    title: str
    where: str
    at_launch: bool = False
    tip: str = ""


TAB_VIEWS = (
    TabView(
        "summary",
        "Summary",
        "gui.panels.summary:SummaryPanel",
        at_launch=True,
        tip="Figures per config: latency percentiles, speedup, compile time, break-even",
    ),
    TabView(
        "decision",
        "Decision",
        "gui.panels.decision:DecisionPanel",
        tip="Which config to ship for the expected calls, the code for it, and what to try next",
    ),
    TabView(
        "resources",
        "Resources",
        "gui.panels.resources:ResourcePanel",
        tip="CPU, memory (and GPU) of the job process over time, by phase",
    ),
    TabView(
        "graph-breaks",
        "Graph breaks && compile",
        "gui.panels.graph_breaks:GraphBreaksPanel",
        tip="Graph breaks with explanations and hints; compile-time breakdown; recompiles",
    ),
    TabView(
        "time-breakdown",
        "Time breakdown",
        "gui.panels.time_breakdown:TimeBreakdownPanel",
        tip="Where the time of one call goes, eager against compiled: categories, operators and kernels, break costs",
    ),
    TabView(
        "graphs",
        "Graphs",
        "gui.panels.graphs:GraphsPanel",
        tip="What the compiler made: each graph's FX code, guards and generated code; recompiles; the compile log",
    ),
    TabView(
        "sweep",
        "Shape sweep",
        "gui.panels.sweep:SweepPanel",
        tip="Shape sweeps: latency against input shape per config, recompiles with their guard failures, "
        "compile time and the recompile limit",
    ),
    TabView(
        "throughput",
        "Throughput",
        "gui.panels.throughput:ThroughputPanel",
        tip="Batch sweeps: items per second against batch size, eager and compiled, per config",
    ),
)
TAB_NAMES = tuple(view.name for view in TAB_VIEWS)
