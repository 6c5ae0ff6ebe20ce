"""What the app's command line asks for beyond opening the window (`Automation`): checking the
named model and settings against torch in a helper process (`python -m gui.app
--check-command-line`, `torch_problem`), running them (--run), the screenshot, the launch time and
the footprint lines, and the exit code. Imports only the standard library at load: the launch
(gui.app) imports it before Qt. GUI thread only, except the helper process's check.
"""

from __future__ import annotations

import json
import os
import sys


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


def _process_age_s() -> float:
    """Seconds since this process started (the kernel's start time, not Python's)."""
    from core.run.process_clock import process_age_s

    return process_age_s()


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
    (`core.cli.job_specs.build_specs`); the model is `chosen_model` when the command line named
    none. May import torch (the checks answer from the cached offer where they can, not for
    everything): the app runs it in a helper process (`python -m gui.app
    --check-command-line JSON`). No Qt."""
    from core.cli.args import build_parser
    from core.cli.job_specs import build_specs
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
            if len(configs) > 1 or a.backend or a.mode:  # queued: what was named runs, alone (as `profile`)
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

    def _on_torch_info_loaded(self, torch_info) -> None:
        if Automation.exit_code is not None or self.checked:
            return  # already refused (a session that cannot be opened), or already on its way
        named = self.named()
        if torch_info.backends and any(v not in (None, False, []) for v in named.values()):
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
        if a.device:  # torch's offer replaced the device list; keep the asked-for device
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
        shown = self.window
        script = getattr(self.window, "script_window", None)
        if script is not None and script.isVisible():  # a script's report opened with --session
            shown = script
            width, height = (int(x) for x in (self.args.size or "1400x900").split("x"))
            script.resize(width, height)
        picture = shown.grab()
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
        from core.vocab.records import JobStatus

        for r in self.window.session.results:
            if r.status == JobStatus.FAILED:
                print(f"job {r.config.label} failed: {r.failure_reason}", file=sys.stderr)
        Automation.exit_code = 0 if ok else 1
        self.window.close_now()
