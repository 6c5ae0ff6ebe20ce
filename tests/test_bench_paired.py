"""The fidelity bench's verdict (tests/bench/paired.py), with its rounds' processes replaced by
figures made here: rounds stop once every side×timing method is decided, a reference outside ±3%
reads "no", a round's ratio is each segment's engine median against the Timer readings around
it, and the two timing methods are compared per side."""

from __future__ import annotations

import itertools

import pytest

import tests.bench.paired as paired
from tests.bench.fidelity import fidelity


def _rounds(eager_ratio: float, compiled_ratio: float, drift: float = 1.0, throughput: float = 1.0, seen=None):
    """A stand-in for paired._round: each segment reads `ratio` times the Timer readings around it,
    a throughput segment `throughput` times that again."""
    count = itertools.count()

    def one_round(
        threads, iters, warmup, min_run, first, segments, timeout_s, device="cpu", batch=1, methods=("latency",)
    ):
        if seen is not None:
            seen.append(tuple(methods))
        k = next(count)
        jitter = 1 + 0.004 * ((k % 5) - 2)  # ±0.8%, the same for every run of the test
        plan = [m for j in range(segments) for m in (methods if j % 2 == 0 else methods[::-1])]
        # the machine drifts through the round: each Timer reading `drift` times the one before;
        # the engine's segment sits between two readings, at their geometric mean
        timer = [{"eager": 50 * drift**i, "compiled": 45 * drift**i} for i in range(len(plan) + 1)]
        ratio = {"eager": eager_ratio * jitter, "compiled": compiled_ratio * jitter}
        engine = [
            {"method": m}
            | {
                side: ratio[side]
                * (throughput if m == "throughput" else 1.0)
                * (timer[i][side] * timer[i + 1][side]) ** 0.5
                for side in ratio
            }
            for i, m in enumerate(plan)
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
    paired.bench_fidelity_paired(["--rounds", "30", "--min-rounds", "10", "--timing", "latency"])
    out = _figures(capsys)
    assert out["fidelity_stopped_early"].startswith("after 10 rounds: every side×method")
    assert out["fidelity_eager_graded_within_3pct"] == "yes" and out["fidelity_compiled_graded_within_3pct"] == "yes"
    # the drift within a round cancels: the ratio is the engine's against the readings around it
    assert abs(float(out["fidelity_eager_graded_ratio_engine_over_timer_median"]) - 1.0) < 0.005
    assert abs(float(out["fidelity_compiled_graded_ratio_engine_over_timer_median"]) - 0.99) < 0.005
    # one method: no throughput figures and no comparison
    assert not any("throughput" in name for name in out)


def test_an_engine_four_percent_fast_reads_no(monkeypatch, capsys):
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 0.96))
    paired.bench_fidelity_paired(["--rounds", "12", "--min-rounds", "10", "--timing", "latency"])
    out = _figures(capsys)
    assert out["fidelity_eager_graded_within_3pct"] == "yes"
    assert out["fidelity_compiled_graded_within_3pct"] == "no: the interval lies outside ±3%"


@pytest.mark.parametrize("drift", [1.0, 1.02])
def test_both_methods_by_default_each_side_and_method_decided(monkeypatch, capsys, drift):
    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 0.99, drift, seen=seen))
    paired.bench_fidelity_paired(["--rounds", "30", "--min-rounds", "10"])
    out = _figures(capsys)
    assert out["fidelity_stopped_early"].startswith("after 10 rounds: every side×method")
    for key in ("eager", "compiled", "eager_throughput", "compiled_throughput"):
        assert out[f"fidelity_{key}_graded_within_3pct"] == "yes"
    assert abs(float(out["fidelity_compiled_throughput_graded_ratio_engine_over_timer_median"]) - 0.99) < 0.005
    # the method timed first flips by round
    assert seen[:2] == [("latency", "throughput"), ("throughput", "latency")]
    for side in ("eager", "compiled"):
        line = out[f"fidelity_{side}_throughput_over_latency"]
        assert line.startswith("1.000 (95% interval") and "graded n=10 rounds" in line
        assert "the two methods agree" in line and "as they should on a CPU" in line


