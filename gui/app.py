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
import json
import os
import signal
import sys

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


def command_line_problem(args) -> str:
    """What the command line asks that core refuses without torch ('' if nothing): numbers
    outside core's accepted ranges (`core.vocab.limits.check_limits`, as `profile` checks them)
    and --dynamo-config items that are not KEY=VALUE. Backends, modes, dynamo keys, the
    device and the model are checked against torch once it has loaded (`Automation`)."""
    from core.vocab import dynamo_overrides
    from core.vocab.limits import ConfigError, check_limits

    try:
        check_limits(
            warmup=args.warmup,
            iters=None if args.iters == "auto" else args.iters,
            processes=args.processes,
            batch_size=args.batch_size,
            image_size=args.image_size,
        )
        if args.dynamo_config:
            dynamo_overrides.parse(args.dynamo_config, None)
    except ConfigError as exc:
        return str(exc)
    return ""


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


def _process_age_s() -> float:
    """Seconds since this process started (the kernel's start time, not Python's)."""
    from core.run.process_clock import process_age_s

    return process_age_s()


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


def _say(line: str) -> None:
    """A line for the automation reading the app's output; a reader gone (a closed pipe: `| head -1`)
    does not stop what comes after it (--exit-after-show's exit: the app stayed open, seen once)."""
    try:
        print(line, flush=True)
    except OSError:
        pass


def footprint() -> str:
    """This process's resident memory and whether the libraries the window must not need
    (torch, torchvision, timm, transformers: their helper processes and the jobs use them;
    pyqtgraph until the window has shown: gui.window.view_slot) came into it:
    `--print-footprint`, for the smoke test and docs/BENCHMARKS.md."""
    try:
        import psutil

        rss = f"{psutil.Process().memory_info().rss / 2**20:.0f}"
    except Exception:
        rss = "?"
    libraries = ("torch", "torchvision", "timm", "transformers", "pyqtgraph")
    imported = " ".join(f"{m}={m in sys.modules}" for m in libraries)
    return f"footprint: rss_mb={rss} {imported}"


NAMED_KEYS = (
    "model",
    "backend",
    "mode",
    "dynamic",
    "fullgraph",
    "dynamo_config",
    "sweep_shapes",
    "device",
    "iters",
    "warmup",
    "batch_size",
    "image_size",
    "task",
    "optimizer",
    "compile_optimizer",
    "sweep_batch",
    "seq_len",
    "hf_config",
)
CHECKED_KEYS = (
    "backend",
    "mode",
    "dynamic",
    "device",
    "iters",
    "warmup",
    "batch_size",
    "image_size",
    "task",
    "optimizer",
    "sweep_batch",
    "seq_len",
    "hf_config",
)
CHECK_COMMAND = "--check-command-line"


def torch_problem(named: dict, chosen_model: str) -> str:
    """What torch refuses in the command line's model and settings (`named`: NAMED_KEYS of
    the app's arguments), '' if nothing, by the `profile` command's own checks
    (`core.cli.args.build_specs`); the model is `chosen_model` when the command line named
    none. May import torch (the checks answer from the cached offer where they can, not for
    everything): the app runs it in a helper process (`python -m gui.app
    --check-command-line JSON`). No Qt."""
    from core.cli.args import build_parser, build_specs
    from core.vocab.limits import ConfigError

    model = named.get("model") or chosen_model
    spec_args = build_parser().parse_args([model, "--out", os.devnull])  # the profile command's defaults
    for key in CHECKED_KEYS:
        if named.get(key) is not None:
            setattr(spec_args, key, named[key])
    spec_args.fullgraph, spec_args.sweep_shapes = bool(named.get("fullgraph")), bool(named.get("sweep_shapes"))
    spec_args.compile_optimizer = bool(named.get("compile_optimizer"))
    spec_args.dynamo_config = list(named.get("dynamo_config") or [])
    try:
        build_specs(spec_args)
    except ConfigError as exc:
        return str(exc)
    return ""


def check_main(payload: str) -> int:
    """The helper: print `torch_problem` of the JSON {"named": ..., "model": ...} as JSON."""
    value = json.loads(payload)
    print(json.dumps(torch_problem(value["named"], value["model"])), flush=True)
    return 0


