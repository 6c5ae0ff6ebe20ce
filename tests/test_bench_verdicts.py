"""The verdicts benchmark's classification (tests/bench/verdicts.py, issue 45) on made-up reports:
no torch runs, seconds."""

from __future__ import annotations

import json

import pytest

from tests.bench import verdicts as v


def row(label, speedup, low=None, high=None, *, eligible=True, timing="quiet", why_not="", reached=True):
    """A config as `job_row` reads it from a report."""
    return {
        "label": label,
        "status": "completed" if speedup is not None else "failed",
        "failure": "" if speedup is not None else "compile failed",
        "speedup": speedup,
        "low": speedup if low is None else low,
        "high": speedup if high is None else high,
        "compile_s": 10.0,
        "timing": timing,
        "timing_reason": "other processes used 1.0 of 2 cores while calls were timed" if timing != "quiet" else "",
        "precision_pct": 1.5,
        "precision_reached": reached,
        "eligible": eligible,
        "why_not": why_not,
        "others_cores": 0.02,
    }


def ref(label, speedup, low=None, high=None):
    return row(label, speedup, low, high, eligible=False, why_not=f"backend {label} is a debugging reference")


def product(pick, confidence, rows, tied=(), suggestions=()):
    return {
        "pick": pick,
        "confidence": confidence,
        "tied": list(tied),
        "sentence": "",
        "calls": 10000,
        "rows": rows,
        "top_suggestion": "",
        "suggestions": list(suggestions),
    }


FREEZING = "inductor/freezing=True"
AUTOTUNE = "inductor/max-autotune-no-cudagraphs"


# ------------------------------------------------------------------ the truth
def test_the_truth_is_the_fastest_option_apart_from_the_others():
    truth = v.truth_verdict([row("inductor", 1.30, 1.25, 1.35), row(FREEZING, 1.10, 1.05, 1.15), ref("eager", 0.9)])
    assert truth["decided"] and truth["best"] == "inductor" and truth["ties"] == ["inductor"]
    assert [r["label"] for r in truth["ranking"]] == ["inductor", FREEZING, v.NOT_COMPILED]
    assert "debugging reference" in truth["left_out"]["eager"]


def test_overlapping_intervals_make_a_tie_set_not_a_winner():
    truth = v.truth_verdict([row("inductor", 1.30, 1.20, 1.40), row(FREEZING, 1.32, 1.25, 1.38)])
    assert not truth["decided"]
    assert truth["best"] == FREEZING and set(truth["ties"]) == {FREEZING, "inductor"}
    assert v.truth_text(truth) == f"tie: {FREEZING}, inductor"


def test_not_compiling_wins_when_every_compiled_config_is_slower():
    truth = v.truth_verdict([row("inductor", 0.80, 0.78, 0.82), row(FREEZING, 0.95, 0.90, 1.02)])
    assert truth["best"] == v.NOT_COMPILED
    assert truth["ties"] == [v.NOT_COMPILED, FREEZING]  # freezing's interval reaches 1


def test_the_truth_leaves_out_failed_busy_and_reference_configs():
    busy = {**row(FREEZING, 2.0, 1.9, 2.1, timing="unusable"), "others_cores": 1.2}
    truth = v.truth_verdict([row("inductor", None), busy, ref("eager", 1.0)])
    assert not truth["measured"] and truth["best"] == v.NOT_COMPILED
    assert set(truth["left_out"]) == {"inductor", FREEZING, "eager"}
    assert truth["left_out"][FREEZING] == "the machine was busy: other processes used 1.20 cores"


def test_processes_that_disagree_stay_in_the_truth_with_their_wide_interval():
    truth = v.truth_verdict([row("inductor", 0.75, 0.55, 1.02, timing="unusable")])
    assert truth["measured"] and not truth["decided"] and truth["ties"] == [v.NOT_COMPILED, "inductor"]


# ------------------------------------------------------------------ agreement
def test_the_same_pick_agrees():
    truth = [row("inductor", 1.5, 1.45, 1.55), row(FREEZING, 1.2, 1.15, 1.25)]
    got = v.agreement(product("inductor", "clear", [row("inductor", 1.48, 1.40, 1.56)]), truth)
    assert got["outcome"] == "agree" and got["agree"] is True and got["cause"] == ""


def test_a_pick_within_the_truths_tie_set_agrees():
    truth = [row("inductor", 1.30, 1.20, 1.40), row(FREEZING, 1.32, 1.25, 1.38)]
    got = v.agreement(product("inductor", "clear", [row("inductor", 1.3, 1.2, 1.4)]), truth)
    assert got["agree"] is True and "tie set" in got["why"]


