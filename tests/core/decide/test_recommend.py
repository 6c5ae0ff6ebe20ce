"""The recommendation: total time per option, the choice, how sure, and its code."""

import dataclasses

import pytest
import torch

from core.decide.codegen import compile_code
from core.decide.recommend import CANNOT_TELL, NOT_COMPILED, recommend
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from tests.core.fakes import fake_result

FREEZING = CompileConfig("inductor", inductor_options=(("freezing", True),))
INDUCTOR = CompileConfig("inductor")
AUTOTUNE = CompileConfig("inductor", mode="max-autotune-no-cudagraphs")


def option(rec, label):
    return next(o for o in rec.options if o.label == label)


def test_total_time_is_compile_plus_calls_times_per_call_time():
    rec = recommend([fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, compile_s=10.0, noise=0.0)], calls=10_000)
    eager, inductor = option(rec, NOT_COMPILED), option(rec, "inductor")
    assert eager.total_s == pytest.approx(100.0) and eager.compile_time_s == 0.0
    assert inductor.per_call_ms == pytest.approx(5.0) and inductor.total_s == pytest.approx(10.0 + 50.0)
    assert rec.choice == "inductor" and rec.config == CompileConfig("inductor") and rec.confidence == "clear"
    assert rec.break_even_calls == pytest.approx(10.0 * 1000 / 5.0)
    assert rec.sentence.startswith("Compile with inductor: at 10,000 calls it takes 60.0 s in all")
    assert "2.00x per call" in rec.sentence
    assert rec.memory.startswith("Memory: peak RSS 320 MB running compiled against 300 MB eager (+20 MB)")
    assert rec.memory_delta_mb == pytest.approx(20.0)


def test_few_calls_do_not_pay_for_the_compile():
    rec = recommend([fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, compile_s=10.0)], calls=100)
    assert rec.choice == NOT_COMPILED and rec.config is None
    assert rec.sentence.startswith("Do not compile: at 100 calls eager takes 1.0 s in all")
    assert "no torch.compile" in rec.code


def test_overlapping_intervals_are_indistinguishable_and_the_cheaper_compile_wins():
    slow_compile = fake_result(AUTOTUNE, compiled_ms=5.00, compile_s=60.0, noise=0.2, seed=1)
    fast_compile = fake_result(FREEZING, compiled_ms=5.05, compile_s=20.0, noise=0.2, seed=2)
    rec = recommend([slow_compile, fast_compile], calls=1_000_000)
    assert rec.confidence == "indistinguishable" and rec.choice == FREEZING.label
    assert rec.tied == (AUTOTUNE.label,) and "cannot be told apart" in rec.sentence


def test_clearly_faster_config_is_clear_and_names_the_runner_up():
    rec = recommend(
        [
            fake_result("inductor", compiled_ms=9.0, compile_s=5.0, seed=1),
            fake_result(FREEZING, compiled_ms=6.0, compile_s=8.0, seed=2),
        ],
        calls=10_000,
    )
    assert rec.choice == FREEZING.label and rec.confidence == "clear"
    assert "clearly ahead of the next best, inductor" in rec.sentence


def test_a_config_faster_a_call_that_lost_on_its_compile_is_named_for_a_longer_run():
    """The verdicts bench: plain inductor chosen for 10,000 calls where max-autotune-no-cudagraphs
    ran faster a call beyond the noise; the user running longer learns which and from when."""
    results = [
        fake_result("inductor", eager_ms=5.0, compiled_ms=2.25, compile_s=10.0, seed=1),
        fake_result(AUTOTUNE, eager_ms=5.0, compiled_ms=2.0, compile_s=40.0, seed=2),
    ]
    rec = recommend(results, calls=10_000)
    plain, tuned = option(rec, "inductor"), option(rec, AUTOTUNE.label)
    assert rec.choice == "inductor" and rec.confidence == "clear" and tuned.speedup_ci_low > plain.speedup_ci_high
    overtakes = 30.0 * 1000 / (plain.per_call_ms - tuned.per_call_ms)
    assert rec.faster_per_call == AUTOTUNE.label and rec.overtakes_after_calls == pytest.approx(overtakes)
    assert f"For a longer run: {AUTOTUNE.label} is faster a call ({tuned.speedup:.2f}x" in rec.sentence
    assert f"overtakes it after {overtakes:,.0f} calls (its compile 40.0 s against 10.0 s)." in rec.sentence
    assert rec.to_dict()["overtakes_after_calls"] == pytest.approx(overtakes)
    # past that many calls the same measurements choose it, and name nothing faster
    longer = recommend(results, calls=int(overtakes * 1.5))
    assert longer.choice == AUTOTUNE.label and longer.faster_per_call == "" and "longer run" not in longer.sentence
    # not compiling chosen while a config is faster a call: when its compile pays back
    few = recommend(results[:1], calls=100)
    assert few.choice == NOT_COMPILED and few.faster_per_call == "inductor"
    paid = 10.0 * 1000 / (option(few, NOT_COMPILED).per_call_ms - option(few, "inductor").per_call_ms)
    assert f"pays its compile back after {paid:,.0f} calls (its compile 10.0 s)." in few.sentence
    # within the noise of the choice: nothing to name
    tied = recommend([results[0], fake_result(AUTOTUNE, eager_ms=5.0, compiled_ms=2.25, compile_s=40.0, seed=3)])
    assert tied.faster_per_call == "" and tied.overtakes_after_calls is None


