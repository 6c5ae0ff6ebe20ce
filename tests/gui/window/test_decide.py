"""The window's decision features with its real wiring: Apply and re-run changes the queue
and starts a run, Find best settings queues core.decide.tune's candidates under core.decide.tune's
BudgetListener, Compare with report… flags an injected regression. Only the run controller's
start is replaced (a recorder), so no job process starts."""

import os

from PySide6.QtCore import Qt

from core.decide.compare import WORSE
from core.decide.tune import BudgetListener, candidate_specs
from core.report.files import write_report
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from tests.core.fakes import fake_result as measured
from tests.gui.helpers import GRAPH_BREAK_MODEL

FREEZING = CompileConfig("inductor", inductor_options=(("freezing", True),))


def _recorder(window):
    started = []
    window.controller.start = lambda specs, **kw: started.append((specs, kw.get("wrap")))
    return started


def test_apply_and_rerun_changes_the_queue_and_starts_a_run(qtbot, window):
    window.set_model("resnet18")
    window.config_panel.queue.clear()
    window.session.load([measured("inductor", compiled_ms=9.0, seed=1), measured("aot_eager", seed=2)], {})
    window.show_tab("decision")
    card = next(c for c in window.view("decision").card_widgets if c.suggestion.rule == "freezing")
    started = _recorder(window)
    card.buttons[0].click()
    assert window.config_panel.queue.configs == [FREEZING]
    assert len(started) == 1 and [s.config for s in started[0][0]] == [FREEZING], window.last_error


def test_apply_and_rerun_runs_only_the_changed_config_and_keeps_the_others_on_screen(qtbot, window):
    """Issue 44: Apply and re-run profiled every queued config again, and the results of the
    configs it did not change left the screen."""
    window.set_model("resnet18")
    inductor, reference = measured("inductor", compiled_ms=9.0, seed=1), measured("aot_eager", seed=2)
    window.config_panel.queue.clear()
    for result in (inductor, reference):
        window.config_panel.queue.add(result.config)
    window.session.load([inductor, reference], {})
    window.show_tab("decision")
    card = next(c for c in window.view("decision").card_widgets if c.suggestion.rule == "freezing")
    started = _recorder(window)
    card.buttons[0].click()
    assert len(started) == 1 and [s.config for s in started[0][0]] == [FREEZING], window.last_error
    assert window.config_panel.queue.configs == [FREEZING, reference.config]  # the next Run runs both
    shown = window.session.results
    assert inductor in shown and reference in shown and [r.config for r in shown][-1] == FREEZING


def test_only_references_measured_offers_to_profile_inductor_beside_them_not_a_rerun(qtbot, window):
    """A run of eager alone cannot decide, and running it again cannot either: the button
    profiles inductor's default, the earlier results kept beside it."""
    window.set_model("resnet18")
    reference = measured("eager", seed=1)
    window.session.load([reference], {})
    window.show_tab("decision")
    panel = window.view("decision")
    assert panel.recommendation.try_config == CompileConfig("inductor")
    assert panel.rerun_button.isVisibleTo(window) and panel.rerun_button.text() == "Profile inductor"
    started = _recorder(window)
    panel.rerun_button.click()
    assert len(started) == 1 and [s.config for s in started[0][0]] == [CompileConfig("inductor")], window.last_error
    assert reference in window.session.results  # kept on screen beside the new run
    window.session.load([measured("inductor", compiled_ms=9.9, eager_ms=10.0, noise=0.3, seed=3)], {})
    assert panel.rerun_button.text() == "Re-run"  # a compiled config measured: running again can decide


def test_find_best_settings_runs_tunes_candidates_within_its_budget(qtbot, window):
    window.set_model("resnet18")
    panel = window.view("decision")
    panel.budget.setValue(3.0)
    started = _recorder(window)
    assert window.actions.find_best.text() == "Find best settings"
    panel.tune_button.click()
    assert len(started) == 1, window.last_error
    specs, wrap = started[0]
    expected = [s.config for s, _ in candidate_specs(specs[0], False)]
    assert [s.config for s in specs] == expected and CompileConfig("eager") in expected and FREEZING in expected
    listener = wrap(object())
    assert isinstance(listener, BudgetListener) and listener.budget_s == 180.0
    assert [r.config for r in window.session.results] == expected  # live as any run
    assert window.tabs.currentWidget().view is panel


