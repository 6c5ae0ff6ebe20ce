"""While a config compiles, the status bar shows what the compiler does now (the compile
phase's detail); when no stage has changed for a while it says so once, naming the stage."""

from __future__ import annotations

import time


def test_a_compile_whose_stage_does_not_change_is_said_once(window, monkeypatch):
    from core.capture import compile_watch

    monkeypatch.setattr(compile_watch, "STALL_S", 30.0)
    text = "inductor: compiling forward (m.py:10) [0/0]: inductor lowering; 1 graph, 0 graph breaks found so far"
    window._phase_since = (time.monotonic() - 31.0, "compile", text, False)
    window._check_compile_stall("job", None)
    said = window.status_label.text()
    assert said.startswith("no compile stage has changed for 31 s, still inductor: compiling forward (m.py:10) [0/0]")
    window.status_label.setText("other")
    window._check_compile_stall("job", None)
    assert window.status_label.text() == "other"  # said once
    window._phase_since = (time.monotonic() - 31.0, "benchmark", "inductor: 5 calls", False)
    window._check_compile_stall("job", None)
    assert window.status_label.text() == "other"  # only while compiling
