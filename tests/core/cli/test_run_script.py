"""`main.py run SCRIPT`: real scripts, written the way people write them, run under the profiler
in fresh processes; what it finds is held against torch's own TORCH_LOGS for the same script,
and bad input, timeouts, Ctrl+C and a script's own children are each tried."""

from __future__ import annotations

import collections
import csv
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from core import PROJECT_ROOT

TWO_FUNCTIONS = '''\
"""Inference with two compiled functions and a data-dependent branch."""
import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--batches", type=int, default=40)
args = parser.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4)).eval()


@torch.compile(backend="eager")
def preprocess(x):
    x = (x - x.mean()) / (x.std() + 1e-5)
    if x.sum() > 0:  # data-dependent: a graph break
        return x * 2
    return x


predict = torch.compile(model, backend="aot_eager")

with torch.no_grad():
    for i in range(args.batches):
        batch = torch.randn(8 + (i % 2), 32)
        out = predict(preprocess(batch))
print("batches", args.batches, tuple(out.shape))
'''

FORMS = """\
import sys
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 4)

    @torch.compile(backend="eager")
    def helper(self, x):
        return self.lin(x).relu()

    def forward(self, x):
        return self.lin(x)


net = Net()
net.compile(backend="eager")
square = torch.compile(lambda x: x * x, backend="eager")


@torch.compile
def plain(x):
    return x + 1


with open("seen.txt", "w") as fh:
    fh.write(repr([sys.argv, __name__]))
x = torch.randn(2, 4)
for _ in range(6):
    net(x)
    net.helper(x)
    square(x)
print("ok")
"""


