"""Below the Summary's table, the selected config's every figure and finding: the lines
`main.py profile` prints for it (core.cli.output.config_lines), for ended jobs, made in turns
of their own after the rows (gui.widgets.turns)."""

from __future__ import annotations

from core.analysis.results import JobResult
from core.cli.output import config_lines
from core.vocab import events as ev
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from gui.panels.summary import DETAILS_PLACEHOLDER, NOT_ENDED_DETAILS, SummaryPanel
from tests.gui.helpers import GRAPH_BREAK_MODEL, fake_result


def _shows(qtbot, panel, text):
    qtbot.waitUntil(lambda: panel.details.toPlainText() == text, timeout=5000)


def test_the_selected_config_shows_what_the_cli_prints_for_it(qtbot):
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    assert panel.details.toPlainText() == "" and panel.details.placeholderText() == DETAILS_PLACEHOLDER
    first, second = fake_result("a", "eager"), fake_result("b", "aot_eager")
    queued = JobResult(JobSpec("c", ModelSpec(GRAPH_BREAK_MODEL), CompileConfig(backend="inductor")))
    panel.show_results([first, second, queued])
    _shows(qtbot, panel, "\n".join(config_lines(first)))  # the first config's, none selected
    assert "graph break GB0170" in panel.details.toPlainText()
    panel.table.selectRow(1)
    _shows(qtbot, panel, "\n".join(config_lines(second)))
    panel.table.selectRow(2)
    _shows(qtbot, panel, f"inductor: pending; {NOT_ENDED_DETAILS}")  # not started yet: not called running
    assert queued.apply(ev.JobFailed("c", reason="the model raised"))  # its end: the lines come then
    panel.refresh([first, second, queued], "c", ended=True)
    _shows(qtbot, panel, "\n".join(config_lines(queued)))
    assert "the model raised" in panel.details.toPlainText()
    panel.show_results([])
    _shows(qtbot, panel, "")


def test_a_job_end_makes_its_row_before_the_details_read_it(qtbot, monkeypatch):
    """At a job's end the row (its summary with the interval) is made in its own turn first;
    the details then read that row instead of summarising the job again."""
    import core.cli.output as output

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    done = fake_result("a", "eager")
    panel.show_results([done])
    _shows(qtbot, panel, "\n".join(config_lines(done)))
    order = []
    real = output.config_lines
    monkeypatch.setattr(output, "config_lines", lambda r, summary=None: order.append(summary) or real(r, summary))
    monkeypatch.setattr(done, "summary", lambda ci=True, _s=done.summary: order.append("summary") or _s(ci))
    panel._details_shown = None  # as if the job had just ended
    panel.refresh([done], "a", ended=True)
    qtbot.waitUntil(lambda: len(order) >= 2, timeout=5000)
    assert order[0] == "summary" and isinstance(order[1], dict) and "summary" not in order[1:]


def test_new_results_start_at_the_config_column(qtbot):
    """Issue 44: a sideways scroll of the previous results stayed, the Config column out of sight."""
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.resize(300, 300)
    panel.show()
    panel.show_results([fake_result("a", "eager"), fake_result("b", "aot_eager")])
    bar = panel.table.horizontalScrollBar()
    qtbot.waitUntil(lambda: bar.maximum() > 0, timeout=5000)
    bar.setValue(bar.maximum())
    panel.show_results([fake_result("c", "inductor")])
    assert bar.value() == 0
