"""Issue 10 in the app, view by view: the summary's accuracy columns and the Decision tab
(recommendation, Copy, suggestions with apply-and-re-run), built from events, no job run."""

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication

from core.decide.recommend import DEFAULT_CALLS, recommend
from core.vocab import events as ev
from core.vocab import records as rec
from tests.core.fakes import fake_result as measured
from tests.gui.helpers import fake_result


def _checked(job_id, backend, accuracy):
    r = fake_result(job_id, backend, status_event=ev.PhaseChanged(job_id, phase="accuracy"))
    r.apply(ev.AccuracyChecked(job_id, accuracy=accuracy))
    r.apply(ev.JobCompleted(job_id, wall_time_s=3.0))
    return r


def test_summary_shows_accuracy_and_a_failing_config_stands_out(qtbot, qtmodeltester):
    from gui.panels.summary import SummaryPanel
    from gui.panels.summary_columns import ACCURACY_COLUMN, COLUMNS

    fail = rec.AccuracyResult(
        "fail", "output 0: max abs error 0.5 > tolerance 0.0001", max_abs_error=0.5, max_rel_error=0.25, cosine=0.97
    )
    rows = [
        _checked("a", "eager", rec.AccuracyResult("pass", "matches", max_abs_error=0.0, max_rel_error=0.0, cosine=1.0)),
        _checked("b", "aot_eager", fail),
        _checked("c", "inductor", rec.AccuracyResult("nondeterministic", "eager differs from itself (dropout?)")),
    ]
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.show_results(rows)
    model = panel.model
    qtmodeltester.check(model)
    headers = [c.header for c in COLUMNS]
    assert "Accuracy" in headers and "Cosine" in headers
    text = lambda r, c: model.data(model.index(r, c))  # noqa: E731
    assert [text(r, ACCURACY_COLUMN) for r in range(3)] == ["pass", "fail", "nondeterministic"]
    assert text(1, ACCURACY_COLUMN + 1) == "0.5 / 0.25" and text(1, ACCURACY_COLUMN + 2) == "0.970000"
    assert model.data(model.index(1, 3), Qt.ItemDataRole.BackgroundRole) is not None  # the whole row
    assert model.data(model.index(0, 3), Qt.ItemDataRole.BackgroundRole) is None
    assert "tolerance 0.0001" in model.data(model.index(1, 0), Qt.ItemDataRole.ToolTipRole)
    assert "dropout" in model.data(model.index(2, ACCURACY_COLUMN), Qt.ItemDataRole.ToolTipRole)


def _decision(qtbot, results):
    from gui.panels.decision import DecisionPanel

    panel = DecisionPanel()
    qtbot.addWidget(panel)
    panel.show_results(results)
    return panel


def test_decision_shows_cores_recommendation_and_copy_puts_its_code_on_the_clipboard(qtbot):
    results = [
        measured("inductor", compiled_ms=5.0, compile_s=10.0, seed=1),
        measured("aot_eager", compiled_ms=9.0, compile_s=1.0, seed=2),
    ]
    panel = _decision(qtbot, results)
    assert panel.calls.value() == DEFAULT_CALLS and "your choice" in panel.calls.toolTip()
    expected = recommend(results, DEFAULT_CALLS)
    assert panel.sentence.text() == expected.sentence and "Compile with inductor" in expected.sentence
    assert panel.code.toPlainText() == expected.code and "torch.compile(" in expected.code
    assert "Break-even" in panel.details.text() and expected.memory in panel.details.text()
    panel.copy_button.click()
    assert QGuiApplication.clipboard().text() == expected.code
    panel.calls.setValue(100)  # too few calls to pay for a 10 s compile: core says do not compile
    assert panel.sentence.text() == recommend(results, 100).sentence
    assert panel.sentence.text().startswith("Do not compile")


