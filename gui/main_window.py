"""The main window: puts the panels together, owns the actions, and wires the runner's
events (through `ProfileSession`) to the panels.

Left: what to profile (`ModelPanel`) and how (`ConfigPanel`). Right, top: the live latency
chart and the distribution; bottom: tabs for the summary, resources, and graph breaks with
the compile breakdown and recompiles. Buttons follow the runner's state
(`RunController.sig_status_changed`), never the click itself. GUI thread only.
"""
from __future__ import annotations

import os
import uuid

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QLabel, QMainWindow, QSplitter, QTabWidget, QVBoxLayout, QWidget)

from core.config import CompileConfig, JobSpec, ModelSpec
from core.models import is_file_source
from gui import file_actions, trust
from gui.catalog import CatalogLoader
from gui.config_panel import ConfigPanel
from gui.distribution_chart import DistributionChart
from gui.graph_breaks_panel import GraphBreaksPanel
from gui.latency_chart import LatencyChart
from gui.model_panel import ModelPanel
from gui.progress import RunProgressBar
from gui.resource_panel import ResourcePanel
from gui.session import ProfileSession
from gui.summary_panel import SummaryPanel
from gui.worker import RunController

MODEL_SUFFIXES = (".py", ".pt2", ".pt", ".pth", ".ts", ".jit", ".torchscript")
MAX_RECENT = 10
TAB_NAMES = ("summary", "resources", "graph-breaks")


