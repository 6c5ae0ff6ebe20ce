"""`python -m tests.bench script`: the profiler's own cost on a script's compiled calls.

The same script runs plainly (`python script.py`) and under `main.py run --no-baseline`, in
alternating rounds; the script times its own calls of a compiled function (perf_counter around
each call, as a user's loop would) and prints their median. Under the profiler each call also
passes the wrapper (the input-shape key, torch's metrics polled before and after, the record),
so the difference of the two medians is the capture's cost a call. Two workloads: a call of
about 1 ms (the goal: under 5%) and one of about 0.02 ms (the cost in µs shows there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np

from core import PROJECT_ROOT

SCRIPT = """\
import json, sys, time
import torch
torch.set_num_threads(1)
size, calls = int(sys.argv[1]), int(sys.argv[2])
a = torch.randn(size, size)
f = torch.compile(lambda x: (x @ x).relu_().sum(), backend="eager")
for _ in range(20):
    f(a)
times = []
for _ in range(calls):
    t0 = time.perf_counter()
    f(a)
    times.append(time.perf_counter() - t0)
times.sort()
print("MEDIAN_MS", json.dumps(times[len(times) // 2] * 1000))
"""


def _median_ms(output: str) -> float:
    for line in output.splitlines():
        if line.startswith("MEDIAN_MS "):
            return float(json.loads(line.split(" ", 1)[1]))
    raise RuntimeError(f"no median in the output:\n{output[-2000:]}")


def bench_script(args=()) -> None:
    from tests.bench import CpuWatch, say

    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 5
    folder = tempfile.mkdtemp(prefix="bench-script-")
    path = os.path.join(folder, "loop.py")
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(SCRIPT))
    for size, calls in ((430, 1000), (24, 4000)):
        plain, profiled, loads = [], [], []
        for _ in range(rounds):
            for side in ("plain", "profiled"):
                if side == "plain":
                    command = [sys.executable, path, str(size), str(calls)]
                else:
                    command = [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "run", path, "--no-baseline"]
                    command += ["--quiet", "--", str(size), str(calls)]
                watch = CpuWatch()
                proc = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=folder)
                loads.append(watch.others_cores())
                (plain if side == "plain" else profiled).append(_median_ms(proc.stdout))
        p, q = np.median(plain), np.median(profiled)
        ratios = np.array(profiled) / np.array(plain)
        say(
            f"matmul {size}x{size}: plain call, median of {rounds} rounds (ms)",
            f"{p:.4f} [{min(plain):.4f}-{max(plain):.4f}]",
        )
        say(
            f"matmul {size}x{size}: under `run`, median of {rounds} rounds (ms)",
            f"{q:.4f} [{min(profiled):.4f}-{max(profiled):.4f}]",
        )
        say(
            f"matmul {size}x{size}: cost a call",
            f"{(q - p) * 1000:.1f} µs, {np.median(ratios) - 1:+.1%} (rounds {min(ratios) - 1:+.1%} to {max(ratios) - 1:+.1%})",
        )
        say("other processes during the rounds (cores, median [max])", f"{np.median(loads):.2f} [{max(loads):.2f}]")


TORCHVISION_TRAINING = '''\
"""A torchvision training loop: a compiled step and a compiled optimizer step."""
import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.resnet18(num_classes=10)
model.train()
opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
loss_fn = torch.nn.CrossEntropyLoss()


@torch.compile(backend="aot_eager")
def train_step(images, labels):
    loss = loss_fn(model(images), labels)
    loss.backward()
    return loss


@torch.compile(backend="eager")
def opt_step():
    opt.step()


for step in range(12):
    images, labels = torch.randn(4, 3, 32, 32), torch.randint(0, 10, (4,))
    loss = train_step(images, labels)
    opt_step()
    opt.zero_grad(set_to_none=True)
print("loss", round(loss.item(), 3))
'''


def bench_script_logs(args=()) -> None:
    """Each real script, run under `main.py run --no-baseline`, against torch's own
    TORCH_LOGS=graph_breaks,recompiles for the same script run plainly: graph-break records by
    place and recompile records, as counts."""
    import collections
    import csv

    from tests.bench import say
    from tests.core.cli.test_run_script import HF_TRAINING, SEED, TWO_FUNCTIONS, torch_logs

    folder = tempfile.mkdtemp(prefix="bench-script-logs-")
    scripts = {
        "inference, two functions and a branch": TWO_FUNCTIONS,
        "the seed article's LSTM and branch": SEED,
        "a tiny BERT's training loop": HF_TRAINING,
        "a torchvision training loop with a compiled optimizer step": TORCHVISION_TRAINING,
    }
    for i, (what, text) in enumerate(scripts.items()):
        path = os.path.join(folder, f"script{i}.py")
        with open(path, "w") as fh:
            fh.write(textwrap.dedent(text))
        out = os.path.join(folder, f"report{i}")
        proc = subprocess.run(
            [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "run", path, "--no-baseline", "--quiet"]
            + ["--out", out],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if proc.returncode != 0:
            say(what, f"run failed: {proc.stderr[-500:]}")
            continue
        breaks, recompiles = torch_logs(path)
        ours = collections.Counter()
        with open(os.path.join(out, "graph_breaks.csv")) as fh:
            for r in csv.DictReader(fh):
                ours[(r["file"], int(r["line"]))] += int(r["logged"])
        with open(os.path.join(out, "recompiles.csv")) as fh:
            ours_rc = sum(1 for _ in csv.DictReader(fh))
        same = "same" if ours == breaks and ours_rc == sum(recompiles.values()) else "DIFFERENT"
        places = ", ".join(f"{os.path.basename(f)}:{n} x{c}" for (f, n), c in sorted(breaks.items())) or "none"
        say(
            what,
            f"{same}: graph-break records torch {sum(breaks.values())} / ours {sum(ours.values())} ({places}); "
            f"recompiles torch {sum(recompiles.values())} / ours {ours_rc}",
        )
