"""What the main window remembers between sessions (QSettings): the form (model, config,
inputs, dynamo overrides, sweep) and the window's geometry, splitters and tab. The recent files
and the dialogs' folders are gui.window.remembered's. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QByteArray

from core.models import is_file_source, split_factory
from core.vocab.config import CompileConfig
from core.vocab.limits import LIMITS, check_limits
from gui.window.app_window import AppWindow

SPLITTERS = ("main_splitter", "left_splitter", "right_splitter", "charts_splitter")


def save_form(window: AppWindow) -> None:
    """Remember the form's fields; the compile settings only once torch has accepted them
    (torch's offer loaded, nothing refused), so a rejected value (a mistyped --dynamo-config, an
    unknown backend) never comes back at the next launch: the last accepted ones stay."""
    s, p, m = window.settings, window.config_panel, window.model_panel
    c = p.current_config()
    values = [
        ("warmup", p.warmup.value()),
        ("iters", p.iters.value()),
        ("processes", p.processes.value()),
        ("batch_size", m.batch.value()),
        ("image_size", m.image.value()),
        ("sweep", m.sweep.isChecked()),
    ]
    if p.torch_info_loaded and not p.field_problem() and not p.config_problem(c):
        values += [
            ("backend", c.backend),
            ("mode", c.mode),
            ("dynamic", c.dynamic),
            ("fullgraph", c.fullgraph),
            ("dynamo_config", p.dynamo_config.text()),
            ("device", p.device.currentText()),
        ]
    for key, value in values:
        s.setValue(f"form/{key}", value)


def _int(settings, key: str, default: int, limit: str) -> int:
    """A remembered number, or `default` when it is not one or out of core's range (LIMITS)."""
    try:
        value = int(settings.value(key, default))
        check_limits(**{limit: value})
        return value
    except (TypeError, ValueError):  # ConfigError is a ValueError
        return default


DEFAULT_SIZE = (1400, 900)  # the first launch's window, on a screen with room for it
FRAME_PX = (16, 48)  # what the window manager's frame and title bar take around the window


def fitted_size(size: tuple[int, int], available) -> tuple[int, int]:
    """`size` within the screen's `available` room (a QSize, None when unknown) less the frame."""
    width, height = size
    if available is None or available.isEmpty():
        return width, height
    return min(width, available.width() - FRAME_PX[0]), min(height, available.height() - FRAME_PX[1])


def fit_to_screen(window) -> None:
    """Shrink the window to its screen's room (the app's launch, before the show): on a 1366x768
    screen the first launch's 1400x900 window reached past the screen's bottom, its queue, Run
    button and status bar out of sight."""
    screen = window.screen()
    if screen is None:
        return
    size = fitted_size((window.width(), window.height()), screen.availableGeometry().size())
    if size != (window.width(), window.height()):
        window.resize(*size)


def restore(window: AppWindow) -> None:
    """Put back the window's geometry, splitters, tab and the form's fields."""
    s = window.settings
    geometry = s.value("window/geometry")
    if isinstance(geometry, QByteArray) and not geometry.isEmpty():
        window.restoreGeometry(geometry)
    else:
        window.resize(*DEFAULT_SIZE)  # the launch fits it to the screen (fit_to_screen)
    for name in SPLITTERS:
        state = s.value(f"window/{name}")
        if isinstance(state, QByteArray) and not state.isEmpty():
            getattr(window, name).restoreState(state)
    try:
        window.tabs.setCurrentIndex(int(s.value("window/tab", 0) or 0))
    except (TypeError, ValueError):
        pass
    p = window.config_panel
    p.set_config(
        CompileConfig(
            backend=str(s.value("form/backend", "inductor")),
            mode=str(s.value("form/mode", "default")),
            dynamic=str(s.value("form/dynamic", "auto")),
            fullgraph=str(s.value("form/fullgraph", "false")).lower() == "true",
        )
    )
    p.dynamo_config.setText(str(s.value("form/dynamo_config", "") or ""))
    p.warmup.setValue(_int(s, "form/warmup", 5, "warmup"))
    iters = _int(s, "form/iters", 0, "iters") if str(s.value("form/iters", 0)) != "0" else 0
    p.iters.setValue(iters)  # 0: auto
    p.processes.setValue(_int(s, "form/processes", int(LIMITS["processes"].default), "processes"))
    window.model_panel.batch.setValue(_int(s, "form/batch_size", 1, "batch_size"))
    window.model_panel.image.setValue(_int(s, "form/image_size", 224, "image_size"))
    model = str(s.value("form/model", "resnet18") or "resnet18")
    if is_file_source(model) and not os.path.exists(split_factory(model)[0]):
        model = "resnet18"
    window.model_panel.set_source(model)
    window.model_panel.sweep.setChecked(str(s.value("form/sweep", "false")).lower() == "true")


def save_window(window: AppWindow) -> None:
    """Remember the geometry, splitters, tab and form (window closing)."""
    s = window.settings
    s.setValue("window/geometry", window.saveGeometry())
    for name in SPLITTERS:
        s.setValue(f"window/{name}", getattr(window, name).saveState())
    s.setValue("window/tab", window.tabs.currentIndex())
    save_form(window)
    s.sync()
