"""The window's side of the decision features: "Apply and re-run" of a
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

from core.decide.tune import BudgetListener, Estimator, TuneRun, candidate_specs, tune_lines
from core.models import defines_variants
from core.report.safety import describe_config, risky_settings, without_risky_settings
from core.vocab import events as ev
from gui.form.trust import CANCEL, RUN_WITHOUT, confirm_config_from_file
from gui.window.app_window import AppWindow


def install(window: AppWindow) -> None:
    """Connect the Decision tab and the run's signals (the actions are gui.window.layout's).
    Called once, after the menus are built; the tab's own signals once it is built (after the
    window's first show, gui.window.view_slot)."""
    window.results_header.sig_rerun_requested.connect(lambda: rerun(window))
    window.results_header.sig_load_requested.connect(lambda: load_shown_settings(window))
    window.controller.sig_run_started.connect(lambda: _on_busy(window, True))
    window.controller.sig_run_finished.connect(lambda: _on_tune_finished(window))
    window.controller.sig_run_finished.connect(lambda: _on_busy(window, False))
    window.slot("decision").when_built(lambda panel: _connect_panel(window, panel))


def _connect_panel(window: AppWindow, panel) -> None:
    panel.sig_change_requested.connect(lambda label, change: apply_and_rerun(window, label, change))
    panel.sig_rerun_requested.connect(lambda: rerun(window))
    panel.sig_try_requested.connect(lambda config: profile_beside(window, config))
    panel.sig_tune_requested.connect(lambda budget: find_best_settings(window, budget))
    window.session.sig_reset.connect(lambda: panel.set_tune_notes(""))
    show_tune_notes(window)


def show_tune_notes(window: AppWindow) -> None:
    """The Decision tab says what the budget did to each candidate of the results on screen (a
    Find best settings run, or a report of one or of `tune`); nothing when they hold none."""
    slot = window.slot("decision")
    if slot.built:
        section = window.session_sections.get("tune")
        slot.view.set_tune_notes("\n".join(tune_lines(section)) if section is not None else "")


def apply_and_rerun(window: AppWindow, label: str, change) -> bool:
    """Apply core's ConfigChange to the last run's config `label` in the queue and run. A
    config read from a report file is data someone else may have written: the full config
    that would run is shown first, with the settings that could run a program or code
    (core.report.safety.risky_settings), and it runs only as the user confirms (Cancel is the default)."""
    before = next((r for r in window.session.results if r.config.label == label), None)
    if before is None or window.controller.busy:
        return False
    config = before.config
    if window.session.origin:
        risky = risky_settings(config)
        answer = confirm_config_from_file(window, window.session.origin, describe_config(change.apply(config)), risky)
        if answer == CANCEL:
            window.status_label.setText("Apply and re-run cancelled: nothing ran.")
            return False
        if answer == RUN_WITHOUT:
            config = without_risky_settings(config)
    new = window.config_panel.apply_change(config, change)
    decision = window.view("decision")
    decision.make_owed_refreshes()  # its suggestions for the results now, even when its tab is not shown
    rule = next((s.rule for s in decision.suggestions if change in s.changes), "")
    # Only the changed config runs (the queue keeps the others for the next Run); the earlier
    # results, the changed config's included, stay on screen beside it (a re-run of the same
    # config replaces it there, and the Decision tab compares the two)
    keep = [r for r in window.session.results if r.ended and r.config != new]
    window.view("decision").set_before(new.label, before)

    def only_the_changed(specs):
        return [s for s in specs if s.config == new], None

    return window.run_profile(arrange=only_the_changed, keep=keep, applied={new: (rule, label, change.description)})


def rerun(window: AppWindow) -> bool:
    """Run the configs shown again (their timing was not quiet, or the decision could not
    tell): the same configs, through the same checks as Apply and re-run."""
    return load_shown_settings(window) and window.run_profile()


def profile_beside(window: AppWindow, config) -> bool:
    """Profile `config` (ours, core's: inductor's default) for the model shown, its results kept
    on screen beside the new one: what a decision needs when only references were measured."""
    if window.controller.busy:
        return False
    models = {r.spec.model.source for r in window.session.results}
    if len(models) == 1 and window.model_panel.source() not in models:
        window.set_model(models.pop())
    _load_workload(window)
    window.config_panel.queue.clear()
    window.config_panel.queue.add(config)
    keep = [r for r in window.session.results if r.ended and r.config != config]
    return window.run_profile(keep=keep)


def load_shown_settings(window: AppWindow) -> bool:
    """Put the model and the configs of the results shown into the form (the queue), run
    nothing: after opening a report of another model, its settings for the next run. A report's
    configs pass the same check as a re-run of them (settings that could run a program)."""
    configs = list(dict.fromkeys(r.config for r in window.session.results))
    if not configs or window.controller.busy:
        return False
    if window.session.origin:
        risky = [r for c in configs for r in risky_settings(c)]
        answer = confirm_config_from_file(
            window, window.session.origin, "\n\n".join(describe_config(c) for c in configs), risky
        )
        if answer == CANCEL:
            return False
        if answer == RUN_WITHOUT:
            configs = [without_risky_settings(c) for c in configs]
    models = {r.spec.model.source for r in window.session.results}
    if len(models) == 1 and window.model_panel.source() not in models:
        window.set_model(models.pop())
    _load_workload(window)
    window.config_panel.queue.clear()
    for c in configs:
        window.config_panel.queue.add(c)
    return True


def _load_workload(window: AppWindow) -> None:
    """The results' batch size, image size, sequence length, HF config, task and device into the
    form, when the results share them (core.models.workload_settings: what the header compares)."""
    specs = {(r.spec.model, r.spec.task, r.spec.device) for r in window.session.results}
    if len(specs) != 1:
        return
    model, task, device = specs.pop()
    mp = window.model_panel
    mp.batch.setValue(model.batch_size)
    mp.image.setValue(model.image_size)
    mp.seq_len.setValue(model.seq_len)
    if model.source.startswith("hf:"):
        mp.hf_config.setText(" ".join(model.hf_config))
    mp.set_task(task)
    found = window.config_panel.device.findText(device)
    if found >= 0:  # a report made on a GPU, opened where torch sees none: the form keeps its device
        window.config_panel.device.setCurrentIndex(found)


def find_best_settings(window: AppWindow, budget_min: float) -> bool:
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

        window.tune_run = run
        return [s for s, _ in pairs], wrap

    if window.controller.busy:
        return False
    started = window.run_profile(arrange=arrange)
    if started:
        window.show_tab("decision")
        window.status_label.setText(f"Finding the best settings within {budget_min:g} min…")
    else:
        window.tune_run = None
    return started


def _on_tune_finished(window: AppWindow) -> None:
    """A tune run ended: the candidates the budget cut never started, so their jobs end
    here as cancelled, and the Decision tab says what the budget did."""
    run, window.tune_run = window.tune_run, None
    if run is None or run.listener is None:
        return
    run.listener.close()
    for result in list(window.session.results):
        if not result.ended and result.job_id in run.listener.notes:
            window.session.apply(ev.JobCancelled(result.job_id))
    section = run.section(window.session.results)
    window.session_sections["tune"] = section  # saved with the session, shown again when reopened
    window.view("decision")  # built now: the tab shows the notes
    show_tune_notes(window)


def _on_busy(window: AppWindow, busy: bool) -> None:
    window.actions.find_best.setEnabled(not busy)
    window.actions.compare.setEnabled(not busy)
    window.view("decision").set_busy(busy)


def compare(window: AppWindow, path: str | None = None):
    from gui.window.compare_dialog import compare_with_report

    return compare_with_report(window, path)
