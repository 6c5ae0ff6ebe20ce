"""Building the main window: its layout (splitters and tabs), its actions (with shortcuts and
tooltips) and its menus, each returned as a dataclass the window keeps. The window keeps the
behaviour; this only puts the parts together. GUI thread only.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFrame, QScrollArea, QSplitter, QTabWidget, QVBoxLayout, QWidget

from core import PROJECT_ROOT
from gui.panels import TAB_VIEWS
from gui.widgets.actions import make_action
from gui.widgets.open_path import desktop_open
from gui.window.app_window import AppWindow, WindowActions, WindowLayout, WindowMenus
from gui.window.view_slot import scroll_area

MODEL_PANEL_HEIGHT = 470  # px: the model panel whole (examples, models list, inputs)
CONFIG_MIN_HEIGHT = 80  # px: the config form's first rows (backend, mode) before it scrolls
CHARTS_MIN_HEIGHT = 200  # px: the latency chart's axes, a few ticks and its curves readable
CHARTS_DEFAULT_HEIGHT = 280
DISTRIBUTION_MIN_WIDTH = 240  # px: the distribution's title in three lines over a readable plot


def build_layout(w: AppWindow) -> WindowLayout:
    """Left: model and config panels; right: whose results (`w.results_header`) above the
    charts above the tabs."""
    left = QSplitter(Qt.Orientation.Vertical)
    # Both panels scroll rather than force a taller window: the model panel's ~470 px over the
    # form's made the window need ~750 px, more than a 1366x768 laptop screen has room for.
    left.addWidget(scroll_area(w.model_panel, sideways=False))
    # (the form: also when the suggestion line or a long error shows)
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
    config_layout.addWidget(w.config_panel.queue_box)  # the queue in sight below the form, however short
    config_layout.addWidget(w.config_panel.run_bar)
    left.addWidget(config_box)
    # The model panel keeps its height (all of it shows: ~470 px) and the form takes the rest,
    # down to a few rows; a shorter window then takes the room from the model panel.
    config_scroll.setMinimumHeight(CONFIG_MIN_HEIGHT)
    left.setStretchFactor(0, 0)
    left.setStretchFactor(1, 1)
    left.setSizes([MODEL_PANEL_HEIGHT, 10_000 - MODEL_PANEL_HEIGHT])
    left.setMinimumWidth(390)  # the config form's widest row (dynamic, fullgraph, optimizer step) unclipped

    charts = QSplitter(Qt.Orientation.Horizontal)
    charts.addWidget(w.latency_slot)
    charts.addWidget(w.distribution_slot)
    charts.setStretchFactor(0, 3)
    charts.setStretchFactor(1, 1)
    # at 1100 px the distribution's quarter was ~170 px: its title wrapped to seven lines over a
    # plot too narrow to read; a narrow window takes the room from the latency chart instead
    w.distribution_slot.setMinimumWidth(DISTRIBUTION_MIN_WIDTH)

    tabs = QTabWidget()
    for i, (tab, slot) in enumerate(zip(TAB_VIEWS, w.tab_views)):
        tabs.addTab(slot, tab.title)
        tabs.setTabToolTip(i, tab.tip)

    # The charts keep a readable height (at 1400x900 the tabs' minimum squeezed them to ~60 px):
    # a floor the splitter cannot go under, and a default share of about a third.
    charts.setMinimumHeight(CHARTS_MIN_HEIGHT)
    right = QSplitter(Qt.Orientation.Vertical)
    right.addWidget(charts)
    right.addWidget(tabs)
    right.setStretchFactor(0, 1)
    right.setStretchFactor(1, 2)
    right.setChildrenCollapsible(False)
    right.setSizes([CHARTS_DEFAULT_HEIGHT, 10_000 - CHARTS_DEFAULT_HEIGHT])

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
    central = QWidget()
    layout = QVBoxLayout(central)
    layout.setContentsMargins(4, 4, 4, 0)
    layout.addWidget(main)
    w.setCentralWidget(central)
    w.statusBar().addWidget(w.status_label, 1)
    w.statusBar().addPermanentWidget(w.progress)
    return WindowLayout(left, charts, right, main, tabs)


def build_actions(w: AppWindow) -> WindowActions:
    """Create the window's actions and hook the config panel's Run and Cancel buttons to them."""
    from gui.window import decide

    a = WindowActions(
        open=make_action(
            w,
            "Open model file…",
            QKeySequence.StandardKey.Open,
            "Profile a .py model file, a .pt2 (torch.export) or TorchScript file",
            lambda: w.open_model_file(),
        ),
        open_hf=make_action(
            w,
            "Open Hugging Face folder…",
            "Ctrl+Alt+O",
            "Profile a local checkpoint folder saved with save_pretrained (hf:FOLDER)",
            lambda: w.open_hf_folder(),
        ),
        run=make_action(w, "Run", "Ctrl+R", "Profile the model with the queued configs", lambda: w.run_profile()),
        cancel=make_action(
            w, "Cancel", "Esc", "Stop the running job and the ones queued after it", lambda: w.cancel_run()
        ),
        export=make_action(
            w,
            "Export report as CSV…",
            "Ctrl+E",
            "Write summary, latency, graph-break, resource, recompile (and shape-sweep variant) "
            "CSVs and report.json into a folder (as the profile command does)",
            lambda: w.export_csv(),
        ),
        save_session=make_action(
            w,
            "Save session…",
            QKeySequence.StandardKey.Save,
            "Save this run as a report.json to reopen later",
            lambda: w.save_session(),
        ),
        open_session=make_action(
            w, "Open session…", "Ctrl+Shift+O", "Reopen a past run from its report.json", lambda: w.open_session()
        ),
        save_bug_report=make_action(
            w,
            "Save bug report…",
            None,
            "Save a zip to hand over: repro.py (rebuilds the model, compiles it as the run did, shows the "
            "problem of the selected config, else the first with one), the model's code or inputs, report.json, "
            "torch's traces and the environment; what goes in is said first. For a session opened from a report "
            "folder or a finished run",
            lambda: w.save_bug_report(),
        ),
        open_zoo=make_action(
            w,
            "Open zoo report…",
            "Ctrl+Alt+Z",  # not Ctrl+Shift+Z: a text field with focus takes it as Redo
            "Open a zoo (zoo.json written by `main.py zoo`): models × configs coloured by speedup; "
            "a cell opens that model's report",
            lambda: _open_zoo(w),
        ),
        run_zoo=make_action(
            w,
            "Run a zoo…",
            None,
            "Profile several models under the queued configs on this machine, one job at a time, "
            "into a zoo folder, and watch it fill in",
            lambda: _run_zoo(w),
        ),
        profile_script=make_action(
            w,
            "Profile a script…",
            "Ctrl+Shift+P",
            "Run your own script that calls torch.compile under the profiler: every compiled function timed "
            "against the script's own eager run (as `main.py run` does)",
            lambda: w.open_script_window(),
        ),
        compile_caches=make_action(
            w,
            "Compile caches…",
            None,
            "The inductor cache each compile config compiles in: size, files, last use; remove them to free the "
            "space (as `main.py cache` does)",
            lambda: _show_caches(w),
        ),
        quit=make_action(w, "Quit", QKeySequence.StandardKey.Quit, "Close the app", w.close),
        about=make_action(w, "About compile-profiler", None, "Versions of torch, CUDA and the app", w.show_about),
        add_config=make_action(
            w, "Add config to queue", "Ctrl+Shift+A", "Queue the config being edited", w.config_panel.add_button.click
        ),
        find_best=make_action(
            w,
            "Find best settings",
            "Ctrl+Shift+B",
            "Profile core's candidate configs for this model and device, cheapest compile first, "
            "within the budget set in the Decision tab; then recommend one",
            lambda: decide.find_best_settings(w, w.view("decision").budget.value()),
        ),
        compare=make_action(
            w,
            "Compare with report…",
            None,
            "Compare these results with a saved report.json or "
            "report folder: deltas per config, verdicts, and the baseline's latency distribution",
            lambda: decide.compare(w),
        ),
    )
    w.model_panel.open_button.setDefaultAction(a.open)
    panel = w.config_panel
    panel.run_button.clicked.connect(a.run.trigger)
    panel.cancel_button.clicked.connect(a.cancel.trigger)
    panel.run_button.setText("Run  (Ctrl+R)")
    panel.run_button.setToolTip(a.run.toolTip())
    panel.cancel_button.setText("Cancel  (Esc)")
    panel.cancel_button.setToolTip(a.cancel.toolTip())
    return a


# Help's entries: this checkout's documents (docs/), opened as local files
DOCUMENTS = (
    ("Documentation: the app", "app.md"),
    ("Documentation: profiling a script", "scripts.md"),
    ("Documentation: text generation", "generation.md"),
    ("Documentation: the command lines", "cli.md"),
    ("Documentation: model sources", "model-sources.md"),
    ("Documentation: deciding what to ship", "deciding.md"),
    ("Documentation: how a job measures", "methodology.md"),
)


def _open_document(window: AppWindow, path: str) -> bool:
    """Open a document of this checkout with the desktop's viewer for it; where none was found,
    the status bar says where the file is."""
    if desktop_open(path):
        window.status_label.setText(f"Opened {path}")
        return True
    window.status_label.setText(f"Nothing could open {path}: no viewer for it was found; open it yourself.")
    return False


def _open_zoo(window: AppWindow) -> None:
    from gui.window.zoo_window import open_zoo

    open_zoo(window)


def _show_caches(window: AppWindow) -> None:
    from gui.window.cache_dialog import show_caches

    show_caches(window)


def _run_zoo(window: AppWindow) -> None:
    from gui.window.zoo_run_dialog import run_zoo

    run_zoo(window)


def build_menus(w: AppWindow, a: WindowActions) -> WindowMenus:
    """File, Run, View and Help menus (and Recent model files, filled by the recent-files list)."""
    file_menu = w.menuBar().addMenu("&File")
    file_menu.addAction(a.open)
    file_menu.addAction(a.open_hf)
    recent_menu = file_menu.addMenu("Recent model files")
    file_menu.addSeparator()
    file_menu.addAction(a.open_session)
    file_menu.addAction(a.save_session)
    file_menu.addAction(a.export)
    file_menu.addAction(a.save_bug_report)
    file_menu.addAction(a.compare)
    file_menu.addAction(a.open_zoo)
    file_menu.addAction(a.run_zoo)
    file_menu.addAction(a.profile_script)
    file_menu.addSeparator()
    file_menu.addAction(a.compile_caches)
    file_menu.addSeparator()
    file_menu.addAction(a.quit)
    run_menu = w.menuBar().addMenu("&Run")
    run_menu.addAction(a.run)
    run_menu.addAction(a.cancel)
    run_menu.addAction(a.add_config)
    run_menu.addSeparator()
    run_menu.addAction(a.find_best)
    view_menu = w.menuBar().addMenu("&View")
    for i, tab in enumerate(TAB_VIEWS):
        action = make_action(
            w,
            tab.title,
            f"Ctrl+{i + 1}",
            f"Show the {tab.title.replace('&&', 'and').lower()} tab",
            lambda checked=False, i=i: w.tabs.setCurrentIndex(i),
        )
        view_menu.addAction(action)
    log_action = QAction("Log latency axis", w, checkable=True)
    log_action.setShortcut(QKeySequence("Ctrl+L"))
    log_action.setStatusTip("Logarithmic latency axis on the latency chart")
    log_action.triggered.connect(lambda checked: w.latency_chart.set_log(checked))

    def follow_log_box(chart) -> None:
        chart.log_box.toggled.connect(log_action.setChecked)
        if chart.log_box.isChecked() != log_action.isChecked():
            log_action.setChecked(chart.log_box.isChecked())

    w.latency_slot.when_built(follow_log_box)
    view_menu.addAction(log_action)
    help_menu = w.menuBar().addMenu("&Help")
    for title, name in DOCUMENTS:
        path = os.path.join(PROJECT_ROOT, "docs", name)
        action = QAction(title, w)
        action.setStatusTip(f"Open {path} (this checkout's documentation)")
        action.setToolTip(action.statusTip())
        action.triggered.connect(lambda checked=False, p=path: _open_document(w, p))
        help_menu.addAction(action)
    help_menu.addSeparator()
    help_menu.addAction(a.about)
    for menu in (file_menu, run_menu, view_menu, help_menu, recent_menu):
        menu.setToolTipsVisible(True)
    return WindowMenus(file_menu, recent_menu, run_menu, view_menu, help_menu)