def _cut_by_budget(window):
    """A tune run whose second candidate the budget cut: the window ends it as cancelled and says why."""
    window.set_model("resnet18")
    started = _recorder(window)
    window.view("decision").tune_button.click()
    specs, wrap = started[0]
    listener = wrap(object())
    listener.notes[specs[1].job_id] = "not started: estimated 99 s, 3 s of the budget left"
    for spec in specs[:1] + specs[2:]:
        window.session.apply(ev.JobCancelled(spec.job_id))
    window.controller.sig_run_finished.emit()
    return specs


def test_find_best_settings_reports_what_the_budget_cut(qtbot, window):
    specs = _cut_by_budget(window)
    assert window.session.result(specs[1].job_id).status == "cancelled"
    notes = window.view("decision").tune_notes
    assert notes.isVisibleTo(window) and "cut by the budget" in notes.text() and "3 s of the budget" in notes.text()


def test_what_the_budget_did_is_saved_with_the_session_and_shown_again_when_reopened(qtbot, window, tmp_path):
    """A Find best settings run's candidates and fates went nowhere: a saved session or an exported
    report lost them, and a `tune` report opened in the app never said what its budget cut."""
    import json

    from gui.window.report_opening import open_report

    _cut_by_budget(window)
    shown = window.view("decision").tune_notes.text()
    window.view("decision").budget.setValue(2.5)
    saved = window.save_session(str(tmp_path / "saved.json"))
    doc = json.loads(open(saved).read())
    assert any(row["fate"] == "cut by the budget" for row in doc["tune"]["candidates"])
    exported = tmp_path / "exported"
    window.export_csv(str(exported))
    assert json.loads((exported / "report.json").read_text())["tune"] == doc["tune"]

    window.session.load([measured("inductor", seed=5)], {})  # other results: the notes go
    notes = window.view("decision").tune_notes
    assert not notes.isVisibleTo(window) and notes.text() == ""
    assert open_report(window, saved)
    assert notes.isVisibleTo(window) and notes.text() == shown and "3 s of the budget left" in shown
    assert window.view("decision").budget.value() == 10.0  # the run's budget, ready for the next

    doc["tune"]["candidates"][0]["fate"] = 7  # a crafted entry: said so, the results still shown
    (tmp_path / "crafted.json").write_text(json.dumps(doc))
    assert open_report(window, str(tmp_path / "crafted.json"))
    assert notes.text().startswith("This report's tune entry (what the budget did to each candidate) cannot be read")
    write_report([measured("inductor", seed=6)], str(tmp_path / "plain"), {})
    assert open_report(window, str(tmp_path / "plain" / "report.json")) and notes.text() == ""


def test_compare_with_report_flags_an_injected_regression(qtbot, window, tmp_path):
    from gui.window.compare_dialog import compare_with_report

    base = [measured("inductor", compiled_ms=5.0, seed=1), measured(FREEZING, compiled_ms=3.0, seed=2)]
    write_report(base, str(tmp_path / "base"), {})
    brk = rec.GraphBreak("Data-dependent branching", "GB0170", file=GRAPH_BREAK_MODEL, line=15)
    now = [
        measured("inductor", compiled_ms=6.5, seed=3, graph_breaks=(brk,), environment={"threads": 4}),
        measured(FREEZING, compiled_ms=3.0, seed=4, environment={"threads": 4}),
    ]
    window.session.load(now, {})
    dialog = compare_with_report(window, os.path.join(str(tmp_path / "base"), "report.json"))
    qtbot.addWidget(dialog)
    model = dialog.model
    row = next(i for i in range(model.rowCount()) if model.data(model.index(i, 0)) == "inductor")
    assert model.trend(row, 1) == WORSE and model.trend(row, 7) == WORSE
    red = model.data(model.index(row, 1), Qt.ItemDataRole.ForegroundRole).color().name()
    assert red == model.data(model.index(row, 9), Qt.ItemDataRole.ForegroundRole).color().name()
    assert "REGRESSION" in model.data(model.index(row, 9)) and "+30" in model.data(model.index(row, 1))
    other = 1 - row
    assert model.data(model.index(other, 9)).startswith("ok") and model.trend(other, 1) != WORSE
    assert dialog.warnings.isVisibleTo(dialog) and "thread count" in dialog.warnings.text()
    assert "inductor: REGRESSION" in dialog.verdicts.text()
    dialog.relative.setChecked(True)  # eager unchanged: compiled is slower against it too
    assert dialog.comparison.relative and "relative to eager" in dialog.verdicts.text()
    assert "inductor: REGRESSION" in dialog.verdicts.text() and dialog.table.model() is dialog.model
    chart = window.distribution_chart
    assert any(k[0].startswith("baseline:") for k in chart._curves) and "baseline" in chart.title.text()
    dialog.close()
    assert not any(k[0].startswith("baseline:") for k in chart._curves)