def run(*args, cwd=None, timeout=240, env=None):
    return subprocess.run(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "run", *args],
        cwd=cwd or PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def write(tmp_path, text, name="script.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return str(path)


def rows(folder, name):
    with open(os.path.join(folder, name), newline="") as fh:
        return list(csv.DictReader(fh))


GB_RECORD = re.compile(r"\[__graph_breaks\] Graph break.* in user code at (.+):(\d+)$")
RC_RECORD = re.compile(r"\[__recompiles\] Recompiling function (\S+) in (.+):(\d+)$")


def torch_logs(script: str, *args: str) -> tuple[collections.Counter, collections.Counter]:
    """What torch itself logs for the script run plainly: graph-break records by (file, line),
    recompile records by (function, file, line)."""
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles"}
    proc = subprocess.run(
        [sys.executable, script, *args],
        cwd=os.path.dirname(script),
        capture_output=True,
        text=True,
        timeout=240,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    breaks, recompiles = collections.Counter(), collections.Counter()
    for line in proc.stderr.splitlines():
        if m := GB_RECORD.search(line):
            breaks[(m.group(1), int(m.group(2)))] += 1
        elif m := RC_RECORD.search(line):
            recompiles[(m.group(1), m.group(2), int(m.group(3)))] += 1
    return breaks, recompiles


def test_two_compiled_functions_are_timed_against_their_eager_run_and_match_torchs_logs(tmp_path):
    script = write(tmp_path, TWO_FUNCTIONS, "infer.py")
    out = tmp_path / "report"
    proc = run(script, "--out", str(out), "--repeat", "2", "--", "--batches", "30")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.count("batches 30 (9, 4)") == 4  # the script's own output, two pairs of runs
    assert "run: [compiled] torch.compile: preprocess (infer.py:14)" in proc.stderr  # live
    # the compiler at work: each frame compile said as it starts (torch's compile ids, its own frames)
    assert "run: [compiled] compiling preprocess (infer.py:14) [0/0]…" in proc.stderr, proc.stderr[-3000:]
    assert (
        "compiling torch_dynamo_resume_in_preprocess_at_17 (infer.py:17) [1/0], in a call of preprocess (infer.py:14)…"
        in proc.stderr
    )
    assert ", in a call of Sequential (infer.py:22)…" in proc.stderr  # a frame of torch's own, named by the call
    functions = {r["function"]: r for r in rows(out, "functions.csv")}
    assert set(functions) == {"preprocess", "Sequential"}
    pre, seq = functions["preprocess"], functions["Sequential"]
    assert (pre["line"], seq["line"]) == ("14", "22") and seq["kind"] == "module"
    for r in (pre, seq):
        assert r["calls_compiled"] == r["calls_eager"] == "30"
        assert r["input_shapes"] == "2" and int(r["steady_calls_compiled"]) == 28
        assert float(r["speedup_ci_low"]) <= float(r["speedup"]) <= float(r["speedup_ci_high"])
        assert r["verdict"] in ("faster", "slower", "cannot tell")
    assert json.loads(seq["settings"]) == {"backend": "aot_eager"}
    # the graph breaks and recompiles, place by place, as torch logs them for the same script
    breaks, recompiles = torch_logs(script, "--batches", "30")
    ours = collections.Counter()
    for r in rows(out, "graph_breaks.csv"):
        ours[(r["file"], int(r["line"]))] += int(r["logged"])
    assert ours == breaks and breaks
    ours_rc = collections.Counter((r["function"], *r["location"].rsplit(":", 1)) for r in rows(out, "recompiles.csv"))
    assert {(f, p, int(n)): c for (f, p, n), c in ours_rc.items()} == recompiles and recompiles
    calls = rows(out, "calls.csv")
    assert len([c for c in calls if c["run"] == "compiled" and c["function"] == "preprocess"]) == 30
    assert {c["run"] for c in calls} == {"compiled", "eager", "compiled 2", "eager 2"}
    assert "2 run pairs pooled" in proc.stdout
    report = json.loads((out / "report.json").read_text())
    assert report["kind"] == "script" and report["script"]["args"] == ["--batches", "30"]
    assert "2 compiled function(s)" in (out / "summary.txt").read_text()


def test_every_way_of_compiling_is_one_named_entry_point_with_the_scripts_own_argv(tmp_path):
    folder = tmp_path / "my project"
    folder.mkdir()
    script = write(folder, FORMS, "it's a script.py")  # spaces and a quote: no shell is involved
    out = tmp_path / "r"
    proc = run(script, "--out", str(out), "--no-baseline", "--", "--flag", "two words", cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-3000:]
    argv, name = eval((folder / "seen.txt").read_text())  # the script ran in its own folder
    assert argv == [script, "--flag", "two words"] and name == "__main__"
    found = {(r["function"], r["line"], r["kind"]) for r in rows(out, "functions.csv")}
    assert found == {
        ("Net.helper", "10", "function"),
        ("Net", "19", "module (Module.compile)"),
        ("<lambda>", "20", "function"),
        ("plain", "23", "function"),
    }
    calls = {r["function"]: r["calls_compiled"] for r in rows(out, "functions.csv")}
    assert calls == {"Net.helper": "6", "Net": "6", "<lambda>": "6", "plain": "0"}
    assert "no eager baseline" in proc.stdout


def test_overrides_replace_the_scripts_own_settings_for_every_compile(tmp_path):
    script = write(tmp_path, FORMS)
    out = tmp_path / "r"
    proc = run(script, "--out", str(out), "--no-baseline", "--backend", "aot_eager", "--dynamic", "false")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for r in rows(out, "functions.csv"):
        settings = json.loads(r["settings"])
        assert settings["backend"] == "aot_eager" and settings["dynamic"] is False
    assert "overrides for every torch.compile: backend=aot_eager, dynamic=False" in proc.stdout


def test_a_script_that_raises_keeps_what_it_measured_and_exits_non_zero(tmp_path):
    script = write(
        tmp_path,
        """\
        import torch
        f = torch.compile(lambda x: x.sin(), backend="eager")
        for i in range(12):
            f(torch.randn(3))
        raise ValueError("the data ran out")
        """,
    )
    out = tmp_path / "r"
    proc = run(script, "--out", str(out))
    assert proc.returncode == 1
    assert "ValueError: the data ran out" in proc.stderr  # the script's traceback, as Python prints it
    assert "raised an error (exit code 1): ValueError: the data ran out" in proc.stdout
    (row,) = rows(out, "functions.csv")
    assert row["calls_compiled"] == row["calls_eager"] == "12"  # the eager run raised the same way
    assert "ValueError: the data ran out" in json.loads((out / "report.json").read_text())["runs"]["compiled"]["error"]


def test_a_script_that_compiles_nothing_says_so_and_what_to_do(tmp_path):
    script = write(tmp_path, "import torch\nprint(torch.ones(2).sum())\n")
    proc = run(script)
    assert proc.returncode == 1
    assert "the script compiled nothing: no torch.compile call was reached" in proc.stdout
    assert "[eager]" not in proc.stderr  # no baseline for nothing


def test_a_script_that_never_ends_is_stopped_at_the_timeout_with_its_workers(tmp_path):
    pids = tmp_path / "pids.txt"
    script = write(
        tmp_path,
        f"""\
        import os
        import torch
        from torch.utils.data import DataLoader, Dataset


        class Forever(Dataset):
            def __len__(self):
                return 10**9

            def __getitem__(self, i):
                return torch.randn(4)


        def started(_):
            with open({str(pids)!r}, "a") as fh:
                fh.write(f"{{os.getpid()}}\\n")


        step = torch.compile(lambda x: x.cos(), backend="eager")
        for batch in DataLoader(Forever(), batch_size=2, num_workers=2, worker_init_fn=started):
            step(batch)
        """,
    )
    out = tmp_path / "r"
    t0 = time.monotonic()
    proc = run(script, "--out", str(out), "--timeout", "12")
    assert proc.returncode == 1 and time.monotonic() - t0 < 60
    assert "stopped at the timeout (--timeout)" in proc.stdout
    (row,) = rows(out, "functions.csv")
    assert int(row["calls_compiled"]) > 0  # measured until then, kept
    workers = [int(p) for p in pids.read_text().split()]
    assert len(workers) == 2
    for pid in workers:  # the DataLoader's workers ended with the script
        assert not os.path.exists(f"/proc/{pid}") or "Z" in open(f"/proc/{pid}/stat").read().split()[2]


def test_ctrl_c_stops_the_run_keeps_its_calls_and_writes_the_report(tmp_path):
    from tests.core.helpers import default_sigint

    script = write(
        tmp_path,
        """\
        import time
        import torch
        f = torch.compile(lambda x: x + 1, backend="eager")
        while True:
            f(torch.ones(3))
            time.sleep(0.01)
        """,
    )
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "run", script, "--out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (out / "report.json").exists():
        line = proc.stderr.readline()
        if "compiled 1 frame(s)" in line:
            time.sleep(2.0)
            proc.send_signal(signal.SIGINT)
            break
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr[-2000:]
    assert "stopped (Ctrl+C or Cancel)" in stdout
    (row,) = rows(out, "functions.csv")
    assert int(row["calls_compiled"]) > 10 and row["calls_eager"] == ""  # no baseline after a Ctrl+C


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: str(d / "missing.py"), "no such file"),
        (lambda d: str(d), "is a folder"),
        (lambda d: (d / "notes.txt").write_text("x") and str(d / "notes.txt"), "is not a Python script"),
        (lambda d: (d / "bad.py").write_text("def f(:\n") and str(d / "bad.py"), "bad.py:1: a syntax error"),
    ],
)
def test_bad_scripts_are_refused_before_anything_runs(tmp_path, make, message):
    proc = run(make(tmp_path), "--out", str(tmp_path / "r"))
    assert proc.returncode == 2 and message in proc.stderr and "run: [" not in proc.stderr
    assert not (tmp_path / "r").exists()


