"""The tab views of the results, in tab order: adding a view means one file here and one entry
in TAB_VIEWS (see gui.widgets.view.ResultsView)."""

from gui.panels.decision import DecisionPanel
from gui.panels.graph_breaks import GraphBreaksPanel
from gui.panels.graphs import GraphsPanel
from gui.panels.resources import ResourcePanel
from gui.panels.summary import SummaryPanel
from gui.panels.sweep import SweepPanel
from gui.panels.throughput import ThroughputPanel
from gui.panels.time_breakdown import TimeBreakdownPanel

TAB_VIEWS = (
    SummaryPanel,
    DecisionPanel,
    ResourcePanel,
    GraphBreaksPanel,
    TimeBreakdownPanel,
    GraphsPanel,
    SweepPanel,
    ThroughputPanel,
)
