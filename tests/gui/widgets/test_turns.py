"""A job's end and the run's end are shown in pieces, one per turn of the event loop
(gui.widgets.turns): the Summary's final row (its bootstrap interval) and the run's end no
longer come in the turn that folds the job's terminal event (issue 22: 42 ms in one turn)."""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from core.vocab import events as ev
from core.vocab import records as rec
from gui.widgets import turns
from tests.gui.helpers import fake_events, fake_result, fake_spec


def test_pieces_run_one_per_turn_in_order_and_die_with_their_owner(qtbot):
    owner, doomed = QObject(), QObject()
    ran: list[str] = []
    ticks: list[int] = []  # what ran when a timer of the same loop fired
    timer = QTimer()
    timer.setInterval(0)
    timer.timeout.connect(lambda: ticks.append(len(ran)))
    timer.start()

    def boom():
        ran.append("boom")
        raise RuntimeError("a piece's bug")

    turns.one_per_turn(owner, lambda: ran.append("a"))
    turns.one_per_turn(doomed, lambda: ran.append("never"))
    turns.one_per_turn(owner, boom)
    turns.one_per_turn(owner, lambda: ran.append("c"))
    assert ran == []  # nothing in the turn that asked
    doomed.deleteLater()
    with qtbot.captureExceptions() as raised:  # pytest-qt would fail the test on the bug itself
        qtbot.waitUntil(lambda: turns.pending() == 0, timeout=5000)
    timer.stop()
    assert ran == ["a", "boom", "c"]  # in order; the deleted owner's piece dropped; a raise stops none
    assert [str(e[1]) for e in raised] == ["a piece's bug"]
    # the timer fired between the pieces: after "a" and before "c", never with all at once
    assert any(0 < count < 3 for count in ticks), ticks


def test_a_timer_fires_between_long_pieces_each_asking_for_the_next(qtbot):
    """As the app's heartbeat bench sees it: pieces of 15 ms, each asking for the next (as the
    charts builder does), a 10 ms timer running; the timer fires between every two pieces
    (posted calls ran two pieces between its ticks, and a piece asking for the next had put a
    second turn on its way: those two ran back to back)."""
    owner, seen = QObject(), []
    timer = _heartbeat(seen, "tick")

    def piece(i):
        _busy_15ms()
        seen.append("piece")
        if i < 6:
            turns.one_per_turn(owner, lambda: piece(i + 1))

    timer.start()
    qtbot.wait(30)
    seen.clear()
    turns.one_per_turn(owner, lambda: piece(0))
    qtbot.waitUntil(lambda: seen.count("piece") == 7 and turns.pending() == 0, timeout=5000)
    timer.stop()
    pieces = "".join("P" if s == "piece" else "T" for s in seen)
    assert "PP" not in pieces, pieces


def test_a_jobs_final_row_and_the_runs_end_come_in_turns_of_their_own(qtbot, window):
    window.session.start([fake_spec("a")])
    job = window.session.results[0]
    *events, end = fake_events("a")
    for event in events:
        window.session.apply(event)
    model = window.summary_panel.model
    window.session.apply(end)
    assert model._rows[0]["status"] != "completed"  # the final row is owed to the next turn...
    finished = []
    window.sig_run_finished.connect(lambda: finished.append(model._rows[0]["status"]))
    window.run_display.on_run_finished()
    assert finished == []  # ...and the run's end comes after it, in its own turn
    qtbot.waitUntil(lambda: bool(finished), timeout=5000)
    assert finished == ["completed"] and job.ended
    assert model.summary(0)["speedup_ci_low"] is not None  # with its bootstrap interval


def test_reading_a_row_makes_it_at_once(qtbot, window):
    window.session.start([fake_spec("a")])
    for event in fake_events("a"):
        window.session.apply(event)
    assert window.summary_panel.model.summary(0)["status"] == "completed"  # what reads a row reads it made


def test_a_run_end_owed_to_a_set_of_results_replaced_meanwhile_is_dropped(qtbot, window):
    window.session.start([fake_spec("a")])
    finished = []
    window.sig_run_finished.connect(lambda: finished.append(True))
    window.run_display.on_run_finished()
    window.session.load([fake_result("b")], {})  # a report opened before the run's end was shown
    qtbot.waitUntil(lambda: turns.pending() == 0, timeout=5000)
    assert finished == [] and not window.status_label.text().startswith("Run finished")