def test_the_scripts_own_core_package_and_a_process_group(tmp_path):
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "__init__.py").write_text("VALUE = 42\n")
    script = write(
        tmp_path,
        """\
        import core
        import torch
        import torch.distributed as dist
        assert core.VALUE == 42, core
        dist.init_process_group("gloo", world_size=4)
        f = torch.compile(lambda x: x * 3, backend="eager")
        for _ in range(6):
            f(torch.ones(2))
        print("world", dist.get_world_size())
        dist.destroy_process_group()
        """,
    )
    proc = run(script, "--no-baseline")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "world 1" in proc.stdout
    assert "the script started a process group (world size 4): it ran as one rank" in proc.stdout


SEED = '''\
"""The seed article's dynamic-shape and graph-break examples, as a user runs them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def create_model():
    return nn.LSTM(input_size=128, hidden_size=256, num_layers=2)


torch.manual_seed(0)  # the LSTM's weights decide the branch below: the same in every run
model = create_model()
compiled_model = torch.compile(model, backend="eager")


def conditional_execution(input):
    # Dynamic control flow resulting in a graph break
    if input.sum() > 0:
        return F.relu(input)
    else:
        return -F.relu(-input)


compiled_execution = torch.compile(conditional_execution, backend="eager")

with torch.no_grad():
    for length in (5, 9, 5, 13, 9, 5) * 2:  # sentences of varying length
        out, _ = compiled_model(torch.randn(length, 1, 128))
        compiled_execution(out)
print("done")
'''


def test_the_seed_articles_lstm_and_branch_match_torchs_logs_skipped_frame_included(tmp_path):
    script = write(tmp_path, SEED, "seed.py")
    out = tmp_path / "r"
    proc = run(script, "--out", str(out), "--no-baseline")
    assert proc.returncode == 0, proc.stderr[-3000:]
    breaks, recompiles = torch_logs(script)
    found = rows(out, "graph_breaks.csv")
    ours = collections.Counter()
    for r in found:
        ours[(r["file"], int(r["line"]))] += int(r["logged"])
    assert ours == breaks
    lstm = [r for r in found if r["entry"] == "LSTM"]
    assert len(lstm) == 1 and lstm[0]["kind"] == "skipped frame"  # torch ran the LSTM eagerly
    assert len(rows(out, "recompiles.csv")) == sum(recompiles.values()) == 2
    assert "skipped frame: inner (" in proc.stdout and "Attempted to wrap RNN, GRU, or LSTM" in proc.stdout


