"""The app's command line and form refuse what core refuses, as `profile` does (message on
stderr naming the value and the valid ones, exit code 2), never replacing a value silently;
only accepted settings are remembered; a missing library of Qt's xcb plugin is named with
the command that installs it."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from core import PROJECT_ROOT as ROOT
from core.vocab.config import CompileConfig
from core.vocab.limits import LIMITS
from tests.gui.helpers import GRAPH_BREAK_MODEL, TORCH_INFO_TIMEOUT_MS

MAIN = os.path.join(ROOT, "main.py")


@pytest.fixture
def automation(qtbot, window):
    """Drive `gui.automation.Automation` on the test's window; returns a function(argv) that sets
    it up and delivers the (already loaded) catalog, as the app does once torch's offer is
    in, and waits for the command line's check (a helper process, as in the app)."""
    from PySide6.QtWidgets import QApplication

    from gui.app import build_parser
    from gui.automation import Automation

    made = []

    def run(argv):
        auto = Automation(window, build_parser().parse_args(argv), QApplication.instance())
        made.append(auto)
        auto.setup()
        auto._on_torch_info_loaded(window.torch_info)
        qtbot.waitUntil(lambda: auto.checked, timeout=TORCH_INFO_TIMEOUT_MS)
        return Automation.exit_code

    yield run
    Automation.exit_code = None


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--iters", "0", "--run"], "--iters must be between 1 and 1,000,000, not 0."),
        (["--iters", str(10**9), "--run"], "--iters must be between 1 and 1,000,000, not 1,000,000,000"),
        (["--warmup", "-1"], "--warmup must be between 0 and 100,000, not -1."),
        (["--batch-size", "0"], "--batch-size must be between 1 and 65,536, not 0."),
        (["--image-size", "9999"], "--image-size must be between 16 and 8,192, not 9,999."),
        (["--dynamo-config", "allow_rnn"], "is not KEY=VALUE"),
    ],
)
def test_numbers_and_malformed_overrides_are_refused_before_the_window(argv, message, capsys, monkeypatch):
    from gui import app

    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert app.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def run_app(tmp_path, *args: str) -> subprocess.CompletedProcess:
    """The app offscreen with its settings under tmp_path/config (the user's stay untouched)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    return subprocess.run(
        [sys.executable, MAIN, *args], env=env, capture_output=True, text=True, timeout=180, cwd=str(tmp_path)
    )


def test_unknown_backend_ends_the_app_with_the_valid_ones(tmp_path):
    proc = run_app(tmp_path, GRAPH_BREAK_MODEL, "--backend", "nope", "--run")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "error: Unknown backend 'nope'. Valid backends here: " in proc.stderr and "aot_eager" in proc.stderr
    assert "Traceback" not in proc.stderr
    settings = (tmp_path / "config" / "compile-profiler" / "compile-profiler.conf").read_text()
    assert "nope" not in settings  # a refused value is never remembered


def test_exit_after_show_exits_when_its_reader_has_gone(tmp_path):
    """`main.py --print-launch-time --exit-after-show | head -1`: the reader closes the pipe
    after the first line; the app still ends (it stayed open: the second line's BrokenPipeError
    came before the exit)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=str(tmp_path / "config"))
    proc = subprocess.Popen(
        [sys.executable, MAIN, "--print-launch-time", "--exit-after-show"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=str(tmp_path),
    )
    try:
        assert proc.stdout.readline().startswith("launch_to_window_s: ")
        proc.stdout.close()  # the reader is gone before the next line
        assert proc.wait(timeout=120) == 0
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--mode", "max", "--run"], "Unknown mode 'max'. Valid modes here: default,"),
        (["--dynamo-config", "allow_rn=True", "--run"], "no setting 'allow_rn'. Did you mean: allow_rnn?"),
        (["--dynamo-config", "allow_rnn=maybe", "--run"], "allow_rnn takes True or False, not 'maybe'"),
        (["--backend", "eager", "--mode", "max-autotune", "--run"], "only applies to the inductor backend"),
        (["--sweep-shapes", "--run"], "--sweep-shapes needs a Python model file that defines get_input_variants()"),
    ],
)
def test_settings_torch_refuses_end_the_app(qtbot, window, automation, settings, capsys, argv, message):
    assert automation([GRAPH_BREAK_MODEL, *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err
    assert not window.controller.busy  # nothing ran
    window.close()
    assert "allow_rn=" not in str(settings.value("form/dynamo_config", "")) and settings.value("form/mode") != "max"


def test_accepted_command_line_runs(qtbot, window, automation, capsys):
    started = []
    window.run_profile = lambda: started.append(True) or True
    assert automation([GRAPH_BREAK_MODEL, "--backend", "eager", "--iters", "7", "--run"]) is None
    assert started == [True] and window.config_panel.iters.value() == 7
    assert "error" not in capsys.readouterr().err


def test_a_report_named_where_the_model_goes_is_opened_not_profiled(qtbot, window, automation, tmp_path):
    """`main.py report.json` opens the report, as dropping it on the window does; it became the
    next run's "model file" (and a run of it could only fail)."""
    from core.report.files import write_report
    from tests.gui.helpers import fake_result

    write_report([fake_result("r1")], str(tmp_path / "r"), {})
    report = str(tmp_path / "r" / "report.json")
    before = window.model_panel.source()
    automation([report])
    assert window.session.results and window.session.results[0].job_id == "r1"  # shown
    assert window.model_panel.source() == before  # not the next run's model


def test_rejected_dynamo_config_is_not_remembered(qtbot, window, settings):
    from gui.window.main_window import MainWindow

    panel = window.config_panel
    panel.set_config(CompileConfig(backend="eager"))
    panel.dynamo_config.setText("allow_rnn=True")  # accepted: remembered
    assert settings.value("form/dynamo_config") == "allow_rnn=True"
    panel.dynamo_config.setText("allow_rn=True")  # refused, shown in red: not remembered
    assert panel.error.isVisibleTo(window) and "allow_rn" in panel.error.text()
    window.close()
    assert settings.value("form/dynamo_config") == "allow_rnn=True"
    again = MainWindow(settings)
    qtbot.addWidget(again)
    assert again.config_panel.dynamo_config.text() == "allow_rnn=True"
    again.close()


def test_form_never_swaps_a_value_silently(qtbot, settings):
    from gui.window.main_window import MainWindow

    settings.setValue("form/backend", "nope")
    settings.setValue("form/mode", "max")
    settings.setValue("form/iters", "10000000000")  # not an accepted number: the default, not a clamp
    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.torch_info is not None, timeout=TORCH_INFO_TIMEOUT_MS)
    panel = win.config_panel
    assert panel.backend.currentText() == "nope" and panel.mode.currentText() == "max"
    assert panel.error.isVisibleTo(win) and "Unknown backend 'nope'. Valid backends here:" in panel.error.text()
    assert not win.run_profile() and "nope" in win.last_error
    assert panel.iters.value() == 0 and panel.iters.text() == "auto"  # the default
    # the spin boxes hold exactly core's accepted ranges: nothing typed is clamped into another
    for box, key in (
        (panel.warmup, "warmup"),
        (panel.processes, "processes"),
        (win.model_panel.batch, "batch_size"),
        (win.model_panel.image, "image_size"),
    ):
        assert (box.minimum(), box.maximum()) == (LIMITS[key].low, LIMITS[key].high)
    assert (panel.iters.minimum(), panel.iters.maximum()) == (0, LIMITS["iters"].high)  # 0 reads "auto"
    win.close()


def test_missing_xcb_libraries_are_named_with_the_install_command(capsys, monkeypatch):
    from core.cli import platform_check
    from gui import app

    monkeypatch.delenv("QT_QPA_PLATFORM", raising=False)
    monkeypatch.delenv("XDG_SESSION_TYPE", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")
    monkeypatch.setattr(app.sys, "platform", "linux")
    monkeypatch.setattr(platform_check, "missing_xcb_libraries", lambda plugin: ["libxcb-cursor.so.0"])
    assert app.main(["resnet18"]) == 2
    err = capsys.readouterr().err
    assert "libxcb-cursor.so.0" in err and "sudo apt-get install libxcb-cursor0" in err
    monkeypatch.setattr(platform_check, "missing_xcb_libraries", lambda plugin: [])
    assert app.xcb_problem() == ""


def test_an_automated_launch_leaves_the_users_settings_as_they_were(tmp_path):
    """A --screenshot or --exit-after-show launch starts from the defaults and saves nothing: a
    screenshot with --tab sweep left the next launch on that tab (and the user's config changed)."""
    conf = tmp_path / "config" / "compile-profiler" / "compile-profiler.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text("[form]\niters=123\n")
    proc = run_app(tmp_path, "--tab", "sweep", "--exit-after-show")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert conf.read_text() == "[form]\niters=123\n"
    assert sorted(p.name for p in conf.parent.iterdir()) == ["compile-profiler.conf"]
