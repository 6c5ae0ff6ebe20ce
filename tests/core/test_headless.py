"""core/ never imports Qt or gui/: proved in a fresh interpreter."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_core_imports_no_qt():
    code = (
        "import sys, pkgutil, importlib, core\n"
        "for m in pkgutil.iter_modules(core.__path__):\n"
        "    importlib.import_module('core.' + m.name)\n"
        "bad = sorted(n for n in sys.modules if n.split('.')[0] in ('PySide6', 'pyqtgraph', 'gui', 'shiboken6'))\n"
        "print(len(list(pkgutil.iter_modules(core.__path__))), bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    modules = int(proc.stdout.split()[0])
    assert modules >= 10  # every core module was imported, not just the package
