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
from core.vocab.records import JobStatus
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
    if window.model_panel.task_value() == "generate":
        return _start_generation(window, source)
    window.config_panel.set_workload(window.model_panel.task_value(), window.model_panel.sweeps())
    configs = window.config_panel.run_configs()
    if not _form_accepted(window, source, configs):
        return False
    try:
        specs, options, folder = _jobs(window, source, configs, keep)
    except (ConfigError, ValueError) as exc:  # core's accepted ranges, as `profile` checks them
        return _refused(window, str(exc))
    wrap = None
    if arrange is not None:
        specs, wrap = arrange(specs)
        options["configs"] = [spec.config.label for spec in specs]
    if applied:
        specs = [dataclasses.replace(s, applied=applied[s.config]) if s.config in applied else s for s in specs]
    _show_queued(window, [spec.config for spec in specs], options)
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


def _start_generation(window: AppWindow, source: str) -> bool:
    """Task Generate: a window of its own (gui.window.generation_window), for a Hugging Face model."""
    from gui.window.generation_window import open_generation

    if not source.startswith("hf:"):
        window.show_error(
            "Generate needs a Hugging Face model",
            f"Task Generate profiles a Hugging Face causal language model (hf:gpt2, hf:llama, or a "
            f"checkpoint folder), not {source}. Choose one, or another task.",
        )
        return False
    return open_generation(window).controller.busy


def _form_accepted(window: AppWindow, source: str, configs) -> bool:
    """The configs pass core's checks, and a model file is there and trusted (asked once)."""
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
    return True


def _refused(window: AppWindow, problem: str) -> bool:
    window.config_panel.show_problem(problem)
    window.status_label.setText(f"Cannot run: {problem}")
    window.last_error = problem
    return False


def _jobs(window: AppWindow, source: str, configs, keep) -> tuple[list, dict, str]:
    """The run's jobs from the form, the options its report keeps, and its fresh folder;
    ConfigError or ValueError (a sweep's batch sizes) says what the form holds that core refuses."""
    panel, mp = window.config_panel, window.model_panel
    check_limits(warmup=panel.warmup.value(), batch_size=mp.batch.value(), image_size=mp.image.value())
    iterations = panel.iteration_fields()
    sweep, sweep_batch = mp.sweep_shapes(), mp.sweep_batch()
    model = ModelSpec(
        source,
        batch_size=mp.batch.value(),
        image_size=mp.image.value(),
        seq_len=mp.seq_len.value(),
        hf_config=mp.hf_overrides() if source.startswith("hf:") else (),
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
    return specs, options, folder


def _show_queued(window: AppWindow, configs, options: dict) -> None:
    """The queue says each config is pending; a sweep's own tab comes forward."""
    queue = window.config_panel.queue
    if not queue.configs:
        queue.show_last_run(list(configs))
    for config in configs:
        queue.set_status(config, JobStatus.PENDING)
    if (options["sweep_shapes"] or options["sweep_batch"]) and window.tabs.currentIndex() == 0:
        window.show_tab("throughput" if options["sweep_batch"] else "sweep")  # the summary says little of a sweep


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
