"""The benchmarks' scratch folders are removed when their process exits, after an uncaught error
too, and by `remove_scratch` before an `os._exit` (one session's benchmarks had left 280 folders
in /tmp)."""

from __future__ import annotations

import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT


def test_a_scratch_folder_is_gone_when_its_process_exits_also_after_an_error_or_os_exit(tmp_path):
    code = (
        "import os, sys; from tests.scratch import scratch_dir\n"
        "path = scratch_dir('cp-test-scratch-'); open(os.path.join(path, 'f'), 'w').write('x')\n"
        "print(path, os.path.isdir(path), flush=True)\n"
        "if sys.argv[1] == 'error': raise RuntimeError('a bug')\n"
        "if sys.argv[1] == 'os._exit': from tests.scratch import remove_scratch; remove_scratch(); os._exit(0)\n"
    )
    for ending in ("exit", "error", "os._exit"):
        out = subprocess.run(
            [sys.executable, "-c", code, ending],
            cwd=ROOT,
            env=dict(os.environ, TMPDIR=str(tmp_path)),
            capture_output=True,
            text=True,
            timeout=60,
        )
        path, existed = out.stdout.split()
        assert existed == "True" and os.path.dirname(path) == str(tmp_path)
        assert not os.path.exists(path), (ending, out.stderr)
