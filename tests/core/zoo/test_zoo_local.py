"""`python main.py zoo ...` with the local executor, as a user runs it: a tiny zoo (model
files and a torchvision model at a small image size, backends eager and aot_eager, a few
iterations), --parallel, --resume after a failed job, and what is refused before any work.
Ray must never be imported by a local sweep: the command runs in a fresh interpreter that
checks sys.modules at the end."""

import csv
import json
import os
import subprocess
import sys

from core import PROJECT_ROOT as ROOT
from core.cli.zoo import main as zoo_main
from core.report.files import load_report, write_report
from core.zoo.files import load_zoo
from tests.core.helpers import BREAKS_MODEL, MLP_MODEL

QUICK = ["--backend", "eager", "--iters", "5", "--warmup", "1", "--op-profile", "0", "--processes", "1"]
NO_RAY = (
    "import sys; from core.cli.zoo import main; code = main(sys.argv[1:]); "
    "assert 'ray' not in sys.modules, 'the local executor imported ray'; sys.exit(code)"
)

FLAKY_MODEL = """\
import os
import torch

FLAG = {flag!r}


def get_model():
    if os.path.exists(FLAG):
        raise RuntimeError("flaky: the flag file is there")
    return torch.nn.Linear(4, 4)


def get_example_inputs():
    return (torch.randn(2, 4),)
"""


