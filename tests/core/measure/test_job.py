"""The job itself, called in-process (synchronously, no child): what it measures and reports."""

from core.vocab import events as ev
from tests.core.helpers import BREAKS_MODEL, LSTM_MODEL, MLP_MODEL, SHAPE_CHANGE_MODEL, make_spec
from tests.core.helpers import run_in_process as run


def test_three_graph_breaks_at_the_right_lines(write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    outcome, result, events = run(make_spec(path))
    assert outcome == "completed", result.failure_detail
    by_line = {g.line: g for g in result.graph_breaks}
    assert sorted(by_line) == [13, 17, 19]
    assert all(g.file == path for g in result.graph_breaks)
    branch, item, explicit = by_line[13], by_line[17], by_line[19]
    assert (branch.reason, branch.gb_code) == ("Data-dependent branching", "GB0170")
    assert branch.doc_url.endswith("/gb/gb0170.html")
    assert branch.source == "if y.sum() > 0:                      # line 13"
    assert len(branch.hints) == 3 and any("torch.cond" in h for h in branch.hints)
    assert branch.explanation.startswith("Detected data-dependent branching")
    assert item.gb_code == "GB0124" and "item()" in item.reason
    assert any("capture_scalar_outputs" in h for h in item.hints)
    assert explicit.gb_code == "GB0025" and explicit.source.startswith("torch._dynamo.graph_break()")
    assert result.compile.graph_count >= 3 and not result.compile.fully_compiled
    assert result.compile.coverage.startswith("Partly compiled")
    assert result.summary()["graph_break_sites"] == 3


def test_capture_scalar_outputs_override_removes_the_item_break(write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    _, result, _ = run(make_spec(path, dynamo_config=(("capture_scalar_outputs", True),)))
    assert "GB0124" not in {g.gb_code for g in result.graph_breaks}
    import torch._dynamo.config

    assert torch._dynamo.config.capture_scalar_outputs is False  # restored after the job


def test_phases_samples_and_memory(write_model):
    path = write_model(MLP_MODEL)
    outcome, result, events = run(make_spec(path, iters=12, warmup=3, block_size=5))
    assert outcome == "completed"
    changes = [e for e in events if isinstance(e, ev.PhaseChanged)]
    phases = [e.phase for i, e in enumerate(changes) if i == 0 or changes[i - 1].phase != e.phase]
    assert phases == ["load", "eager", "compile", "compiled", "benchmark", "accuracy", "op_profile"]
    # while it compiles, the compile phase's detail says what the compiler does (core.capture.compile_watch)
    assert any(e.phase == "compile" and e.detail.endswith("found so far") for e in changes)
    assert len(result.latencies("eager")) == 12 and len(result.latencies("compiled")) == 12
    assert len(result.latencies("eager", include_warmup=True)) == 15
    # blocks of 5 asked, but 12 iterations would alternate only 3 times: blocks of 3, 4 alternations
    timed = [(s.side, s.iteration) for s in result.samples if not s.warmup]
    assert [p for p, _ in timed] == (["eager"] * 3 + ["compiled"] * 3) * 4
    assert [i for p, i in timed if p == "compiled"] == list(range(12))
    detail = next(e.detail for e in events if isinstance(e, ev.PhaseChanged) and e.phase == "benchmark")
    assert "4 blocks of 3 calls" in detail and "blocks of 5 asked" in detail
    assert set(result.memory) == {"eager", "compile", "compiled"}
    assert all(m.peak_rss_mb > 50 for m in result.memory.values())
    assert result.compile.fully_compiled and result.compile.graph_count == 1
    assert result.compile.compile_time_s > 0 and result.compile.dynamo_s > 0
    assert result.environment["threads"] >= 1 and result.environment["torch"]
    assert isinstance(events[-1], ev.JobCompleted)


def test_recompile_reported_with_guard_failure(write_model):
    path = write_model(SHAPE_CHANGE_MODEL, "shapes.py")
    outcome, result, _ = run(make_spec(path, dynamic="false", iters=4, warmup=2))
    assert outcome == "completed"
    assert result.recompiles, "a size change with dynamic=false must recompile"
    reasons = [r for rc in result.recompiles for r in rc.reasons]
    assert any("size mismatch at index 0" in r and "expected 4, actual 8" in r for r in reasons), reasons


def test_lstm_frame_skip_is_said_plainly(write_model):
    path = write_model(LSTM_MODEL, "lstm.py")
    outcome, result, _ = run(make_spec(path, iters=3, warmup=1))
    assert outcome == "completed"
    assert result.compile.graph_count == 0 and result.compile.frames_skipped >= 1
    assert "Nothing was compiled" in result.compile.coverage and "LSTM" in result.compile.coverage
    skipped = [g for g in result.graph_breaks if g.frame_skipped]
    assert skipped and skipped[0].gb_code == "GB0014"
    assert any("allow_rnn" in h for h in skipped[0].hints)


def test_lstm_with_allow_rnn_compiles(write_model):
    path = write_model(LSTM_MODEL, "lstm.py")
    _, result, _ = run(make_spec(path, iters=3, warmup=1, dynamo_config=(("allow_rnn", True),)))
    assert result.compile.graph_count >= 1 and result.compile.frames_skipped == 0


def test_cancel_from_inside_keeps_samples(write_model):
    path = write_model(MLP_MODEL)
    seen = {"n": 0}

    def should_stop():
        seen["n"] += 1
        return seen["n"] > 12

    outcome, result, events = run(make_spec(path, iters=1000), should_stop)
    assert outcome == "cancelled" and isinstance(events[-1], ev.JobCancelled)
    assert result.status == "cancelled" and len(result.samples) >= 12


def test_model_error_fails_with_file_and_line(write_model):
    path = write_model("import torch\ndef get_model(:\n", "bad.py")
    outcome, result, events = run(make_spec(path))
    assert outcome == "failed" and result.failure_reason.startswith(f"model: {path}:2: syntax error")
    assert isinstance(events[-1], ev.JobFailed)


def test_fullgraph_refuses_breaks_but_keeps_eager(write_model):
    from core.vocab.config import CompileConfig

    path = write_model(BREAKS_MODEL, "breaks.py")
    _, result, _ = run(make_spec(path, config=CompileConfig(backend="eager", fullgraph=True)))
    assert result.status == "failed"
    assert "fullgraph=True" in result.failure_reason
    assert len(result.latencies("eager", include_warmup=True)) == 2  # eager warm-up kept


def test_alternating_blocks():
    from core.measure.timing import alternating

    assert list(alternating(3, 1)) == [
        ("eager", 0),
        ("compiled", 0),
        ("eager", 1),
        ("compiled", 1),
        ("eager", 2),
        ("compiled", 2),
    ]
    assert list(alternating(3, 2)) == [
        ("eager", 0),
        ("eager", 1),
        ("compiled", 0),
        ("compiled", 1),
        ("eager", 2),
        ("compiled", 2),
    ]


def test_torchscript_gets_an_eager_only_profile(tmp_path):
    import torch

    path = tmp_path / "scripted.pt"
    torch.jit.script(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU())).save(str(path))
    spec = make_spec(str(path), iters=3, warmup=1)
    spec = type(spec)(**{**spec.__dict__, "model": type(spec.model)(str(path), image_size=32)})
    outcome, result, events = run(spec)
    assert outcome == "completed"
    assert result.compile is None and len(result.latencies("eager")) == 3 and not len(result.latencies("compiled"))
    assert "does not support ScriptModules" in result.summary()["coverage"]


def test_block_length_adapts_so_every_run_alternates():
    from core.measure.timing import alternating, effective_block

    assert effective_block(20, 25) == 5  # the default 20 iterations: 4 blocks of 5, not one of 20
    assert effective_block(1000, 25) == 25 and effective_block(3, 25) == 1 and effective_block(1, 1) == 1
    sides = [side for side, _ in alternating(20, effective_block(20, 25))]
    switches = sum(1 for a, b in zip(sides, sides[1:]) if a != b)
    assert switches >= 7  # e c e c e c e c


def test_the_kernel_cost_of_each_side_is_counted_between_blocks(write_model):
    """Page faults and CPU time per side, from getrusage around each block of timed calls."""
    outcome, result, events = run(make_spec(write_model(MLP_MODEL), iters=8))
    assert outcome == "completed"
    (measured,) = [e for e in events if isinstance(e, ev.CallCostsMeasured)]
    by_side = {c.side: c for c in measured.costs}
    assert by_side["eager"].calls == 8 and by_side["compiled"].calls == 8
    assert all(c.user_ms + c.sys_ms > 0 and c.minor_faults >= 0 for c in measured.costs)
    s = result.summary()
    assert s["compiled_user_ms_per_call"] is not None and s["eager_faults_per_call"] is not None
