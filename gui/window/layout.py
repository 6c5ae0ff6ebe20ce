"""Building the main window: its layout (splitters and tabs), its actions (with shortcuts and
tooltips) and its menus. The window keeps the behaviour; this only puts the parts together.
GUI thread only.
"""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from gui.widgets.actions import make_action



def build_layout(w) -> None:
    """Left: model and config panels; right: whose results (`w.results_header`) above the
    charts above the tabs (`w.tabs`). Sets the
    splitters as `w.left_splitter`, `w.charts_splitter`, `w.right_splitter`, `w.main_splitter`."""
    left = QSplitter(Qt.Orientation.Vertical)
    left.addWidget(w.model_panel)
    # Scrolls rather than forcing a taller window when the suggestion line or a long error shows.
    config_scroll = QScrollArea()
    config_scroll.setWidget(w.config_panel)
    config_scroll.setWidgetResizable(True)
    config_scroll.setFrameShape(QFrame.Shape.NoFrame)
    config_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    config_box = QWidget()
    config_layout = QVBoxLayout(config_box)
    config_layout.setContentsMargins(0, 0, 0, 0)
    config_layout.setSpacing(0)
    config_layout.addWidget(config_scroll, 1)
    config_layout.addWidget(w.config_panel.run_bar)
    left.addWidget(config_box)
    left.setStretchFactor(0, 2)
    left.setStretchFactor(1, 3)
    left.setMinimumWidth(390)  # the config form's widest row (dynamic, fullgraph, optimizer step) unclipped
    w.left_splitter = left

    charts = QSplitter(Qt.Orientation.Horizontal)
    charts.addWidget(w.latency_chart)
    charts.addWidget(w.distribution_chart)
    charts.setStretchFactor(0, 3)
    charts.setStretchFactor(1, 1)
    w.charts_splitter = charts

    w.tabs = QTabWidget()
    for i, view in enumerate(w.tab_views):
        w.tabs.addTab(view, view.title)
        w.tabs.setTabToolTip(i, view.tip)

    right = QSplitter(Qt.Orientation.Vertical)
    right.addWidget(charts)
    right.addWidget(w.tabs)
    right.setStretchFactor(0, 1)
    right.setStretchFactor(1, 1)
    w.right_splitter = right

    right_box = QWidget()  # the results, headed by whose results they are
    right_layout = QVBoxLayout(right_box)
    right_layout.setContentsMargins(0, 0, 0, 0)
    right_layout.setSpacing(2)
    right_layout.addWidget(w.results_header)
    right_layout.addWidget(right, 1)

    main = QSplitter(Qt.Orientation.Horizontal)
    main.addWidget(left)
    main.addWidget(right_box)
    main.setStretchFactor(0, 0)
    main.setStretchFactor(1, 1)
    main.setSizes([400, 1000])
    w.main_splitter = main
    central = QWidget()
    layout = QVBoxLayout(central)
    layout.setContentsMargins(4, 4, 4, 0)
    layout.addWidget(main)
    w.setCentralWidget(central)
    w.statusBar().addWidget(w.status_label, 1)
    w.statusBar().addPermanentWidget(w.progress)


