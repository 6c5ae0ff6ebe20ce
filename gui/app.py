"""Entry point of the desktop app: `python main.py [MODEL] [options]`.

The window shows before torch is imported (the catalogs load on a background thread),
so it appears in about a second. `--run` starts profiling as soon as torch is loaded;
`--screenshot PNG` saves a picture of the window once the run (if any) has finished and
exits, which makes the README's screenshots and serves the smoke test.

The command line is refused as `profile` refuses it (message on stderr, exit code 2), never
replaced silently: numbers outside core's ranges and malformed --dynamo-config items before
the window opens; backends, modes, dynamo settings, the device and the model by the
`profile` command's own checks as soon as torch has loaded. Before the QApplication is
created, a missing library of Qt's xcb plugin is named with the command that installs it.

Call `main` on the process's main thread.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys

from gui.automation import CHECK_COMMAND, Automation, check_main, command_line_problem, footprint

NO_DISPLAY_MESSAGE = """\
compile-profiler: no display found (neither DISPLAY nor WAYLAND_DISPLAY is set), so the window cannot open.
  - To profile without a window:    python3 main.py profile MODEL --out DIR
  - To render the window offscreen: QT_QPA_PLATFORM=offscreen python3 main.py MODEL --run --screenshot out.png
  - Over SSH, connect with X forwarding (ssh -X) or run it on a desktop session."""


def build_parser() -> argparse.ArgumentParser:
    """The app's command line: the model and run options defined once in core.cli.profile (the same
    checks as `profile`), plus what only the window does."""
    from core.cli.args import build_parser as build_run_parser

    p = build_run_parser("app")
    p.add_argument("--run", action="store_true", help="start profiling at once")
    p.add_argument("--session", metavar="REPORT_JSON", help="open a saved session (report.json)")
    p.add_argument(
        "--screenshot", metavar="PNG", help="save a picture of the window once the run (if any) has finished, then exit"
    )
    p.add_argument("--tab", choices=tab_names(), help="tab to show")
    p.add_argument(
        "--size", type=_window_size, metavar="WxH", help="window size, e.g. 1400x900 (default for --screenshot)"
    )
    p.add_argument("--print-launch-time", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--print-footprint", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--exit-after-show", action="store_true", help=argparse.SUPPRESS)
    return p


def tab_names() -> tuple[str, ...]:
    """The tabs' --tab names, from the one list of tab views (imports none of them)."""
    from gui.panels import TAB_NAMES

    return TAB_NAMES


def _window_size(text: str) -> str:
    width, sep, height = text.partition("x")
    if not (
        sep and width.isdigit() and height.isdigit() and 100 <= int(width) <= 20000 and 100 <= int(height) <= 20000
    ):
        raise argparse.ArgumentTypeError(f"{text!r} is not a window size WIDTHxHEIGHT in pixels, e.g. 1400x900")
    return text


def xcb_problem() -> str:
    """Why Qt's xcb platform plugin would fail to load here ('' when it would load, or when
    the platform will not be xcb): the missing libraries and the command that installs them."""
    from core.cli import platform_check

    if not platform_check.platform_would_be_xcb():
        return ""
    try:
        import PySide6

        plugin = os.path.join(os.path.dirname(PySide6.__file__), "Qt", "plugins", "platforms", "libqxcb.so")
    except ImportError:
        return ""
    missing = platform_check.missing_xcb_libraries(plugin)
    return platform_check.missing_libraries_message(missing) if missing else ""