def test_a_terminal_event_says_the_job_ended_once(qtbot, window):
    window.session.start([fake_spec("a")])
    changed, ended = [], []
    window.session.sig_job_changed.connect(changed.append)
    window.session.sig_job_ended.connect(ended.append)
    window.session.apply(ev.JobCompleted("a"))
    assert ended == ["a"] and changed == []  # each view refreshed twice at every job's end before


def test_redraw_timers_due_together_redraw_in_turns_of_their_own_and_once(qtbot):
    """The views' redraw timers (latency, histogram, Summary) came due together and ran back to
    back; through `as_piece` each is a turn of its own, and one asked twice before it ran
    runs once."""
    owner, seen = QObject(), []
    heartbeat = _heartbeat(seen, "T")

    def redraw(name):
        _busy_15ms()
        seen.append(name)

    slots = {name: (lambda name=name: redraw(name)) for name in "ab"}
    timers = []
    for name in "ab":
        timer = QTimer()
        timer.setSingleShot(True)
        timer.setInterval(40)
        timer.timeout.connect(turns.as_piece(owner, slots[name]))
        timers.append(timer)
    heartbeat.start()
    for timer in timers:
        timer.start()
    qtbot.waitUntil(lambda: "a" in seen and "b" in seen and turns.pending() == 0, timeout=5000)
    qtbot.wait(30)
    heartbeat.stop()
    order = "".join(seen)
    assert "ab" not in order and "ba" not in order, order  # a tick between the two redraws
    ran = []

    def once():
        ran.append(1)

    for _ in range(3):  # asked thrice before it ran: once
        turns.one_per_turn(owner, once)
    qtbot.waitUntil(lambda: turns.pending() == 0, timeout=5000)
    assert ran == [1]


def _heartbeat(seen: list, mark: str) -> QTimer:
    """A 10 ms timer that notes `mark` in `seen` at each tick (as the heartbeat bench's), not started."""
    timer = QTimer()
    timer.setInterval(10)
    timer.timeout.connect(lambda: seen.append(mark))
    return timer


def _busy_15ms() -> None:
    """15 ms of the GUI thread, as a long redraw takes."""
    import time

    end = time.perf_counter() + 0.015
    while time.perf_counter() < end:
        pass


def test_a_running_row_s_refresh_grades_its_timing_in_a_turn_before_the_row(qtbot, window, monkeypatch):
    """The 1 s refresh of a running row: the timing grade (half its figures) in a piece of its
    own, then the row, which uses that grade rather than computing it again."""
    import core.analysis.quality as quality

    window.session.start([fake_spec("a")])
    *events, _end = fake_events("a")
    for event in events:
        window.session.apply(event)
    model = window.summary_panel.model
    qtbot.waitUntil(lambda: turns.pending() == 0, timeout=5000)
    model.make_owed_rows()
    seen: list[str] = []
    real_grade, real_run_one, real_refresh = quality.grade, turns._run_one, model._on_refresh_due
    monkeypatch.setattr(quality, "grade", lambda result, ci=True: seen.append("grade") or real_grade(result, ci))
    monkeypatch.setattr(turns, "_run_one", lambda: seen.append("turn") or real_run_one())
    monkeypatch.setattr(model, "_on_refresh_due", lambda: seen.append("row") or real_refresh())
    late = rec.LatencySample("compiled", 999, 1.0)
    window.session.apply(ev.LatencyMeasured("a", samples=(late,)))  # the row is stale
    model._timer.stop()  # its real 1 s timer: a slow machine would see a second refresh
    model._timer.timeout.emit()  # the 1 s refresh came due
    qtbot.waitUntil(lambda: "row" in seen and turns.pending() == 0, timeout=5000)
    assert seen.count("grade") == 1 and seen.count("row") == 1, seen  # the row reused the grade
    graded, row = seen.index("grade"), seen.index("row")
    assert seen[graded - 1] == "turn" and graded < row and "turn" in seen[graded:row], seen  # turns of their own
    result = window.session.results[0]
    assert model.summary(0)["timing_quality"] == real_grade(result, ci=False).grade  # the row's, made anew