class MainWindow(QMainWindow):
    """The application window. GUI thread only."""

    sig_shown = Signal()
    """The window was shown for the first time."""

    sig_catalog_loaded = Signal(object)
    """torch's catalogues (a `gui.catalog.Catalog`) are in the pickers."""

    sig_run_finished = Signal()
    """A run ended (completed, failed or cancelled) and every panel shows its result."""

    def __init__(self, settings: QSettings | None = None, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings if settings is not None else QSettings()
        self.catalog = None
        self.last_error = ""
        self._shown = False
        self._trusted_paths: set[str] = set()
        self._restoring = False
        self.setWindowTitle("compile-profiler")
        self.setAcceptDrops(True)

        self.session = ProfileSession(self)
        self.controller = RunController(parent=self)
        self.model_panel = ModelPanel()
        self.config_panel = ConfigPanel()
        self.latency_chart = LatencyChart()
        self.distribution_chart = DistributionChart()
        self.summary_panel = SummaryPanel()
        self.resource_panel = ResourcePanel()
        self.graph_breaks_panel = GraphBreaksPanel()
        self.progress = RunProgressBar()
        self.status_label = QLabel("Loading torch…")
        self._build_actions()
        self._build_layout()
        self._build_menus()
        self._connect()
        self._restore_settings()
        self._update_buttons()

        self.catalog_loader = CatalogLoader(self)
        self.catalog_loader.sig_loaded.connect(self._on_catalog_loaded)
        QTimer.singleShot(0, self.catalog_loader.start)

    # ================================================================ construction
    def _action(self, text: str, shortcut, tip: str, slot) -> QAction:
        action = QAction(text, self)
        if shortcut:
            action.setShortcut(QKeySequence(shortcut))
        shortcut_text = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        action.setToolTip(f"{tip} ({shortcut_text})" if shortcut_text else tip)
        action.setStatusTip(tip)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        self.open_action = self._action("Open model file…", QKeySequence.StandardKey.Open,
                                        "Profile a .py model file, a .pt2 (torch.export) or TorchScript file",
                                        lambda: self.open_model_file())
        self.run_action = self._action("Run", "Ctrl+R", "Profile the model with the queued configs",
                                       lambda: self.run_profile())
        self.cancel_action = self._action("Cancel", "Esc", "Stop the running job and the ones queued after it",
                                          lambda: self.cancel_run())
        self.export_action = self._action("Export report as CSV…", "Ctrl+E",
                                          "Write summary, latency, graph-break, resource and recompile CSVs and "
                                          "report.json into a folder (as the profile command does)",
                                          lambda: self.export_csv())
        self.save_session_action = self._action("Save session…", QKeySequence.StandardKey.Save,
                                                "Save this run as a report.json to reopen later",
                                                lambda: self.save_session())
        self.open_session_action = self._action("Open session…", "Ctrl+Shift+O",
                                                "Reopen a past run from its report.json",
                                                lambda: self.open_session())
        self.quit_action = self._action("Quit", QKeySequence.StandardKey.Quit, "Close the app", self.close)
        self.about_action = self._action("About compile-profiler", None, "Versions of torch, CUDA and the app",
                                         self.show_about)
        self.add_config_action = self._action("Add config to queue", "Ctrl+Shift+A",
                                              "Queue the config being edited", self.config_panel.add_button.click)
        self.model_panel.open_button.setDefaultAction(self.open_action)
        self.config_panel.run_button.clicked.connect(self.run_action.trigger)
        self.config_panel.cancel_button.clicked.connect(self.cancel_action.trigger)
        self.config_panel.run_button.setText("Run  (Ctrl+R)")
        self.config_panel.run_button.setToolTip(self.run_action.toolTip())
        self.config_panel.cancel_button.setText("Cancel  (Esc)")
        self.config_panel.cancel_button.setToolTip(self.cancel_action.toolTip())

    def _build_layout(self) -> None:
        left = QSplitter(Qt.Orientation.Vertical)
        left.addWidget(self.model_panel)
        left.addWidget(self.config_panel)
        left.setStretchFactor(0, 1)
        left.setStretchFactor(1, 1)
        left.setMinimumWidth(280)
        self.left_splitter = left

        charts = QSplitter(Qt.Orientation.Horizontal)
        charts.addWidget(self.latency_chart)
        charts.addWidget(self.distribution_chart)
        charts.setStretchFactor(0, 3)
        charts.setStretchFactor(1, 1)
        self.charts_splitter = charts

        self.tabs = QTabWidget()
        self.tabs.addTab(self.summary_panel, "Summary")
        self.tabs.addTab(self.resource_panel, "Resources")
        self.tabs.addTab(self.graph_breaks_panel, "Graph breaks && compile")
        self.tabs.setTabToolTip(0, "Figures per config: latency percentiles, speedup, compile time, break-even")
        self.tabs.setTabToolTip(1, "CPU, memory (and GPU) of the job process over time, by phase")
        self.tabs.setTabToolTip(2, "Graph breaks with explanations and hints; compile-time breakdown; recompiles")

        right = QSplitter(Qt.Orientation.Vertical)
        right.addWidget(charts)
        right.addWidget(self.tabs)
        right.setStretchFactor(0, 1)
        right.setStretchFactor(1, 1)
        self.right_splitter = right

        main = QSplitter(Qt.Orientation.Horizontal)
        main.addWidget(left)
        main.addWidget(right)
        main.setStretchFactor(0, 0)
        main.setStretchFactor(1, 1)
        main.setSizes([300, 1100])
        self.main_splitter = main
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(4, 4, 4, 0)
        layout.addWidget(main)
        self.setCentralWidget(central)
        self.statusBar().addWidget(self.status_label, 1)
        self.statusBar().addPermanentWidget(self.progress)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Recent model files")
        file_menu.addSeparator()
        file_menu.addAction(self.open_session_action)
        file_menu.addAction(self.save_session_action)
        file_menu.addAction(self.export_action)
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)
        run_menu = self.menuBar().addMenu("&Run")
        run_menu.addAction(self.run_action)
        run_menu.addAction(self.cancel_action)
        run_menu.addAction(self.add_config_action)
        view_menu = self.menuBar().addMenu("&View")
        for i, name in enumerate(("Summary", "Resources", "Graph breaks && compile")):
            action = self._action(name, f"Ctrl+{i + 1}", f"Show the {name.replace('&&', 'and').lower()} tab",
                                  lambda checked=False, i=i: self.tabs.setCurrentIndex(i))
            view_menu.addAction(action)
        log_action = QAction("Log latency axis", self, checkable=True)
        log_action.setShortcut(QKeySequence("Ctrl+L"))
        log_action.setStatusTip("Logarithmic latency axis on the latency chart")
        log_action.toggled.connect(self.latency_chart.log_box.setChecked)
        self.latency_chart.log_box.toggled.connect(log_action.setChecked)
        view_menu.addAction(log_action)
        help_menu = self.menuBar().addMenu("&Help")
        help_menu.addAction(self.about_action)
        for menu in (file_menu, run_menu, view_menu, help_menu, self.recent_menu):
            menu.setToolTipsVisible(True)

    def _connect(self) -> None:
        c, s = self.controller, self.session
        c.sig_event_received.connect(self._on_event_received)
        c.sig_status_changed.connect(self._on_status_changed)
        c.sig_run_started.connect(self._update_buttons)
        c.sig_run_finished.connect(self._on_run_finished)
        s.sig_reset.connect(self._on_session_reset)
        s.sig_samples_added.connect(self._on_samples_added)
        s.sig_resource_sampled.connect(self.resource_panel.add_sample)
        s.sig_phase_changed.connect(self._on_phase_changed)
        s.sig_job_changed.connect(self._on_job_changed)
        s.sig_graph_breaks_changed.connect(self._on_graph_breaks_changed)
        s.sig_job_ended.connect(self._on_job_ended)
        self.model_panel.sig_model_chosen.connect(self._on_model_chosen)
        self.model_panel.sig_recent_chosen.connect(lambda path: self.open_model_file(path))
        self.config_panel.sig_config_edited.connect(self._save_form)

    # ================================================================ public API
    def set_model(self, source: str, trusted: bool = False) -> None:
        """Choose what to profile. `trusted`: the user named this file themselves (command
        line), so the first-run notice is not shown for it."""
        if is_file_source(source):
            source = os.path.abspath(os.path.expanduser(source))
            if trusted:
                self._trusted_paths.add(source)
            self._add_recent(source)
        self.model_panel.set_source(source)
        self._on_model_chosen(source)

    def open_model_file(self, path: str | None = None) -> bool:
        """Open a model file (asks for one when `path` is None). True when it was chosen."""
        if path is None:
            path = file_actions.ask_model_file(self, self._last_folder())
            if not path:
                return False
        path = os.path.abspath(path)
        if not os.path.exists(path):
            self.show_error("Cannot open the model file", f"{path} does not exist (moved or deleted?).")
            self._remove_recent(path)
            return False
        if not path.endswith(MODEL_SUFFIXES):
            self.show_error("Not a model file", f"{os.path.basename(path)}: supported are .py model files, "
                            ".pt2 (torch.export.save) and TorchScript files (.pt, .pth, .ts).")
            return False
        if path not in self._trusted_paths and not trust.confirm_python_file(self, self.settings, path):
            self.status_label.setText(f"Not opened: {os.path.basename(path)}")
            return False
        self.set_model(path)
        return True

    def run_profile(self) -> bool:
        """Start profiling the chosen model with the run's configs; False (with the reason
        shown) when it cannot start."""
        if self.controller.busy:
            return False
        source = self.model_panel.source()
        if not source:
            self.show_error("No model chosen", "Choose a torchvision model in the list or open a model file first.")
            return False
        configs = self.config_panel.run_configs()
        problem = self.config_panel.validate(configs)
        if problem:
            self.status_label.setText(f"Cannot run: {problem}")
            self.last_error = problem
            return False
        if is_file_source(source):
            if not os.path.exists(source):
                self.show_error("Model file missing", f"{source} does not exist any more.")
                return False
            if source not in self._trusted_paths and not trust.confirm_python_file(self, self.settings, source):
                return False
        panel = self.config_panel
        model = ModelSpec(source, batch_size=self.model_panel.batch.value(),
                          image_size=self.model_panel.image.value())
        specs = [JobSpec(job_id=uuid.uuid4().hex[:8], model=model, config=config, warmup=panel.warmup.value(),
                         iters=panel.iters.value(), device=panel.device.currentText()) for config in configs]
        options = {"model": source, "batch_size": model.batch_size, "image_size": model.image_size,
                   "warmup": panel.warmup.value(), "iters": panel.iters.value(),
                   "device": panel.device.currentText(), "configs": [c.label for c in configs], "source": "gui"}
        for config in configs:
            panel.queue.set_status(config, "pending")
        self.session.start(specs, options)
        self.controller.start(specs)
        self.status_label.setText(f"Profiling {os.path.basename(source)} with {len(specs)} config(s)…")
        return True

    def cancel_run(self) -> None:
        if self.controller.busy:
            self.controller.cancel()
            self.status_label.setText("Cancelling…")
            self._update_buttons()

    def export_csv(self, folder: str | None = None) -> list[str]:
        """Write the report's CSVs and report.json into `folder` (asks when None)."""
        return file_actions.export_report(self, self.session.results, self.session.options, folder)

    def save_session(self, path: str | None = None) -> str:
        return file_actions.save_session(self, self.session.results, self.session.options, path)

    def open_session(self, path: str | None = None) -> bool:
        loaded = file_actions.open_session(self, path, self._last_folder())
        if loaded is None:
            return False
        results, header, path = loaded
        self.session.load(results, header.get("options") or {})
        if results:
            self.model_panel.set_source(results[0].spec.model.source)
        self.setWindowTitle(f"compile-profiler — {path}")
        self.status_label.setText(f"Opened {path}: {len(results)} job(s)")
        return True

    def show_tab(self, name: str) -> None:
        if name in TAB_NAMES:
            self.tabs.setCurrentIndex(TAB_NAMES.index(name))

    def show_error(self, title: str, text: str) -> None:
        """Show an error without blocking the event loop (a window-modal box)."""
        self.last_error = text
        self.status_label.setText(f"{title}: {text}")
        file_actions.error_box(self, title, text)

    def show_about(self) -> None:
        file_actions.about_box(self, self.catalog)

    # ================================================================ slots: runner and session
    def _on_event_received(self, event) -> None:
        self.session.apply(event)  # drops events of jobs this session does not know

    def _on_status_changed(self, status) -> None:
        self._update_buttons()

    def _update_buttons(self, *args) -> None:
        busy = self.controller.busy
        ready = self.catalog is not None
        self.run_action.setEnabled(ready and not busy)
        self.cancel_action.setEnabled(busy and not self.controller.cancelling)
        self.config_panel.run_button.setEnabled(self.run_action.isEnabled())
        self.config_panel.cancel_button.setEnabled(self.cancel_action.isEnabled())
        for action in (self.export_action, self.save_session_action, self.open_session_action):
            action.setEnabled(not busy)

    def _on_run_finished(self) -> None:
        self._update_buttons()
        results = self.session.results
        self.summary_panel.model.mark_changed("", now=True)
        self.progress.show_results(results)
        failed = [r for r in results if r.status == "failed"]
        text = "Run finished: " + self.progress.format()
        if failed:
            text += f" — {failed[0].config.label} failed: {failed[0].failure_reason}"
        self.status_label.setText(text)
        self.sig_run_finished.emit()

    def _on_session_reset(self) -> None:
        results = self.session.results
        self.latency_chart.reset(results)
        self.distribution_chart.reset(results)
        self.summary_panel.model.set_results(results)
        self.resource_panel.reset(results)
        self.graph_breaks_panel.set_results(results)
        self.progress.show_results(results)
        queue = self.config_panel.queue
        for r in results:
            if r.config in queue.configs:
                queue.set_status(r.config, r.status, r.failure_reason, r.failure_detail)

    def _on_samples_added(self, job_id: str, samples) -> None:
        self.latency_chart.add_samples(job_id, samples)
        self.distribution_chart.schedule_redraw()
        self.summary_panel.model.mark_changed(job_id)
        self.progress.show_results(self.session.results)

    def _on_phase_changed(self, job_id: str, phase: str, detail: str) -> None:
        result = self.session.result(job_id)
        self.progress.show_results(self.session.results)
        self.status_label.setText(f"{result.config.label}: {detail or phase}")
        self.config_panel.queue.set_status(result.config, phase)

    def _on_job_changed(self, job_id: str) -> None:
        result = self.session.result(job_id)
        self.summary_panel.model.mark_changed(job_id)
        if result.compile is not None:
            self.latency_chart.mark_compile(job_id, result.compile)
        self.resource_panel.update_memory(self.session.results)
        self.graph_breaks_panel.compile_panel.set_results(self.session.results)

    def _on_graph_breaks_changed(self) -> None:
        self.graph_breaks_panel.set_results(self.session.results)

    def _on_job_ended(self, job_id: str) -> None:
        result = self.session.result(job_id)
        self.summary_panel.model.mark_changed(job_id, now=True)
        self.distribution_chart.schedule_redraw()
        self.graph_breaks_panel.set_results(self.session.results)
        self.progress.show_results(self.session.results)
        self.config_panel.queue.set_status(result.config, result.status, result.failure_reason,
                                           result.failure_detail)

    # ================================================================ slots: catalogue, model
    def _on_catalog_loaded(self, catalog) -> None:
        self.catalog = catalog
        self.model_panel.set_models(catalog.models)
        if catalog.backends:
            self.config_panel.set_catalog(catalog.backends, catalog.modes, catalog.cuda_available)
        self.controller.set_gpu_monitor(catalog.gpu_monitor)
        gpu_ok = bool(getattr(catalog.gpu_monitor, "available", False))
        self.resource_panel.set_gpu(gpu_ok, catalog.gpu_reason)
        self._update_buttons()
        if catalog.error and not catalog.backends:
            self.show_error("torch could not be loaded", catalog.error.splitlines()[0])
        else:
            torch_version = catalog.versions.get("torch", "?")
            self.status_label.setText(f"Ready: torch {torch_version}, {len(catalog.models)} torchvision models"
                                      + (f" ({catalog.error})" if catalog.error else ""))
        self.sig_catalog_loaded.emit(catalog)

    def _on_model_chosen(self, source: str) -> None:
        name = os.path.basename(source) if is_file_source(source) else source
        self.setWindowTitle(f"compile-profiler — {name}" if name else "compile-profiler")
        self.settings.setValue("form/model", source)

    # ================================================================ recent files, settings
    def _recent(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        return [value] if isinstance(value, str) else list(value or [])

    def _add_recent(self, path: str) -> None:
        recent = [path] + [p for p in self._recent() if p != path]
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.settings.setValue("last_folder", os.path.dirname(path))
        self._refresh_recent()

    def _remove_recent(self, path: str) -> None:
        self.settings.setValue("recent_files", [p for p in self._recent() if p != path])
        self._refresh_recent()

    def _refresh_recent(self) -> None:
        recent = self._recent()
        self.model_panel.set_recent(recent)
        self.recent_menu.clear()
        for path in recent:
            action = self.recent_menu.addAction(os.path.basename(path))
            action.setToolTip(path)
            action.triggered.connect(lambda checked=False, p=path: self.open_model_file(p))
        self.recent_menu.setEnabled(bool(recent))

    def _last_folder(self) -> str:
        return str(self.settings.value("last_folder", os.getcwd()))

    def _save_form(self) -> None:
        if self._restoring:
            return  # restoring sets the fields one by one; saving midway would clobber the rest
        s, p = self.settings, self.config_panel
        c = p.current_config()
        for key, value in (("backend", c.backend), ("mode", c.mode), ("dynamic", c.dynamic),
                           ("fullgraph", c.fullgraph), ("device", p.device.currentText()),
                           ("warmup", p.warmup.value()), ("iters", p.iters.value()),
                           ("batch_size", self.model_panel.batch.value()),
                           ("image_size", self.model_panel.image.value())):
            s.setValue(f"form/{key}", value)

    def _restore_settings(self) -> None:
        self._restoring = True
        try:
            self._restore_fields()
        finally:
            self._restoring = False

    def _restore_fields(self) -> None:
        s = self.settings
        geometry = s.value("window/geometry")
        if isinstance(geometry, QByteArray) and not geometry.isEmpty():
            self.restoreGeometry(geometry)
        else:
            self.resize(1400, 900)
        for name in ("main_splitter", "left_splitter", "right_splitter", "charts_splitter"):
            state = s.value(f"window/{name}")
            if isinstance(state, QByteArray) and not state.isEmpty():
                getattr(self, name).restoreState(state)
        self.tabs.setCurrentIndex(int(s.value("window/tab", 0) or 0))
        p = self.config_panel
        p.set_config(CompileConfig(backend=str(s.value("form/backend", "inductor")),
                                   mode=str(s.value("form/mode", "default")),
                                   dynamic=str(s.value("form/dynamic", "auto")),
                                   fullgraph=str(s.value("form/fullgraph", "false")).lower() == "true"))
        p.warmup.setValue(int(s.value("form/warmup", 5)))
        p.iters.setValue(int(s.value("form/iters", 50)))
        self.model_panel.batch.setValue(int(s.value("form/batch_size", 1)))
        self.model_panel.image.setValue(int(s.value("form/image_size", 224)))
        self.model_panel.batch.valueChanged.connect(self._save_form)
        self.model_panel.image.valueChanged.connect(self._save_form)
        model = str(s.value("form/model", "resnet18") or "resnet18")
        if is_file_source(model) and not os.path.exists(model):
            model = "resnet18"
        self.model_panel.set_source(model)
        self._on_model_chosen(model)
        self._refresh_recent()

    def save_window_settings(self) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        for name in ("main_splitter", "left_splitter", "right_splitter", "charts_splitter"):
            s.setValue(f"window/{name}", getattr(self, name).saveState())
        s.setValue("window/tab", self.tabs.currentIndex())
        self._save_form()
        s.sync()

    # ================================================================ Qt events
    def showEvent(self, event) -> None:
        super().showEvent(event)
        if not self._shown:
            self._shown = True
            self.sig_shown.emit()

    def closeEvent(self, event) -> None:
        self.save_window_settings()
        self.controller.shutdown()
        super().closeEvent(event)

    def dragEnterEvent(self, event) -> None:
        if _dropped_paths(event.mimeData()):
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:
        paths = _dropped_paths(event.mimeData())
        if not paths:
            return
        event.acceptProposedAction()
        path = paths[0]
        if path.endswith(".json"):
            self.open_session(path)
        else:
            self.open_model_file(path)


def _dropped_paths(mime) -> list[str]:
    if not mime.hasUrls():
        return []
    return [u.toLocalFile() for u in mime.urls()
            if u.isLocalFile() and u.toLocalFile().endswith(MODEL_SUFFIXES + (".json",))]