def build_actions(w) -> None:
    """Create the window's actions (`w.open_action`, `w.run_action`, ...) and hook the
    config panel's Run and Cancel buttons to them."""
    w.open_action = make_action(w, "Open model file…", QKeySequence.StandardKey.Open,
                                "Profile a .py model file, a .pt2 (torch.export) or TorchScript file",
                                lambda: w.open_model_file())
    w.open_hf_action = make_action(w, "Open Hugging Face folder…", "Ctrl+Alt+O",
                                   "Profile a local checkpoint folder saved with save_pretrained (hf:FOLDER)",
                                   lambda: w.open_hf_folder())
    w.run_action = make_action(w, "Run", "Ctrl+R", "Profile the model with the queued configs",
                               lambda: w.run_profile())
    w.cancel_action = make_action(w, "Cancel", "Esc", "Stop the running job and the ones queued after it",
                                  lambda: w.cancel_run())
    w.export_action = make_action(w, "Export report as CSV…", "Ctrl+E",
                                  "Write summary, latency, graph-break, resource, recompile (and shape-sweep "
                                  "variant) CSVs and report.json into a folder (as the profile command does)",
                                  lambda: w.export_csv())
    w.save_session_action = make_action(w, "Save session…", QKeySequence.StandardKey.Save,
                                        "Save this run as a report.json to reopen later", lambda: w.save_session())
    w.open_session_action = make_action(w, "Open session…", "Ctrl+Shift+O", "Reopen a past run from its report.json",
                                        lambda: w.open_session())
    w.open_zoo_action = make_action(w, "Open zoo report…", "Ctrl+Shift+Z",
                                    "Open a zoo (zoo.json written by `main.py zoo`): models × configs coloured by "
                                    "speedup; a cell opens that model's report", lambda: _open_zoo(w))
    w.run_zoo_action = make_action(w, "Run a zoo…", None,
                                   "Profile several models under the queued configs on this machine, one job at a "
                                   "time, into a zoo folder, and watch it fill in", lambda: _run_zoo(w))
    w.quit_action = make_action(w, "Quit", QKeySequence.StandardKey.Quit, "Close the app", w.close)
    w.about_action = make_action(w, "About compile-profiler", None, "Versions of torch, CUDA and the app",
                                 w.show_about)
    w.add_config_action = make_action(w, "Add config to queue", "Ctrl+Shift+A", "Queue the config being edited",
                                      w.config_panel.add_button.click)
    w.model_panel.open_button.setDefaultAction(w.open_action)
    panel = w.config_panel
    panel.run_button.clicked.connect(w.run_action.trigger)
    panel.cancel_button.clicked.connect(w.cancel_action.trigger)
    panel.run_button.setText("Run  (Ctrl+R)")
    panel.run_button.setToolTip(w.run_action.toolTip())
    panel.cancel_button.setText("Cancel  (Esc)")
    panel.cancel_button.setToolTip(w.cancel_action.toolTip())


def _open_zoo(w) -> None:
    from gui.window.zoo_window import open_zoo

    open_zoo(w)


def _run_zoo(w) -> None:
    from gui.window.zoo_run_dialog import run_zoo

    run_zoo(w)


def build_menus(w) -> None:
    """File, Run, View and Help menus; `w.recent_menu` is filled by the recent-files list."""
    file_menu = w.menuBar().addMenu("&File")
    file_menu.addAction(w.open_action)
    file_menu.addAction(w.open_hf_action)
    w.recent_menu = file_menu.addMenu("Recent model files")
    file_menu.addSeparator()
    file_menu.addAction(w.open_session_action)
    file_menu.addAction(w.save_session_action)
    file_menu.addAction(w.export_action)
    file_menu.addAction(w.open_zoo_action)
    file_menu.addAction(w.run_zoo_action)
    file_menu.addSeparator()
    file_menu.addAction(w.quit_action)
    run_menu = w.menuBar().addMenu("&Run")
    run_menu.addAction(w.run_action)
    run_menu.addAction(w.cancel_action)
    run_menu.addAction(w.add_config_action)
    view_menu = w.menuBar().addMenu("&View")
    for i, view in enumerate(w.tab_views):
        action = make_action(w, view.title, f"Ctrl+{i + 1}",
                             f"Show the {view.title.replace('&&', 'and').lower()} tab",
                             lambda checked=False, i=i: w.tabs.setCurrentIndex(i))
        view_menu.addAction(action)
    log_action = QAction("Log latency axis", w, checkable=True)
    log_action.setShortcut(QKeySequence("Ctrl+L"))
    log_action.setStatusTip("Logarithmic latency axis on the latency chart")
    log_action.triggered.connect(w.latency_chart.set_log)
    w.latency_chart.log_box.toggled.connect(log_action.setChecked)
    view_menu.addAction(log_action)
    help_menu = w.menuBar().addMenu("&Help")
    help_menu.addAction(w.about_action)
    for menu in (file_menu, run_menu, view_menu, help_menu, w.recent_menu):
        menu.setToolTipsVisible(True)