def test_no_config_measurably_faster_than_eager_cannot_tell():
    rec = recommend(
        [fake_result("inductor", eager_ms=10.0, compiled_ms=9.9, compile_s=1.0, noise=0.3)], calls=1_000_000
    )
    assert rec.choice == NOT_COMPILED and rec.confidence == CANNOT_TELL and rec.config is None
    assert rec.sentence.startswith("Cannot tell whether compiling pays off at 1,000,000 calls")
    assert "within the noise of not compiling" in rec.sentence and rec.rerun
    assert rec.break_even_calls is None and rec.code == ""


def test_an_unusable_timing_gives_no_verdict():
    """The reported case: a busy machine (other processes on 1.6 of 2 cores) still got a break-even."""
    busy = fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, compile_s=10.0, others_cores=1.6)
    assert busy.quality().grade == "unusable" and "1.6" in busy.quality().reasons[0]
    rec = recommend([busy], calls=10_000)
    assert rec.confidence == CANNOT_TELL and rec.config is None and rec.break_even_calls is None
    assert "Cannot tell which settings to ship" in rec.sentence and "other processes used 1.6" in rec.sentence
    quiet = fake_result(FREEZING, eager_ms=10.0, compiled_ms=6.0, compile_s=10.0, seed=3)
    both = recommend([busy, quiet], calls=10_000)  # the quiet one decides; the busy one is named, not weighed
    assert both.choice == FREEZING.label and both.unjudged == ("inductor",)
    assert "not judged, its timing was unusable: inductor" in both.sentence
    assert ".;" not in both.sentence and both.sentence.endswith(".")  # the note inside the full stop
    # "How sure: clear" beside "not judged" read as a contradiction
    assert (
        both.confidence == "clear"
        and both.how_sure == "clear among the configs judged (1 not judged: its timing unusable)"
    )
    assert recommend([quiet], calls=10_000).how_sure == "clear"
    # the list of options marks it too, after the one weighed (it was listed first, unmarked, and
    # read as the answer where the sentence had left it out)
    options = both.text().split("Every option at 10,000 calls:\n", 1)[1].splitlines()
    inductor = next(i for i, line in enumerate(options) if line.startswith("  inductor:"))
    freezing = next(i for i, line in enumerate(options) if line.startswith(f"  {FREEZING.label}:"))
    assert (
        freezing < inductor and "; not judged, its timing was unusable: other processes used 1.6" in options[inductor]
    )
    assert "not judged" not in options[freezing]
    nothing = recommend([], calls=10_000).text()
    assert "Every option" not in nothing  # no heading over an empty list


def test_the_time_a_call_in_the_options_says_how_it_is_made():
    """A config's time a call is the run's eager median over its own speedup, not its compiled
    median: a user found 0.084 ms beside that config's own 0.067 ms and nothing said why."""
    a = fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, seed=1)
    b = fake_result(FREEZING, eager_ms=12.0, compiled_ms=4.0, seed=2)  # its eager timed slower
    rec = recommend([a, b], calls=10_000)
    frozen = option(rec, FREEZING.label)
    assert frozen.per_call_ms == pytest.approx(11.0 / 3.0, rel=0.03)  # median eager 11 ms over 3x, not 4 ms
    assert "the run's eager median (11.00 ms)" in rec.per_call_basis and "own speedup" in rec.per_call_basis
    assert rec.per_call_basis in rec.text()
    assert recommend([]).per_call_basis == ""  # nothing measured