def test_a_suggestion_shows_its_evidence_and_its_button_asks_for_the_change(qtbot):
    panel = _decision(qtbot, [measured("inductor", compiled_ms=9.0, compile_s=10.0, seed=1)])
    cards = [c for c in panel.card_widgets if c.suggestion.rule == "freezing"]
    assert len(cards) == 1 and cards[0].buttons
    assert "freezing" in cards[0].buttons[0].text() and "re-run" in cards[0].buttons[0].text().lower()
    with qtbot.waitSignal(panel.sig_change_requested) as blocker:
        cards[0].buttons[0].click()
    label, change = blocker.args
    assert label == "inductor" and dict(change.inductor_options) == {"freezing": True}


def test_nothing_ended_means_no_recommendation_yet(qtbot):
    running = fake_result("r", "inductor", status_event=ev.PhaseChanged("r", phase="compiled"))
    panel = _decision(qtbot, [running])
    assert panel.recommendation is None and not panel.copy_button.isEnabled()
    assert "first config has finished" in panel.sentence.text()
    assert panel.code.isHidden() and panel.copy_button.isHidden()


def test_no_empty_code_box_when_there_is_no_code_to_copy(qtbot):
    """Only a reference backend measured: "cannot tell" has no code; an empty box and a
    greyed Copy stood under it."""
    panel = _decision(qtbot, [measured("aot_eager", compiled_ms=9.0, compile_s=1.0, seed=2)])
    assert panel.recommendation.code == "" and panel.code.isHidden() and panel.copy_button.isHidden()
    panel.show_results([measured("inductor", compiled_ms=5.0, compile_s=10.0, seed=1)])
    assert panel.code.toPlainText() and not panel.code.isHidden() and not panel.copy_button.isHidden()


def test_summary_keeps_each_configs_colour_beside_the_accuracy_columns(qtbot):
    from gui.panels.summary import SummaryPanel
    from gui.widgets.theme import config_color

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.show_results([_checked("a", "eager", rec.AccuracyResult("fail", "differs"))])
    brush = panel.model.data(panel.model.index(0, 0), Qt.ItemDataRole.ForegroundRole)
    assert brush.color() == config_color(0)


# ------------------------------------------------------------------ timing quality (the trust issue)


def test_summary_grades_each_timing_and_the_header_says_when_any_is_not_quiet(qtbot):
    from PySide6.QtGui import QColor

    from gui.panels.results_header import ResultsHeader
    from gui.panels.summary import SummaryPanel
    from gui.panels.summary_columns import TIMING_COLUMN
    from gui.widgets.theme import error_color

    quiet = measured("aot_eager", compiled_ms=9.0, seed=2)
    busy = measured("inductor", compiled_ms=5.0, others_cores=1.6, processes={1: 5.0, 2: 5.1}, seed=1)
    panel = SummaryPanel()
    qtbot.addWidget(panel)
    panel.show_results([quiet, busy])
    model = panel.model
    assert model.data(model.index(0, TIMING_COLUMN)) == "quiet"
    assert model.data(model.index(1, TIMING_COLUMN)) == "unusable (3 proc.)"
    tip = model.data(model.index(1, TIMING_COLUMN), Qt.ItemDataRole.ToolTipRole)
    assert "other processes used 1.6 of 2 cores" in tip and "3 processes: speedups" in tip
    color = model.data(model.index(1, TIMING_COLUMN), Qt.ItemDataRole.ForegroundRole).color()
    assert color == QColor(error_color())
    header = ResultsHeader()
    qtbot.addWidget(header)
    header.show()
    header.set_quality([quiet])
    assert not header.banner.isVisible()
    header.set_quality([quiet, busy])
    assert header.banner.isVisible() and header.rerun_button.isVisible()
    assert header.quality.text().startswith("Timing not quiet: inductor unusable (other processes used 1.6")
    text = header.quality.text()
    assert "No verdict is drawn from that timing (inductor): re-run on a quiet machine" in text
    assert "other programs used up to 1.6 cores" in text
    assert "--" not in text + header.quality.toolTip() and "more Processes" in text  # the form's fields (issue 44)
    with qtbot.waitSignal(header.sig_rerun_requested):
        header.rerun_button.click()


