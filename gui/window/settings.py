"""What the main window remembers between sessions (QSettings): the recent model files,
the last folder of each kind of file dialog, the form (model, config, inputs, dynamo
overrides, sweep) and the window's geometry, splitters and tab. GUI thread only.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from PySide6.QtCore import QByteArray

from core.models import is_file_source, split_factory
from core.vocab.config import CompileConfig
from core.vocab.limits import LIMITS, check_limits
from gui.widgets.safe_text import tooltip

if TYPE_CHECKING:
    from gui.window.main_window import MainWindow

MAX_RECENT = 10
REPORTS_FOLDER_NAME = "compile-profiler-reports"
# Each kind of file a dialog asks for remembers its own last folder.
FOLDER_KINDS = ("model", "report", "export", "zoo")
# ...and a folder written into is where the next report is read from (Open session, Compare)
ALSO_REMEMBERED = {"export": ("report",)}


def reports_folder() -> str:
    """The default folder for what the app writes: ~/compile-profiler-reports (made when asked)."""
    return os.path.join(os.path.expanduser("~"), REPORTS_FOLDER_NAME)


class LastFolders:
    """The last folder used per kind of file (FOLDER_KINDS) in the settings. A kind never used
    (or whose folder is gone) starts in the reports folder in the user's home when it exists
    or when the dialog writes (it is made then), else in the home folder; never the checkout."""

    def __init__(self, settings):
        self.settings = settings

    def get(self, kind: str, writing: bool = False) -> str:
        last = str(self.settings.value(f"folders/{kind}", "") or "")
        if last and os.path.isdir(last):
            return last
        reports = reports_folder()
        if writing and not os.path.isdir(reports):
            try:
                os.mkdir(reports)
            except OSError:
                return os.path.expanduser("~")
        return reports if os.path.isdir(reports) else os.path.expanduser("~")

    def remember(self, kind: str, path: str) -> None:
        """Remember the folder of `path` (a file) or `path` itself (a folder) for `kind`; an
        export or a saved session also for the reports opened and compared (ALSO_REMEMBERED):
        the report just written is the one to open next."""
        if not path:
            return
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        for each in (kind, *ALSO_REMEMBERED.get(kind, ())):
            self.settings.setValue(f"folders/{each}", folder)

    def new_zoo_folder(self) -> str:
        """A zoo folder not there yet beside the last one used, else in the reports folder:
        <folder>/zoo, zoo-2, zoo-3, … Nothing is made here (the zoo makes its folder when it
        starts)."""
        last = str(self.settings.value("folders/zoo", "") or "")
        base = last if last and os.path.isdir(last) else reports_folder()
        name, n = os.path.join(base, "zoo"), 1
        while os.path.lexists(name):
            n += 1
            name = os.path.join(base, f"zoo-{n}")
        return name


SPLITTERS = ("main_splitter", "left_splitter", "right_splitter", "charts_splitter")


class RecentFiles:
    """The recent model files, in the settings, the File menu and the model panel."""

    def __init__(self, settings, model_panel, menu, open_file):
        self.settings, self.model_panel, self.menu, self.open_file = settings, model_panel, menu, open_file
        self.folders = LastFolders(settings)

    def paths(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        return [value] if isinstance(value, str) else list(value or [])

    def add(self, path: str) -> None:
        recent = [path] + [p for p in self.paths() if p != path]
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.folders.remember("model", path)
        self.refresh()

    def remove(self, path: str) -> None:
        self.settings.setValue("recent_files", [p for p in self.paths() if p != path])
        self.refresh()

    def refresh(self) -> None:
        recent = self.paths()
        self.model_panel.set_recent(recent)
        self.menu.clear()
        for path in recent:
            action = self.menu.addAction(os.path.basename(path))
            action.setToolTip(tooltip(path))
            action.triggered.connect(lambda checked=False, p=path: self.open_file(p))
        self.menu.setEnabled(bool(recent))

    def last_folder(self) -> str:
        """Where the model file dialogs start: the last model's folder, else home."""
        last = str(self.settings.value("folders/model", "") or "")
        return last if last and os.path.isdir(last) else os.path.expanduser("~")


def save_form(window: MainWindow) -> None:
    """Remember the form's fields; the compile settings only once torch has accepted them
    (catalog loaded, nothing refused), so a rejected value (a mistyped --dynamo-config, an
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
    button and status bar out of sight (issue 44)."""
    screen = window.screen()
    if screen is None:
        return
    size = fitted_size((window.width(), window.height()), screen.availableGeometry().size())
    if size != (window.width(), window.height()):
        window.resize(*size)


def restore(window: MainWindow) -> None:
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


def save_window(window: MainWindow) -> None:
    """Remember the geometry, splitters, tab and form (window closing)."""
    s = window.settings
    s.setValue("window/geometry", window.saveGeometry())
    for name in SPLITTERS:
        s.setValue(f"window/{name}", getattr(window, name).saveState())
    s.setValue("window/tab", window.tabs.currentIndex())
    save_form(window)
    s.sync()