def test_a_config_that_compiled_nothing_is_no_option():
    """The LSTM without allow_rnn: dynamo skipped the frame, so "compiled" was eager again."""
    skipped = fake_result("inductor", eager_ms=15.3, compiled_ms=10.9, graph_count=0)
    rec = recommend([skipped], calls=10_000)
    assert not option(rec, "inductor").eligible and "nothing was compiled" in option(rec, "inductor").why_not
    assert rec.choice == NOT_COMPILED and rec.sentence.startswith("Do not compile: no config can be recommended")


def test_only_the_references_measured_cannot_tell():
    """tune with a budget that cut every real candidate: nothing says compiling does not pay."""
    rec = recommend([fake_result("eager"), fake_result("aot_eager"), fake_result("inductor", status="cancelled")])
    assert rec.confidence == CANNOT_TELL and "no compiled config was measured" in rec.sentence
    assert "budget" in rec.rerun


def test_processes_that_disagree_widen_the_interval_until_it_cannot_tell():
    """One process is one draw: two processes at 0.78x and one at 1.03x (the fast mode seen here)."""
    agree = fake_result("inductor", eager_ms=26.0, compiled_ms=33.0, processes={1: 33.2, 2: 33.1}, noise=0.01)
    assert agree.summary()["speedup_ci_high"] < 1.0 and agree.quality().grade == "quiet"
    split = fake_result("inductor", eager_ms=26.0, compiled_ms=33.0, processes={1: 33.2, 2: 25.2}, noise=0.01)
    s, q = split.summary(), split.quality()
    assert s["speedup_ci_low"] < 1.0 < s["speedup_ci_high"] and q.processes == 3
    assert q.grade == "unusable" and "processes disagree" in q.reasons[0] and "1.03x" in q.reasons[0]


def test_fast_and_wrong_is_never_recommended():
    wrong = fake_result(AUTOTUNE, compiled_ms=2.0, compile_s=5.0, accuracy="fail")
    right = fake_result("inductor", compiled_ms=6.0, compile_s=5.0)
    rec = recommend([wrong, right], calls=10_000)
    assert rec.choice == "inductor"
    excluded = option(rec, AUTOTUNE.label)
    assert not excluded.eligible and excluded.why_not.startswith("its outputs differ from eager")
    only_wrong = recommend([wrong], calls=10_000)
    assert only_wrong.choice == NOT_COMPILED and "its outputs differ from eager" in only_wrong.sentence


def test_reference_backends_failed_jobs_and_unchecked_accuracy():
    rec = recommend(
        [
            fake_result("eager", compiled_ms=1.0, compile_s=0.1),
            fake_result("aot_eager", compiled_ms=1.0, compile_s=0.1),
            fake_result(FREEZING, status="failed"),
            fake_result("inductor", compiled_ms=5.0, accuracy="nondeterministic"),
        ],
        calls=10_000,
    )
    assert rec.choice == "inductor" and "accuracy nondeterministic" in rec.sentence
    assert "debugging reference" in option(rec, "eager").why_not
    assert "did not complete" in option(rec, FREEZING.label).why_not


def test_nothing_measured_says_so():
    rec = recommend([fake_result("inductor", status="failed", n=0)], calls=10)
    assert rec.confidence == "none" and rec.sentence.startswith("No recommendation")


def test_text_and_dict_hold_the_sentence_code_and_every_option():
    rec = recommend([fake_result("inductor"), fake_result("eager")], calls=500)
    text = rec.text()
    assert rec.sentence in text and rec.code in text and "not eligible: backend eager" in text
    d = rec.to_dict()
    assert d["calls"] == 500 and len(d["options"]) == 3 and d["options"][0]["label"] == NOT_COMPILED


# ------------------------------------------------------------------ the code reproduces the config


CONFIGS = [
    CompileConfig("aot_eager", dynamic="true", fullgraph=True),
    CompileConfig("eager", dynamic="false", dynamo_config=(("capture_scalar_outputs", True), ("recompile_limit", 16))),
    FREEZING,
    AUTOTUNE,
    CompileConfig("inductor"),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.label)
