"""The window's side of the decision features (issue 10): "Apply and re-run" of a
core.decide.suggestions suggestion, Run → Find best settings (core.decide.tune's candidates within a
budget, as a normal run), and File → Compare with report… (core.decide.compare, in
`gui.window.compare_dialog`).

Nothing is decided here: the ConfigChange comes from core and is applied by the config
panel; the candidates are `core.decide.tune.candidate_specs`, and the budget is kept by core.decide.tune's
own `BudgetListener` (the same object the `tune` command uses) wrapped around the run
controller's listener. GUI thread only.
"""
from __future__ import annotations

import time

from core.vocab import events as ev
from core.models import defines_variants
from core.report.safety import describe_config, risky_settings, without_risky_settings
from core.decide.tune import BudgetListener, Estimator, TuneRun, candidate_specs
from gui.form.trust import CANCEL, RUN_WITHOUT, confirm_config_from_file


def install(w) -> None:
    """Create the actions (`w.find_best_action`, `w.compare_action`), put them in the Run and
    File menus and connect the Decision tab. Called once, after the menus are built."""
    from gui.widgets.actions import make_action

    w.find_best_action = make_action(
        w, "Find best settings", "Ctrl+Shift+B", "Profile core's candidate configs for this model and device, "
        "cheapest compile first, within the budget set in the Decision tab; then recommend one",
        lambda: find_best_settings(w, w.view("decision").budget.value()))
    w.compare_action = make_action(w, "Compare with report…", None, "Compare these results with a saved "
                                   "report.json or report folder: deltas per config, verdicts, and the "
                                   "baseline's latency distribution", lambda: _compare(w))
    menus = {a.text(): a.menu() for a in w.menuBar().actions() if a.menu() is not None}
    if "&Run" in menus:
        menus["&Run"].addSeparator()
        menus["&Run"].addAction(w.find_best_action)
    if "&File" in menus:
        file_menu = menus["&File"]
        anchor = next((a for a in file_menu.actions() if a is w.export_action), None)
        after = file_menu.actions()[file_menu.actions().index(anchor) + 1] if anchor else None
        if after is not None:
            file_menu.insertAction(after, w.compare_action)
        else:
            file_menu.addAction(w.compare_action)
    w.tune_run = None
    panel = w.view("decision")
    panel.sig_change_requested.connect(lambda label, change: apply_and_rerun(w, label, change))
    panel.sig_rerun_requested.connect(lambda: rerun(w))
    w.results_header.sig_rerun_requested.connect(lambda: rerun(w))
    panel.sig_tune_requested.connect(lambda budget: find_best_settings(w, budget))
    w.controller.sig_run_started.connect(lambda: _on_busy(w, True))
    w.controller.sig_run_finished.connect(lambda: _on_tune_finished(w))
    w.controller.sig_run_finished.connect(lambda: _on_busy(w, False))
    w.session.sig_reset.connect(lambda: panel.set_tune_notes(""))


def apply_and_rerun(w, label: str, change) -> bool:
    """Apply core's ConfigChange to the last run's config `label` in the queue and run. A
    config read from a report file is data someone else may have written: the full config
    that would run is shown first, with the settings that could run a program or code
    (core.report.safety.risky_settings), and it runs only as the user confirms (Cancel is the default)."""
    before = next((r for r in w.session.results if r.config.label == label), None)
    if before is None or w.controller.busy:
        return False
    config = before.config
    if w.session.origin:
        risky = risky_settings(config)
        answer = confirm_config_from_file(w, w.session.origin, describe_config(change.apply(config)), risky)
        if answer == CANCEL:
            w.status_label.setText("Apply and re-run cancelled: nothing ran.")
            return False
        if answer == RUN_WITHOUT:
            config = without_risky_settings(config)
    new = w.config_panel.apply_change(config, change)
    rule = next((s.rule for s in w.view("decision").suggestions if change in s.changes), "")
    # the earlier result stays on screen beside the new one (a re-run of the same config
    # replaces it there, and the Decision tab compares the two)
    keep = [r for r in w.session.results if r.ended and r.config != new and r.job_id == before.job_id]
    w.view("decision").set_before(new.label, before)
    return w.run_profile(keep=keep, applied={new: (rule, label, change.description)})


def rerun(w) -> bool:
    """Run the configs shown again (their timing was not quiet, or the decision could not
    tell): the same configs, through the same checks as Apply and re-run."""
    configs = list(dict.fromkeys(r.config for r in w.session.results))
    if not configs or w.controller.busy:
        return False
    if w.session.origin:
        risky = [r for c in configs for r in risky_settings(c)]
        answer = confirm_config_from_file(w, w.session.origin, "\n\n".join(describe_config(c) for c in configs),
                                          risky)
        if answer == CANCEL:
            return False
        if answer == RUN_WITHOUT:
            configs = [without_risky_settings(c) for c in configs]
    models = {r.spec.model.source for r in w.session.results}
    if len(models) == 1 and w.model_panel.source() not in models:
        w.set_model(models.pop())
    w.config_panel.queue.clear()
    for c in configs:
        w.config_panel.queue.add(c)
    return w.run_profile()


def find_best_settings(w, budget_min: float) -> bool:
    """Run core.decide.tune's candidate set for the chosen model (everything but the compile
    settings from the form) through the window's run path, kept to `budget_min` minutes by
    core.decide.tune.BudgetListener."""
    def arrange(specs):
        pairs = candidate_specs(specs[0], defines_variants(specs[0].model.source))
        run = TuneRun(budget_min * 60.0, {s.job_id: c for s, c in pairs}, None, started=time.monotonic())
        estimator = Estimator({s.config: c for s, c in pairs})

        def wrap(inner):
            run.listener = BudgetListener(inner, run.budget_s, estimator, quiet=True)
            return run.listener

        w.tune_run = run
        return [s for s, _ in pairs], wrap

    if w.controller.busy:
        return False
    started = w.run_profile(arrange=arrange)
    if started:
        w.show_tab("decision")
        w.status_label.setText(f"Finding the best settings within {budget_min:g} min…")
    else:
        w.tune_run = None
    return started


def _on_tune_finished(w) -> None:
    """A tune run ended: the candidates the budget cut never started, so their jobs end
    here as cancelled, and the Decision tab says what the budget did."""
    run, w.tune_run = w.tune_run, None
    if run is None or run.listener is None:
        return
    run.listener.close()
    for result in list(w.session.results):
        if not result.ended and result.job_id in run.listener.notes:
            w.session.apply(ev.JobCancelled(result.job_id))
    section = run.section(w.session.results)
    lines = [f"Find best settings: budget {section['budget_s'] / 60:g} min, used {section['elapsed_s'] / 60:.1f} min."]
    for row in section["candidates"]:
        note = f": {row['note']}" if row["note"] else ""
        lines.append(f"  {row['config']} ({row['why']}): {row['fate']}{note}")
    advice = run.budget_advice(w.session.results)
    if advice:
        lines.append(advice)
    w.view("decision").set_tune_notes("\n".join(lines))


def _on_busy(w, busy: bool) -> None:
    w.find_best_action.setEnabled(not busy)
    w.compare_action.setEnabled(not busy)
    w.view("decision").set_busy(busy)


def _compare(w, path: str | None = None):
    from gui.window.compare_dialog import compare_with_report

    return compare_with_report(w, path)

