"""The main window: puts the panels together, owns the actions, and wires the runner's
events (through `ProfileSession`) to the panels.

Left: what to profile (`ModelPanel`) and how (`ConfigPanel`). Right, top: whose results
(`ResultsHeader`, with the timing banner), the live latency chart and the distribution;
bottom: the tabs of `gui.panels.TAB_VIEWS`. Buttons follow the runner's state
(`RunController.sig_status_changed`), never the click itself. Its helpers see it as an
`AppWindow` (gui.window.app_window): `layout` builds it, `run_start` starts a run,
`run_display` shows it as it goes, `form_sync` answers the form, `settings` remembers it.
GUI thread only.
"""

from __future__ import annotations

import os
import tempfile

from PySide6.QtCore import QSettings, QTimer, Signal
from PySide6.QtWidgets import QLabel, QMainWindow, QWidget

from core.models import is_file_source, split_factory
from core.models.examples import is_bundled
from core.report.model_file_check import check_chosen_model_file
from gui import qt_compat
from gui.form import trust
from gui.form.config_panel import ConfigPanel
from gui.form.model_panel import ModelPanel
from gui.panels import TAB_NAMES, TAB_VIEWS
from gui.panels.results_header import ResultsHeader
from gui.run.session import ProfileSession
from gui.run.torch_info_loader import TorchInfoLoader
from gui.run.worker import RunController
from gui.widgets.progress import RunProgressBar
from gui.widgets.safe_text import plain
from gui.window import closing, decide, file_actions, form_sync, report_opening, run_start
from gui.window import settings as window_settings
from gui.window.bug_report import BugReportSaver, report_folder
from gui.window.layout import build_actions, build_layout, build_menus
from gui.window.localize_run import Localizer
from gui.window.remembered import LastFolders, RecentFiles
from gui.window.run_display import RunDisplay
from gui.window.view_slot import ChartsBuilder, ViewSlot

# What a run's first events and end import (numpy.random for the speedup's bootstrap, the time
# verdict, the compile watch, ...): ~25 ms of the GUI thread at the first job's end, imported on
# the charts builder's thread instead (gui.window.view_slot.ChartsBuilder).
LOADER_AT_LATEST_MS = 300  # torch's offer starts loading this long after the show at the latest (unshown: construction)
CHARTS_AT_LATEST_MS = 1000  # the charts' import starts this long after the show at the latest
CHARTS_AFTER_SETTLED_MS = 60  # ...and this long after torch's offer and the names are in (_start_charts)
RUN_MODULES = (
    "numpy.random",
    "core.analysis.time_breakdown",
    "core.analysis.dynamic_dims",
    "core.capture.compile_watch",
    "core.decide.compare",
    "core.cli.args",
    "core.cli.job_specs",
    "core.cli.output",  # the Summary's details at a job's end (5 ms of imports on the GUI thread)
    "core.measure.training",
    "core.measure.output_match",
    "core.report.source_view",
)


