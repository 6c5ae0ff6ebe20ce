"""`python -m tests.bench`'s header: the machine's speed beside every figure."""

from __future__ import annotations

import subprocess
import sys

from core import PROJECT_ROOT


def test_every_benchmark_prints_the_machines_speed_first():
    """Figures of two days compare only with the machine's speed beside them (the same start-up
    code: 0.77 s one day, 1.4 s another): the header's pure-Python loop, timed before the bench."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.bench", "no-such-bench"],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "unknown benchmark 'no-such-bench'" in proc.stderr
    header = proc.stdout.splitlines()
    assert header[0].startswith("# python -m tests.bench no-such-bench")
    seconds = float(header[1].removeprefix("# machine: a pure-Python loop of 2,000,000 additions, ").removesuffix(" s"))
    assert 0 < seconds < 60


def test_bench_help_prints_the_list_of_benchmarks():
    """`bench --help` printed the machine's header and "unknown benchmark '--help'" (exit 2)."""
    proc = subprocess.run(
        [sys.executable, "-m", "tests.bench", "--help"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and "NAME is a group" in proc.stdout and "launch" in proc.stdout
    assert "# machine" not in proc.stdout