def test_a_throughput_method_four_percent_fast_reads_no_and_the_gap_is_named(monkeypatch, capsys):
    """Stops only once every side×method is decided: throughput "no", latency "yes"."""
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 1.0, throughput=0.96))
    paired.bench_fidelity_paired(["--rounds", "12", "--min-rounds", "10", "--device", "cuda"])
    out = _figures(capsys)
    assert out["fidelity_eager_graded_within_3pct"] == "yes"
    assert out["fidelity_eager_throughput_graded_within_3pct"] == "no: the interval lies outside ±3%"
    line = out["fidelity_eager_throughput_over_latency"]
    assert line.startswith("0.960") and "reads 4.0% faster" in line and "as on a GPU it should" in line


def test_the_stopping_rule_waits_for_an_undecided_method(monkeypatch, capsys):
    # throughput 2.8% fast with ±0.8% jitter: its interval straddles 0.97, so it stays undecided
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 1.0, throughput=0.972))
    paired.bench_fidelity_paired(["--rounds", "12", "--min-rounds", "10"])
    out = _figures(capsys)
    assert "fidelity_stopped_early" not in out  # ran all 12 rounds
    assert out["fidelity_eager_throughput_graded_within_3pct"].startswith("undecided")


def test_segment_ratios_by_method():
    found = {
        "timer": [{"eager": 10.0}, {"eager": 40.0}, {"eager": 10.0}, {"eager": 10.0}],
        "engine": [
            {"method": "latency", "eager": 20.0},
            {"method": "throughput", "eager": 10.0},
            {"method": "latency", "eager": 11.0},
        ],
    }
    assert paired.segment_ratios(found, "eager") == {"latency": [1.0, 1.1], "throughput": [0.5]}
    del found["engine"][1]["method"]  # a segment without a method: the latency method (the child's default)
    assert paired.segment_ratios(found, "eager") == {"latency": [1.0, 0.5, 1.1]}


@pytest.mark.parametrize(
    "device, median, low, high, expected",
    [
        ("cpu", 1.0, 0.99, 1.01, "as they should on a CPU"),
        ("cuda", 1.0, 0.99, 1.01, "does not show at this model and batch"),
        ("cuda", 0.92, 0.9, 0.94, "reads 8.0% faster (the interval lies below 1), as on a GPU it should"),
        ("cpu", 0.95, 0.94, 0.96, "though on a CPU calls back to back have no launch work to overlap"),
        ("cpu", 1.05, 1.04, 1.06, "reads 5.0% slower"),
        ("cuda", 1.05, 1.04, 1.06, "reads 5.0% slower"),
    ],
)
def test_methods_reading(device, median, low, high, expected):
    assert expected in paired.methods_reading(device, median, low, high, 0.96)
    assert paired.methods_reading(device, median, low, high, 0.9) == "too few rounds for a 95% interval"


def test_timing_choices():
    assert paired.timing_methods("both") == ("latency", "throughput")
    assert paired.timing_methods("throughput") == ("throughput",)
    assert paired.figure_key("eager", "latency") == "eager"
    assert paired.figure_key("compiled", "throughput") == "compiled_throughput"
    with pytest.raises(SystemExit):
        paired.timing_methods("blocks")
    with pytest.raises(SystemExit, match="--pairing process only"):
        fidelity(["--pairing", "processes", "--timing", "both"])


def test_the_throughput_method_alone(monkeypatch, capsys):
    seen: list[tuple[str, ...]] = []
    monkeypatch.setattr(paired, "_round", _rounds(1.0, 1.0, throughput=1.01, seen=seen))
    paired.bench_fidelity_paired(["--rounds", "12", "--min-rounds", "10", "--timing", "throughput"])
    out = _figures(capsys)
    assert set(seen) == {("throughput",)}
    assert out["fidelity_eager_throughput_graded_within_3pct"] == "yes"
    assert "fidelity_eager_graded_within_3pct" not in out and "fidelity_eager_throughput_over_latency" not in out