def test_a_config_the_default_does_not_try_is_named_as_the_cause():
    truth = [row("inductor", 1.2, 1.15, 1.25), row(FREEZING, 1.6, 1.55, 1.65)]
    got = v.agreement(product("inductor", "clear", [row("inductor", 1.2, 1.12, 1.28)]), truth)
    assert got["outcome"] == "disagree" and got["agree"] is False
    assert got["cause"] == "not tried" and FREEZING in got["why"]


def test_figures_that_miss_the_truths_are_a_timing_cause():
    # the default run found inductor faster; the truth finds it slower, beyond the noise
    truth = [row("inductor", 0.85, 0.83, 0.87)]
    p = product("inductor", "clear", [row("inductor", 1.10, 1.02, 1.18, timing="noisy")])
    got = v.agreement(p, truth)
    assert got["cause"] == "timing"
    assert "measured inductor 1.10x [1.02-1.18], the truth 0.85x [0.83-0.87]" in got["why"]
    assert "its timing was noisy" in got["why"]


def test_figures_that_agree_with_a_wrong_pick_blame_the_rule():
    truth = [row("inductor", 0.85, 0.83, 0.87)]
    got = v.agreement(product("inductor", "clear", [row("inductor", 0.86, 0.82, 0.90)]), truth)
    assert got["cause"] == "rule" and "agree with the truth's" in got["why"]


def test_not_compiling_for_the_compile_cost_is_told_apart():
    truth = [row("inductor", 1.5, 1.45, 1.55)]
    got = v.agreement(product(v.NOT_COMPILED, "clear", [row("inductor", 1.5, 1.4, 1.6)]), truth)
    assert got["cause"] == "compile cost" and "10,000 calls" in got["why"]


def test_a_pick_for_the_calls_asked_that_named_the_truths_best_for_a_longer_run():
    """Plain inductor chosen for 10,000 calls, max-autotune-no-cudagraphs named faster a call (and
    the truth's best): a disagreement for the compile, counted apart."""
    truth = [row("inductor", 2.23, 2.14, 2.33), row(AUTOTUNE, 2.49, 2.40, 2.58)]
    p = product("inductor", "clear", [row("inductor", 2.2, 2.1, 2.3), row(AUTOTUNE, 2.5, 2.4, 2.6)])
    assert v.agreement(p, truth)["cause"] == "rule"  # without naming it: a wrong rule
    p.update(faster_per_call=AUTOTUNE, overtakes_after_calls=48_000.0)
    got = v.agreement(p, truth)
    assert got["outcome"] == "disagree" and got["agree"] is False and got["cause"] == "compile cost"
    assert "overtaking inductor after 48,000 calls" in got["why"] and "at 10,000 calls" in got["why"]
    s = v.summarize({"m": {"product": p, "verdict": got}})
    assert s["named_for_longer_run"] == 1 and s["agreement_rate"] == "0/1 (0%)"
    assert "verdicts_truths_best_named_for_a_longer_run: 1" in v.summary_lines(s)
    # naming a config that is not the truth's best changes nothing
    p.update(faster_per_call=FREEZING)
    assert v.agreement(p, truth)["cause"] == "rule"


def test_cannot_tell_where_the_truth_could_is_counted_apart_with_its_reason():
    truth = [row("inductor", 0.80, 0.78, 0.82)]
    p = product("", "cannot tell", [row("inductor", 0.9, 0.6, 1.3, timing="unusable", reached=False)])
    got = v.agreement(p, truth)
    assert got["outcome"] == "product cannot tell" and got["agree"] is None and got["cause"] == "timing"
    assert "could tell: not compiled" in got["why"] and "its timing was unusable" in got["why"]
    # "not compiled" meanwhile, within the noise, is a cannot-tell too
    p = product(v.NOT_COMPILED, "cannot tell", [row("inductor", 1.01, 0.95, 1.07)], tied=["inductor"])
    assert v.agreement(p, truth)["outcome"] == "product cannot tell"


def test_cannot_tell_where_the_truth_cannot_either_agrees():
    truth = [row("inductor", 1.01, 0.99, 1.03)]
    got = v.agreement(product("", "cannot tell", [row("inductor", 1.0, 0.9, 1.1)]), truth)
    assert got["outcome"] == "both cannot tell" and got["agree"] is True


