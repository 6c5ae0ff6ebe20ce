"""A run on the main window as it goes: the runner's events into the session, and the
session's changes onto the views, the progress bar, the status line and the config queue.

`RunDisplay` owns what only this needs: which set of results is shown (`results_serial`, one
more at every run and report, so a late piece of an older one draws nothing), the last compile
phase and since when (`phase_since`, for the stall notice), and whether a report is being
loaded. The window it is handed is an `AppWindow` (gui.window.app_window). GUI thread only.
"""

from __future__ import annotations

import functools
import time

from PySide6.QtCore import QSignalBlocker

from gui.widgets.turns import one_per_turn
from gui.window.app_window import AppWindow

NO_PHASE = (0.0, "", "", True)  # RunDisplay.phase_since between jobs: no compile to say stalled


class RunDisplay:
    """The session and the runner wired to the window's views. GUI thread only."""

    def __init__(self, window: AppWindow):
        self.window = window
        self.results_serial = 0  # which set of results is shown: one more at every run and report
        self.phase_since = NO_PHASE  # the last phase change: when, phase, status text, stall said
        self.loading_report = False  # a report's results are being put in the session
        self.reset_error: Exception | None = None  # what a report's value raised in a view

    def connect(self) -> None:
        c, s = self.window.controller, self.window.session
        c.work_before_end = self.work_before_end
        c.sig_event_received.connect(self.on_event_received)
        c.sig_run_finished.connect(self.on_run_finished)
        s.sig_reset.connect(self.on_session_reset)
        s.sig_samples_added.connect(self.on_progress)
        s.sig_phase_changed.connect(self.on_phase_changed)
        s.sig_resource_sampled.connect(self.check_compile_stall)
        s.sig_job_ended.connect(self.on_job_ended)
        self.window.slot("graph-breaks").when_built(
            lambda view: view.sig_graph_requested.connect(self.on_graph_requested)
        )
        self.window.slot("time-breakdown").when_built(
            lambda view: view.source_lines.sig_graph_requested.connect(self.on_graph_requested)
        )

    def load_report(self, results, options: dict, path: str, warnings) -> Exception | None:
        """Put a report's results in the session; what a value of it raised in a view, or None."""
        self.reset_error = None
        self.loading_report = True
        try:
            self.window.session.load(results, options, path, warnings)
        finally:
            self.loading_report = False
        return self.reset_error

    def work_before_end(self, event):
        """What the controller has done off the GUI thread before a job's end reaches the session
        (gui.run.worker): the job's speedup interval, which the Summary's final row, the Decision
        tab, the results header's grade and the time verdict all read then (JobResult keeps it
        per sample count); on the GUI thread it held it ~0.8 s at a 100,000-call job's end."""
        result = None if self.window.closed else self.window.session.result(event.job_id)
        return result.summary_speedup if result is not None and result.speedup_interval_owed() else None

    def on_event_received(self, event) -> None:
        if self.window.closed:
            # a closed window's run (its cancelled job's end): folded, so its results say how it
            # ended, but no view is drawn again: with the window hidden each refreshed at once
            # (the Decision tab's bootstrap of a 100,000-call job held the close 0.7-0.8 s)
            with QSignalBlocker(self.window.session):
                self.window.session.apply(event)
            return
        self.window.session.apply(event)  # drops events of jobs this session does not know

    def on_run_finished(self) -> None:
        """The runner is done: the run's end is shown in a turn of its own, after the last
        job's end (gui.widgets.turns), unless another run or a report came in between."""
        self.phase_since = NO_PHASE
        one_per_turn(self.window, lambda serial=self.results_serial: self.finish_run(serial))

    def finish_run(self, serial: int) -> None:
        if serial != self.results_serial:
            return  # a new run or a report was shown meanwhile: its own end is shown
        if self.window.closed:  # nothing is drawn again (on_event_received); the run's end is said
            self.window.sig_run_finished.emit()
            return
        self.window.summary_panel.model.make_owed_rows()
        self.window.update_actions()
        results = self.window.session.results
        for view in self.window.views:
            view.request_refresh(results, "", ended=True)  # a tab not shown: when it is next shown
        self.window.progress.show_results(results)
        self.window.results_header.set_quality(results)
        failed = [r for r in results if r.status == "failed"]
        text = "Run finished: " + self.window.progress.full_text()
        if failed:
            text += f" — {failed[0].config.label} failed: {failed[0].failure_reason}"
        self.window.status_label.setText(text)
        self.window.sig_run_finished.emit()

    def on_session_reset(self) -> None:
        self.results_serial += 1
        self.phase_since = NO_PHASE  # a cancelled job's compile is not the new run's
        self.window.session_sections = {}
        if not self.loading_report:
            self.show_session()
            return
        try:  # a report's value no panel can show: open_session puts the previous results back
            self.show_session()
        except Exception as exc:  # noqa: BLE001 - any bad value in a report must not end the app
            self.reset_error = exc

    def show_session(self) -> None:
        results = self.window.session.results
        self.window.results_header.set_results(results, self.window.session.origin)
        self.window.results_header.set_warnings(self.window.session.warnings)
        self.window.results_header.set_quality(results)
        self.window.update_title()
        self.window.update_actions()
        self.window.summary_panel.set_localization(self.window.report_localization.get(self.window.session.origin))
        serial = self.results_serial
        # Run was clicked: the views take the new run's results one per turn after it, those in
        # sight first (10 views in the click's turn held the GUI thread ~12 ms, and the paint of
        # them all came in the next: 26-34 ms in all); a later reset (another run, a report)
        # makes these pieces moot
        if self.window.run_starting:
            for view in sorted(self.window.views, key=lambda v: not v.isVisible()):
                one_per_turn(self.window, functools.partial(self.show_later, view, serial))
        else:
            for view in self.window.views:
                view.show_results(results)
        self.window.progress.show_results(results)
        # A sweep times each shape apart (in VariantResult), not per iteration: with only sweeps the
        # latency charts would stay empty, so the tabs (the Shape sweep tab) get their room.
        self.window.charts_splitter.setVisible(
            not results or not all(r.spec.sweep_shapes or r.spec.sweep_batch for r in results)
        )
        queue = self.window.config_panel.queue
        for r in results:
            if r.config in queue.configs:
                queue.set_status(r.config, r.status, r.failure_reason, r.failure_detail)

    def show_later(self, view, serial: int) -> None:
        if serial == self.results_serial and not self.window.closed:
            view.show_results(self.window.session.results)

    def on_progress(self, *args) -> None:
        self.window.progress.show_results(self.window.session.results, soon=True)  # with every batch of samples

    def on_phase_changed(self, job_id: str, phase: str, detail: str) -> None:
        result = self.window.session.result(job_id)
        self.window.progress.show_results(self.window.session.results)
        self.window.status_label.setText(f"{result.config.label}: {detail or phase}")
        self.window.config_panel.queue.set_status(result.config, phase)
        self.phase_since = (time.monotonic(), phase, f"{result.config.label}: {detail or phase}", False)

    def check_compile_stall(self, job_id: str, sample) -> None:
        """While a config compiles (resource samples arrive at 5 Hz): when no compile stage has
        changed for STALL_S, the status bar says so once, naming the stage and the frame."""
        from core.capture.compile_watch import STALL_S, stalled_text

        since, phase, text, said = self.phase_since
        if phase != "compile" or said or time.monotonic() - since < STALL_S:
            return
        self.phase_since = (since, phase, text, True)
        self.window.status_label.setText(
            stalled_text(text, time.monotonic() - since, "the Graphs tab's Compile log… shows torch's log")
        )

    def on_graph_requested(self, label: str, graph: str) -> None:
        """A graph-break row asked for the graph on one side of it: show it in the Graphs tab."""
        if self.window.view("graphs").show_graph(label, graph):
            self.window.show_tab("graphs")
        else:
            self.window.status_label.setText(f"Graph {graph} of {label} is not among the recorded graphs.")

    def on_job_ended(self, job_id: str) -> None:
        result = self.window.session.result(job_id)
        self.phase_since = NO_PHASE  # its compile, ended or cancelled, stalls nothing further
        self.window.progress.show_results(self.window.session.results, soon=True)  # the bar repaints: not in this turn
        # the grade reads the speedup's interval: after the Summary's final row has made it
        one_per_turn(self.window, lambda: self.window.results_header.set_quality(self.window.session.results))
        self.window.config_panel.queue.set_status(
            result.config, result.status, result.failure_reason, result.failure_detail
        )
