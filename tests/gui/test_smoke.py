"""Launch `main.py` as a user would: the window opens (offscreen) and saves a screenshot;
without a display it says how to run instead of a Qt stack trace."""

from __future__ import annotations

import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT

MAIN = os.path.join(ROOT, "main.py")


def _env(tmp_path, **extra):
    env = dict(os.environ)
    env["XDG_CONFIG_HOME"] = str(tmp_path / "config")  # the user's settings stay untouched
    env.update(extra)
    return env


def _screenshot(tmp_path, name: str, *args: str):
    """`main.py resnet18 --screenshot PNG ARGS` offscreen: (the process, the picture's size)."""
    from PySide6.QtGui import QImage

    png = tmp_path / name
    proc = subprocess.run(
        [sys.executable, MAIN, "resnet18", "--screenshot", str(png), *args],
        env=_env(tmp_path, QT_QPA_PLATFORM="offscreen"),
        capture_output=True,
        text=True,
        timeout=180,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    image = QImage(str(png))
    return proc, f"{image.width()}x{image.height()}"


def test_main_screenshot(tmp_path):
    proc, size = _screenshot(tmp_path, "window.png", "--print-launch-time")
    assert "launch_to_window_s:" in proc.stdout
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert size == "1400x900"
    assert "note: the window cannot be" not in proc.stderr


def test_a_size_below_the_layouts_minimum_is_said_not_replaced_silently(tmp_path):
    proc, got = _screenshot(tmp_path, "small.png", "--size", "400x300")
    assert got != "400x300" and "note: the window cannot be 400x300: its layout needs at least" in proc.stderr
    assert f"so the picture is {got}\n" in proc.stderr, proc.stderr[-500:]


def test_a_run_from_the_window_keeps_torch_out_of_its_process(tmp_path):
    """The window needs names, not libraries (issue 19, item 12): a whole run (a bundled
    example, eager) with torch, torchvision, timm and transformers only in the helper and job
    processes; the app's memory stays small."""
    import re

    example = os.path.join(ROOT, "resources", "models", "conditional_execution.py")
    proc = subprocess.run(
        [sys.executable, MAIN, example, "--backend", "eager", "--iters", "5", "--warmup", "1", "--processes", "1"]
        + ["--run", "--screenshot", str(tmp_path / "run.png"), "--print-footprint"],
        env=_env(tmp_path, QT_QPA_PLATFORM="offscreen", COMPILE_PROFILER_CACHE=str(tmp_path / "cache")),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(tmp_path),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [line for line in proc.stdout.splitlines() if "footprint:" in line]
    assert len(lines) == 2, proc.stdout  # at the window, and at exit after the run
    for line in lines:
        assert "torch=False torchvision=False timm=False transformers=False" in line, line
    rss = int(re.search(r"rss_mb=(\d+)", lines[-1]).group(1))
    assert rss < 600, lines[-1]


def test_no_display_explains_what_to_do(tmp_path):
    env = _env(tmp_path)
    for key in ("QT_QPA_PLATFORM", "DISPLAY", "WAYLAND_DISPLAY"):
        env.pop(key, None)
    proc = subprocess.run([sys.executable, MAIN], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "no display" in proc.stderr and "profile" in proc.stderr and "offscreen" in proc.stderr
    assert "Traceback" not in proc.stderr
