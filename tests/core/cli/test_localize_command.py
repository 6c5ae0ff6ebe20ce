"""`main.py localize REPORT`: where a written report's failed config diverges, added to its
report.json (the app's Summary runs this command); a config the report lacks is refused."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.core.helpers import COMPILING_MODEL, MLP_MODEL, ROOT
from tests.core.helpers import profile_command as profile

QUICK = ("--iters", "5", "--op-profile", "0")


def localize(*args):
    return subprocess.run(
        [sys.executable, "main.py", "localize", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )


def test_a_written_report_is_localized_and_the_finding_added_to_its_report_json(write_model, tmp_path):
    path = write_model(COMPILING_MODEL, "compiling.py")
    out = tmp_path / "r"
    proc = profile(path, "--backend", "aot_eager", *QUICK, "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"python3 main.py localize {out}" in proc.stderr  # the failed check says how to find where
    before = json.loads((out / "report.json").read_text())
    assert "localization" not in before
    done = localize(str(out / "report.json"))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--localize [aot_eager] step 1: stage eager" in done.stderr
    assert "where [aot_eager] diverges: outputs diverge in dynamo's graph capture" in done.stdout
    after = json.loads((out / "report.json").read_text())
    (loc,) = after["localization"]
    assert loc["config"] == "aot_eager" and loc["module"] == "block.odd"
    assert after["jobs"] == before["jobs"]  # nothing else of the report changed
    again = localize(str(out), "--config", "aot_eager")  # a newer finding replaces the older one
    assert again.returncode == 0 and len(json.loads((out / "report.json").read_text())["localization"]) == 1
    wrong = localize(str(out), "--config", "nope")
    assert wrong.returncode == 2 and "has no config 'nope'; its configs: aot_eager." in wrong.stderr


def test_a_report_whose_checks_passed_has_nothing_to_localize_and_a_missing_one_is_named(write_model, tmp_path):
    path = write_model(MLP_MODEL, "mlp.py")
    out = tmp_path / "r"
    assert profile(path, "--backend", "eager", *QUICK, "--out", str(out)).returncode == 0
    done = localize(str(out))
    assert done.returncode == 0 and "nothing to localize" in done.stderr
    assert "localization" not in json.loads((out / "report.json").read_text())
    missing = localize(str(tmp_path / "nowhere"))
    assert missing.returncode == 2 and "nowhere" in missing.stderr and "Traceback" not in missing.stderr
