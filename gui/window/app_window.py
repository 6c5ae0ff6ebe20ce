"""The main window as its helper modules see it: the `AppWindow` protocol (what the window
offers them) and the dataclasses of its parts (`WindowLayout`, `WindowActions`,
`WindowMenus`).

The helpers (gui.window.layout, run_start, decide, settings, report_opening, bug_report,
localize_run, compare_dialog, zoo_run_dialog, zoo_window) are handed the window typed as
`AppWindow` and never import gui.window.main_window, so no import of theirs (type-checking
ones included) runs back to the window that imports them. Every member is declared here, once,
with its type, and `MainWindow.__init__` sets each (tests/gui/window/test_app_window.py checks
it on a live window). May import gui.window's lower modules (view_slot, remembered) and the
layers below gui.window; nothing here imports a helper.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtGui import QAction, QScreen
from PySide6.QtWidgets import QLabel, QMenu, QMenuBar, QSplitter, QStatusBar, QTabWidget, QWidget

if TYPE_CHECKING:  # lower layers and modules, imported for the annotations only
    from core.decide.tune import TuneRun
    from core.run.torch_info import TorchInfo
    from gui.form.config_panel import ConfigPanel
    from gui.form.model_panel import ModelPanel
    from gui.panels.results_header import ResultsHeader
    from gui.run.session import ProfileSession
    from gui.run.worker import RunController
    from gui.widgets.progress import RunProgressBar
    from gui.window.remembered import LastFolders, RecentFiles
    from gui.window.view_slot import ViewSlot


@dataclass(frozen=True)
class WindowLayout:
    """The window's splitters (their states are remembered: gui.window.settings) and tabs."""

    left_splitter: QSplitter
    charts_splitter: QSplitter
    right_splitter: QSplitter
    main_splitter: QSplitter
    tabs: QTabWidget


@dataclass(frozen=True)
class WindowActions:
    """Every action of the main window (menus, shortcuts, the config panel's buttons)."""

    open: QAction
    open_hf: QAction
    run: QAction
    cancel: QAction
    export: QAction
    save_session: QAction
    open_session: QAction
    save_bug_report: QAction
    open_zoo: QAction
    run_zoo: QAction
    profile_script: QAction
    compile_caches: QAction
    quit: QAction
    about: QAction
    add_config: QAction
    find_best: QAction
    compare: QAction


@dataclass(frozen=True)
class WindowMenus:
    file: QMenu
    recent: QMenu  # filled by gui.window.remembered.RecentFiles
    run: QMenu
    view: QMenu
    help: QMenu


@runtime_checkable
class AppWindow(Protocol):
    """What the helper modules use of the main window, and nothing more."""

    # -- what it is made of
    settings: QSettings
    session: ProfileSession  # the runner's events folded into results (gui.run.session)
    controller: RunController  # the run going on (gui.run.worker)
    model_panel: ModelPanel
    config_panel: ConfigPanel
    results_header: ResultsHeader
    progress: RunProgressBar
    status_label: QLabel  # the status bar's one line: what just happened, or why not
    actions: WindowActions
    tabs: QTabWidget
    tab_views: list[ViewSlot]
    latency_slot: ViewSlot
    distribution_slot: ViewSlot
    recent: RecentFiles
    folders: LastFolders

    # -- its state
    torch_info: TorchInfo | None  # what the installed torch offers, once loaded
    last_error: str  # the last error shown (show_error), for the tests and the bug report
    run_starting: bool  # Run was clicked and the session is being reset (gui.window.run_start)
    run_folder: tempfile.TemporaryDirectory | None  # the last run's files (traces, graphs)
    tune_run: TuneRun | None  # a Find best settings run going on
    compare_dialog: QWidget | None  # the last Compare with report… dialog, kept so it stays open
    report_localization: dict[str, Any]  # report.json's `localization` per report opened
    session_sections: dict[str, Any]  # report.json's further sections the results came with
    zoo_windows: list[QWidget]  # the zoo windows this window opened
    script_window: QWidget | None  # File → Profile a script…, made when first asked
    generation_window: QWidget | None  # Task → Generate, made when first asked
    closed: bool  # the window was closed: a run's last events draw nothing
    views: list[ViewSlot]  # the charts' slots and the tabs' (gui.window.view_slot)
    charts_splitter: QSplitter
    sig_run_finished: Any  # Signal(): a run ended and every view shows its result
    sig_torch_info_loaded: Any  # Signal(TorchInfo): what the installed torch offers is in the pickers

    # -- what it does
    def set_model(self, source: str, trusted: bool = False) -> None: ...
    def open_model_file(self, path: str | None = None) -> bool: ...
    def open_hf_folder(self) -> bool: ...
    def open_script_window(self, path: str | None = None) -> Any: ...
    def run_profile(self, arrange=None, keep=(), applied: dict | None = None) -> bool: ...
    def cancel_run(self) -> None: ...
    def export_csv(self, folder: str | None = None) -> list[str]: ...
    def save_bug_report(self) -> bool: ...
    def save_session(self, path: str | None = None) -> str: ...
    def open_session(self, path: str | None = None) -> bool: ...
    def adopt_model(self, source: str, sweep: bool) -> None: ...
    def show_results_from_report(self, *args, **kwargs) -> Any: ...
    def show_tune_notes(self) -> None: ...
    def slot(self, name: str) -> ViewSlot: ...
    def view(self, name: str) -> Any: ...
    def show_tab(self, name: str) -> None: ...
    def show_error(self, title: str, text: str) -> None: ...
    def show_about(self) -> None: ...
    def update_actions(self) -> None: ...
    def update_title(self) -> None: ...
    def is_trusted(self, path: str) -> bool: ...

    # the views built when first needed (gui.window.view_slot)
    @property
    def latency_chart(self) -> Any: ...
    @property
    def distribution_chart(self) -> Any: ...
    @property
    def summary_panel(self) -> Any: ...
    @property
    def graph_breaks_panel(self) -> Any: ...
    @property
    def sweep_panel(self) -> Any: ...

    # -- the QMainWindow it is
    def menuBar(self) -> QMenuBar: ...
    def statusBar(self) -> QStatusBar: ...
    def setCentralWidget(self, widget: QWidget) -> None: ...
    def resize(self, *args) -> None: ...
    def saveGeometry(self) -> QByteArray: ...
    def restoreGeometry(self, geometry: QByteArray) -> bool: ...
    def screen(self) -> QScreen: ...
    def width(self) -> int: ...
    def height(self) -> int: ...
    def close(self) -> bool: ...
    def setWindowTitle(self, title: str) -> None: ...
    def findChild(self, kind: type, name: str = "") -> Any: ...
