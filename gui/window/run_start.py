"""Starting a run from the window's form: the model and configs checked as `profile` checks
them (and a Python file's first run confirmed), the jobs built, the previous run's folder
replaced by a fresh one, the session and the runner started. GUI thread only."""

from __future__ import annotations

import dataclasses
import os
import tempfile

from core.models import is_file_source, split_factory
from core.vocab.config import ModelSpec, make_jobs
from core.vocab.limits import ConfigError, check_limits
from gui.form import trust
from gui.window.app_window import AppWindow


def start_run(window: AppWindow, arrange=None, keep=(), applied: dict | None = None) -> bool:
    """Start profiling the chosen model with the run's configs; False (with the reason
    shown) when it cannot start. `arrange(specs)` may replace the form's jobs and wrap the
    runner's listener: returns (specs, wrap) (Find best settings, gui.window.decide).
    `keep`: ended results shown on beside the new ones; `applied`: CompileConfig → the
    JobSpec.applied record of the suggestion that made it (gui.window.decide)."""
    if window.controller.busy:
        return False
    source = window.model_panel.source()
    if not source:
        window.show_error("No model chosen", "Choose a torchvision model in the list or open a model file first.")
        return False
    if window.model_panel.task_value() == "generate":  # a window of its own (gui.window.generation_window)
        from gui.window.generation_window import open_generation

        if not source.startswith("hf:"):
            window.show_error(
                "Generate needs a Hugging Face model",
                f"Task Generate profiles a Hugging Face causal language model (hf:gpt2, hf:llama, or a "
                f"checkpoint folder), not {source}. Choose one, or another task.",
            )
            return False
        return open_generation(window).controller.busy
    configs = window.config_panel.run_configs()
    problem = window.config_panel.validate(configs)
    if problem:
        window.status_label.setText(f"Cannot run: {problem}")
        window.last_error = problem
        return False
    if is_file_source(source):
        path = split_factory(source)[0]
        if not os.path.exists(path):
            window.show_error("Model file missing", f"{path} does not exist any more.")
            return False
        if not window.is_trusted(path) and not trust.confirm_python_file(window, window.settings, path):
            return False
    panel = window.config_panel
    try:  # core's accepted ranges, as `profile` checks them (the spin boxes hold no other values)
        check_limits(
            warmup=panel.warmup.value(),
            batch_size=window.model_panel.batch.value(),
            image_size=window.model_panel.image.value(),
        )
        iterations = panel.iteration_fields()
    except ConfigError as exc:
        panel.show_problem(str(exc))
        window.status_label.setText(f"Cannot run: {exc}")
        window.last_error = str(exc)
        return False
    sweep = window.model_panel.sweep_shapes()
    mp = window.model_panel
    try:
        sweep_batch = mp.sweep_batch()
    except ValueError as exc:
        panel.show_problem(str(exc))
        window.status_label.setText(f"Cannot run: {exc}")
        window.last_error = str(exc)
        return False
    hf = source.startswith("hf:")
    model = ModelSpec(
        source,
        batch_size=mp.batch.value(),
        image_size=mp.image.value(),
        seq_len=mp.seq_len.value(),
        hf_config=mp.hf_overrides() if hf else (),
    )
    task = mp.task_value()
    folder = new_run_folder(window, keep)
    # op_profile_calls and compile_log: core's defaults (JobSpec), as `profile` without options
    specs = make_jobs(
        model,
        configs,
        warmup=panel.warmup.value(),
        **iterations,
        device=panel.device.currentText(),
        sweep_shapes=sweep,
        artifacts_dir=folder,
        task=task,
        optimizer=mp.optimizer.currentText() if task == "training" else "sgd",
        sweep_batch=sweep_batch,
    )
    wrap = None
    if arrange is not None:
        specs, wrap = arrange(specs)
        configs = [spec.config for spec in specs]
    options = {
        "model": source,
        "batch_size": model.batch_size,
        "image_size": model.image_size,
        "warmup": panel.warmup.value(),
        "iters": panel.iters.value() or "auto",
        "processes": iterations["processes"],
        "device": panel.device.currentText(),
        "configs": [c.label for c in configs],
        "sweep_shapes": sweep,
        "task": task,
        "sweep_batch": list(sweep_batch),
        "source": "gui",
    }
    if not panel.queue.configs:
        panel.queue.show_last_run(configs[0])
    for config in configs:
        panel.queue.set_status(config, "pending")
    if (sweep or sweep_batch) and window.tabs.currentIndex() == 0:
        window.show_tab("throughput" if sweep_batch else "sweep")  # the summary has little to say about a sweep
    if applied:
        specs = [dataclasses.replace(s, applied=applied[s.config]) if s.config in applied else s for s in specs]
    window.run_starting = True  # the views out of sight are reset in turns of their own (_show_session)
    try:
        window.session.start(specs, options, folder, keep=keep)
    finally:
        window.run_starting = False
    if wrap is None:
        window.controller.start(specs)
    else:
        window.controller.start(specs, wrap=wrap)
    window.status_label.setText(f"Profiling {os.path.basename(source)} with {len(specs)} config(s)…")
    return True


def new_run_folder(window: AppWindow, keep=()) -> str:
    """A fresh folder for the next run's files; the previous run's goes (saved or
    exported reports hold their own copy), after the files of the results in `keep`
    (shown on beside the new run) are copied into the new one."""
    from core.vocab.artifacts import copy_config_artifacts

    folder = tempfile.TemporaryDirectory(prefix="compile-profiler-run-")
    for result in keep:
        try:
            copy_config_artifacts(window.session.artifacts_dir, folder.name, result.config.label)
        except OSError:
            pass  # its figures stay; only its files (graphs, traces) are missing
    if window.run_folder is not None:
        window.run_folder.cleanup()
    window.run_folder = folder
    return folder.name
