"""The graph-break details pane follows the results on screen (issue 19, item 1): a new run
or a report replaces the table and the pane with it, never leaving the last run's break."""

from __future__ import annotations

from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from gui.panels.graph_breaks import NO_BREAKS, GraphBreaksPanel
from gui.run.session import ProfileSession
from tests.gui.helpers import LSTM_EXAMPLE, fake_result


def _lstm_spec(job_id: str, allow_rnn: bool) -> JobSpec:
    dynamo = (("allow_rnn", True),) if allow_rnn else ()
    return JobSpec(job_id, ModelSpec(LSTM_EXAMPLE), CompileConfig(backend="eager", dynamo_config=dynamo))


def _skipped_rnn_frame(job_id: str) -> ev.GraphBreakFound:
    return ev.GraphBreakFound(
        job_id,
        graph_break=rec.GraphBreak(
            "Attempted to wrap RNN, GRU, or LSTM",
            "GB0014",
            file=LSTM_EXAMPLE,
            line=30,
            frame_skipped=True,
            eager_function="forward (lstm_variable_length.py:28)",
            logged=1,
            per_call=1,
        ),
    )


def test_the_details_follow_each_new_run_and_clear_when_it_has_no_breaks(qtbot):
    session = ProfileSession()
    panel = GraphBreaksPanel()
    qtbot.addWidget(panel)
    panel.bind(session)
    session.sig_reset.connect(lambda: panel.show_results(session.results))

    # conditional_execution-like results: the user selects the data-dependent branch
    session.load([fake_result("job1")], {}, "")
    rows = [panel.proxy.index(r, 2).data() for r in range(panel.proxy.rowCount())]
    panel.select_row(rows.index("GB0170"))
    assert "GB0170" in panel.detail.toPlainText()

    # the LSTM example runs: a live run whose only break is the skipped RNN frame
    session.start([_lstm_spec("lstm1", allow_rnn=False)])
    assert "GB0170" not in panel.detail.toPlainText()
    session.apply(ev.JobStarted("lstm1", pid=1))
    session.apply(_skipped_rnn_frame("lstm1"))
    assert panel.selected_break().gb_code == "GB0014"
    assert "GB0014" in panel.detail.toPlainText() and "GB0170" not in panel.detail.toPlainText()

    # "Apply allow_rnn": the next run has no break at all; the pane says so
    session.start([_lstm_spec("lstm2", allow_rnn=True)])
    session.apply(ev.JobStarted("lstm2", pid=1))
    session.apply(ev.JobCompleted("lstm2", wall_time_s=1.0))
    panel.set_results(session.results)
    assert panel.proxy.rowCount() == 0
    assert "GB0014" not in panel.detail.toPlainText()
    assert panel.detail.toHtml().count("No graph breaks") == 1
    assert "No graph breaks" in NO_BREAKS


def test_the_same_break_stays_selected_across_a_refresh_and_a_filter_clears_the_pane(qtbot):
    panel = GraphBreaksPanel()
    qtbot.addWidget(panel)
    results = [fake_result("job1")]
    panel.set_results(results)
    rows = [panel.proxy.index(r, 2).data() for r in range(panel.proxy.rowCount())]
    panel.select_row(rows.index("GB0170"))
    panel.set_results(results)  # a refresh of the same results keeps the user's choice
    assert panel.selected_break().gb_code == "GB0170" and "GB0170" in panel.detail.toPlainText()
    panel.filter_edit.setText("no break has this text")
    assert panel.proxy.rowCount() == 0 and "GB0170" not in panel.detail.toPlainText()
