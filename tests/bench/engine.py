"""The engine on the CPU: `overhead` (its own cost per timed call), `alternation` (why it
alternates in blocks), `wall` (a whole `main.py profile` against a bare script) and `freezing`
(the evidence behind the `freezing` suggestion)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

from tests.bench import ITERS, ROOT, WARMUP, CpuWatch, _opt, say
from tests.scratch import scratch_dir


def bench_overhead(args: list[str] = ()) -> None:
    """The engine's own cost per timed call, on a no-op model, through the real code path:
    `core.measure.job.Job.benchmark` (the alternating generator, `timed()`, a LatencySample, `record()`
    with its SampleLog `write()` (one 16-byte write syscall per call) and its batched sends over
    a real pipe to a process that drains it, as the child's `conn.send` does) against a bare
    loop making the same number of calls. A third variant without a sample log isolates the
    write's share. Interleaved rounds (order flipped every round), medians of the per-round
    differences, by wall time and by this process's CPU time (which leaves out the time other
    processes on a shared machine take from it)."""
    from multiprocessing.connection import Connection

    import torch

    from core.measure.job import Job
    from core.models import LoadedModel
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec
    from core.vocab.samples import SampleLog, read_sample_log

    n = int(_opt(args, "--iters", 20000))  # per side: 2n timed calls per measurement
    rounds = int(_opt(args, "--rounds", 7))
    drain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    conn = Connection(os.dup(drain.stdin.fileno()), readable=False)
    spec = JobSpec("bench", ModelSpec("noop"), CompileConfig(backend="eager"), warmup=0, iters=n)
    x = torch.zeros(1)

    def noop(t):
        return t

    loaded = LoadedModel(noop, (x,), "python", "no-op")
    folder = scratch_dir("bench-overhead-")
    reported: list[float] = []

    def clocks() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    def bare() -> tuple[float, float]:
        w0, c0 = clocks()
        for _ in range(2 * n):
            noop(x)
        w1, c1 = clocks()
        return w1 - w0, c1 - c0

    def harness(with_log: bool) -> tuple[float, float]:
        path = os.path.join(folder, "job.samples") if with_log else None
        log = SampleLog(path)
        job = Job(spec, conn.send, lambda: False, log)
        w0, c0 = clocks()
        job.benchmark(loaded, noop)
        w1, c1 = clocks()
        log.close()
        if path:
            samples = read_sample_log(path)
            assert len(samples) == 2 * n, len(samples)
            reported.append(statistics.median(s.latency_ms for s in samples) * 1000)
            os.unlink(path)
        return w1 - w0, c1 - c0

    times: dict[str, list[tuple[float, float]]] = {"bare": [], "no_log": [], "log": []}
    watch = CpuWatch()
    for r in range(rounds):
        order = ["bare", "no_log", "log"] if r % 2 == 0 else ["log", "no_log", "bare"]
        for name in order:
            times[name].append(bare() if name == "bare" else harness(name == "log"))
    others = watch.others_cores()
    conn.close()
    drain.stdin.close()
    drain.wait()
    say(
        "overhead_settings",
        f"{rounds} interleaved rounds x {2 * n} timed calls (no-op model, blocks of 25); "
        f"other processes used {others:.2f} cores meanwhile",
    )
    # Wall time is what a job's timed calls pay; this process's CPU time (user + system, the
    # write syscall included) is the same work without the time other processes took from it.
    for clock, k in (("", 0), ("_cpu", 1)):
        per_call = {name: [t[k] / (2 * n) * 1e6 for t in v] for name, v in times.items()}
        with_log = [h - b for h, b in zip(per_call["log"], per_call["bare"])]  # paired by round
        without = [h - b for h, b in zip(per_call["no_log"], per_call["bare"])]
        share = [h - b for h, b in zip(per_call["log"], per_call["no_log"])]
        say(f"harness_overhead_per_iteration{clock}_us", statistics.median(with_log))
        say(f"harness_overhead_per_iteration{clock}_us_min_max", f"{min(with_log):.3f}-{max(with_log):.3f}")
        say(f"harness_overhead_without_sample_log{clock}_us", statistics.median(without))
        say(f"harness_overhead_without_sample_log{clock}_us_min_max", f"{min(without):.3f}-{max(without):.3f}")
        say(f"sample_log_write_share{clock}_us", statistics.median(share))
        say(f"sample_log_write_share{clock}_us_min_max", f"{min(share):.3f}-{max(share):.3f}")
        say(f"bare_call{clock}_us", statistics.median(per_call["bare"]))
    say("noop_reported_latency_median_us", statistics.median(reported))


def bench_alternation(args: list[str] = ()) -> None:
    """In one process, no engine: Timer (back to back) against hand-written loops that
    alternate eager and compiled calls in blocks of 1, 5 and 25 (what --block chooses)."""
    import torch
    import torchvision
    from torch.utils.benchmark import Timer

    rounds = int(_opt(args, "--rounds", 2))
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
            ref = {
                name: Timer("fn(x)", globals={"fn": fn, "x": x}, num_threads=threads)
                .blocked_autorange(min_run_time=2)
                .median
                * 1000
                for name, fn in (("eager", model), ("compiled", compiled))
            }
            for block in (1, 5, 25):
                times = {"eager": [], "compiled": []}
                for _ in range(ITERS // block):
                    for name, fn in (("eager", model), ("compiled", compiled)):
                        times[name] += [one(fn) for _ in range(block)]
                for name in times:
                    say(
                        f"alternation_round{r}_{name}_block{block}_ratio_over_timer",
                        statistics.median(times[name]) / ref[name],
                    )


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


def bench_wall(args: list[str] = ()) -> None:
    rounds = int(_opt(args, "--rounds", 3))
    out = scratch_dir("bench-wall-")
    profile = [
        sys.executable,
        "main.py",
        "profile",
        "resnet18",
        "--iters",
        str(ITERS),
        "--warmup",
        str(WARMUP),
        "--out",
        out,
        "--overwrite",
        "--quiet",
    ]  # one folder, every round
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


def bench_freezing(args: list[str] = ()) -> None:
    """Eager, plain inductor and inductor with freezing=True on resnet18 (batch 1), each a
    median of 60 single calls, the three interleaved per round in a rotating order."""
    import torch
    import torchvision

    rounds = int(_opt(args, "--rounds", 5))
    threads = int(_opt(args, "--threads", torch.get_num_threads()))
    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)

    def median_ms(fn) -> float:
        for _ in range(WARMUP):
            fn(x)
        times = []
        for _ in range(60):
            t0 = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t0) * 1000)
        return statistics.median(times)

    with torch.inference_mode():
        fns = {
            "eager": model,
            "inductor": torch.compile(model),
            "freezing": torch.compile(model, options={"freezing": True}),
        }
        fns["inductor"](x), fns["freezing"](x)  # compiled here, before any timing
        ratios: dict[str, list[float]] = {"inductor": [], "freezing": []}
        names = list(fns)
        for r in range(rounds):
            order = names[r % 3 :] + names[: r % 3]
            ms = {name: median_ms(fns[name]) for name in order}
            say(f"freezing_round{r}", ", ".join(f"{n} {ms[n]:.2f} ms" for n in names) + f" (threads {threads})")
            for name in ratios:
                ratios[name].append(ms["eager"] / ms[name])
        for name, v in ratios.items():
            say(f"freezing_{name}_speedup_over_eager_median", statistics.median(v))
            say(f"freezing_{name}_speedup_over_eager_min_max", f"{min(v):.3f}-{max(v):.3f}")