def has_display() -> bool:
    if sys.platform != "linux" or os.environ.get("QT_QPA_PLATFORM"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


# The Qt-free modules the window imports, imported before PySide6 is: PySide6 reads the source
# of every module imported after it (its `__feature__` hook looks for "PySide6" in it), ~0.2 ms
# a module; numpy and the engine imported first made the launch's imports 0.15 s shorter
# (0.37-0.40 s against 0.22-0.29 s, measured side by side). tests/gui/window/test_view_slot.py
# checks that the window imports none of them after Qt.
ENGINE_MODULES = (
    "numpy",
    "psutil",
    "core.analysis.compile_stages",
    "core.analysis.figure_agreement",
    "core.analysis.quality",
    "core.analysis.result_json",
    "core.analysis.results",
    "core.analysis.stats",
    "core.analysis.variants",
    "core.capture.break_records",
    "core.capture.live",
    "core.cli.platform_check",
    "core.decide.advice",
    "core.decide.codegen",
    "core.decide.cudagraph_rules",
    "core.decide.localize",
    "core.decide.recommend",
    "core.decide.suggestions",
    "core.decide.tune",
    "core.models.examples",
    "core.report.artifact_views",
    "core.report.bundle",
    "core.report.explain_tables",
    "core.report.files",
    "core.report.model_file_check",
    "core.report.repro_script",
    "core.report.safety",
    "core.report.source_view",
    "core.report.tlparse",
    "core.run.job_process",
    "core.run.progress",
    "core.run.runner",
    "core.run.sampling",
    "core.run.torch_info",
    "core.vocab.artifacts",
    "core.vocab.dynamo_overrides",
    "core.vocab.events",
    "core.vocab.op_records",
    "core.vocab.samples",
    "core.vocab.source_paths",
)


def main(argv: list[str]) -> int:
    from gui.qt_compat import import_modules  # no Qt: the engine comes before PySide6

    import_modules(ENGINE_MODULES)
    # pyqtgraph's RawImageWidget (which the app never uses) imports CUDA's runtime bindings when
    # they are installed, for images already on a GPU: ~55-75 ms of the launch. Only here, never
    # at import of a gui module: a test process that imports torch needs the real module.
    sys.modules.setdefault("cuda.bindings.runtime", None)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:  # --help or a usage error, already printed
        return int(exc.code or 0)
    problem = command_line_problem(args)
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        return 2
    if not has_display():
        print(NO_DISPLAY_MESSAGE, file=sys.stderr)
        return 2
    problem = xcb_problem()
    if problem:
        print(problem, file=sys.stderr)
        return 2

    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from gui import qt_compat

    qt_compat.install()  # PySide6 6.12.0 on Python 3.11 would otherwise abort after a while
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "compile-profiler"])
    app.setOrganizationName("compile-profiler")
    app.setApplicationName("compile-profiler")
    app.setApplicationDisplayName("compile-profiler")
    qt_compat.collect_garbage_on_gui_thread()

    from gui.window.main_window import MainWindow
    from gui.window.settings import fit_to_screen

    # An automated launch (a screenshot, a launch-time or footprint check) starts from the
    # defaults and leaves the user's saved settings as they were: a screenshot with --tab sweep
    # left the next launch on that tab, and the picture showed the user's last form.
    scratch = automation_settings_dir(args)
    settings = None
    if scratch:
        from PySide6.QtCore import QSettings

        settings = QSettings(os.path.join(scratch, "settings.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)  # its charts are built after its first show (gui.window.view_slot)
    fit_to_screen(window)  # a window larger than the screen (1400x900 on 1366x768) hid its bottom
    automation = Automation(window, args, app)  # kept referenced: Qt holds its slots weakly
    automation.setup()
    window.show()

    # Let Ctrl+C in the terminal close the window (and cancel a run) instead of being ignored
    # while Qt's event loop runs: Python handles signals only between bytecodes.
    signal.signal(signal.SIGINT, lambda *a: window.close_now())
    keepalive = QTimer()
    keepalive.start(200)
    keepalive.timeout.connect(lambda: None)
    try:
        code = app.exec()
    finally:
        if scratch:
            import shutil

            shutil.rmtree(scratch, ignore_errors=True)
    del automation
    if args.print_footprint:
        print(footprint(), flush=True)
    return Automation.exit_code if Automation.exit_code is not None else code


def automation_settings_dir(args) -> str:
    """A scratch folder for the settings of an automated launch (--screenshot, --exit-after-show,
    --print-launch-time, --print-footprint), removed at its exit; "" for a launch by a person."""
    if not (args.screenshot or args.exit_after_show or args.print_launch_time or args.print_footprint):
        return ""
    import tempfile

    return tempfile.mkdtemp(prefix="compile-profiler-settings-")


if __name__ == "__main__" and sys.argv[1:2] == [CHECK_COMMAND]:  # the command line's check, in a helper process
    sys.exit(check_main(sys.argv[2]))
