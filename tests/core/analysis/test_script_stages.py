"""The compiler at work in a script run: the child's `stage` events fold into what torch compiles
now (the frame, its compile id, the stage, and the compiled function whose call compiles), cleared
when that call returns or the run ends."""

from __future__ import annotations

from core.analysis.script_runs import LiveFold

ENTRY = {"t": "entry", "id": 0, "name": "Net", "file": "/w/train.py", "line": 22, "kind": "module"}


def stage(text: str, frame: str = "inner (external_utils.py:67)", cid: str = "2/0") -> dict:
    return {"t": "stage", "id": 0, "frame": frame, "compile_id": cid, "stage": text}


def test_a_stage_is_what_the_compiler_does_now_until_the_call_returns():
    fold = LiveFold("compiled")
    fold.add(ENTRY)
    assert fold.run.compiling is None
    fold.add(stage("dynamo tracing"))
    fold.add(stage("inductor lowering"))
    now = fold.run.compiling
    assert (now.function, now.compile_id, now.stage) == ("Net", "2/0", "inductor lowering")
    assert now.text() == "compiling inner (external_utils.py:67) [2/0] (a call of Net): inductor lowering"
    fold.add({"t": "compile", "id": 0, "call": 0, "frames": [{"compile_s": 1.5}]})
    assert fold.run.compiling is None and fold.run.unreadable == 0


def test_a_stage_left_open_ends_with_the_run_and_a_bad_one_is_counted():
    fold = LiveFold("compiled")
    fold.add(ENTRY)
    fold.add(stage("C++/Triton kernel compile", frame="forward (train.py:30)", cid="0/0"))
    assert (
        fold.run.compiling.text() == "compiling forward (train.py:30) [0/0] (a call of Net): C++/Triton kernel compile"
    )
    fold.add({"t": "end", "exit": 1, "error": "KeyboardInterrupt", "wall_s": 3.0})
    assert fold.run.compiling is None
    fold.add({"t": "stage", "id": "x"})
    assert fold.run.unreadable == 1