HF_TRAINING = '''\
"""Fine-tune a tiny BERT classifier built from a config (no download), the model compiled."""
import torch
from transformers import BertConfig, BertForSequenceClassification

torch.manual_seed(0)
config = BertConfig(vocab_size=500, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                    intermediate_size=64, max_position_embeddings=64, num_labels=3)
model = BertForSequenceClassification(config)
model.train()
model = torch.compile(model, backend="aot_eager")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

for step in range(8):
    input_ids = torch.randint(0, 500, (2, 16))
    labels = torch.randint(0, 3, (2,))
    out = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), labels=labels)
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
print("final loss", round(out.loss.item(), 3))
'''


def test_a_hugging_face_training_loop_matches_torchs_recompiles(tmp_path):
    script = write(tmp_path, HF_TRAINING, "train_hf.py")
    out = tmp_path / "r"
    proc = run(script, "--out", str(out), "--no-baseline")
    assert proc.returncode == 0, proc.stderr[-3000:]
    (row,) = rows(out, "functions.csv")
    assert (row["function"], row["kind"], row["calls_compiled"]) == ("BertForSequenceClassification", "module", "8")
    breaks, recompiles = torch_logs(script)
    assert sum(int(r["logged"]) for r in rows(out, "graph_breaks.csv")) == sum(breaks.values())
    ours = collections.Counter((r["function"], r["location"]) for r in rows(out, "recompiles.csv"))
    assert {(f, f"{p}:{n}"): c for (f, p, n), c in recompiles.items()} == ours


def test_a_recompile_storm_is_named_and_kept_bounded(tmp_path):
    script = write(
        tmp_path,
        """\
        import torch
        f = torch.compile(lambda x: x * 2, backend="eager", dynamic=False)
        for n in range(1, 30):
            f(torch.ones(n))
        """,
    )
    proc = run(script, "--no-baseline")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "<lambda> (script.py:2): a recompile storm, 8 recompiles" in proc.stdout
    assert "29 calls" in proc.stdout


TRAINING_LOOP = '''\
"""A training loop as people write it: the model compiled, then forward, loss, backward, step;
the script times its own steps (start to start) and prints their median."""
import json
import statistics
import sys
import time

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8))
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
model = torch.compile(model, backend="aot_eager")
starts = []
for step in range(40):
    x, y = torch.randn(16, 64), torch.randint(0, 8, (16,))
    starts.append(time.perf_counter())
    loss = torch.nn.functional.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    opt.zero_grad()
    time.sleep(0.004)  # loading the next batch
steps = [(b - a) * 1000 for a, b in zip(starts[1:], starts[2:])]  # the first step compiles
print("STEPS", json.dumps(statistics.median(steps)), file=sys.stderr)
'''


def test_a_training_loops_iteration_is_timed_as_the_script_times_its_own_steps(tmp_path):
    """The compiled forward is one part of a step: the backward, the optimizer step and the
    batch's loading come between calls. The iteration (one call's start to the next) is held
    against the script's own step times, taken at the same points, on each side."""
    script = write(tmp_path, TRAINING_LOOP, "train.py")
    out = tmp_path / "r"
    proc = run(script, "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    own = [float(line.split()[1]) for line in proc.stderr.splitlines() if line.startswith("STEPS ")]
    assert len(own) == 2  # the compiled run's, then the eager run's
    (row,) = rows(out, "functions.csv")
    compiled, eager = float(row["iteration_compiled_ms"]), float(row["iteration_eager_ms"])
    # the same intervals read by two clocks a few microseconds apart: within 3% (and the 4 ms sleep)
    assert abs(compiled - own[0]) <= 0.03 * own[0] and abs(eager - own[1]) <= 0.03 * own[1], (compiled, eager, own)
    assert compiled > 4.0 and compiled > float(row["compiled_median_ms"]) and eager > float(row["eager_median_ms"])
    low, high = float(row["iteration_speedup_ci_low"]), float(row["iteration_speedup_ci_high"])
    assert low <= float(row["iteration_speedup"]) <= high and row["iteration_verdict"] in (
        "faster",
        "slower",
        "cannot tell",
    )
    assert "  per iteration (from a call's start to the next call's" in proc.stdout