def test_compare_with_a_report_of_another_model_says_so_and_compares_nothing(qtbot, window, tmp_path):
    from core.decide.report_match import model_mismatch
    from gui.window.compare_dialog import compare_with_report

    base = [measured("inductor", compiled_ms=5.0, seed=1, model="mobilenet_v2")]
    write_report(base, str(tmp_path / "base"), {})
    now = [measured("inductor", compiled_ms=6.5, seed=3, model="resnet18")]
    window.session.load(now, {})
    shown = []
    window.show_error = lambda title, text: shown.append((title, text))
    assert compare_with_report(window, os.path.join(str(tmp_path / "base"), "report.json")) is None
    assert shown == [("Not the same model", model_mismatch(base, now))]
    assert shown[0][1].startswith("The baseline profiles mobilenet_v2 and the new report resnet18")
    assert getattr(window, "compare_dialog", None) is None  # no dialog was opened
    assert not any(k[0].startswith("baseline:") for k in window.distribution_chart._curves)


def test_find_best_settings_for_real_keeps_to_a_short_budget(qtbot, window):
    """Real jobs: with half a minute, the first candidate that could be recommended (inductor)
    runs first, and core.decide.tune's BudgetListener cuts what no longer fits; the references
    (never recommended) come last. The model sleeps in every call, so the five candidates need
    more than the half minute on any host (on a fast one a tiny model's five all fit)."""
    from tests.gui.helpers import RUN_TIMEOUT_MS, SLOW_MODEL

    window.set_model(SLOW_MODEL, trusted=True)
    window.config_panel.warmup.setValue(1)
    window.config_panel.iters.setValue(5)
    panel = window.view("decision")
    panel.budget.setValue(0.5)
    with qtbot.waitSignal(window.sig_run_finished, timeout=RUN_TIMEOUT_MS):
        panel.tune_button.click()
    results = window.session.results
    assert all(r.ended for r in results)
    assert results[0].config.label == "inductor"  # what could be recommended first
    assert [r.config.backend for r in results][-2:] == ["eager", "aot_eager"]  # the references last
    assert any(r.status != "completed" for r in results)  # the budget cut what did not fit
    assert "cut by the budget" in panel.tune_notes.text() or "budget ran out" in panel.tune_notes.text()
    assert panel.sentence.text() and panel.tune_button.isEnabled()


def test_a_reopened_report_decides_at_the_calls_it_was_made_for(qtbot, window, tmp_path):
    from gui.window.report_opening import open_report

    write_report([measured("inductor", compiled_ms=5.0, seed=1)], str(tmp_path / "r"), {"calls": 1_000_000})
    assert open_report(window, str(tmp_path / "r" / "report.json"))
    decision = window.view("decision")
    assert decision.calls.value() == 1_000_000 and "1,000,000 calls" in decision.sentence.text()
    decision.calls.setValue(50_000)  # the user's choice is what a saved session and its files carry
    saved = window.save_session(str(tmp_path / "saved.json"))
    import json

    doc = json.loads((tmp_path / "saved.json").read_text())
    assert doc["options"]["calls"] == 50_000
    window.export_csv(str(tmp_path / "export"))
    assert "50,000 calls" in (tmp_path / "export" / "recommendation.txt").read_text()
    decision.calls.setValue(7)
    assert open_report(window, saved) and decision.calls.value() == 50_000