def test_pasted_code_compiles_the_model_as_the_config_did(config, monkeypatch):
    import torch._dynamo.config as dynamo_config

    seen = {}
    real_compile = torch.compile

    def recording_compile(model, **kwargs):
        seen.update(kwargs)
        seen["dynamo"] = {k: getattr(dynamo_config, k) for k, _ in config.dynamo_config}
        return real_compile(model, **kwargs)

    monkeypatch.setattr(torch, "compile", recording_compile)
    torch._dynamo.reset()  # tests before compiled other Sequentials: their recompile limit is per code object
    spec = JobSpec("x", ModelSpec("resnet18"), config, threads=torch.get_num_threads())
    code = compile_code(config, spec, {"torch": torch.__version__, "threads": spec.threads})
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
    namespace = {"model": model}
    # the snippet sets dynamo settings globally: patching them to their own values restores them after
    before = {k: getattr(dynamo_config, k) for k, _ in config.dynamo_config}
    with dynamo_config.patch({k: getattr(dynamo_config, k) for k, _ in config.dynamo_config}):
        exec(compile(code, "<recommendation>", "exec"), namespace)
        compiled = namespace["model"]
        assert isinstance(compiled, torch._dynamo.eval_frame.OptimizedModule)
        if config.backend != "inductor":  # inductor's C++ compile is tested elsewhere
            x = torch.randn(2, 4)
            torch.testing.assert_close(compiled(x), model(x))
    kwargs = config.compile_kwargs()
    assert {k: seen[k] for k in kwargs} == kwargs
    assert seen.get("mode") in (None, config.mode) and ("options" in seen) == bool(config.inductor_options)
    assert seen["dynamo"] == dict(config.dynamo_config)
    assert {k: getattr(dynamo_config, k) for k, _ in config.dynamo_config} == before  # restored for later tests
    assert f"torch.set_num_threads({spec.threads})" in code


def test_shape_sweeps_are_costed_per_cycle_of_variants_and_kept_apart_from_plain_runs():
    from core.vocab import records

    def variants(compiled_ms, compile_s):
        return [
            records.VariantResult(
                i,
                (f"x[{n}×8]",),
                1,
                i > 0,
                compile_time_s=compile_s,
                eager_ms=tuple(10.0 * n + 0.01 * k for k in range(20)),
                compiled_ms=tuple(compiled_ms * n + 0.01 * k for k in range(20)),
            )
            for i, n in enumerate((1, 2, 3))
        ]

    dyn = fake_result(CompileConfig("inductor", dynamic="true"), sweep=True, variants=variants(5.0, 2.0))
    static = fake_result(CompileConfig("inductor", dynamic="false"), sweep=True, variants=variants(4.0, 10.0))
    rec = recommend([dyn, static], calls=10_000)
    d, s = option(rec, dyn.config.label), option(rec, static.config.label)
    assert d.compile_time_s == pytest.approx(6.0) and s.compile_time_s == pytest.approx(30.0)
    assert d.speedup == pytest.approx(2.0, rel=0.01) and s.speedup == pytest.approx(2.5, rel=0.01)
    assert rec.choice == dyn.config.label  # 6 s + 10,000 x 10 ms beats 30 s + 10,000 x 8 ms
    mixed = recommend([dyn, fake_result("inductor")], calls=100)
    assert "shape sweep" in option(mixed, dyn.config.label).why_not


def test_best_and_cheapest_within_the_noise_says_both():
    best = fake_result("inductor", compiled_ms=5.0, compile_s=10.0, noise=0.2, seed=1)
    close = fake_result(FREEZING, compiled_ms=5.05, compile_s=20.0, noise=0.2, seed=2)
    rec = recommend([best, close], calls=1_000_000)
    assert rec.choice == "inductor" and rec.confidence == "indistinguishable"
    assert f"the best measured, but within the noise of {FREEZING.label}" in rec.sentence


