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
    refused = localize(str(out / "report.json"))  # its model is a Python file: run only when trusted
    assert refused.returncode == 2 and path in refused.stderr and "--trust-report" in refused.stderr
    done = localize(str(out / "report.json"), "--trust-report")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--localize [aot_eager] step 1: stage eager" in done.stderr
    assert "where [aot_eager] diverges: outputs diverge in dynamo's graph capture" in done.stdout
    after = json.loads((out / "report.json").read_text())
    (loc,) = after["localization"]
    assert loc["config"] == "aot_eager" and loc["module"] == "block.odd"
    assert after["jobs"] == before["jobs"]  # nothing else of the report changed
    again = localize(str(out), "--config", "aot_eager", "--trust-report")  # a newer finding replaces the older one
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


# ---------------------------------------------------------------- a crafted report


def _crafted(tmp_path, model="resnet18", tail=""):
    """A report whose config failed the accuracy check and whose inductor option cpp.cxx is a
    shell command that would leave a marker file (`tail` after it)."""
    from core.report.files import write_report
    from core.vocab.config import CompileConfig
    from tests.core.fakes import fake_result

    marker = tmp_path / "pwned"
    config = CompileConfig("inductor", inductor_options=(("cpp.cxx", f"touch {marker}; g++{tail}"),))
    write_report([fake_result(config, accuracy="fail", model=model)], str(tmp_path / "r"), {})
    return tmp_path / "r", marker


def test_a_report_s_compiler_command_is_refused_and_nothing_runs(tmp_path):
    out, marker = _crafted(tmp_path)
    before = (out / "report.json").read_text()
    done = localize(str(out))
    assert done.returncode == 2, done.stderr[-3000:]
    assert "error: nothing was run" in done.stderr and f"cpp.cxx = 'touch {marker}; g++'" in done.stderr
    assert "--trust-report runs them as written, --without-risky-settings leaves them out" in done.stderr
    assert "step 1" not in done.stderr and not marker.exists()
    assert (out / "report.json").read_text() == before


def test_a_report_s_python_model_file_runs_only_with_trust_report(write_model, tmp_path):
    path = write_model(MLP_MODEL, "mlp.py")
    out, _ = _crafted(tmp_path, model=path)
    done = localize(str(out), "--without-risky-settings")
    assert done.returncode == 2 and path in done.stderr and "--trust-report runs it" in done.stderr
    assert "step 1" not in done.stderr


def test_without_risky_settings_no_job_gets_them_and_the_finding_says_so(tmp_path, capsys):
    from core.analysis.results import JobResult
    from core.cli.localize import localize_all
    from core.report.files import load_report
    from core.vocab import events as ev
    from core.vocab import records as rec

    out, _ = _crafted(tmp_path, tail="\x1b[2J")  # a terminal escape in the label: printed as text
    (result,), _ = load_report(str(out))
    ran = []

    class Runner:
        def run(self, spec):
            ran.append(spec)
            done = JobResult(spec)
            done.apply(ev.JobStarted(spec.job_id, pid=1, environment={}))
            done.apply(ev.AccuracyChecked(spec.job_id, accuracy=rec.AccuracyResult("pass")))
            done.apply(ev.JobCompleted(spec.job_id))
            return done

    (loc,) = localize_all([result], Runner(), without_risky=True)
    assert [s.config.backend for s in ran] == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
    assert all("cpp.cxx" not in dict(s.config.inductor_options) for s in ran)
    assert loc.config == result.config.label and "run without the report's settings cpp.cxx" in loc.sentence()
    err = capsys.readouterr().err
    assert "runs without the report's settings cpp.cxx" in err
    assert "\x1b" not in err and "g++\\x1b[2J] step 1: stage eager" in err
