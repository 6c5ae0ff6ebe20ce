"""`python main.py profile ...` exactly as a user types it."""

import csv
import os
import subprocess
import sys

import pytest

from core import PROJECT_ROOT as ROOT
from tests.core.helpers import BREAKS_MODEL, default_sigint
from tests.core.helpers import profile_command as profile


@pytest.fixture
def offer_cache(tmp_path, monkeypatch):
    """A cache folder holding torch's offer as the app keeps it (core.run.torch_info)."""
    from core.cli.job_specs import cached_offer
    from core.run.torch_info import cached_torch_info, load_torch_info, write_torch_info_cache

    folder = tmp_path / "cache"
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(folder))
    write_torch_info_cache(load_torch_info())
    assert cached_torch_info() is not None and cached_offer() is not None  # what the checks use
    return str(folder)


def test_invalid_values_are_refused_before_any_work(tmp_path, offer_cache):
    out = tmp_path / "out"
    proc = profile("resnet18", "--mode", "max", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2
    assert "Unknown mode 'max'" in proc.stderr and "reduce-overhead" in proc.stderr
    assert not out.exists()  # nothing started, nothing written
    proc = profile("resnet18", "--backend", "tensorrt-turbo", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "Valid backends here" in proc.stderr
    proc = profile("resnet18", "--verbose", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "no verbose argument" in proc.stderr
    proc = profile("resnet18", "--dynamo-config", "capture_scalars=True", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "capture_scalar_outputs" in proc.stderr
    proc = profile("resnet1", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "neither a file nor a torchvision model" in proc.stderr
    assert "Close matches: resnet18" in proc.stderr
    proc = profile("resnet18", "--compile-log", "graph_breaks,nonsense", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "'nonsense' is neither a torch log nor a log artifact" in proc.stderr
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    proc = profile("resnet18", "--out", str(blocker / "out"), cache=offer_cache)
    assert proc.returncode == 2 and "as the report folder: Not a directory" in proc.stderr
    # a model file that cannot be parsed: refused before a job starts (the job had written a
    # report of its failure, which then blocked the same --out), and never run
    broken = tmp_path / "broken.py"
    broken.write_text("import os\nos.makedirs(%r)\ndef get_model(:\n    pass\n" % str(tmp_path / "ran"))
    proc = profile(str(broken), "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and f"{broken}:3: syntax error" in proc.stderr, proc.stderr
    assert not out.exists() and not (tmp_path / "ran").exists()
    # one without get_model(): refused up front too, read as text and never run (a job ran,
    # failed and wrote a report of it); a name another way binds (an import) is accepted
    bare = tmp_path / "bare.py"
    bare.write_text("import os\nos.makedirs(%r)\ndef get_example_inputs():\n    return ()\n" % str(tmp_path / "ran"))
    proc = profile(str(bare), "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and f"{bare}: the file defines no get_model() function" in proc.stderr, proc.stderr
    assert not out.exists() and not (tmp_path / "ran").exists()
    picked = tmp_path / "picked.py"
    picked.write_text("def get_example_inputs():\n    return ()\n")
    proc = profile(f"{picked}:make", "--out", str(out), cache=offer_cache)
    assert proc.returncode == 2 and "the file defines no make() function" in proc.stderr, proc.stderr
    from core.models.python_files import check_file

    imported = tmp_path / "imported.py"
    imported.write_text("from os.path import join as get_model\nif True:\n    get_example_inputs = tuple\n")
    check_file(str(imported))  # bound by an import and an assignment: accepted
    starred = tmp_path / "starred.py"
    starred.write_text("from somewhere import *\n")
    check_file(str(starred))  # may bind anything: left to the job


REFUSE = """
import sys
from core.cli.profile import main
code = main([*sys.argv[1:], "--processes", "1"])
print("IMPORTED", "torch" in sys.modules, "torchvision" in sys.modules)
sys.exit(code)
"""


def refuse_in_a_subprocess(cache: str, *args: str) -> subprocess.CompletedProcess:
    """`profile ARGS` in a fresh process with `cache` as the product's cache; its stdout ends with
    whether torch and torchvision came into that process."""
    return subprocess.run(
        [sys.executable, "-c", REFUSE, *args],
        cwd=ROOT,
        env={**os.environ, "COMPILE_PROFILER_CACHE": cache},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_refusal_from_the_cached_offer_imports_neither_torch_nor_torchvision(tmp_path, offer_cache):
    """torch's offer as the app keeps it answers the checks of a mode, a backend, a dynamo
    setting and a torchvision name: each refusal came 6-11 s after the command (torch and
    torchvision imported to check), ~0.5 s with the cache."""
    for args, expected in (
        (["--mode", "max"], "Unknown mode 'max'"),
        (["--backend", "inductr"], "Unknown backend 'inductr'. Did you mean 'inductor'? Valid backends here: "),
        (["--dynamo-config", "capture_scalars=True"], "capture_scalar_outputs"),
    ):
        proc = refuse_in_a_subprocess(offer_cache, "resnet18", *args, "--out", str(tmp_path / "out"))
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
        assert "IMPORTED False False" in proc.stdout, (args, proc.stdout)
        assert "TESTING_ONLY" not in proc.stderr  # torch's own test backends are not offered
    proc = refuse_in_a_subprocess(offer_cache, "resnet81", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "Close matches: resnet18" in proc.stderr, proc.stderr
    assert "IMPORTED False False" in proc.stdout


def test_without_a_cache_torch_answers_and_a_finished_run_fills_the_cache(tmp_path, monkeypatch):
    from core.run.torch_info import cached_torch_info

    cache = str(tmp_path / "empty-cache")
    proc = profile("resnet18", "--mode", "max", "--out", str(tmp_path / "out"), cache=cache)
    assert proc.returncode == 2 and "Unknown mode 'max'" in proc.stderr and "reduce-overhead" in proc.stderr
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", cache)
    assert cached_torch_info() is None  # a refusal keeps nothing
    proc = profile(
        "mobilenet_v3_small",
        *("--image-size", "32", "--backend", "eager", "--iters", "3", "--warmup", "1", "--op-profile", "0"),
        *("--out", str(tmp_path / "run")),
        cache=cache,
    )
    assert proc.returncode == 0, proc.stderr
    offer = cached_torch_info()  # kept once the jobs were done
    assert offer is not None and "resnet18" in offer.models and "max-autotune" in offer.modes
    proc = refuse_in_a_subprocess(cache, "resnet18", "--mode", "max", "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "IMPORTED False False" in proc.stdout, proc.stdout + proc.stderr


def test_the_offers_cache_key_follows_the_backends_other_packages_add(monkeypatch):
    """torch.compile's backend list includes those other packages register (torch-tensorrt's):
    one installed after the cache was written must not be refused from it."""
    from importlib import metadata

    from core.run import torch_info

    before = torch_info.torch_info_cache_key()
    plugin = metadata.EntryPoint("tensorrt", "torch_tensorrt.dynamo:backend", torch_info.BACKEND_ENTRY_POINTS)
    monkeypatch.setattr(metadata, "entry_points", lambda group=None, **kw: [plugin] if group else [])
    assert torch_info.torch_info_cache_key() != before


def test_profile_every_combination_writes_the_report(tmp_path, write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    out = tmp_path / "report"
    proc = profile(
        path, "--backend", "eager", "--backend", "aot_eager", "--iters", "5", "--warmup", "1", "--out", str(out)
    )
    assert proc.returncode == 0, proc.stderr
    with open(out / "summary.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["config"] for r in rows] == ["eager", "aot_eager"]
    assert all(r["status"] == "completed" and r["graph_break_sites"] == "3" for r in rows)
    with open(out / "graph_breaks.csv", newline="") as fh:
        breaks = list(csv.DictReader(fh))
    assert sorted({(b["gb_code"], b["line"]) for b in breaks}) == [("GB0025", "19"), ("GB0124", "17"), ("GB0170", "13")]
    assert "graph break GB0170 at breaks.py:13" in proc.stdout
    # under each break, what torch said about it (its explanation and hints), without its boilerplate
    said = proc.stdout.split("graph break GB0170 at breaks.py:13", 1)[1].splitlines()[1:3]
    assert said[0].startswith("    torch: ") and "report an issue to PyTorch" not in proc.stdout, said
    assert (out / "report.json").exists() and (out / "resources.csv").exists()


def test_failing_job_exits_nonzero_and_still_reports(tmp_path, write_model):
    path = write_model(
        "import torch\ndef get_model():\n    return torch.nn.Linear(4, 4)\n"
        "def get_example_inputs():\n    return (torch.randn(2, 5),)\n",
        "wrong_shape.py",
    )
    out = tmp_path / "report"
    proc = profile(path, "--backend", "eager", "--out", str(out))
    assert proc.returncode == 1
    assert "failed" in proc.stderr and "wrong_shape.py" in proc.stderr and "float32[2×5]" in proc.stderr
    with open(out / "summary.csv", newline="") as fh:
        row = next(csv.DictReader(fh))
    assert row["status"] == "failed" and "forward raised" in row["failure_reason"]


def test_absurd_numbers_are_refused_not_clamped(tmp_path):
    for flag, value, expected in (
        ("--iters", "1000000000", "--iters must be between 1 and 1,000,000"),
        ("--timeout", "0", "--timeout must be between 1 and"),
        ("--warmup", "-1", "--warmup must be between 0 and"),
    ):
        proc = profile("resnet18", flag, value, "--out", str(tmp_path / "out"))
        assert proc.returncode == 2 and expected in proc.stderr, proc.stderr
    assert not (tmp_path / "out").exists()


def test_a_folder_that_cannot_be_written_or_holds_a_run_is_refused(tmp_path, write_model):
    """--out is checked before the settings (their checks import torch: seconds), so a wrong
    folder is named even where a setting is wrong too; a refused setting leaves no folder it made
    and, with --overwrite, the earlier report whole: it is replaced only once the settings pass."""
    proc = profile("no_such_model_anywhere", "--backend", "no_such_backend", "--out", "/proc")
    assert proc.returncode == 2 and "cannot write to /proc" in proc.stderr and "no_such" not in proc.stderr
    path = write_model(MLP, "mlp.py")
    new = tmp_path / "new"
    proc = profile(path, "--backend", "no_such_backend", "--out", str(new))
    assert proc.returncode == 2 and "no_such_backend" in proc.stderr and not new.exists()
    out = tmp_path / "report"
    assert profile(path, "--backend", "eager", "--iters", "3", "--warmup", "1", "--out", str(out)).returncode == 0
    proc = profile(path, "--backend", "eager", "--iters", "3", "--warmup", "1", "--out", str(out))
    assert proc.returncode == 2 and "already holds a report" in proc.stderr and "--overwrite" in proc.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = profile(path, "--backend", "no_such_backend", "--out", str(out), "--overwrite")
    assert proc.returncode == 2 and "no_such_backend" in proc.stderr and "removed" not in proc.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before
    proc = profile(path, "--backend", "eager", "--iters", "3", "--warmup", "1", "--out", str(out), "--overwrite")
    assert proc.returncode == 0, proc.stderr


def test_a_failed_compile_names_the_config_not_a_phase(tmp_path, write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    proc = profile(
        path, "--backend", "eager", "--fullgraph", "--iters", "3", "--warmup", "1", "--out", str(tmp_path / "r")
    )
    assert proc.returncode == 1
    assert "error: config 'eager/fullgraph' (backend eager): compile failed" in proc.stderr


MLP = (
    "import torch\ndef get_model():\n    return torch.nn.Linear(4, 4)\n"
    "def get_example_inputs():\n    return (torch.randn(2, 4),)\n"
)
SLOW = (
    "import time, torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
    "        time.sleep(0.05)\n        return x + 1\n"
    "def get_model():\n    return M()\ndef get_example_inputs():\n    return (torch.randn(2, 4),)\n"
)


def _start(*args):
    return subprocess.Popen(
        [sys.executable, "main.py", "profile", *args, "--processes", "1"],
        cwd=ROOT,
        preexec_fn=default_sigint,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ctrl_c_before_any_job_exits_cleanly(tmp_path):
    import signal
    import time

    proc = _start("resnet18", "--out", str(tmp_path / "r"))
    time.sleep(1.0)  # still importing torch / validating
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    assert "interrupted before any job started" in err


def test_ctrl_c_during_a_job_keeps_what_was_measured(tmp_path, write_model):
    import json
    import signal
    import time

    path = write_model(SLOW, "slow.py")
    out_dir = tmp_path / "r"
    proc = _start(
        path,
        "--backend",
        "eager",
        "--backend",
        "aot_eager",
        "--iters",
        "100000",
        "--warmup",
        "1",
        "--out",
        str(out_dir),
    )
    import select

    deadline = time.time() + 180
    seen = ""
    while time.time() < deadline and "timed iterations" not in seen:  # the benchmark phase began
        if select.select([proc.stderr], [], [], 1.0)[0]:
            seen += proc.stderr.readline()
    assert "timed iterations" in seen, seen
    time.sleep(1.0)  # some timed calls
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130 and "Traceback" not in err, err
    jobs = json.loads((out_dir / "report.json").read_text())["jobs"]
    assert [j["status"] for j in jobs] == ["cancelled", "cancelled"]
    assert jobs[0]["samples"]["count"] > 2  # the timed calls made before Ctrl+C are in the report


def test_the_defaults_time_until_precise_in_three_processes_and_grade_the_timing(tmp_path, write_model):
    """No --iters, no --processes: --iters auto (blocks until the speedup is known within ±2%, at
    most --max-time) in 3 fresh processes; the report says how many calls that took, whether the
    precision was reached, and how far the timing can be trusted."""
    import json

    path = write_model(
        "import torch\ndef get_model():\n    return torch.nn.Sequential(torch.nn.Linear(64, 64), "
        "torch.nn.ReLU())\ndef get_example_inputs():\n    return (torch.randn(8, 64),)\n",
        "mlp.py",
    )
    out = tmp_path / "r"
    proc = profile(path, "--backend", "eager", "--max-time", "6", "--op-profile", "0", "--out", str(out), processes="")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "process 3 of 3" in proc.stderr and "calls a side, speedup" in proc.stderr
    timing = next(line for line in proc.stdout.splitlines() if line.startswith("  timing: "))
    with open(out / "summary.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    # the precision is said either way; an interval past ±100% reads "not known", which only a
    # timing the product itself graded unusable (other processes on the cores) can give
    assert "speedup known within" in timing or (
        row["timing_quality"] == "unusable" and "speedup not known: its 95% interval is wider than" in timing
    ), timing
    ran = int(row["processes"])  # 3, or more when they disagreed beyond ±2% and the time allowed
    assert f"{ran} processes: " in timing
    assert ran == 3 or f"process {ran} (added: the processes disagree)" in proc.stderr
    assert ran >= 3 and row["timing_quality"] in ("quiet", "noisy", "unusable")
    assert row["precision_target_pct"] == "2.0" and row["precision_reached"] in ("true", "false")
    assert len(row["process_speedups"].split()) == ran and int(row["iterations"]) >= 3 * 4 * 25
    job = json.loads((out / "report.json").read_text())["jobs"][0]
    assert job["quality"]["grade"] == row["timing_quality"] and job["spec"]["processes"] == 3
    with open(out / "latency.csv", newline="") as fh:
        assert {r["process"] for r in csv.DictReader(fh)} == {str(p) for p in range(ran)}
