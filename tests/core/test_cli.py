"""`python main.py profile ...` exactly as a user types it."""
import csv
import os
import subprocess
import sys

from tests.core.conftest import BREAKS_MODEL

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def profile(*args, timeout=240):
    return subprocess.run([sys.executable, "main.py", "profile", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout)


def test_invalid_values_are_refused_before_any_work(tmp_path):
    out = tmp_path / "out"
    proc = profile("resnet18", "--mode", "max", "--out", str(out))
    assert proc.returncode == 2
    assert "Unknown mode 'max'" in proc.stderr and "reduce-overhead" in proc.stderr
    assert not out.exists()  # nothing started, nothing written
    proc = profile("resnet18", "--backend", "tensorrt-turbo", "--out", str(out))
    assert proc.returncode == 2 and "Valid backends here" in proc.stderr
    proc = profile("resnet18", "--verbose", "--out", str(out))
    assert proc.returncode == 2 and "no verbose argument" in proc.stderr
    proc = profile("resnet18", "--dynamo-config", "capture_scalars=True", "--out", str(out))
    assert proc.returncode == 2 and "capture_scalar_outputs" in proc.stderr
    proc = profile("resnet1", "--out", str(out))
    assert proc.returncode == 2 and "neither a file nor a torchvision model" in proc.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = profile("resnet18", "--out", str(blocker / "out"))
    assert proc.returncode == 2 and "cannot create the output folder" in proc.stderr


def test_profile_every_combination_writes_the_report(tmp_path, write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    out = tmp_path / "report"
    proc = profile(path, "--backend", "eager", "--backend", "aot_eager", "--iters", "5", "--warmup", "1",
                   "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    with open(out / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["config"] for r in rows] == ["eager", "aot_eager"]
    assert all(r["status"] == "completed" and r["graph_break_count"] == "3" for r in rows)
    with open(out / "graph_breaks.csv", newline="") as fh:
        breaks = list(csv.DictReader(fh))
    assert sorted({(b["gb_code"], b["line"]) for b in breaks}) == [("GB0025", "19"), ("GB0124", "17"),
                                                                  ("GB0170", "13")]
    assert "graph break GB0170 at breaks.py:13" in proc.stdout
    assert (out / "report.json").exists() and (out / "resources.csv").exists()


def test_failing_job_exits_nonzero_and_still_reports(tmp_path, write_model):
    path = write_model("import torch\ndef get_model():\n    return torch.nn.Linear(4, 4)\n"
                       "def get_example_inputs():\n    return (torch.randn(2, 5),)\n", "wrong_shape.py")
    out = tmp_path / "report"
    proc = profile(path, "--backend", "eager", "--out", str(out))
    assert proc.returncode == 1
    assert "failed" in proc.stderr and "wrong_shape.py" in proc.stderr and "float32[2×5]" in proc.stderr
    with open(out / "summary.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert row["status"] == "failed" and "forward raised" in row["failure_reason"]