def zoo(*args, timeout=400):
    return subprocess.run(
        [sys.executable, "-c", NO_RAY, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )


def rows_of(out):
    with open(os.path.join(out, "zoo.csv"), newline="") as fh:
        return list(csv.DictReader(fh))


def test_a_tiny_zoo_writes_a_report_per_model_and_the_zoo_tables(tmp_path, write_model):
    breaks = write_model(BREAKS_MODEL, "breaks.py")
    out = str(tmp_path / "zoo")
    proc = zoo(breaks, "resnet18", "--image-size", "32", *QUICK, "--backend", "aot_eager", "--out", out)
    assert proc.returncode == 0, proc.stderr
    rows = rows_of(out)
    assert [(r["folder"], r["config"], r["status"]) for r in rows] == [
        ("breaks.py", "eager", "completed"),
        ("breaks.py", "aot_eager", "completed"),
        ("resnet18", "eager", "completed"),
        ("resnet18", "aot_eager", "completed"),
    ]
    assert all(float(r["speedup"]) > 0 and float(r["speedup_ci_low"]) <= float(r["speedup_ci_high"]) for r in rows)
    assert [r["graph_break_sites"] for r in rows] == ["3", "3", "0", "0"]
    assert all(r["accuracy"] == "pass" and r["torch"] and r["node"] for r in rows)
    for folder in ("breaks.py", "resnet18"):  # each an ordinary report the app opens
        results, header = load_report(os.path.join(out, folder))
        assert [r.config.label for r in results] == ["eager", "aot_eager"]
        assert header["options"]["zoo"] == out and os.path.exists(os.path.join(out, folder, "summary.csv"))
    zoo_doc = load_zoo(out)
    assert zoo_doc.finished and list(zoo_doc.models) == [breaks, "resnet18"]
    assert "eager: 2 of 2 models passed; a debugging reference (geometric mean" in proc.stdout  # never a speedup
    assert "3 graph breaks in 1 model" in proc.stdout
    assert "[1/4] " in proc.stderr and "breaks.py · eager: started" in proc.stderr


def test_parallel_jobs_then_resume_runs_only_what_did_not_complete(tmp_path, write_model, capsys):
    flag = tmp_path / "fail-now"
    flag.write_text("")
    mlp = write_model(MLP_MODEL, "mlp.py")
    flaky = write_model(FLAKY_MODEL.format(flag=str(flag)), "flaky.py")
    out = str(tmp_path / "zoo")
    first = zoo(mlp, flaky, *QUICK, "--parallel", "2", "--out", out)
    assert first.returncode == 1, first.stderr
    assert "flaky.py · eager: failed" in first.stderr and "flaky: the flag file is there" in first.stderr
    rows = {r["folder"]: r for r in rows_of(out)}
    assert rows["mlp.py"]["status"] == "completed" and rows["flaky.py"]["status"] == "failed"
    kept_id = load_report(os.path.join(out, "mlp.py"))[0][0].job_id

    assert zoo_main([mlp, flaky, *QUICK, "--out", out]) == 2
    err = capsys.readouterr().err
    assert "already holds a zoo" in err and "--resume" in err
    assert zoo_main([mlp, flaky, *QUICK, "--iters", "6", "--resume", "--out", out]) == 2
    assert "iters differ" in capsys.readouterr().err

    flag.unlink()
    resumed = zoo(mlp, flaky, *QUICK, "--resume", "--out", out)
    assert resumed.returncode == 0, resumed.stderr
    assert "1 jobs completed earlier are kept; 1 to run" in resumed.stderr and "[1/1] " in resumed.stderr
    assert "mlp.py · eager: started" not in resumed.stderr
    assert all(r["status"] == "completed" for r in rows_of(out))
    assert load_report(os.path.join(out, "mlp.py"))[0][0].job_id == kept_id  # kept, not measured again
    assert json.load(open(os.path.join(out, "zoo.json")))["finished"] is True
    # --resume of a complete zoo: nothing to run, no executor made (it raised AttributeError)
    assert zoo_main([mlp, flaky, *QUICK, "--resume", "--out", out]) == 0
    err = capsys.readouterr().err
    assert "2 jobs completed earlier are kept; 0 to run" in err and "zoo written to" in err


def test_what_is_refused_before_any_work(tmp_path, capsys):
    out = str(tmp_path / "zoo")
    for argv, expected in (
        ([], "no models given"),
        (["resnet18", "--parallel", "0"], "--parallel must be at least 1"),
        (["resnet18", "--parallel", "2", "--executor", "ray"], "applies to the local executor"),
        (["resnet18", "--models-file", str(tmp_path / "none.txt")], "cannot read --models-file"),
        (["resnet18", "resnet1", "--backend", "eager"], "resnet1: "),
        (["resnet18", "--mode", "max"], "resnet18: Unknown mode 'max'"),
    ):
        assert zoo_main([*argv, "--out", out]) == 2, argv
        assert expected in capsys.readouterr().err, argv
    assert not os.path.exists(out)  # the folder reserved before the checks is gone again
    # --out before the models and settings (their checks import torch: seconds)
    assert zoo_main(["no_such_model", "--mode", "max", "--out", "/proc"]) == 2
    err = capsys.readouterr().err
    assert "cannot write to /proc" in err and "no_such" not in err
    from tests.core.fakes import fake_result

    report = str(tmp_path / "report")
    write_report([fake_result("eager")], report)
    assert zoo_main(["resnet18", "--backend", "eager", "--out", report]) == 2
    assert "already holds a report" in capsys.readouterr().err


def test_models_file_adds_models_once(tmp_path):
    from core.cli.zoo import build_zoo_parser, read_models

    listing = tmp_path / "models.txt"
    listing.write_text("# my zoo\nresnet18\n\n  timm:resnet50  \nresnet18\n")
    args = build_zoo_parser().parse_args(["mobilenet_v3_small", "--models-file", str(listing), "--out", "x"])
    assert read_models(args) == ["mobilenet_v3_small", "resnet18", "timm:resnet50"]


SLOW_LOAD_MODEL = """\
import time
import torch


def get_model():
    time.sleep(30)
    return torch.nn.Linear(4, 4)


def get_example_inputs():
    return (torch.randn(2, 4),)
"""


def test_ctrl_c_cancels_the_running_and_queued_jobs_and_writes_the_zoo(tmp_path, write_model):
    import signal
    import time

    slow, mlp = write_model(SLOW_LOAD_MODEL, "slow.py"), write_model(MLP_MODEL, "mlp.py")
    out = str(tmp_path / "zoo")
    from tests.core.helpers import default_sigint

    proc = subprocess.Popen(
        [sys.executable, "-c", NO_RAY, slow, mlp, *QUICK, "--out", out],
        cwd=ROOT,
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not os.path.exists(os.path.join(out, "slow.py")) and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(3)  # the first job is running (its model sleeps while loading)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    assert "interrupted: cancelling" in stderr
    assert [(r["folder"], r["status"]) for r in rows_of(out)] == [("slow.py", "cancelled"), ("mlp.py", "cancelled")]
    assert load_report(os.path.join(out, "mlp.py"))[0][0].failure_reason == "cancelled before it started"
