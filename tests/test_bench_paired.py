"""The fidelity bench's verdict (tests/bench/paired.py), with its rounds' processes replaced by
figures made here: rounds stop once both sides are decided, a reference outside ±3% reads "no",
and a round's ratio is each segment's engine median against the Timer readings around it."""

from __future__ import annotations

import itertools

import pytest

import tests.bench.paired as paired


def _rounds(eager_ratio: float, compiled_ratio: float, drift: float = 1.0):
    count = itertools.count()

    def one_round(threads, iters, warmup, min_run, first, segments, timeout_s, device="cpu", batch=1):
        k = next(count)
        jitter = 1 + 0.004 * ((k % 5) - 2)  # ±0.8%, the same for every run of the test
        # the machine drifts through the round: each Timer reading `drift` times the one before;
        # the engine's segment sits between two readings, at their geometric mean
        timer = [{"eager": 50 * drift**i, "compiled": 45 * drift**i} for i in range(segments + 1)]
        ratio = {"eager": eager_ratio * jitter, "compiled": compiled_ratio * jitter}
        engine = [
            {side: ratio[side] * (timer[i][side] * timer[i + 1][side]) ** 0.5 for side in ratio}
            for i in range(segments)
        ]
        found = {
            "engine": engine,
            "engine_faults": {"eager": 0, "compiled": 3},
            "timer": timer,
            "timer_faults": {"eager": 0, "compiled": 2},
            "timer_per_block": {"eager": 1, "compiled": 1},
            "accuracy": "pass",
        }
        return found, 0.01

    return one_round


def _figures(capsys) -> dict[str, str]:
    lines = [line.partition(": ") for line in capsys.readouterr().out.splitlines()]
    return {name: value for name, _, value in lines}


@pytest.mark.parametrize("drift", [1.0, 1.02])
def test_rounds_stop_once_both_sides_are_decided(monkeypatch, capsys, drift):
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 0.99, drift))
    paired.bench_fidelity_paired(["--rounds", "30", "--min-rounds", "10"])
    out = _figures(capsys)
    assert out["fidelity_stopped_early"].startswith("after 10 rounds: both sides")
    assert out["fidelity_eager_graded_within_3pct"] == "yes" and out["fidelity_compiled_graded_within_3pct"] == "yes"
    # the drift within a round cancels: the ratio is the engine's against the readings around it
    assert abs(float(out["fidelity_eager_graded_ratio_engine_over_timer_median"]) - 1.0) < 0.005
    assert abs(float(out["fidelity_compiled_graded_ratio_engine_over_timer_median"]) - 0.99) < 0.005


def test_an_engine_four_percent_fast_reads_no(monkeypatch, capsys):
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 0.96))
    paired.bench_fidelity_paired(["--rounds", "12", "--min-rounds", "10"])
    out = _figures(capsys)
    assert out["fidelity_eager_graded_within_3pct"] == "yes"
    assert out["fidelity_compiled_graded_within_3pct"] == "no: the interval lies outside ±3%"
