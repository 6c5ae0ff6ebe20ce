"""Below the Summary's table, the selected config's every figure and finding: the lines
`main.py profile` prints for it (core.cli.output.config_lines), for ended jobs."""

from __future__ import annotations

from core.cli.output import config_lines
from core.vocab import events as ev
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from gui.panels.summary import DETAILS_PLACEHOLDER, RUNNING_DETAILS, SummaryPanel
from tests.gui.helpers import GRAPH_BREAK_MODEL, fake_result


def test_the_selected_config_shows_what_the_cli_prints_for_it(qtbot):
    from core.analysis.results import JobResult

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    assert panel.details.toPlainText() == "" and panel.details.placeholderText() == DETAILS_PLACEHOLDER
    first, second = fake_result("a", "eager"), fake_result("b", "aot_eager")
    running = JobResult(JobSpec("c", ModelSpec(GRAPH_BREAK_MODEL), CompileConfig(backend="inductor")))
    panel.show_results([first, second, running])
    qtbot.waitUntil(lambda: bool(panel.details.toPlainText()), timeout=5000)  # the text comes a turn later
    text = panel.details.toPlainText()
    assert text == "\n".join(config_lines(first)) and "graph break GB0170" in text  # the first config's
    panel.table.selectRow(1)
    qtbot.waitUntil(lambda: panel.details.toPlainText() == "\n".join(config_lines(second)), timeout=5000)
    panel.table.selectRow(2)
    assert panel.details.toPlainText() == f"inductor: {RUNNING_DETAILS}"
    assert running.apply(ev.JobFailed("c", reason="the model raised"))  # its end: the lines come then
    panel.refresh([first, second, running], "c", ended=True)
    qtbot.waitUntil(lambda: "the model raised" in panel.details.toPlainText(), timeout=5000)
    assert (
        panel.details.toPlainText() == "\n".join(config_lines(running)) and "the model raised" in running.failure_reason
    )
    panel.show_results([])
    assert panel.details.toPlainText() == ""
