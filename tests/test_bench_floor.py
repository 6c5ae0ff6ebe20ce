"""The heartbeat bench's floor (tests.gui.heartbeat.Floor): a bare process beside the app that
reports its own timer gaps, also when started from a shell's background job (whose children
ignore SIGINT: the floor printed nothing there, and the bench read None)."""

from __future__ import annotations

import signal
import time

from tests.gui.heartbeat import Floor


def test_the_floor_reports_its_gaps_even_with_sigint_ignored():
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)  # inherited by the floor, as from `cmd &`
    try:
        floor = Floor()
    finally:
        signal.signal(signal.SIGINT, previous)
    time.sleep(0.3)
    started = time.monotonic()
    figures = floor.result()
    assert time.monotonic() - started < 5  # stopped at once, not after the 30 s wait
    assert "error" not in figures, figures
    assert figures["max"] >= 10.0 and figures["p99"] >= 10.0  # it slept 10 ms a tick
    assert figures["over_20"] >= figures["over_20_away"] >= 0
