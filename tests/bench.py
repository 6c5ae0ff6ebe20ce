"""Benchmarks: `python -m tests.bench [core|gui|all|overhead|fidelity|wall|alternation]` prints one `name: value` line per figure.

core:
  fidelity    the engine's eager and compiled medians for resnet18 on CPU against
              torch.utils.benchmark.Timer.blocked_autorange (same thread count, inference
              mode) measured in the same run, before and after the engine (target: within 3%);
              with the default blocks of 5 and with strict 1:1 alternation
  overhead    the harness's own cost per timed iteration, on a no-op model (target < 5 µs)
  wall        a full `main.py profile resnet18` against a bare script that only compiles and
              times the same iterations, runs alternating (target: ratio ≤ 1.10)
  alternation (not in core) Timer against plain loops alternating eager/compiled in blocks of
              1, 5 and 25, in one process: why the engine alternates in blocks
gui:
  heartbeat   a 10 ms GUI timer's worst stall while the app cold-compiles resnet18
              (target < 50 ms), from tests/gui/heartbeat.py
The machine is shared and noisy: compare the ratios, measured side by side, not absolute times.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ITERS, WARMUP = 50, 5


def say(name: str, value) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{name}: {value}", flush=True)


def bench_fidelity() -> None:
    import torch
    import torchvision
    from torch.utils.benchmark import Timer

    from core.config import CompileConfig, JobSpec, ModelSpec
    from core.runner import JobRunner

    threads = torch.get_num_threads()
    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    def timer_medians() -> tuple[float, float]:
        out = []
        for fn in (model, compiled):
            for _ in range(WARMUP):
                fn(x)
            t = Timer(stmt="fn(x)", globals={"fn": fn, "x": x}, num_threads=threads)
            out.append(t.blocked_autorange(min_run_time=3).median * 1000)
        return out[0], out[1]

    with torch.inference_mode():
        compiled = torch.compile(model)
        compiled(x)
        before = timer_medians()
        summaries = {}
        for block in (25, 5, 1):  # the default blocks, smaller ones, and strict 1:1 alternation
            spec = JobSpec(uuid.uuid4().hex[:8], ModelSpec("resnet18"), CompileConfig(), warmup=WARMUP,
                           iters=ITERS, threads=threads, block_size=block)
            result = JobRunner().run(spec)
            assert result.status == "completed", result.failure_reason
            summaries[block] = result.summary()
        after = timer_medians()
    say("threads", threads)
    for i, phase in enumerate(("eager", "compiled")):
        timer = statistics.mean([before[i], after[i]])
        say(f"fidelity_{phase}_timer_median_ms_before", before[i])
        say(f"fidelity_{phase}_timer_median_ms_after", after[i])
        for block, s in summaries.items():
            engine = s[f"{phase}_median_ms"]
            say(f"fidelity_{phase}_engine_block{block}_median_ms", engine)
            say(f"fidelity_{phase}_ratio_engine_block{block}_over_timer", engine / timer)


def bench_overhead(n: int = 20000) -> None:
    """Time the engine's own timed-call path (timed + record, with flushing) on a no-op."""
    import torch

    from core.config import CompileConfig, JobSpec, ModelSpec
    from core.events import LatencySample
    from core.job import _Job

    sent = []
    job = _Job(JobSpec("bench", ModelSpec("noop"), CompileConfig(backend="eager")), sent.append, lambda: False)
    x = torch.zeros(1)

    def noop(t):
        return t

    def bare() -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            noop(x)
        return time.perf_counter() - t0

    def harness() -> float:
        timed, record = job.timed, job.record
        t0 = time.perf_counter()
        for i in range(n):
            record(LatencySample("eager", i, timed(noop, (x,))))
        job.flush()
        return time.perf_counter() - t0

    bares, harnesses = [], []
    for _ in range(7):  # interleaved, medians
        bares.append(bare())
        harnesses.append(harness())
    overhead_us = (statistics.median(harnesses) - statistics.median(bares)) / n * 1e6
    reported = statistics.median(s.latency_ms for e in sent for s in e.samples) * 1000
    say("harness_overhead_per_iteration_us", overhead_us)
    say("noop_reported_latency_median_us", reported)


