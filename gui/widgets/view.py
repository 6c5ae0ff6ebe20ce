"""What every view of the results does: the small protocol the window relies on.

A view binds itself to the session (`bind`), shows a whole set of results (`show_results`:
a new run, or a report opened; the window calls it for every view in turn, so that a report
value one view cannot show is caught and the previous results put back) and refreshes when
a job's figures change (`refresh`). A view whose refresh is slow (`refresh_when_shown`)
refreshes, while its tab is not shown in a shown window, when the tab is next shown, once per
job that changed (`request_refresh`): a run's end refreshed every tab, ~0.3 s of the GUI
thread for the Time breakdown tab alone;
views that stream (samples, resource readings, sweep variants) connect those signals in
their own `bind`. A tab view is one file in gui/panels and one entry in `gui.panels.TAB_VIEWS`
(its `--tab` name, title and tooltip); the window holds each view in a `gui.window.view_slot.ViewSlot`,
which builds one that draws with pyqtgraph after the window's first show. GUI thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import QEvent, QObject

if TYPE_CHECKING:
    from core.run.torch_info import TorchInfo


class Session(Protocol):
    """What a view needs of the session (gui.run.session.ProfileSession, which sits above the
    views): its results and the signals that say a job changed or ended."""

    results: list
    sig_job_changed: object
    sig_job_ended: object


class ResultsView:
    """Mixin for a QWidget that shows the session's results (see the module docstring)."""

    def build_unless_staged(self, staged: bool) -> None:
        """For a view built in pieces, its `construction_steps()` (each one turn of the event
        loop after the window's show: gui.window.view_slot.ViewSlot runs them when the view
        was made with `staged=True`): run them now unless `staged`."""
        if not staged:
            for step in self.construction_steps():
                step()

    refresh_when_shown = False
    """Defer `refresh` while hidden in a shown window (see the module docstring); a view that
    sets it and is asked for something while hidden calls `make_owed_refreshes` first."""

    _refresh_when_shown: "_RefreshWhenShown | None" = None
    """The refreshes owed while hidden, once the view follows a session (`bind`)."""

    def bind(self, session: Session) -> None:
        """Follow `session`: a job's change or end refreshes this view (`request_refresh`)."""
        self._refresh_when_shown = _RefreshWhenShown(self, session)
        session.sig_job_changed.connect(lambda job_id: self.request_refresh(session.results, job_id))
        session.sig_job_ended.connect(lambda job_id: self.request_refresh(session.results, job_id, ended=True))

    def request_refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        """`refresh` now, or, when this view is hidden in a shown window (a tab not shown),
        when it is next shown, with the session's results then. GUI thread only."""
        deferred = self._refresh_when_shown
        if self.refresh_when_shown and deferred is not None and self.window().isVisible() and not self.isVisible():
            deferred.add(job_id, ended)
            return
        self.refresh(results, job_id, ended)

    def make_owed_refreshes(self) -> None:
        """Make now the refreshes deferred while this view was hidden. GUI thread only."""
        deferred = self._refresh_when_shown
        if deferred is not None:
            deferred.flush()

    def show_results(self, results: list) -> None:
        """Replace everything shown with `results` (JobResults, in run order)."""
        raise NotImplementedError

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        """Job `job_id`'s figures changed (`ended`: it reached its terminal event)."""

    def set_torch_info(self, torch_info: "TorchInfo") -> None:
        """What torch offers here arrived (GPU readings, dynamo defaults); most views ignore it."""


class _RefreshWhenShown(QObject):
    """The refreshes a hidden view owes (job id → whether it ended, in order), made on its
    next Show event; a new set of results (the session's `sig_reset`) drops them, as
    `show_results` shows everything then. GUI thread only."""

    def __init__(self, view, session):
        super().__init__(view)
        self._view, self._session = view, session
        self.pending: dict[str, bool] = {}
        view.installEventFilter(self)
        reset = getattr(session, "sig_reset", None)
        if reset is not None:
            reset.connect(self._on_reset)

    def _on_reset(self) -> None:
        self.pending = {}

    def add(self, job_id: str, ended: bool) -> None:
        self.pending[job_id] = self.pending.get(job_id, False) or ended

    def flush(self) -> None:
        pending, self.pending = self.pending, {}
        for job_id, ended in pending.items():
            self._view.refresh(self._session.results, job_id, ended)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Show and self.pending:
            self.flush()
        return False
