"""`main.py`'s commands: listed in the app's --help from the one table (core.cli.args.COMMANDS),
and a mistyped one named with the closest instead of being read as a model."""

from __future__ import annotations

import subprocess
import sys

from core import PROJECT_ROOT
from core.cli.args import COMMANDS, close_command


def main_py(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "main.py", *args], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120
    )


def test_the_apps_help_lists_every_command():
    proc = main_py("--help")
    assert proc.returncode == 0
    listed = proc.stdout.split("commands, headless", 1)[1]
    assert all(f"\n  {name} " in listed for name in COMMANDS)


def test_a_mistyped_command_is_named_with_the_closest_not_read_as_a_model():
    """`main.py profil resnet18 --out x` said only "unrecognized arguments: resnet18 --out x"."""
    proc = main_py("profil", "resnet18", "--out", "x")
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: 'profil' is not a command; did you mean 'profile'? (python3 main.py --help lists them)"
    )
    assert close_command("compre") == "compare" and close_command("bundel") == "bundle"
    assert close_command("resnet18") == "" and close_command("profile") == ""


def test_help_names_only_options_its_command_takes_and_the_process_cap():
    """The new user's finding: the app's --iters help sent them to --precision and --max-time,
    which the app's command line does not take; --processes did not say more may be added."""
    from core.cli.args import build_parser
    from core.vocab.limits import AUTO_PROCESSES_CAP

    app = " ".join(build_parser("app").format_help().split())
    assert "--precision" not in app and "--max-time" not in app
    assert f"up to {AUTO_PROCESSES_CAP} in all" in app
    profile = " ".join(build_parser("profile").format_help().split())
    assert "within --precision" in profile and f"up to {AUTO_PROCESSES_CAP} in all, within --max-time" in profile


def test_ctrl_c_while_a_command_starts_is_a_message_and_130_not_a_traceback(monkeypatch, capsys):
    """Ctrl+C in the first 0.3 s of `main.py profile` (Python still importing psutil) printed a
    27-line KeyboardInterrupt traceback; from 0.4 s the command's own message came."""
    import importlib.util
    import os

    spec = importlib.util.spec_from_file_location("main_entry", os.path.join(PROJECT_ROOT, "main.py"))
    entry_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry_module)

    def interrupted(argv):
        raise KeyboardInterrupt

    monkeypatch.setattr(entry_module, "ensure_environment", lambda: None)
    monkeypatch.setattr(entry_module, "main", interrupted)
    assert entry_module.entry(["profile", "m.py"]) == 130
    err = capsys.readouterr().err
    assert err.strip() == "interrupted (Ctrl+C) before the command had started: nothing was run."
