"""A script's compiled functions as rows of the graph-break view: their own breaks and recompiles,
the sites counted as a config's are (skipped frames and failed compiles apart), and no measured
cost or CUDA-graph state claimed (a script run has no op profile)."""

from __future__ import annotations

from core.analysis.script_breaks import function_breaks
from core.analysis.script_runs import EntryCalls
from core.vocab.records import GraphBreak, JobStatus, Recompile


def _gb(line: int, **kw) -> GraphBreak:
    return GraphBreak(reason=f"break at {line}", file="train.py", line=line, user_file="train.py", user_line=line, **kw)


def test_each_function_is_a_row_with_its_own_breaks_and_recompiles():
    step = EntryCalls(0, "train_step", "/w/train.py", 41)
    step.graph_breaks = [_gb(12), _gb(12, per_call=2), _gb(30, frame_skipped=True), _gb(31, compile_failed=True)]
    step.recompiles = [Recompile("train_step", "train.py:41", ("tensor 'x' size mismatch at index 0",))]
    evaluate = EntryCalls(1, "evaluate", "/w/train.py", 60)
    rows = function_breaks([step, evaluate])
    assert [r.config.label for r in rows] == ["train_step (train.py:41)", "evaluate (train.py:60)"]
    first = rows[0]
    assert first.graph_breaks == step.graph_breaks and first.recompiles == step.recompiles
    assert first.summary(ci=False) == {"graph_break_sites": 1, "graph_break_per_call": None}
    assert rows[1].summary()["graph_break_sites"] == 0
    assert first.break_cost(step.graph_breaks[0]) is None and not first.per_call_counted(step.graph_breaks[0])
    assert first.cudagraph_state() == ("", "") and first.compile is None
    assert first.ended and first.status == JobStatus.COMPLETED


def test_a_running_script_says_its_rows_are_not_ended():
    (row,) = function_breaks([EntryCalls(0, "f", "/w/a.py", 3)], ended=False)
    assert not row.ended and row.status == JobStatus.RUNNING