def test_decision_offers_a_rerun_when_it_cannot_tell(qtbot):
    panel = _decision(qtbot, [measured("inductor", compiled_ms=5.0, others_cores=1.6)])
    assert panel.sentence.text().startswith("Cannot tell which settings to ship")
    assert panel.rerun_button.isVisibleTo(panel) and "To decide: re-run" in panel.details.text()
    assert "--" not in panel.details.text() and "more Processes" in panel.details.text()  # the form's fields
    # issue 44: "Suggestions: none" did not say the rules resting on the timing were held back
    assert panel.suggestions_title.text().endswith(": none.") and panel.held_back.isVisibleTo(panel)
    assert panel.held_back.text().startswith("Held back: the suggestions that rest on the timing")
    assert "Break-even" not in panel.details.text()
    with qtbot.waitSignal(panel.sig_rerun_requested):
        panel.rerun_button.click()
    quiet = _decision(qtbot, [measured("inductor", compiled_ms=5.0, seed=3)])
    assert not quiet.rerun_button.isVisibleTo(quiet) and "Break-even" in quiet.details.text()
    assert not quiet.held_back.isVisibleTo(quiet)


def test_each_suggestion_says_why_it_applies(qtbot):
    panel = _decision(qtbot, [measured("inductor", compiled_ms=9.0, seed=1)])
    card = next(c for c in panel.card_widgets if c.suggestion.rule == "freezing")
    texts = [w.text() for w in card.findChildren(type(panel.sentence))]
    assert any(t.startswith("Why this applies: inductor inference on the CPU without freezing") for t in texts)


def test_an_applied_change_is_shown_before_and_after(qtbot):
    import dataclasses

    from core.vocab.config import CompileConfig

    before = measured("inductor", compiled_ms=9.0, seed=1)
    frozen = CompileConfig("inductor", inductor_options=(("freezing", True),))
    after = measured(frozen, compiled_ms=8.96, seed=2)
    after.spec = dataclasses.replace(after.spec, applied=("freezing", "inductor", "add freezing"))
    panel = _decision(qtbot, [])
    panel.set_before(frozen.label, before)
    panel.show_results([before, after])
    assert panel.applied.isVisibleTo(panel)
    text = panel.applied.text()
    assert text.startswith("Applied add freezing (freezing suggestion): inductor → inductor/freezing=True: compiled")
    assert "within the noise" in text and "speedup 1.11x → 1.12x (intervals overlap)" in text


def test_a_setting_not_tried_stands_under_its_own_heading_after_the_suggestions(qtbot):
    """Freezing with nothing measured for it (core: `untried`) read under "Suggestions from the
    measurements" while its title said nothing measured points to it."""
    from core.decide.suggestions import SUGGESTIONS_HEADING, UNTRIED_HEADING

    panel = _decision(qtbot, [measured("inductor", eager_ms=5.0, compiled_ms=2.3)])
    rules = [c.suggestion.rule for c in panel.card_widgets]
    assert rules[-1] == "freezing" and panel.card_widgets[-1].suggestion.untried and "autotune" in rules
    assert panel.suggestions_title.text() == SUGGESTIONS_HEADING
    assert panel.untried_title.isVisibleTo(panel) and panel.untried_title.text() == UNTRIED_HEADING
    layout = panel.cards
    assert layout.indexOf(panel.untried_title) == layout.indexOf(panel.card_widgets[-1]) - 1
    assert layout.indexOf(panel.untried_title) > layout.indexOf(panel.card_widgets[0])
    # nothing else to say: "none" from the measurements, and the setting not tried under its heading
    from core.vocab.config import CompileConfig

    tuned = measured(
        CompileConfig("inductor", mode="max-autotune-no-cudagraphs"), eager_ms=5.0, compiled_ms=2.0, seed=3
    )
    panel.show_results([measured("inductor", eager_ms=5.0, compiled_ms=2.3), tuned])
    assert [c.suggestion.rule for c in panel.card_widgets] == ["freezing"]
    assert panel.suggestions_title.text() == f"{SUGGESTIONS_HEADING}: none." and panel.untried_title.isVisibleTo(panel)
    panel.show_results([measured(CompileConfig("inductor", inductor_options=(("freezing", True),)))])
    assert not panel.untried_title.isVisibleTo(panel) and panel.cards.indexOf(panel.untried_title) == -1
