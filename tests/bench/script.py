"""`python -m tests.bench script`: the profiler's own cost on a script's compiled calls, and
`script-logs`: real scripts against torch's own logs.

`script`: one process under `main.py run --no-baseline` times the same compiled function through
the profiler's wrapper (the input-shape key, torch's metrics polled before and after, the record)
and without it (torch's compiled function itself), side by side in alternating blocks: the
difference is the capture's cost a call. Two workloads: a call of about 1 ms (the goal: under 5%)
and one of about 0.02 ms (the cost in µs shows there).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap

from core import PROJECT_ROOT

SCRIPT = """\
import json, sys, time
import torch
torch.set_num_threads(1)
size, rounds = int(sys.argv[1]), int(sys.argv[2])
a = torch.randn(size, size)
f = torch.compile(lambda x: (x @ x).relu_().sum(), backend="eager")
bare = f.__wrapped__  # under `run`: torch's compiled function without the profiler's wrapper
for _ in range(20):
    f(a)
    bare(a)
per = {"wrapped": [], "bare": []}
for r in range(rounds):
    for name, fn in (("wrapped", f), ("bare", bare)) if r % 2 == 0 else (("bare", bare), ("wrapped", f)):
        t0 = time.perf_counter()
        for _ in range(50):
            fn(a)
        per[name].append((time.perf_counter() - t0) / 50 * 1000)
print("RESULT", json.dumps(per))
"""


def bench_script(args=()) -> None:
    """The profiler's cost a call, side by side in one process under `run`: the same compiled
    function called through the profiler's wrapper and without it (its `__wrapped__`, torch's own
    compiled function), in alternating blocks of 50 calls, the order flipped every round."""
    import json

    import numpy as np

    from tests.bench import CpuWatch, say

    rounds = int(args[args.index("--rounds") + 1]) if "--rounds" in args else 40
    folder = tempfile.mkdtemp(prefix="bench-script-")
    path = os.path.join(folder, "loop.py")
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(SCRIPT))
    for size in (430, 24):
        watch = CpuWatch(descendants=True)
        command = [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "run", path, "--no-baseline", "--quiet"]
        proc = subprocess.run(command + ["--", str(size), str(rounds)], capture_output=True, text=True, timeout=900)
        others = watch.others_cores()
        line = next((x for x in proc.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            say(f"matmul {size}", f"failed: {proc.stderr[-300:]}")
            continue
        per = json.loads(line.split(" ", 1)[1])
        wrapped, bare = np.asarray(per["wrapped"]), np.asarray(per["bare"])
        ratios = wrapped / bare
        say(
            f"matmul {size}x{size}: a call without the wrapper, median of {rounds} blocks (ms)",
            f"{np.median(bare):.4f}",
        )
        say(
            f"matmul {size}x{size}: the wrapper's cost a call",
            f"{(np.median(wrapped) - np.median(bare)) * 1000:.1f} µs, {np.median(ratios) - 1:+.2%} "
            f"(blocks' quartiles {np.percentile(ratios, 25) - 1:+.2%} to {np.percentile(ratios, 75) - 1:+.2%})",
        )
        say("other processes during it (cores)", f"{others:.2f}")


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