def test_no_truth_and_a_pick_outside_the_candidates_are_not_judged():
    got = v.agreement(product("inductor", "clear", [row("inductor", 1.5, 1.4, 1.6)]), [ref("eager", 1.0)])
    assert got["outcome"] == "no truth" and got["agree"] is None
    truth = [row(FREEZING, 1.5, 1.4, 1.6)]
    got = v.agreement(product("inductor", "clear", [row("inductor", 1.5, 1.4, 1.6)]), truth)
    assert got["outcome"] == "pick not in the truth" and got["agree"] is None


# ------------------------------------------------------------------ suggestions
def test_compiled_lost_by_the_default_run_or_by_the_truth():
    assert v.compiled_lost(product("", "cannot tell", [row("inductor", 0.95, 0.8, 1.1)]), [])
    assert v.compiled_lost(
        product("", "cannot tell", [row("inductor", 1.02, 0.8, 1.2)]), [row("inductor", 0.8, 0.78, 0.82)]
    )
    assert not v.compiled_lost(product("inductor", "clear", [row("inductor", 1.2, 1.1, 1.3)]), [row("inductor", 1.2)])


def test_the_suggestion_applied_is_the_first_with_a_real_change():
    suggestions = [
        {"rule": "compile_cache", "title": "cache", "config": "inductor", "changes": [{"rerun_only": True}]},
        {
            "rule": "freezing",
            "title": "freeze",
            "config": "inductor",
            "changes": [{"inductor_options": {"freezing": True}}],
        },
    ]
    chosen = v.suggestion_to_apply(product("", "cannot tell", [], suggestions=suggestions))
    assert chosen["rule"] == "freezing"
    assert v.suggestion_to_apply(product("", "cannot tell", [], suggestions=suggestions[:1])) is None
    config = {"backend": "inductor", "mode": "default", "dynamic": "auto", "fullgraph": False}
    new = v.applied_config(config, chosen["change"])
    assert new["inductor_options"] == {"freezing": True}
    assert v.config_args(new)[-2:] == ["--inductor-option", "freezing=True"]


@pytest.mark.parametrize(
    "after, effect",
    [
        (row("inductor", 1.2, 1.1, 1.3), "faster beyond the noise"),
        (row("inductor", 0.7, 0.65, 0.75), "slower beyond the noise"),
        (row("inductor", 0.92, 0.85, 0.99), "within the noise"),
        (row("inductor", 1.2, 1.1, 1.3, timing="unusable"), "cannot tell (a timing graded unusable)"),
        (None, "cannot tell (no speedup measured)"),
    ],
)
def test_the_effect_of_an_applied_suggestion(after, effect):
    assert v.suggestion_effect(row("inductor", 0.9, 0.85, 0.95), after) == effect


def test_config_args_carry_every_setting():
    config = {
        "backend": "inductor",
        "mode": "default",
        "dynamic": "true",
        "fullgraph": True,
        "dynamo_config": {"allow_rnn": True},
        "inductor_options": {},
        "mark_dynamic": [
            {"input": 0, "dim": 1, "min": 8, "max": 512},
            {"input": 1, "dim": 0, "min": None, "max": None},
        ],
    }
    assert v.config_args(config) == [
        *("--backend", "inductor", "--mode", "default", "--dynamic", "true", "--fullgraph"),
        *("--dynamo-config", "allow_rnn=True", "--mark-dynamic", "0:1:8:512", "--mark-dynamic", "1:0"),
    ]


# ------------------------------------------------------------------ reading a report
def report(speedup=0.8, grade="noisy", eligible=True, suggestions=()):
    config = {"backend": "inductor", "mode": "default", "dynamic": "auto", "fullgraph": False}
    return {
        "recommendation": {
            "calls": 10000,
            "choice": v.NOT_COMPILED,
            "confidence": "clear",
            "tied": [],
            "sentence": "Do not compile.",
            "options": [
                {"label": v.NOT_COMPILED, "eligible": True, "why_not": ""},
                {"label": "inductor", "eligible": eligible, "why_not": "" if eligible else "its outputs differ"},
            ],
        },
        "suggestions": list(suggestions),
        "jobs": [
            {
                "spec": {"config": config},
                "status": "completed",
                "failure_reason": "",
                "summary": {
                    "speedup": speedup,
                    "speedup_ci_low": speedup - 0.05,
                    "speedup_ci_high": speedup + 0.05,
                    "compile_time_s": 12.0,
                    "precision_pct": 2.5,
                    "precision_reached": False,
                    "processes": 3,
                    "graph_break_sites": 1,
                    "frames_skipped": 0,
                },
                "quality": {"grade": grade, "reasons": ["spread", "drift"], "others_cores": 0.1},
            }
        ],
    }