class MainWindow(QMainWindow):
    """The application window. GUI thread only."""

    sig_shown = Signal()
    """The window was shown for the first time."""

    sig_torch_info_loaded = Signal(object)
    """What the installed torch offers (a `core.run.torch_info.TorchInfo`) is in the pickers."""

    sig_run_finished = Signal()
    """A run ended (completed, failed or cancelled) and every panel shows its result."""

    def __init__(self, settings: QSettings | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        # before any thread of the window's starts (the torch info loader, the charts builder)
        qt_compat.hand_gil_back_soon()
        self.settings = settings if settings is not None else QSettings()
        self.torch_info = None
        self.last_error = ""
        self._shown = False
        self._painted = False  # the first paint after the show has begun (paintEvent)
        self.closed = False  # the window was closed (closeEvent): a run's last events draw nothing
        self.run_starting = False  # Run was clicked and the session is being reset (gui.window.run_start)
        # Ask before closing while a run is going (gui.window.closing); off for Ctrl+C in the
        # terminal and the command line's automation, which close on purpose.
        self.ask_before_closing = True
        self._close_confirmed = False
        self._trusted_paths: set[str] = set()
        self._restoring = False
        # The last run's folder for the jobs' files (traces, graphs, compile log:
        # core.vocab.artifacts); Export and Save copy it beside the report. Removed at the next run.
        self.run_folder: tempfile.TemporaryDirectory | None = None
        self.setWindowTitle("")  # the platform shows the app's name (gui.app's display name)
        self.setAcceptDrops(True)

        self.session = ProfileSession(self)
        self.controller = RunController(parent=self)
        self.model_panel = ModelPanel()
        self.config_panel = ConfigPanel()
        # Each view in its slot (gui.window.view_slot): those that draw with pyqtgraph are built
        # after the first show, by `charts_builder`, or sooner when something needs them.
        self.latency_slot = ViewSlot("gui.charts.latency:LatencyChart", deferred=True)
        self.distribution_slot = ViewSlot("gui.charts.distribution:DistributionChart", deferred=True)
        # a tab's page scrolls when the window is too small for it (a 1366x768 laptop screen)
        self.tab_views = [ViewSlot(tab.where, deferred=not tab.at_launch, scrolls=True) for tab in TAB_VIEWS]
        self.views = [self.latency_slot, self.distribution_slot, *self.tab_views]
        for view in self.views:  # each follows the session itself (gui.widgets.view.ResultsView)
            view.bind(self.session)
        self.charts_builder = ChartsBuilder(
            [slot for slot in self.views if not slot.built], self, also_import=RUN_MODULES
        )
        self.charts_builder.sig_done.connect(self._on_launch_step)
        self.progress = RunProgressBar()
        self.results_header = ResultsHeader()
        self.status_label = plain(QLabel("Loading torch…"))  # quotes paths, configs, failure reasons
        self.zoo_windows: list = []  # the zoo windows this window opened (gui.window.zoo_window.keep)
        self.script_window = None  # File → Profile a script… (gui.window.script_window), made when first asked
        self.generation_window = None  # Task → Generate (gui.window.generation_window), made when first asked
        self.tune_run = None  # a Find best settings run going on (core.decide.tune.TuneRun)
        # the last Compare with report… dialog shown (gui.window.compare_dialog), kept so it stays open
        self.compare_dialog = None
        # report.json's `localization` section (profile --localize) per report opened, by its path
        self.report_localization: dict[str, object] = {}
        # report.json's further sections the results on screen came with (`tune`: what the budget of
        # a Find best settings run or a `tune` report did), written again when they are saved
        self.session_sections: dict[str, object] = {}
        self.run_display = RunDisplay(self)  # the run as it goes, on the views (gui.window.run_display)
        self.bug_report = BugReportSaver(self)  # File → Save bug report…
        self.localizer = Localizer(self)  # Summary → Find where outputs diverge…
        self.actions = build_actions(self)
        parts = build_layout(self)
        self.tabs = parts.tabs
        self.left_splitter, self.charts_splitter = parts.left_splitter, parts.charts_splitter
        self.right_splitter, self.main_splitter = parts.right_splitter, parts.main_splitter
        self.menus = build_menus(self, self.actions)
        decide.install(self)
        self.recent = RecentFiles(
            self.settings, self.model_panel, self.menus.recent, lambda path: self.open_model_file(path)
        )
        self.folders = LastFolders(self.settings)
        self._connect()
        self._restore_settings()
        self._update_buttons()

        self.torch_info_loader = TorchInfoLoader(self)
        self.torch_info_loader.sig_loaded.connect(lambda info: form_sync.torch_info_loaded(self, info))
        self.torch_info_loader.sig_more_models.connect(self.model_panel.add_models)
        self.torch_info_loader.sig_loaded.connect(self._on_launch_step)
        self.torch_info_loader.sig_settled.connect(self._start_charts)
        # after the window's first paint (paintEvent); at the latest LOADER_AT_LATEST_MS after
        # the show (a window shown minimized is not painted: showEvent), or from now for a window
        # never shown. Not from now for a shown one: a construction slower than that (modules
        # compiled at the first start) let the loader's thread start before the first paint,
        # which then waited for the GIL: the window came ~0.3 s later.
        QTimer.singleShot(LOADER_AT_LATEST_MS, self, self._start_loader_unless_shown)

    # ================================================================ construction
    def _connect(self) -> None:
        c = self.controller
        self.run_display.connect()
        c.sig_status_changed.connect(self._on_status_changed)
        c.sig_run_started.connect(self._update_buttons)
        self.summary_panel.sig_localize_requested.connect(self.localizer.start)
        self.summary_panel.sig_apply_requested.connect(
            lambda label, change: decide.apply_and_rerun(self, label, change)
        )
        self.model_panel.sig_model_chosen.connect(lambda source: form_sync.model_chosen(self, source))
        self.model_panel.sig_recent_chosen.connect(lambda path: self.open_model_file(path))
        self.model_panel.batch.valueChanged.connect(self._save_form)
        self.model_panel.image.valueChanged.connect(self._save_form)
        self.model_panel.sweep.toggled.connect(self._save_form)
        self.config_panel.sig_config_edited.connect(self._save_form)
        self.config_panel.sig_config_edited.connect(lambda *_: form_sync.refresh_suggestion(self))
        # the header says when the next run would measure another workload than the results shown
        mp = self.model_panel
        for changed in (mp.batch.valueChanged, mp.image.valueChanged, mp.seq_len.valueChanged):
            changed.connect(lambda *_: form_sync.refresh_next_workload(self))
        mp.hf_config.textChanged.connect(lambda *_: form_sync.refresh_next_workload(self))
        mp.task.currentIndexChanged.connect(lambda *_: form_sync.refresh_next_workload(self))
        mp.sweep.toggled.connect(lambda *_: form_sync.refresh_next_workload(self))
        mp.sweep_batch_edit.textChanged.connect(lambda *_: form_sync.refresh_next_workload(self))
        self.config_panel.device.currentIndexChanged.connect(lambda *_: form_sync.refresh_next_workload(self))

    # ================================================================ public API
    def set_model(self, source: str, trusted: bool = False) -> None:
        """Choose what to profile. `trusted`: the user named this file themselves (command
        line), so the first-run notice is not shown for it. "FILE.py:NAME" picks the factory NAME."""
        if is_file_source(source):
            path, factory = split_factory(source)
            path = os.path.abspath(os.path.expanduser(path))
            source = path if factory == "get_model" and not source.endswith(":get_model") else f"{path}:{factory}"
            if trusted:
                self._trusted_paths.add(path)
            self.recent.add(path)
        self.model_panel.set_source(source)
        form_sync.model_chosen(self, source)

    def open_model_file(self, path: str | None = None) -> bool:
        """Open a model file (asks for one when `path` is None). True when it was chosen."""
        if path is None:
            path = file_actions.ask_model_file(self, self.recent.last_folder())
            if not path:
                return False
        path = os.path.abspath(path)
        if not os.path.exists(path):
            self.show_error("Cannot open the model file", f"{path} does not exist (moved or deleted?).")
            self.recent.remove(path)
            return False
        if os.path.isdir(path):  # a Hugging Face checkpoint folder: profiled as hf:FOLDER
            if not file_actions.is_hf_folder(path):
                self.show_error(
                    "Not a model folder",
                    f"{os.path.basename(path)} holds no config.json: open a folder saved with save_pretrained.",
                )
                return False
            self.recent.add(path)
            self.set_model("hf:" + path)
            return True
        if not path.endswith(file_actions.MODEL_SUFFIXES):
            self.show_error(
                "Not a model file",
                f"{os.path.basename(path)}: supported are .py model files, "
                ".pt2 (torch.export.save) and TorchScript files (.pt, .pth, .ts).",
            )
            return False
        problem = check_chosen_model_file(path)  # read, never run: a broken file is refused now, not in a job
        if problem:
            self.show_error("Cannot use this file", problem)
            return False
        if not self.is_trusted(path) and not trust.confirm_python_file(self, self.settings, path):
            self.status_label.setText(f"Not opened: {os.path.basename(path)}")
            return False
        self.set_model(path)
        return True

    def open_script_window(self, path: str | None = None):
        """File → Profile a script… (gui.window.script_window), `path` in its form."""
        from gui.window.script_window import open_script_window

        return open_script_window(self, path)

    def open_hf_folder(self) -> bool:
        """Ask for a Hugging Face checkpoint folder and choose it (hf:FOLDER)."""
        path = file_actions.ask_hf_folder(self, self.recent.last_folder())
        return bool(path) and self.open_model_file(path)

    def run_profile(self, arrange=None, keep=(), applied: dict | None = None) -> bool:
        """Start profiling the chosen model with the run's configs (gui.window.run_start)."""
        return run_start.start_run(self, arrange, keep, applied)

    def cancel_run(self) -> None:
        if self.controller.busy:
            self.controller.cancel()  # the buttons change when the runner says it is cancelling
            self.status_label.setText("Cancelling…")

    def export_csv(self, folder: str | None = None) -> list[str]:
        """Write the report's CSVs and report.json into `folder` (asks when None)."""
        return file_actions.export_report(
            self, self.session.results, self._report_options(), folder, self.session.artifacts_dir, self._sections()
        )

    def save_bug_report(self) -> bool:
        """File → Save bug report…: a reproducer bundle of the results on screen
        (gui.window.bug_report); True when its notice is shown."""
        return self.bug_report.start()

    def _report_options(self) -> dict:
        """The session's options with the Decision tab's expected calls, so the exported
        recommendation.txt says what the tab shows (and reopening restores it)."""
        return {**(self.session.options or {}), "calls": self.view("decision").calls.value()}

    def save_session(self, path: str | None = None) -> str:
        return file_actions.save_session(
            self, self.session.results, self._report_options(), path, self.session.artifacts_dir, self._sections()
        )

    def _sections(self) -> dict:
        """The sections beyond the jobs that a saved report.json keeps (tune, localization)."""
        sections = dict(self.session_sections)
        localization = self.report_localization.get(self.session.origin)
        if localization is not None:
            sections["localization"] = localization
        return sections

    def open_session(self, path: str | None = None) -> bool:
        """Show a saved report.json (asks for one when `path` is None); True when shown. A
        report that cannot be shown is refused, naming the file, and what was on screen
        stays (`gui.window.report_opening`)."""
        return report_opening.open_report(self, path)

    def adopt_model(self, source: str, sweep: bool) -> None:
        """Make a reopened report's model (one the user knows: see report_opening) the next run's."""
        self.model_panel.set_source(source)
        self.model_panel.sweep.setChecked(sweep)
        form_sync.model_chosen(self, source)

    def show_results_from_report(
        self, results, options: dict, path: str, warnings, header: dict | None = None
    ) -> Exception | None:
        """Put a report's results on screen (with the sections of its `header` the tabs show:
        `localization`); the exception a value of it raised in a panel (nothing printed), or None."""
        self.report_localization[path] = (header or {}).get("localization")
        error = self.run_display.load_report(results, options, path, warnings)
        if error is None and (header or {}).get("tune") is not None:
            self.session_sections["tune"] = header["tune"]
        self.show_tune_notes()
        return error

    def show_tune_notes(self) -> None:
        """The Decision tab: what the budget did to the candidates of the results on screen."""
        decide.show_tune_notes(self)

    def slot(self, name: str) -> ViewSlot:
        """The place of the tab view called `name` (its --tab name): `when_built`, `built`."""
        return self.tab_views[TAB_NAMES.index(name)]

    def view(self, name: str):
        """The tab view called `name` (its --tab name), built now if it was not."""
        return self.slot(name).view

    @property
    def latency_chart(self):
        return self.latency_slot.view

    @property
    def distribution_chart(self):
        return self.distribution_slot.view

    @property
    def summary_panel(self):
        return self.view("summary")

    @property
    def resource_panel(self):
        return self.view("resources")

    @property
    def graph_breaks_panel(self):
        return self.view("graph-breaks")

    @property
    def sweep_panel(self):
        return self.view("sweep")

    def show_tab(self, name: str) -> None:
        if name in TAB_NAMES:
            self.tabs.setCurrentIndex(TAB_NAMES.index(name))

    def show_error(self, title: str, text: str) -> None:
        """Show an error without blocking the event loop (a window-modal box)."""
        self.last_error = text
        self.status_label.setText(f"{title}: {text}")
        file_actions.error_box(self, title, text)

    def show_about(self) -> None:
        file_actions.about_box(self, self.torch_info)

    def _on_status_changed(self, status) -> None:
        self._update_buttons()

    def _update_buttons(self, *args) -> None:
        busy = self.controller.busy
        ready = self.torch_info is not None
        self.actions.run.setEnabled(ready and not busy)
        self.actions.cancel.setEnabled(busy and not self.controller.cancelling)
        self.config_panel.run_button.setEnabled(self.actions.run.isEnabled())
        self.config_panel.cancel_button.setEnabled(self.actions.cancel.isEnabled())
        for action in (self.actions.export, self.actions.save_session, self.actions.open_session):
            action.setEnabled(not busy)
        self.actions.save_bug_report.setEnabled(not self.bug_report.busy and bool(report_folder(self)))

    def update_title(self) -> None:
        """The window names the model whose results it shows, else the one chosen to run."""
        form_sync.update_title(self)

    def update_actions(self) -> None:
        """Enable the actions for the state now (a helper started or ended)."""
        self._update_buttons()

    def _on_launch_step(self, *args) -> None:
        """Once torch's offer is in and the charts are built, what the launch made lives as long
        as the window: the garbage collector stops walking it (gui.qt_compat.freeze_long_lived)."""
        if self.torch_info is not None and all(slot.built for slot in self.views):
            qt_compat.freeze_long_lived()

    # ================================================================ trust
    def is_trusted(self, path: str) -> bool:
        """No notice for files named on the command line and the bundled examples."""
        return path in self._trusted_paths or is_bundled(path)

    # ================================================================ settings
    def _save_form(self) -> None:
        if not self._restoring:  # restoring sets the fields one by one; saving midway would clobber the rest
            window_settings.save_form(self)

    def _restore_settings(self) -> None:
        self._restoring = True
        try:
            window_settings.restore(self)
        finally:
            self._restoring = False
        form_sync.model_chosen(self, self.model_panel.source())
        self.recent.refresh()

    def save_window_settings(self) -> None:
        window_settings.save_window(self)

    # ================================================================ Qt events
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.sig_shown.emit()
            # the chart views after the launch's own work (_start_charts), at the latest
            # CHARTS_AT_LATEST_MS after the show (a window shown minimized is not painted)
            QTimer.singleShot(CHARTS_AT_LATEST_MS, self.charts_builder, self.charts_builder.start)
            QTimer.singleShot(LOADER_AT_LATEST_MS, self.torch_info_loader, self.torch_info_loader.start)

    def paintEvent(self, event) -> None:
        super().paintEvent(event)
        if self._shown and not self._painted:
            self._painted = True
            # torch's offer after this paint pass (the window's children are painted next, in
            # it): its thread's start (a file read, NVML) had made the first paint wait for the GIL
            QTimer.singleShot(0, self.torch_info_loader, self.torch_info_loader.start)
            self._start_charts()

    def _start_loader_unless_shown(self) -> None:
        if not self._shown:
            self.torch_info_loader.start()

    def _start_charts(self) -> None:
        """The charts' import thread (gui.window.view_slot.ChartsBuilder) once the window has been
        painted and what torch offers is in from the cache (or a helper process lists it): while
        the GUI thread painted and filled the pickers, the thread held the GIL it asked for at
        every call into Python (the first paint 107-189 ms against ~40 ms of its CPU, filling the
        pickers 81-147 ms against 15-21 ms, 4 launches each). CHARTS_AFTER_SETTLED_MS later: the
        model list's new names are laid out and painted first (a turn later was too soon: that
        paint then waited 47-154 ms on the thread, against 16-22 ms of its CPU)."""
        if self._painted and self.torch_info_loader.settled:
            QTimer.singleShot(CHARTS_AFTER_SETTLED_MS, self.charts_builder, self.charts_builder.start)

    def close_now(self) -> None:
        """Close without asking, cancelling any run (Ctrl+C in the terminal, automation)."""
        self._close_confirmed = True
        self.close()

    def closeEvent(self, event) -> None:
        """Closing the main window closes the app: its zoo windows and dialogs go too, any
        run is cancelled, the helper processes end. While a run is going the user is asked
        first (gui.window.closing); the event is ignored until they answer."""
        work = closing.running_work(self)
        if work and self.ask_before_closing and not self._close_confirmed:
            event.ignore()
            closing.ask_to_stop(
                self,
                work,
                self.close_now,
                "The results on screen close with the window (save the session first to keep "
                "them); a zoo's files keep every job that ended.",
            )
            return
        self._close_confirmed = False
        self.closed = True
        self.save_window_settings()
        self.torch_info_loader.stop()
        self.bug_report.stop()
        self.localizer.stop()
        for zoo_window in self.zoo_windows:
            zoo_window.closing_with_main = True
        owned = [w for w in (self.script_window, self.generation_window) if w is not None]
        closing.close_owned_windows(self, self.zoo_windows + owned)
        self.controller.shutdown()
        if self.run_folder is not None:
            self.run_folder.cleanup()
            self.run_folder = None
        super().closeEvent(event)

    def dragEnterEvent(self, event) -> None:
        if file_actions.dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = file_actions.dropped_paths(event.mimeData())
        if not paths:
            return
        event.acceptProposedAction()
        path = paths[0]
        if path.endswith(".json"):
            self.open_session(path)
        else:
            self.open_model_file(path)
