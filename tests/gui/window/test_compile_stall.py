"""While a config compiles, the status bar shows what the compiler does now (the compile
phase's detail); when no stage has changed for a while it says so once, naming the stage."""

from __future__ import annotations

import time

from core.vocab import events as ev


def test_a_compile_whose_stage_does_not_change_is_said_once(window, monkeypatch):
    from core.capture import compile_watch

    monkeypatch.setattr(compile_watch, "STALL_S", 30.0)
    text = "inductor: compiling forward (m.py:10) [0/0]: inductor lowering; 1 graph, 0 graph breaks found so far"
    window.run_display.phase_since = (time.monotonic() - 31.0, "compile", text, False)
    window.run_display.check_compile_stall("job", None)
    said = window.status_label.text()
    assert said.startswith("no compile stage has changed for 31 s, still inductor: compiling forward (m.py:10) [0/0]")
    window.status_label.setText("other")
    window.run_display.check_compile_stall("job", None)
    assert window.status_label.text() == "other"  # said once
    window.run_display.phase_since = (time.monotonic() - 31.0, "benchmark", "inductor: 5 calls", False)
    window.run_display.check_compile_stall("job", None)
    assert window.status_label.text() == "other"  # only while compiling


def test_a_cancelled_jobs_compile_is_not_said_stalled_in_the_next_run(window, monkeypatch):
    """Issue 44: "no compile stage has changed for 89 s" of a cancelled job showed in the next run,
    its resource samples arriving before its first phase."""
    from core.capture import compile_watch
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    monkeypatch.setattr(compile_watch, "STALL_S", 30.0)
    spec = JobSpec("first", ModelSpec("resnet18"), CompileConfig("inductor"))
    window.session.start([spec])
    assert window.session.apply(ev.PhaseChanged("first", "compile", "compiling forward"))
    window.run_display.phase_since = (time.monotonic() - 89.0, *window.run_display.phase_since[1:])  # it compiled 89 s
    assert window.session.apply(ev.JobCancelled("first"))
    window.status_label.setText("cancelled")
    window.run_display.check_compile_stall("first", None)
    assert window.status_label.text() == "cancelled"
    for reset in (window.controller.sig_run_finished.emit, lambda: window.session.start([spec])):
        window.run_display.phase_since = (time.monotonic() - 89.0, "compile", "inductor: compiling forward", False)
        reset()
        window.run_display.check_compile_stall("next", None)
        assert window.status_label.text() == "cancelled"
