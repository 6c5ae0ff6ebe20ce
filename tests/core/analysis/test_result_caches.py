"""JobResult's figures computed once per state: the app's Summary asks for them every second
while a job runs, on the GUI thread (issue 22)."""

from __future__ import annotations

import dataclasses

import pytest

import core.analysis.time_breakdown as time_breakdown
from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab import op_records as oprec
from core.vocab import records as rec
from tests.core.fakes import fake_result


def _profile(ms_per_call: float) -> oprec.OpProfile:
    return oprec.OpProfile(
        calls=1,
        eager=oprec.SideOpProfile("eager", calls=1, ms_per_call=2.0, operators_per_call=4),
        compiled=oprec.SideOpProfile(
            "compiled", calls=1, ms_per_call=ms_per_call, in_graphs_ms=0.9 * ms_per_call, graphs_per_call=1
        ),
    )


def test_the_time_verdict_is_computed_once_per_state_and_again_when_it_changes(monkeypatch):
    calls = []
    real = time_breakdown.time_verdict

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(time_breakdown, "time_verdict", counting)
    gb = rec.GraphBreak(reason="Skip calling", file="/x/model.py", line=17, per_call=1)
    result = fake_result(eager_ms=10.0, compiled_ms=5.0, n=200, graph_breaks=[gb])
    result.op_profile = _profile(1.0)
    first = result.time_verdict()
    assert first and result.summary(ci=False)["time_verdict"] == first and result.time_verdict() == first
    assert len(calls) == 1  # the Summary's refreshes and the tab's read reuse it

    result.apply(ev.LatencyMeasured(result.job_id, samples=(rec.LatencySample("compiled", 999, 50.0),)))
    result.time_verdict()
    assert len(calls) == 2  # a new timed call: the medians may have moved

    result.graph_breaks[0] = dataclasses.replace(result.graph_breaks[0], per_call=3)  # replaced in place
    result.time_verdict()
    assert len(calls) == 3

    result.op_profile = _profile(4.0)  # a new profile, same counts
    assert result.time_verdict() != first and len(calls) == 4


@pytest.fixture
def resamples(monkeypatch) -> list:
    """The `resamples` of every speedup JobResult computes (0: the point figure alone)."""
    import core.analysis.results as results

    asked = []
    real = results.speedup_over_processes

    def recording(*args, **kwargs):
        asked.append(kwargs.get("resamples"))
        return real(*args, **kwargs)

    monkeypatch.setattr(results, "speedup_over_processes", recording)
    return asked


def test_a_running_job_s_verdict_needs_no_bootstrap(resamples):
    result = JobResult(fake_result().spec)
    result.apply(ev.JobStarted(result.job_id, pid=1))
    samples = [
        rec.LatencySample(side, i, ms + 0.01 * i) for i in range(50) for side, ms in (("eager", 2.0), ("compiled", 1.0))
    ]
    result.apply(ev.LatencyMeasured(result.job_id, samples=tuple(samples)))
    result.op_profile = _profile(1.0)
    assert not result.ended and result.time_verdict()
    assert resamples == [0]  # the Summary asks every second while the further processes time calls
    result.apply(ev.JobCompleted(result.job_id, wall_time_s=1.0))
    assert result.ended and result.time_verdict() and resamples == [0, 2000]  # the interval, once it ended


def test_the_summary_s_verdict_uses_the_summary_s_own_figures_and_equals_the_verdict_alone(resamples):
    """The row's verdict is made from the medians and speedup the row has just computed (they
    were computed twice a refresh), and says what the verdict alone says: with the interval
    exactly when the job has ended (a tie is told from the interval)."""
    running = fake_result(eager_ms=5.0, compiled_ms=5.0, noise=0.05, n=60, status="running")
    running.op_profile = _profile(1.0)
    row = running.summary(ci=False)
    assert resamples == [0]  # once, not again for the verdict
    running._verdict_cache = None
    assert row["time_verdict"] == running.time_verdict()

    ended = fake_result(eager_ms=5.0, compiled_ms=5.0, noise=0.05, n=60)
    ended.op_profile = _profile(1.0)
    alone = ended.time_verdict()
    assert "within the noise" in alone, alone  # a tie, told from the interval
    for ci in (True, False):  # without the interval, the row leaves the verdict its own figures
        ended._verdict_cache = None
        assert ended.summary(ci=ci)["time_verdict"] == alone

    # further processes (the speedup over them), and a compiled side with no calls yet
    several = fake_result(eager_ms=5.0, compiled_ms=4.0, n=60, processes={1: 4.1, 2: 3.9}, status="running")
    one_side = JobResult(several.spec)
    one_side.apply(ev.JobStarted(one_side.job_id, pid=1))
    one_side.apply(ev.LatencyMeasured(one_side.job_id, samples=(rec.LatencySample("eager", 0, 5.0),)))
    for result in (several, one_side):
        result.op_profile = _profile(1.0)
        row = result.summary(ci=False)
        result._verdict_cache = None
        assert row["time_verdict"] == result.time_verdict()
