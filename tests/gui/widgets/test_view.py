"""A view on a tab not shown refreshes when its tab is next shown (gui.widgets.view): a run's
end no longer refreshes every tab on the GUI thread at once (issue 22)."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QMainWindow, QTabWidget, QWidget

from core.vocab import events as ev
from gui.widgets.view import ResultsView
from tests.gui.helpers import fake_result


class ToySession(QObject):
    sig_reset = Signal()
    sig_job_changed = Signal(str)
    sig_job_ended = Signal(str)

    def __init__(self):
        super().__init__()
        self.results = ["first"]


class ToyView(QWidget, ResultsView):
    refresh_when_shown = True

    def __init__(self):
        super().__init__()
        self.calls = []

    def show_results(self, results):
        self.calls.append(("show", list(results)))

    def refresh(self, results, job_id="", ended=False):
        self.calls.append((list(results), job_id, ended))


def _window(qtbot):
    session, window, tabs = ToySession(), QMainWindow(), QTabWidget()
    shown, hidden = ToyView(), ToyView()
    tabs.addTab(shown, "shown")
    tabs.addTab(hidden, "hidden")
    window.setCentralWidget(tabs)
    for view in (shown, hidden):
        view.bind(session)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window, session, tabs, shown, hidden  # the window kept referenced: it owns the views


def test_a_hidden_tab_refreshes_once_per_job_when_shown_with_the_results_then(qtbot):
    _win, session, tabs, shown, hidden = _window(qtbot)
    session.sig_job_changed.emit("a")
    session.sig_job_changed.emit("a")
    session.sig_job_ended.emit("a")
    session.sig_job_changed.emit("b")
    hidden.request_refresh(session.results, "", ended=True)  # as the window's run-end does
    assert shown.calls == [
        (["first"], "a", False),
        (["first"], "a", False),
        (["first"], "a", True),
        (["first"], "b", False),
    ]
    assert hidden.calls == []
    session.results = ["second"]
    tabs.setCurrentIndex(1)
    assert hidden.calls == [(["second"], "a", True), (["second"], "b", False), (["second"], "", True)]
    tabs.setCurrentIndex(0)
    tabs.setCurrentIndex(1)
    assert len(hidden.calls) == 3  # nothing owed: showing again refreshes nothing


def test_new_results_drop_what_a_hidden_tab_owed(qtbot):
    _win, session, tabs, _, hidden = _window(qtbot)
    session.sig_job_ended.emit("old")
    session.sig_reset.emit()  # the window then calls show_results on every view
    tabs.setCurrentIndex(1)
    assert hidden.calls == []


def test_a_view_that_does_not_ask_for_it_refreshes_at_once_even_hidden(qtbot):
    _win, session, tabs, _, hidden = _window(qtbot)
    hidden.refresh_when_shown = False
    session.sig_job_ended.emit("a")
    assert hidden.calls == [(["first"], "a", True)]


def test_the_graphs_tab_asked_for_a_graph_while_hidden_shows_the_run_that_just_ended(qtbot):
    _win, session, tabs, _, hidden = _window(qtbot)
    session.sig_job_ended.emit("a")
    hidden.make_owed_refreshes()
    assert hidden.calls == [(["first"], "a", True)]
    tabs.setCurrentIndex(1)
    assert len(hidden.calls) == 1


def test_a_view_refreshes_at_once_while_its_window_is_not_shown(qtbot):
    session, view = ToySession(), ToyView()
    qtbot.addWidget(view)
    view.bind(session)
    session.sig_job_ended.emit("a")
    assert view.calls == [(["first"], "a", True)]


def test_the_time_breakdown_tab_opened_after_a_run_shows_the_run(window, qtbot):
    result = fake_result()
    panel = window.view("time-breakdown")
    window.show_tab("summary")
    window.session.start([result.spec])
    for event in (ev.JobStarted(result.job_id, pid=1), ev.JobCompleted(result.job_id, wall_time_s=1.0)):
        window.session.apply(event)
    window.run_display.on_run_finished()
    assert "comes after the benchmark" in panel.verdict.text()  # not refreshed while hidden
    window.show_tab("time-breakdown")
    assert panel.verdict.text().startswith("No op profile for this config: the job ended before it")