def bench_alternation(rounds: int = 2) -> None:
    """In one process, no engine: Timer (back to back) against hand-written loops that
    alternate eager and compiled calls in blocks of 1, 5 and 25 (what --block chooses)."""
    import torch
    import torchvision
    from torch.utils.benchmark import Timer

    threads = torch.get_num_threads()
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    def one(fn) -> float:
        t0 = time.perf_counter()
        fn(x)
        return (time.perf_counter() - t0) * 1000

    with torch.inference_mode():
        compiled = torch.compile(model)
        for _ in range(WARMUP):
            model(x), compiled(x)
        for r in range(rounds):
            ref = {name: Timer("fn(x)", globals={"fn": fn, "x": x}, num_threads=threads)
                   .blocked_autorange(min_run_time=2).median * 1000
                   for name, fn in (("eager", model), ("compiled", compiled))}
            for block in (1, 5, 25):
                times = {"eager": [], "compiled": []}
                for _ in range(ITERS // block):
                    for name, fn in (("eager", model), ("compiled", compiled)):
                        times[name] += [one(fn) for _ in range(block)]
                for name in times:
                    say(f"alternation_round{r}_{name}_block{block}_ratio_over_timer",
                        statistics.median(times[name]) / ref[name])


BARE_SCRIPT = f"""
import time, statistics, torch, torchvision
model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
with torch.inference_mode():
    for _ in range({WARMUP}):
        model(x)
    compiled = torch.compile(model)
    compiled(x)
    for _ in range({WARMUP}):
        compiled(x)
    e, c = [], []
    for _ in range({ITERS}):
        t0 = time.perf_counter(); model(x); e.append(time.perf_counter() - t0)
        t0 = time.perf_counter(); compiled(x); c.append(time.perf_counter() - t0)
print(statistics.median(e) * 1000, statistics.median(c) * 1000)
"""


def bench_wall(rounds: int = 3) -> None:
    out = tempfile.mkdtemp(prefix="bench-wall-")
    profile = [sys.executable, "main.py", "profile", "resnet18", "--iters", str(ITERS), "--warmup", str(WARMUP),
               "--out", out, "--quiet"]
    bare = [sys.executable, "-c", BARE_SCRIPT]
    subprocess.run(bare, cwd=ROOT, capture_output=True, check=True)  # warm the inductor cache for both
    walls: dict[str, list[float]] = {"profile": [], "bare": []}
    for _ in range(rounds):
        for name, cmd in (("bare", bare), ("profile", profile)):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            walls[name].append(time.perf_counter() - t0)
            assert proc.returncode == 0, proc.stderr[-2000:]
    p, b = statistics.median(walls["profile"]), statistics.median(walls["bare"])
    say("wall_profile_resnet18_median_s", p)
    say("wall_bare_script_resnet18_median_s", b)
    say("wall_ratio_profile_over_bare", p / b)


def bench_gui() -> None:
    from tests.gui.heartbeat import measure_heartbeat

    for name, value in measure_heartbeat().items():
        say(name, value)


def main(argv: list[str]) -> int:
    which = argv[0] if argv else "core"
    sys.path.insert(0, ROOT)
    print(f"# python -m tests.bench {which}  ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores)", flush=True)
    benches = {"overhead": bench_overhead, "fidelity": bench_fidelity, "wall": bench_wall, "gui": bench_gui,
               "alternation": bench_alternation}
    groups = {"core": ["overhead", "fidelity", "wall"], "all": ["overhead", "fidelity", "wall", "gui"]}
    names = groups.get(which, [which])
    if not set(names) <= set(benches):
        print(f"unknown benchmark {which!r}; choose from {', '.join(list(groups) + list(benches))}", file=sys.stderr)
        return 2
    for name in names:
        benches[name]()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
