"""A profiled script's compiled functions as the "Graph breaks & compile" view reads a config's
results: each function's graph breaks (torch's reason, GB code, hints, the script's own line) and
recompiles (their guard failures), labelled by the function and the line that compiled it.

The view shows a model's configs from `JobResult`; a script's functions carry the same records
(core.vocab.records.GraphBreak and Recompile, folded by core.analysis.script_runs) but no op
profile, so nothing here claims one: no break has a measured cost, its per-call count is torch's
count from the compile alone, and no CUDA-graph state is said. `FunctionBreaks` answers exactly
the members the view reads (`BreaksSource`), which `JobResult` answers too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from core.analysis.graph_break_rows import is_ordinary
from core.vocab.records import GraphBreak, JobStatus, Recompile


class BreaksSource(Protocol):
    """What the graph-break view reads of one row's source: a config's JobResult, or one compiled
    function of a script (FunctionBreaks)."""

    config: Any  # has .label
    graph_breaks: list[GraphBreak]
    recompiles: list[Recompile]
    compile: Any  # a CompileRecord, or None where there is no compile breakdown
    ended: bool
    status: Any

    def break_cost(self, gb: GraphBreak) -> Any: ...
    def per_call_counted(self, gb: GraphBreak) -> bool: ...
    def summary(self, ci: bool = True) -> dict: ...
    def cudagraph_state(self) -> tuple[str, str]: ...


@dataclass(frozen=True)
class FunctionLabel:
    """A compiled function's name for the view's rows: "train_step (train.py:41)"."""

    label: str


@dataclass
class FunctionBreaks:
    """One compiled function of a script run, for the graph-break view."""

    config: FunctionLabel
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    compile: None = None  # a script run records its compile frames, not a stage breakdown per config
    ended: bool = True
    status: JobStatus = JobStatus.COMPLETED

    def break_cost(self, gb: GraphBreak) -> None:
        """No op profile runs in a script: no break has a measured cost."""
        return None

    def per_call_counted(self, gb: GraphBreak) -> bool:
        """A break's per-call count comes from the compile alone (no op profile counted it)."""
        return False

    def summary(self, ci: bool = True) -> dict:
        sites = len({gb.key for gb in self.graph_breaks if is_ordinary(gb)})
        return {"graph_break_sites": sites, "graph_break_per_call": None}

    def cudagraph_state(self) -> tuple[str, str]:
        return "", ""


def function_breaks(entries, ended: bool = True) -> list[FunctionBreaks]:
    """The graph-break view's rows for a script run's compiled functions (EntryCalls, in the
    order they were first compiled); `ended`: the run is over (else the view says the counts may
    still grow)."""
    return [
        FunctionBreaks(
            FunctionLabel(f"{e.name} ({e.where})"),
            list(e.graph_breaks),
            list(e.recompiles),
            ended=ended,
            status=JobStatus.COMPLETED if ended else JobStatus.RUNNING,
        )
        for e in entries
    ]