class Automation:
    """What the command line asks for beyond opening the window. GUI thread only."""

    exit_code: int | None = None

    def __init__(self, window, args, app):
        self.window, self.args, self.app = window, args, app
        self.checked = False  # the command line was checked against torch (or needed no check)
        self._check_process = None

    def setup(self) -> None:
        w, a = self.window, self.args
        Automation.exit_code = None
        from core.vocab import dynamo_overrides
        from core.vocab.config import expand_configs

        if a.size or a.screenshot:
            width, _, height = (a.size or "1400x900").partition("x")
            w.resize(int(width), int(height))
        if a.model and a.model.lower().endswith(".json") and not a.session:
            # a report.json where the model goes: opened, as a dropped one is (a model it is not;
            # it became the next run's "model file")
            a.session, a.model = a.model, None
        if a.model:
            w.set_model(a.model, trusted=True)  # named on the command line: the user chose it
        panel = w.config_panel
        # Checked as KEY=VALUE before the window opened (`command_line_problem`); the keys and
        # values against torch's settings once it has loaded (`_on_torch_info_loaded`).
        dynamo = dynamo_overrides.parse(a.dynamo_config, None) if a.dynamo_config else ()
        if a.backend or a.mode or a.dynamic or a.fullgraph or dynamo:
            configs = expand_configs(
                a.backend or ["inductor"], a.mode or ["default"], a.dynamic or ["auto"], a.fullgraph, dynamo
            )
            panel.set_config(configs[0])
            panel.queue.clear()
            if len(configs) > 1:
                for config in configs:
                    panel.queue.add(config)
        for value, box in (
            (0 if a.iters == "auto" else a.iters, panel.iters),
            (a.warmup, panel.warmup),
            (a.processes, panel.processes),
            (a.batch_size, w.model_panel.batch),
            (a.image_size, w.model_panel.image),
        ):
            if value is not None:
                box.setValue(value)
        mp = w.model_panel
        if a.task:
            mp.set_task(a.task)
        if a.optimizer:
            mp.optimizer.setCurrentText(a.optimizer)
        if a.compile_optimizer:
            panel.compile_optimizer.setChecked(True)
        if a.sweep_batch:
            mp.sweep_batch_edit.setText(",".join(map(str, a.sweep_batch)))
        if a.seq_len is not None:
            mp.seq_len.setValue(a.seq_len)
        if a.hf_config:
            mp.hf_config.setText(" ".join(a.hf_config))
        if a.sweep_shapes:
            w.model_panel.sweep.setChecked(True)  # refused with the reason at validation when not possible
        if a.device:
            panel.device.addItem(a.device) if panel.device.findText(a.device) < 0 else None
            panel.device.setCurrentText(a.device)
        if a.tab:
            w.show_tab(a.tab)
        if a.session and not w.open_session(a.session):
            print(f"error: {w.last_error}", file=sys.stderr)
            if a.screenshot or a.run:  # automation: no picture of an empty window, no run of another model
                self._refuse()
        if a.print_launch_time or a.exit_after_show or a.print_footprint:
            w.sig_shown.connect(self._on_shown)
        w.sig_torch_info_loaded.connect(self._on_torch_info_loaded)

    def _on_shown(self) -> None:
        if self.args.print_launch_time:
            _say(f"launch_to_window_s: {_process_age_s():.3f}")
        if self.args.print_footprint:
            _say(f"at window {footprint()}")
        # the chart views are built after the show (gui.window.view_slot): --exit-after-show waits
        # for them, so that it checks them too
        self.window.charts_builder.sig_done.connect(self._on_charts_built)

    def _on_charts_built(self) -> None:
        if self.args.print_launch_time:
            _say(f"launch_to_charts_s: {_process_age_s():.3f}")
        if self.args.exit_after_show:
            from PySide6.QtCore import QTimer

            Automation.exit_code = 0
            QTimer.singleShot(0, self.window.close_now)

    def named(self) -> dict:
        """The command line's model and run settings, as `torch_problem` takes them."""
        return {key: getattr(self.args, key) for key in NAMED_KEYS}

    def _check_command_line(self) -> None:
        """Check what the command line named by `profile`'s own checks in a helper process
        (they import torch, which the app's process never does: core.run.torch_info);
        `_on_command_line_checked` continues."""
        from PySide6.QtCore import QProcess

        from core import PROJECT_ROOT

        process = self._check_process = QProcess(self.window)
        process.setWorkingDirectory(PROJECT_ROOT)
        process.finished.connect(self._on_check_finished)
        payload = json.dumps({"named": self.named(), "model": self.window.model_panel.source() or "resnet18"})
        process.start(sys.executable, ["-m", "gui.app", CHECK_COMMAND, payload])

    def _on_check_finished(self, code: int, status) -> None:
        process, self._check_process = self._check_process, None
        out = bytes(process.readAllStandardOutput()).decode("utf-8", "replace").strip().splitlines()
        err = bytes(process.readAllStandardError()).decode("utf-8", "replace").strip().splitlines()
        process.deleteLater()
        try:
            problem = json.loads(out[-1]) if code == 0 and out else None
        except ValueError:
            problem = None
        if not isinstance(problem, str):
            problem = f"the command line could not be checked: {err[-1] if err else f'exit code {code}'}"
        self._on_command_line_checked(problem)

    def _refuse(self) -> None:
        """End the app with exit code 2 (the refusal was printed), as `profile` does."""
        from PySide6.QtCore import QTimer

        Automation.exit_code = 2
        QTimer.singleShot(0, self.window.close_now)

    def _on_torch_info_loaded(self, catalog) -> None:
        if Automation.exit_code is not None or self.checked:
            return  # already refused (a session that cannot be opened), or already on its way
        named = self.named()
        if catalog.backends and any(v not in (None, False, []) for v in named.values()):
            self._check_command_line()
            return
        self._on_command_line_checked("")

    def _on_command_line_checked(self, problem: str) -> None:
        w, a = self.window, self.args
        self.checked = True
        if problem:
            print(f"error: {problem}", file=sys.stderr)
            self._refuse()
            return
        if a.device:  # the catalog replaced the device list; keep the asked-for device
            if w.config_panel.device.findText(a.device) < 0:
                w.config_panel.device.addItem(a.device)
            w.config_panel.device.setCurrentText(a.device)
        if a.run:
            if w.run_profile():
                if a.screenshot:
                    w.sig_run_finished.connect(self._take_screenshot)
                return
            print(f"error: cannot run: {w.last_error}", file=sys.stderr)
            self._refuse()
            return
        if a.screenshot:
            self._take_screenshot()

    def _take_screenshot(self) -> None:
        from PySide6.QtCore import QTimer

        for slot in self.window.views:
            slot.build()  # a picture never shows "Loading…" (gui.window.view_slot)
        if self.args.tab == "graph-breaks" and self.window.graph_breaks_panel.proxy.rowCount():
            self.window.graph_breaks_panel.select_row(0)
        if self.args.tab == "sweep":
            self.window.sweep_panel.show_first_limit_hit()
        QTimer.singleShot(900, self._save_screenshot)  # let the throttled charts redraw

    def _save_screenshot(self) -> None:
        path = os.path.abspath(self.args.screenshot)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        picture = self.window.grab()
        ok = picture.save(path)
        print(
            f"screenshot: {path}" if ok else f"compile-profiler: could not write {path}",
            file=sys.stdout if ok else sys.stderr,
            flush=True,
        )
        asked = self.args.size or "1400x900"
        got = f"{self.window.width()}x{self.window.height()}"
        if ok and got != asked:  # the window's layout has a minimum size: never replaced silently
            minimum = self.window.minimumSizeHint()
            print(
                f"note: the window cannot be {asked}: its layout needs at least "
                f"{minimum.width()}x{minimum.height()}, so the picture is {got}",
                file=sys.stderr,
                flush=True,
            )
        for r in self.window.session.results:
            if r.status == "failed":
                print(f"job {r.config.label} failed: {r.failure_reason}", file=sys.stderr)
        Automation.exit_code = 0 if ok else 1
        self.window.close_now()


if __name__ == "__main__" and sys.argv[1:2] == [CHECK_COMMAND]:  # the command line's check, in a helper process
    sys.exit(check_main(sys.argv[2]))