def test_a_report_that_cannot_be_read_says_what_stays_only_when_something_was_shown(qtbot, window, tmp_path):
    """At a start with nothing shown, "What was on screen stays as it was" spoke of nothing."""
    from gui.window.report_opening import open_report

    shown = []
    window.show_error = lambda title, text: shown.append(text)
    cut = tmp_path / "cut.json"
    cut.write_text('{"report_version": 1, "jobs": [{"job')
    assert not window.session.results and not open_report(window, str(cut))
    assert "cut short" in shown[-1] and "stays as it was" not in shown[-1]
    write_report([measured("inductor", compiled_ms=5.0, seed=1)], str(tmp_path / "r"))
    assert open_report(window, str(tmp_path / "r" / "report.json"))
    assert not open_report(window, str(cut)) and shown[-1].endswith("What was on screen stays as it was.")
    assert len(window.session.results) == 1


def _opened_report_with_compiler_command(window, tmp_path):
    """A report whose inductor config carries cpp.cxx (the C++ compiler command): opened as a file."""
    crafted = CompileConfig("inductor", inductor_options=(("cpp.cxx", ("sh -c 'touch /tmp/owned'",)),))
    window.set_model("resnet18")
    window.config_panel.queue.clear()
    origin = str(tmp_path / "report.json")
    window.session.load([measured(crafted, compiled_ms=9.0, seed=1), measured("aot_eager", seed=2)], {}, origin=origin)
    window.show_tab("decision")
    card = next(c for c in window.view("decision").card_widgets if c.suggestion.rule == "freezing")
    return crafted, card


def test_apply_and_rerun_of_a_config_from_a_file_asks_and_cancel_runs_nothing(qtbot, window, tmp_path, monkeypatch):
    from gui.form import trust
    from gui.window import decide

    asked = []
    monkeypatch.setattr(
        decide,
        "confirm_config_from_file",
        lambda parent, origin, to_run, risky: asked.append((origin, to_run, risky)) or trust.CANCEL,
    )
    crafted, card = _opened_report_with_compiler_command(window, tmp_path)
    started = _recorder(window)
    card.buttons[0].click()
    assert started == [] and window.config_panel.queue.configs == []
    ((origin, to_run, risky),) = asked
    assert origin.endswith("report.json") and [r.key for r in risky] == ["cpp.cxx"]
    assert "cpp.cxx" in to_run and "freezing = True" in to_run  # the whole config that would run


def test_run_without_them_drops_the_risky_settings(qtbot, window, tmp_path, monkeypatch):
    from gui.form import trust
    from gui.window import decide

    monkeypatch.setattr(decide, "confirm_config_from_file", lambda *a: trust.RUN_WITHOUT)
    crafted, card = _opened_report_with_compiler_command(window, tmp_path)
    started = _recorder(window)
    card.buttons[0].click()
    assert len(started) == 1, window.last_error
    (spec,) = started[0][0]
    assert dict(spec.config.inductor_options) == {"freezing": True}


def test_the_question_shows_the_config_and_defaults_to_cancel(qtbot, window, tmp_path):
    from PySide6.QtWidgets import QMessageBox

    from core.report.safety import describe_config, risky_settings
    from gui.form.trust import config_notice_box

    crafted = CompileConfig("inductor", inductor_options=(("cpp.cxx", ("sh -c 'x'",)),))
    box = config_notice_box(window, str(tmp_path / "report.json"), describe_config(crafted), risky_settings(crafted))
    qtbot.addWidget(box)
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert box.escapeButton() is box.button(QMessageBox.StandardButton.Cancel)
    assert "C++ compiler command" in box.text() and "cpp.cxx" in box.informativeText()
    assert [b.text() for b in box.buttons() if b.objectName()] == ["Run without them", "Run with them"]


def test_the_status_line_after_a_comparison_names_a_missing_config():
    """A config gone from this run is no regression, but the status bar read "no regression
    beyond the threshold and the noise" as if all had passed."""
    from core.decide.compare import compare_reports
    from gui.window.compare_dialog import compare_status
    from tests.core.fakes import fake_result

    base = [fake_result("inductor", compiled_ms=5.0), fake_result("aot_eager", compiled_ms=6.0, seed=2)]
    new = [fake_result("inductor", compiled_ms=5.0, seed=3)]
    comparison = compare_reports(base, {}, new, {}, 5.0, False)
    assert compare_status(comparison) == "missing from this run: aot_eager"
    same = compare_reports(base[:1], {}, new, {}, 5.0, False)
    assert compare_status(same) == "no regression beyond the threshold and the noise"
