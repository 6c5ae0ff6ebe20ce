"""`profile` with the decision: accuracy on the CLI, --fail-on accuracy, the recommendation
and its files, --calls."""

import csv
import json
import subprocess
import sys

from core import PROJECT_ROOT as ROOT
from tests.core.helpers import BREAKS_MODEL, SCALED_WHEN_COMPILED


def profile(*args, timeout=240):
    return subprocess.run(
        [
            sys.executable,
            "main.py",
            "profile",
            *args,
            "--iters",
            "5",
            "--warmup",
            "1",
            "--op-profile",
            "0",
            "--processes",
            "1",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_fail_on_accuracy_exits_nonzero_naming_the_config(write_model, tmp_path):
    path = write_model(SCALED_WHEN_COMPILED, "scaled.py")
    proc = profile(path, "--backend", "eager", "--fail-on", "accuracy", "--out", str(tmp_path / "a"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "error: config 'eager' fails the accuracy check: ['logits']" in proc.stderr
    assert "  accuracy: fail (max abs error" in proc.stdout
    with open(tmp_path / "a" / "summary.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert row["accuracy"] == "fail" and float(row["max_rel_error"]) > 0.04 and row["accuracy_reason"]
    proc = profile(path, "--backend", "eager", "--out", str(tmp_path / "b"))  # without --fail-on: a finding only
    assert proc.returncode == 0, proc.stderr


def test_recommendation_and_suggestions_in_report_json_text_and_stdout(write_model, tmp_path):
    path = write_model(BREAKS_MODEL, "breaks.py")
    out = tmp_path / "r"
    proc = profile(path, "--backend", "eager", "--calls", "250", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "report.json").read_text())
    rec = doc["recommendation"]
    # backend eager is a reference only: nothing that could be chosen was measured
    assert rec["calls"] == 250 and rec["choice"] == "" and rec["confidence"] == "cannot tell"
    assert doc["options"]["calls"] == 250
    assert any(
        s["rule"] == "dynamo_config" and s["changes"][0]["dynamo_config"] == {"capture_scalar_outputs": True}
        for s in doc["suggestions"]
    )
    text = (out / "recommendation.txt").read_text()
    assert rec["sentence"] in text and "capture_scalar_outputs" in text
    assert "Recommendation for 250 calls" in proc.stdout and "Suggestions from the measurements:" in proc.stdout
    assert doc["jobs"][0]["accuracy"]["status"] == "pass"


def test_calls_outside_their_range_are_refused(tmp_path):
    """Below one, and past a trillion (10**23 was taken and printed "eager takes
    827888773831849.2 h in all"); the value in the message is the one typed, to the digit."""
    proc = profile("resnet18", "--calls", "0", "--out", str(tmp_path / "x"))
    assert proc.returncode == 2 and "--calls must be between 1 and 1,000,000,000,000, not 0." in proc.stderr
    proc = profile("resnet18", "--calls", str(10**23), "--out", str(tmp_path / "y"))
    assert proc.returncode == 2 and "not 100,000,000,000,000,000,000,000 (past a trillion calls" in proc.stderr


def test_the_printed_decision_says_which_suggestions_an_unusable_timing_held_back(capsys):
    """Issue 44: no suggestion printed on a busy machine read as nothing to try."""
    from core.cli.output import print_decision
    from tests.core.fakes import fake_result

    print_decision([fake_result("inductor", others_cores=1.6)], 10_000)
    assert "Held back: the suggestions that rest on the timing" in capsys.readouterr().out
    print_decision([fake_result("inductor")], 10_000)
    assert "Held back" not in capsys.readouterr().out