def test_a_slower_set_is_a_clear_do_not_compile_and_a_wide_interval_is_no_best_config():
    """The reported sweep: dynamic=true and false clearly slower, the third 0.2x with an interval
    so wide it reaches eager's; it was named 'the best compiled config' and the verdict could not
    tell. Nothing measured is faster than eager: do not compile, clearly."""
    true = dataclasses.replace(INDUCTOR, dynamic="true")
    false = dataclasses.replace(INDUCTOR, dynamic="false")
    results = [
        fake_result(true, eager_ms=10.0, compiled_ms=20.0, compile_s=0.5, seed=1),
        fake_result(false, eager_ms=10.0, compiled_ms=25.0, compile_s=0.5, seed=2),
        fake_result(INDUCTOR, eager_ms=10.0, compiled_ms=13.0, compile_s=0.0, noise=0.3, n=6, seed=3),
    ]
    wide = recommend(results[2:], calls=1000).options[1]
    assert wide.timing != "unusable" and wide.speedup < 1.0 < wide.speedup_ci_high  # its interval reaches eager's
    rec = recommend(results, calls=1000)
    assert rec.choice == NOT_COMPILED and rec.confidence == "clear" and rec.config is None
    assert rec.sentence.startswith("Do not compile: at 1,000 calls no config measured is faster than eager")
    assert "clearly slower: inductor/dynamic=true" in rec.sentence and "the best compiled config" not in rec.sentence
    assert "within the noise of eager: inductor " in rec.sentence


def test_an_unusable_config_added_does_not_move_the_eager_reference_of_the_others():
    """Adding a config whose timing was unusable moved the shared eager reference (1.25 -> 1.32 ms)
    and turned inductor's clear verdict into 'cannot tell'."""
    inductor = fake_result(INDUCTOR, eager_ms=1.25, compiled_ms=1.6, compile_s=20.0, seed=4)
    busy = fake_result(FREEZING, eager_ms=3.0, compiled_ms=1.0, compile_s=20.0, others_cores=1.6, seed=5)
    alone, both = recommend([inductor], calls=1000), recommend([inductor, busy], calls=1000)
    assert alone.options[0].per_call_ms == both.options[0].per_call_ms  # the eager reference
    assert (alone.choice, alone.confidence) == (both.choice, both.confidence) == (NOT_COMPILED, "clear")


def test_every_config_slower_a_call_says_do_not_compile_here_and_names_the_closest():
    """Compiled slower on every call (the bench's tiny MLP, 0.76x): the verdict says so plainly and
    names the closest config, not only that the compile outweighs the calls."""
    results = [
        fake_result(INDUCTOR, eager_ms=1.0, compiled_ms=1.3, compile_s=2.0, seed=1),
        fake_result(FREEZING, eager_ms=1.0, compiled_ms=1.2, compile_s=2.5, seed=2),
    ]
    rec = recommend(results, calls=10_000)
    assert rec.choice == NOT_COMPILED and rec.confidence == "clear"
    assert rec.sentence.startswith(
        "Do not compile this model here: all 2 configs tried were slower than eager on every call"
    )
    assert f"the closest, {FREEZING.label}, 0.8" in rec.sentence
    one = recommend(results[:1], calls=10_000)  # one config says nothing of the others: so said
    assert one.sentence.startswith(
        "Do not compile with these settings: the one config tried, inductor, was slower than eager on every call"
    )
    assert one.sentence.endswith("Other settings may be faster (tune measures them).")
    assert "Other settings" not in rec.sentence
    faster = recommend([fake_result(INDUCTOR, eager_ms=10.0, compiled_ms=5.0, compile_s=10.0)], calls=100)
    assert faster.sentence.startswith("Do not compile: at 100 calls eager takes 1.0 s in all")


def test_one_compiled_config_measured_says_other_settings_may_be_faster():
    """The verdicts bench: plain inductor 'clear' where the autotuning mode or freezing was faster a
    call on three of five small CNNs; the sentence says the run measured one compiled config and
    names what measures the others, in the words of where it is read."""
    from core.analysis.quality_advice import FORM_FIELDS

    one = [fake_result(INDUCTOR, eager_ms=10.0, compiled_ms=5.0, compile_s=10.0)]
    rec = recommend(one, calls=10_000)
    assert rec.confidence == "clear" and rec.sentence.endswith(
        "clearly ahead of eager beyond the noise, the one compiled config this run measured (tune measures "
        "other settings)."
    )
    assert "(Find best settings measures other settings)" in recommend(one, calls=10_000, fields=FORM_FIELDS).sentence
    two = one + [fake_result(FREEZING, eager_ms=10.0, compiled_ms=7.0, compile_s=10.0, seed=3)]
    assert "the one compiled config" not in recommend(two, calls=10_000).sentence


