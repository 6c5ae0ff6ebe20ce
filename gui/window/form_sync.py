"""The main window's answers to its form: a model chosen (the results header's next workload,
the window's title, the dynamo setting the model needs) the title naming whose results are
shown, and torch's offer once loaded into the pickers and views. Functions of the `AppWindow` they are handed (gui.window.app_window). GUI thread only.
"""

from __future__ import annotations

import os

from core.models import workload_settings
from core.models.examples import needed_dynamo_config
from core.vocab.config import ModelSpec
from gui.panels.results_header import model_name, results_models
from gui.window.app_window import AppWindow


def model_chosen(window: AppWindow, source: str) -> None:
    window.results_header.set_chosen_model(source)
    refresh_next_workload(window)
    update_title(window)
    window.settings.setValue("form/model", source)
    refresh_suggestion(window)


def refresh_next_workload(window: AppWindow, *_) -> None:
    mp = window.model_panel
    window.config_panel.set_workload(mp.task_value(), mp.sweeps())  # what the default profiles depends on it
    source = mp.source()
    if not source:
        window.results_header.set_next_workload({})
        return
    model = ModelSpec(
        source,
        batch_size=mp.batch.value(),
        image_size=mp.image.value(),
        seq_len=mp.seq_len.value(),
        hf_config=mp.hf_overrides() if source.startswith("hf:") else (),
    )
    window.results_header.set_next_workload(
        workload_settings(model, mp.task_value(), window.config_panel.device.currentText())
    )


def update_title(window: AppWindow) -> None:
    """The window names the model whose results it shows, else the one chosen to run."""
    results = window.session.results
    if results:
        name = ", ".join(model_name(m) for m in results_models(results))
        if window.session.origin:
            name += f" ({os.path.basename(window.session.origin)})"
    else:
        source = window.model_panel.source()
        name = model_name(source) if source else ""
    # the platform adds " — compile-profiler" (the app's display name, gui.app): "compile-profiler
    # — resnet18" read "compile-profiler — resnet18 — compile-profiler" in the title bar
    window.setWindowTitle(name)


def refresh_suggestion(window: AppWindow) -> None:
    """Offer a dynamo setting the chosen model needs to compile at all (an LSTM:
    allow_rnn=True). What a run's measurements suggest (torch's hints included) is in the
    Decision tab, from core.decide.suggestions, with its apply-and-re-run button."""
    panel = window.config_panel
    needed = needed_dynamo_config(window.model_panel.source())
    if needed and not panel.has_override(needed[0], needed[1]):
        panel.show_suggestion(*needed)
    else:
        panel.clear_suggestion()


def torch_info_loaded(window: AppWindow, info) -> None:
    """What the installed torch offers is in: the pickers, the views and the GPU monitor get it."""
    window.torch_info = info
    window.model_panel.set_models(info.models)
    if info.backends:
        window.config_panel.set_torch_info(
            info.backends, info.modes, info.cuda_available, info.dynamo_defaults, info.all_backends
        )
    for view in window.views:
        view.set_torch_info(info)
    window.controller.set_gpu_monitor(info.gpu_monitor)
    window.update_actions()
    if info.error and not info.backends:
        window.show_error("torch could not be loaded", info.error.splitlines()[0])
    else:
        torch_version = info.versions.get("torch", "?")
        window.status_label.setText(
            f"Ready: torch {torch_version}, {len(info.models)} torchvision models"
            + (f" ({info.error})" if info.error else "")
        )
    window.sig_torch_info_loaded.emit(info)
