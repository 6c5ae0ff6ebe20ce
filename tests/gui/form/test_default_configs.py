"""With the queue empty and the form at inductor's default, Run profiles what `profile` does
without --backend and --mode: on the CPU for inference, the autotuned kernels beside it, and a
line under the form says so (core.vocab.config.default_configs)."""

from __future__ import annotations

from core.vocab.config import AUTOTUNE_MODE, CompileConfig, default_configs_note


def test_the_form_says_what_the_default_adds_and_a_queue_or_another_workload_drops_it(window, qtbot):
    panel = window.config_panel
    panel.queue.clear()
    plain, tuned = CompileConfig("inductor"), CompileConfig("inductor", mode=AUTOTUNE_MODE)
    panel.set_config(plain)
    window.model_panel.set_task("inference")
    assert panel.run_configs() == [plain, tuned]
    assert panel.default_note.isVisibleTo(window) and panel.default_note.text() == default_configs_note([tuned], True)
    panel.queue.add(plain)  # queued: what was queued runs, alone
    assert panel.run_configs() == [plain] and not panel.default_note.isVisibleTo(window)
    panel.queue.clear()
    assert panel.default_note.isVisibleTo(window)
    window.model_panel.set_task("training")  # the default adds nothing to a training step
    assert panel.run_configs() == [plain] and not panel.default_note.isVisibleTo(window)
    window.model_panel.set_task("inference")
    panel.set_config(CompileConfig("eager"))  # another backend: what the form holds, alone
    assert panel.run_configs() == [CompileConfig("eager")] and not panel.default_note.isVisibleTo(window)


def test_a_run_without_a_queue_shows_every_config_it_profiles(window):
    queue = window.config_panel.queue
    queue.clear()
    configs = [CompileConfig("inductor"), CompileConfig("inductor", mode=AUTOTUNE_MODE)]
    queue.show_last_run(configs)
    assert queue.rowCount() == 2 and queue.configs == []  # shown for their status, not queued
    assert queue.index(1, 0).data() == "inductor/max-autotune-no-cudagraphs (last run)"
    queue.show_last_run(configs[:1])  # the next run's replace them
    assert queue.rowCount() == 1
