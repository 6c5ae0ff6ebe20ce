"""core/ never imports Qt or gui/: every core module, in every package, imported in a fresh
interpreter; and the same check shown to catch a Qt import planted in a subpackage."""

import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT

QT = ("PySide6", "pyqtgraph", "gui", "shiboken6")
CHECK = (
    "import sys, pkgutil, importlib\n"
    "import {package}\n"
    "names = [m.name for m in pkgutil.walk_packages({package}.__path__, '{package}.')]\n"
    "for name in names:\n"
    "    importlib.import_module(name)\n"
    "bad = sorted(n for n in sys.modules if n.split('.')[0] in {qt!r})\n"
    "print(len(names), bad)\n"
    "sys.exit(1 if bad else 0)\n"
)


def check(root: str, package: str = "core") -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", CHECK.format(package=package, qt=QT)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=180,
    )


def test_every_core_module_imports_without_qt():
    proc = check(ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    count = int(proc.stdout.split()[0])
    expected = sum(name.endswith(".py") for _, _, files in os.walk(os.path.join(ROOT, "core")) for name in files)
    assert count == expected - 1  # every module and subpackage (core itself aside)


def test_a_qt_import_deep_in_a_subpackage_is_caught(tmp_path):
    pkg = tmp_path / "fakecore" / "deep" / "deeper"
    pkg.mkdir(parents=True)
    for folder in (tmp_path / "fakecore", tmp_path / "fakecore" / "deep", pkg):
        (folder / "__init__.py").write_text("")
    (pkg / "view.py").write_text("import PySide6.QtCore\n")
    proc = check(str(tmp_path), "fakecore")
    assert proc.returncode == 1 and "PySide6" in proc.stdout
