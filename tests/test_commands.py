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
