"""What every view of the results does: the small protocol the window relies on.

A view binds itself to the session (`bind`), shows a whole set of results (`show_results`:
a new run, or a report opened; the window calls it for every view in turn, so that a report
value one view cannot show is caught and the previous results put back) and refreshes when
a job's figures change (`refresh`);
views that stream (samples, resource readings, sweep variants) connect those signals in
their own `bind`. A tab view also names itself (`name` for `--tab`, `title`, `tip`).
A tab view is one file in gui/panels and one entry in `gui.panels.TAB_VIEWS`. GUI thread only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

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

    name = ""
    title = ""
    tip = ""

    def bind(self, session: Session) -> None:
        """Follow `session`: a job's change or end refreshes this view."""
        session.sig_job_changed.connect(lambda job_id: self.refresh(session.results, job_id))
        session.sig_job_ended.connect(lambda job_id: self.refresh(session.results, job_id, ended=True))

    def show_results(self, results: list) -> None:
        """Replace everything shown with `results` (JobResults, in run order)."""
        raise NotImplementedError

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        """Job `job_id`'s figures changed (`ended`: it reached its terminal event)."""

    def set_torch_info(self, catalog: "TorchInfo") -> None:
        """What torch offers here arrived (GPU readings, dynamo defaults); most views ignore it."""
