"""Style is not a review topic: ruff's linter and formatter (configured in pyproject.toml) pass on
the whole tree; a lint error or an unformatted file fails the suite."""

import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    exe = os.path.join(os.path.dirname(sys.executable), "ruff")
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_lint_passes():
    proc = ruff("check", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr


def test_ruff_format_leaves_every_file_as_it_is():
    proc = ruff("format", "--check", ".")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr


def test_the_lint_sees_an_error(tmp_path):
    (tmp_path / "bad.py").write_text("import os\n")
    proc = ruff("check", "--config", os.path.join(ROOT, "pyproject.toml"), str(tmp_path / "bad.py"))
    assert proc.returncode == 1 and "F401" in proc.stdout