def test_a_report_read_as_the_product_answered():
    doc = report(suggestions=[{"rule": "freezing", "title": "freeze the weights", "config": "inductor", "changes": []}])
    p = v.product_answer(json.loads(json.dumps(doc)))
    assert (
        p["pick"] == v.NOT_COMPILED
        and p["confidence"] == "clear"
        and p["top_suggestion"] == "[freezing] freeze the weights"
    )
    # a setting the run did not try, with nothing measured for it, is no suggestion from the measurements
    untried = {"rule": "freezing", "title": "Not tried: freezing", "config": "inductor", "untried": True}
    cache = {"rule": "compile_cache", "title": "cache", "config": "inductor", "changes": [{"rerun_only": True}]}
    p = v.product_answer(json.loads(json.dumps(report(suggestions=[untried | {"changes": [{"x": 1}]}, cache]))))
    assert p["top_suggestion"] == "[compile_cache] cache" and p["untried"] == ["[freezing] inductor"]
    assert [s["rule"] for s in p["suggestions"]] == ["compile_cache"] and v.suggestion_to_apply(p) is None
    (r,) = p["rows"]
    assert (
        r["label"] == "inductor" and r["eligible"] and r["timing"] == "noisy" and r["timing_reason"] == "spread; drift"
    )
    assert (r["low"], r["high"]) == pytest.approx((0.75, 0.85))
    assert not v.job_row(report(eligible=False))["eligible"]


def test_the_summary_and_the_table():
    truth = [row("inductor", 0.80, 0.78, 0.82)]
    agree_p = product(v.NOT_COMPILED, "clear", [row("inductor", 0.8, 0.75, 0.85)])
    tell_p = product("", "cannot tell", [row("inductor", 0.9, 0.6, 1.3, timing="unusable")])
    records = {
        "a": {
            "product": agree_p,
            "verdict": v.agreement(agree_p, truth),
            "suggestion": {"lost": True, "effect": "faster beyond the noise"},
            "load": {"others_cores": 0.1, "jobs_others_cores_max": 0.2},
        },
        "b": {
            "product": tell_p,
            "verdict": v.agreement(tell_p, truth),
            "suggestion": {"lost": True, "effect": "within the noise"},
            "load": {"others_cores": 0.3, "jobs_others_cores_max": 0.9},
        },
        "c": {"errors": ["product: profile timed out after 3600 s"]},
    }
    s = v.summarize(records)
    assert s["models"] == 2 and s["agreement_rate"] == "1/1 (100%)" and s["product_cannot_tell_truth_could"] == 1
    assert s["suggestion_hit_rate"] == "1/2 (50%)" and s["causes"] == {"timing": 1}
    assert s["others_cores_max"] == 0.3 and s["jobs_others_cores_max"] == 0.9
    table = v.table_lines(records)
    assert table[2].startswith("| a | not compiled (clear) | not compiled | yes |")
    assert table[3].startswith("| b | - (cannot tell) | not compiled | - | product cannot tell; timing: ")
    assert table[4] == "| c | - | - | - | product: profile timed out after 3600 s |"
    assert any("suggestion_hit_rate: 1/2" in line for line in v.summary_lines(s))
    records["a"]["suggestion"].update(
        top="[freezing] freeze", applied="[freezing] freeze: freezing=True", before=row("inductor", 0.8, 0.75, 0.85)
    )
    records["a"]["suggestion"]["after"] = row("inductor", 1.1, 1.0, 1.2)
    records["b"]["suggestion"] = {"lost": True, "top": "", "effect": "", "why": "no suggestion with a change"}
    assert v.suggestion_lines(records) == [
        "verdicts_suggestion[a]: top [freezing] freeze; applied [freezing] freeze: freezing=True; "
        "inductor 0.80x [0.75-0.85] -> inductor 1.10x [1.00-1.20]: faster beyond the noise",
        "verdicts_suggestion[b]: top none; nothing applied: no suggestion with a change",
    ]


def test_models_named_take_the_default_lists_arguments():
    assert len(v.DEFAULT_MODELS) >= 12
    assert dict(v.models_of("hf:gpt2,resnet50"))["hf:gpt2"] == v._TINY_GPT2
    assert dict(v.models_of("hf:gpt2,resnet50"))["resnet50"] == ()
    assert v.slug("timm:vit_tiny_patch16_224") == "timm_vit_tiny_patch16_224"