def test_a_compile_difference_within_its_spread_does_not_make_a_tie_a_call_clear():
    """The verdicts bench: shufflenet's two configs tied a call read "clear" on compile times that
    differed by less than one config's cold compiles differ from each other (COMPILE_SPREAD)."""
    from core.decide.recommend import COMPILE_SPREAD

    results = [
        fake_result("inductor", eager_ms=5.0, compiled_ms=2.30, compile_s=22.0, seed=1),
        fake_result(AUTOTUNE, eager_ms=5.0, compiled_ms=2.31, compile_s=20.0, seed=2),
    ]
    rec = recommend(results, calls=10_000)
    assert rec.confidence == "indistinguishable" and rec.choice == AUTOTUNE.label and rec.tied == ("inductor",)
    tuned = option(rec, AUTOTUNE.label)
    assert tuned.total_low_s < 20.0 * (1 - COMPILE_SPREAD) + 10_000 * tuned.per_call_ms / 1000
    # a compile three times as long is beyond that spread: the compile decides, clearly
    results[0] = fake_result("inductor", eager_ms=5.0, compiled_ms=2.30, compile_s=60.0, seed=1)
    rec = recommend(results, calls=10_000)
    assert rec.confidence == "clear" and rec.choice == AUTOTUNE.label


def test_a_cached_compile_is_not_weighed_against_a_cold_one():
    """One config found its FX-graph cache (2 s), the other compiled cold (25 s): tied a call,
    the compile times measure different things, so the verdict is not clear and says why."""
    results = [
        fake_result("inductor", eager_ms=5.0, compiled_ms=2.30, compile_s=2.0, cache_state="hit", seed=1),
        fake_result(AUTOTUNE, eager_ms=5.0, compiled_ms=2.30, compile_s=25.0, cache_state="miss", seed=2),
    ]
    rec = recommend(results, calls=10_000)
    assert rec.confidence == "indistinguishable" and rec.choice == "inductor" and rec.tied == (AUTOTUNE.label,)
    assert (
        f"tied a call with {AUTOTUNE.label} (their speedups' intervals overlap), and their compiles are not "
        f"comparable: inductor's read the FX-graph cache (hit), {AUTOTUNE.label}'s compiled cold (FX-graph cache "
        "miss); the cheaper compile is chosen" in rec.sentence
    )
    # both cold: the same figures make a clear choice
    results[0] = fake_result("inductor", eager_ms=5.0, compiled_ms=2.30, compile_s=2.0, cache_state="miss", seed=1)
    rec = recommend(results, calls=10_000)
    assert rec.confidence == "clear" and rec.choice == "inductor" and "not comparable" not in rec.sentence
    # faster a call beyond the noise: the cache states do not matter, the calls decide
    results[1] = fake_result(AUTOTUNE, eager_ms=5.0, compiled_ms=1.0, compile_s=25.0, cache_state="miss", seed=2)
    results[0] = fake_result("inductor", eager_ms=5.0, compiled_ms=2.30, compile_s=2.0, cache_state="hit", seed=1)
    rec = recommend(results, calls=100_000)
    assert rec.confidence == "clear" and rec.choice == AUTOTUNE.label


def test_tied_configs_whose_compiles_are_equally_cheap_choose_the_best_measured():
    """The verdicts bench's mnasnet0_5 with each config in its own cache: 16.2 s against 16.6 s of
    compile chose plain inductor, 9% slower a call than the truth's best, by 0.4 s of noise."""
    results = [
        fake_result("inductor", eager_ms=13.3, compiled_ms=7.2, compile_s=16.2, noise=0.3, seed=1),
        fake_result(AUTOTUNE, eager_ms=13.3, compiled_ms=6.6, compile_s=16.6, noise=0.3, seed=2),
    ]
    rec = recommend(results, calls=10_000)
    assert rec.tied == ("inductor",) and rec.confidence == "indistinguishable"
    assert rec.choice == AUTOTUNE.label
    assert "the best measured, but within the noise of inductor (their intervals overlap), and their compiles" in (
        rec.sentence
    )
