"""The fidelity bench with both members in one process: `python -m tests.bench fidelity`.

The question the fidelity bench answers is whether the engine's way of timing a model reads
what torch.utils.benchmark.Timer reads for the same model. Run in separate fresh processes
(`--pairing processes`, tests.bench.fidelity.bench_fidelity), the two members also measure two different
processes, and on this VM one fresh process runs resnet18 3-41% faster or slower than another
for its whole life (BENCHMARKS.md): that spread is the process's, not either method's, and it
left every verdict "undecided" after 75 minutes of rounds.

Here one round is one fresh process (`python -m tests.bench.paired CHILD ...`) that runs the
engine's own job code (`core.measure.job.Job`: load, eager warm-up, compile, compiled warm-up,
the timed alternating blocks, the accuracy check), with Timer.blocked_autorange run on the very
same eager model and compiled callable just before the job's timed blocks and again just after
them, each side's order flipping between the two. The engine's figure is the median of its timed
calls; the reference is the geometric mean of the two Timer medians (a drift of the machine's
speed during the engine's blocks is bracketed). The round's ratio is engine / reference per side.

Both of the engine's timing methods (`--timing latency|throughput|both`, the default both;
JobSpec.timing): the latency method (each call alone, synchronised: the engine's default) and the
throughput method (blocks of THROUGHPUT_CALLS calls back to back, one synchronisation a block, as
Timer and triton's do_bench time). Each segment times one method through Job.benchmark with the
spec's `timing` set to it (the product's own path), the methods' segments alternating (A B B A ...,
the first flipping by round), each against the Timer readings either side of it; with both, a
line a side compares them (a round's throughput ratio over its latency ratio): on a CPU they should
agree, on a GPU the latency method also pays the launch work that calls back to back overlap.
The parent samples the child's resources with the runner's own ProcessSampler at the runner's
rate, as a real job is watched, and records the cores other processes used meanwhile.

What this pairing leaves out, on purpose: the per-process spread (both members share the
process); what it keeps: the engine's loop, its clocks, its event batching (each event is
pickled, as the job's pipe does), its alternation and warm-up, the Timer's, and a watching
parent.
"""

from __future__ import annotations

import json
import math
import os
import resource
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def child(argv: list[str]) -> None:
    """One round: prints one JSON line (engine medians, the two Timer medians per side, page
    faults a call of each member, the Timer's calls per block)."""
    import pickle
    from dataclasses import replace

    from torch.utils.benchmark import Timer

    from core.analysis.results import JobResult
    from core.measure.job import Job
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec
    from core.vocab.samples import SampleLog

    threads, iters, warmup, min_run, first, segments = (
        int(argv[0]),
        int(argv[1]),
        int(argv[2]),
        float(argv[3]),
        argv[4],
        int(argv[5]),
    )
    device, batch = (argv[6], int(argv[7])) if len(argv) > 7 else ("cpu", 1)
    methods = argv[8].split(",") if len(argv) > 8 else ["latency"]  # the first one times the round's first segment
    order = ["eager", "compiled"] if first == "eager" else ["compiled", "eager"]
    spec = JobSpec(
        "paired",
        ModelSpec("resnet18", batch_size=batch),
        CompileConfig(),
        warmup=warmup,
        iters=iters,
        threads=threads,
        device=device,
    )
    result = JobResult(spec)

    def emit(event) -> None:
        pickle.dumps(event)  # what the job's pipe costs it (core.measure.child sends pickled events)
        result.apply(event)

    def by_timer(fns, xs, sides) -> dict[str, tuple[float, int, float]]:
        out = {}
        for side in sides:
            calls = [0]

            def counted(*xs, fn=fns[side]):  # ~1 µs on a call of over 10 ms: the page faults a call
                calls[0] += 1
                return fn(*xs)

            before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
            m = Timer(stmt="fn(*xs)", globals={"fn": counted, "xs": xs}, num_threads=threads).blocked_autorange(
                min_run_time=min_run
            )
            faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
            out[side] = (m.median * 1000, m.number_per_run, faults / max(1, calls[0]))
        return out

    timers: list[dict[str, tuple[float, int, float]]] = []  # one Timer reading before each segment and after the last
    engine: list[dict] = []  # each segment's method and engine median per side

    class Paired(Job):
        def benchmark(self, loaded, compiled) -> None:
            xs = tuple(loaded.inputs)
            fns = {"eager": loaded.model, "compiled": compiled}
            timers.append(by_timer(fns, xs, order))
            # `segments` segments a method; with two methods they alternate A B B A A B ... so
            # that neither always comes first
            plan = [m for k in range(segments) for m in (methods if k % 2 == 0 else methods[::-1])]
            for j, method in enumerate(plan):
                self.flush()
                seen = {side: len(result.latencies(side)) for side in order}
                # the product's own path for this method: Job.benchmark reads spec.timing
                # ("latency": time_blocks, `iters` calls a side, each synchronised; "throughput":
                # time_throughput, blocks of THROUGHPUT_CALLS calls back to back, its samples
                # the blocks' time a call)
                self.spec = replace(spec, timing=method)
                super().benchmark(loaded, compiled)
                engine.append(
                    {"method": method}
                    | {side: float(statistics.median(result.latencies(side).tolist()[seen[side] :])) for side in order}
                )
                timers.append(by_timer(fns, xs, order if j % 2 else order[::-1]))
            self.spec = spec

    job = Paired(spec, emit, lambda: False, SampleLog(None))
    job.run()
    faults = {}
    for side in order:
        cost = result.call_cost(side)
        faults[side] = cost.per_call("minor_faults") if cost else float("nan")
    print(
        json.dumps(
            {
                "engine": engine,
                "engine_faults": faults,
                "timer": [{s: v[0] for s, v in t.items()} for t in timers],
                "timer_faults": {s: statistics.mean(t[s][2] for t in timers) for s in order},
                "timer_per_block": {s: max(t[s][1] for t in timers) for s in order},
                "accuracy": job.accuracy.status if job.accuracy else "",
            }
        ),
        flush=True,
    )
    os._exit(0)  # as the job's child: skip the teardown of inductor's compile workers


def _round(
    threads: int,
    iters: int,
    warmup: int,
    min_run: float,
    first: str,
    segments: int,
    timeout_s: float,
    device: str = "cpu",
    batch: int = 1,
    methods: tuple[str, ...] = ("latency",),
) -> tuple[dict, float]:
    """Run one round's process, watched by the runner's ProcessSampler at its rate; returns
    what it printed and the cores other processes used meanwhile. `methods`: the engine's timing
    methods (JobSpec.timing), `segments` segments each, the first one first."""
    from core.run.sampling import ProcessSampler
    from tests.bench import CpuWatch

    watch = CpuWatch(descendants=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.bench.paired",
            "child",
            str(threads),
            str(iters),
            str(warmup),
            str(min_run),
            first,
            str(segments),
            device,
            str(batch),
            ",".join(methods),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        sampler = ProcessSampler(proc.pid)
    except Exception:
        sampler = None
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None:
        if time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"a fidelity round ran past {timeout_s:.0f} s")
        if sampler is not None:
            try:
                sampler.sample("benchmark")
            except Exception:
                sampler = None
        time.sleep(0.2)  # JobRunner's default sample interval
    out, err = proc.communicate()
    if proc.returncode != 0:
        raise RuntimeError(f"a fidelity round failed (exit {proc.returncode}):\n{err[-2000:]}")
    return json.loads(out.strip().splitlines()[-1]), watch.others_cores()


METHODS = ("latency", "throughput")


def timing_methods(choice: str) -> tuple[str, ...]:
    """--timing latency|throughput|both: the engine's timing methods a round times."""
    if choice == "both":
        return METHODS
    if choice in METHODS:
        return (choice,)
    raise SystemExit("--timing: latency, throughput or both")


def figure_key(side: str, method: str) -> str:
    """The name a side×method's figures go under: `eager`, `compiled` for the latency method (the
    names this bench has always printed), `eager_throughput`, `compiled_throughput` for the other."""
    return side if method == "latency" else f"{side}_{method}"


def segment_ratios(found: dict, side: str) -> dict[str, list[float]]:
    """Per timing method, each of a round's engine segments against the Timer readings just before
    and just after it (their geometric mean: a drift of the machine's speed is bracketed)."""
    t = [reading[side] for reading in found["timer"]]
    out: dict[str, list[float]] = {}
    for k, segment in enumerate(found["engine"]):
        out.setdefault(segment.get("method", "latency"), []).append(segment[side] / math.sqrt(t[k] * t[k + 1]))
    return out


def methods_reading(device: str, median: float, low: float, high: float, coverage: float) -> str:
    """What the engine's throughput figure over its latency figure says, in words: whether the two
    methods agree, and whether that is what the device leads one to expect (on a CPU a call runs to
    its end before the next starts, so there is nothing for calls back to back to overlap; on a GPU
    the latency method's synchronised call also pays the CPU's launch work, which calls back to back
    overlap with the GPU's). Claims only the figures: the launches themselves are not measured."""
    if coverage < 0.95:
        return "too few rounds for a 95% interval"
    gap = f"{abs(1.0 - median) * 100:.1f}%"
    if low <= 1.0 <= high:
        if device == "cuda":
            return (
                "the two methods agree (the interval holds 1): the launch work that calls back to back overlap "
                "with the GPU's work does not show at this model and batch"
            )
        return (
            "the two methods agree (the interval holds 1), as they should on a CPU: a call runs to its end before "
            "the next starts, so calls back to back have no launch work to overlap"
        )
    if high < 1.0:
        if device == "cuda":
            return (
                f"the throughput method reads {gap} faster (the interval lies below 1), as on a GPU it should: the "
                "latency method's synchronised call also pays the CPU's launch work, which calls back to back overlap "
                "with the GPU's (the launches themselves are not measured here)"
            )
        return (
            f"the throughput method reads {gap} faster (the interval lies below 1), though on a CPU calls back to "
            "back have no launch work to overlap: this bench does not measure why"
        )
    return (
        f"the throughput method reads {gap} slower (the interval lies above 1), which neither a CPU (the methods "
        "agree) nor a GPU (throughput faster) leads one to expect: this bench does not measure why"
    )


def say_methods(side: str, device: str, values: list[float], graded_values: list[float]) -> None:
    """One line for a side: the engine's throughput figure over its latency figure (a round's
    value: its throughput ratio to Timer over its latency ratio to Timer), median over the graded
    rounds (over every round when none is graded) with its 95% interval, and what that says."""
    from tests.bench import median_interval, say

    v, which = (graded_values, "graded") if graded_values else (values, "ungraded: no round is graded,")
    if not v:
        say(f"fidelity_{side}_throughput_over_latency", "no such round")
        return
    median = statistics.median(v)
    low, high, coverage = median_interval(v)
    say(
        f"fidelity_{side}_throughput_over_latency",
        f"{median:.3f} (95% interval {low:.3f}-{high:.3f}, coverage {coverage:.3f}, {which} n={len(v)} rounds; "
        f"the engine's throughput figure over its latency figure, each against the same round's Timer readings): "
        f"{methods_reading(device, median, low, high, coverage)}",
    )


def bench_fidelity_paired(args: list[str] = ()) -> None:  # noqa: C901 - one linear procedure
    """Rounds of one fresh process each (see the module's docstring); per side and timing method
    (`--timing latency|throughput|both`, the default both) the median over rounds of engine / Timer
    with a distribution-free 95% interval, and with both methods a line a side comparing them; the
    verdict rests on the graded rounds (other processes under QUIET_OTHERS_CORES during the round
    and both members' compiled calls in one allocator mode), and rounds stop once every side×method
    is decided."""
    from tests.bench import ALLOCATORS, FIDELITY_MIN_RUN_S, QUIET_OTHERS_CORES, WARMUP, _mode, _opt, say
    from tests.bench.fidelity import _decided, graded, say_subsets

    rounds = int(_opt(args, "--rounds", 40))
    iters = int(_opt(args, "--iters", 50))  # a side, per latency segment
    segments = int(_opt(args, "--segments", 4))  # a method
    min_run = float(_opt(args, "--min-run-time", FIDELITY_MIN_RUN_S))
    min_rounds = min(rounds, int(_opt(args, "--min-rounds", 10)))
    budget_s = float(_opt(args, "--budget-s", 20 * 60))
    threads = int(_opt(args, "--threads", 1))  # why one: tests.bench.fidelity.bench_fidelity
    # --device cuda: Timer synchronizes the GPU itself, the engine after each call (latency) or
    # each block (throughput; core.measure.job_instruments)
    device = str(_opt(args, "--device", "cpu"))
    batch = int(_opt(args, "--batch", 1))
    methods = timing_methods(str(_opt(args, "--timing", "both")))
    allocator = str(_opt(args, "--allocator", "steady"))
    if allocator not in ALLOCATORS:
        raise SystemExit(f"--allocator: one of {', '.join(ALLOCATORS)}")
    if ALLOCATORS[allocator]:
        os.environ["GLIBC_TUNABLES"] = ALLOCATORS[allocator]
    else:
        os.environ.pop("GLIBC_TUNABLES", None)
    from core.measure.timing import MIN_THROUGHPUT_BLOCKS
    from core.vocab.config import THROUGHPUT_CALLS, timing_method_text

    blocks = max(MIN_THROUGHPUT_BLOCKS, -(-iters // THROUGHPUT_CALLS))  # as core.measure.timing.throughput_blocks
    method_text = {
        "latency": f"{iters} calls a side a segment in blocks of 25 ({timing_method_text('latency')})",
        "throughput": f"{blocks} blocks a side a segment ({timing_method_text('throughput')})",
    }
    say("threads", threads)
    say(
        "fidelity_settings",
        f"pairing: one process a round (the engine's Job and Timer on the same model objects, Timer before, between and "
        f"after each of the engine's {segments * len(methods)} segments of timed blocks: {segments} a timing method"
        f"{', the methods alternating' if len(methods) > 1 else ''}); {rounds} rounds (at least {min_rounds}, none started "
        f"after {budget_s:.0f} s); Timer blocked_autorange(min_run_time={min_run:g}) per side; engine "
        f"{'; '.join(f'{m}: {method_text[m]}' for m in methods)}; warmup={WARMUP} threads={threads}; allocator "
        f"{allocator} (GLIBC_TUNABLES={ALLOCATORS[allocator] or 'unset'}); resnet18 batch {batch} on {device}",
    )
    started = time.perf_counter()
    # the first round compiles resnet18 cold when the FX cache is empty; later rounds hit it
    ratios: dict[str, list[float]] = {figure_key(side, m): [] for m in methods for side in ("eager", "compiled")}
    drift: dict[str, list[float]] = {"eager": [], "compiled": []}
    others: list[float] = []
    same_mode: list[bool] = []
    for r in range(rounds):
        if r >= min_rounds and time.perf_counter() - started > budget_s:
            say("fidelity_stopped_early", f"after {r} rounds: the {budget_s:.0f} s budget is spent")
            break
        if r >= min_rounds and _decided(ratios, others, same_mode):
            say("fidelity_stopped_early", f"after {r} rounds: every side×method's graded rounds are decided")
            break
        first = "eager" if r % 2 == 0 else "compiled"
        round_methods = methods if r % 2 == 0 else methods[::-1]  # which method's segment comes first flips by round
        t0 = time.perf_counter()
        found, busy = _round(
            threads,
            iters,
            WARMUP,
            min_run,
            first,
            segments,
            timeout_s=900,
            device=device,
            batch=batch,
            methods=round_methods,
        )
        others.append(busy)
        modes = {_mode(found["engine_faults"]["compiled"]), _mode(found["timer_faults"]["compiled"])}
        same_mode.append(len(modes) == 1)
        cells = []
        for side in ("eager", "compiled"):
            t = [reading[side] for reading in found["timer"]]
            per_segment = segment_ratios(found, side)
            engine_ms = {m: [s[side] for s in found["engine"] if s.get("method", "latency") == m] for m in methods}
            for m in methods:
                ratios[figure_key(side, m)].append(statistics.median(per_segment[m]))
            drift[side].append(max(t) / min(t))
            cells.append(
                f"{side} timer {'/'.join(f'{v:.1f}' for v in t)} (x{found['timer_per_block'][side]}) engine "
                + ", ".join(f"{m} {'/'.join(f'{v:.1f}' for v in engine_ms[m])}" for m in methods)
                + " ms, ratio "
                + ", ".join(
                    f"{m} {ratios[figure_key(side, m)][-1]:.3f} (segments {'/'.join(f'{v:.3f}' for v in per_segment[m])})"
                    for m in methods
                )
            )
        say(
            f"fidelity_round{r:02d}",
            f"timer's first side {first}, engine's first method {round_methods[0]}: {'; '.join(cells)} (Timer readings "
            f"between the engine's segments); compiled page "
            f"faults a call: timer {found['timer_faults']['compiled']:.0f}, engine {found['engine_faults']['compiled']:.0f} "
            f"({'/'.join(sorted(modes))}); accuracy {found['accuracy'] or '-'}; {time.perf_counter() - t0:.1f} s; other "
            f"processes used {busy:.2f} cores{' (quiet)' if busy < QUIET_OTHERS_CORES else ''}",
        )

    for side in ("eager", "compiled"):
        for m in methods:
            say_subsets(figure_key(side, m), ratios[figure_key(side, m)], others, same_mode)
        if drift[side]:
            say(
                f"fidelity_{side}_timer_spread_within_a_round_median",
                f"{statistics.median(drift[side]):.3f} (range {min(drift[side]):.3f}-{max(drift[side]):.3f}; the "
                "slowest Timer reading of a round over its fastest: the machine's drift that the pairing cancels)",
            )
    if len(methods) > 1:
        for side in ("eager", "compiled"):
            per_round = [
                thr / lat
                for thr, lat in zip(ratios[figure_key(side, "throughput")], ratios[figure_key(side, "latency")])
            ]
            say_methods(side, device, per_round, graded(per_round, others, same_mode))
    say(
        "fidelity_graded_rounds",
        f"{sum(o < QUIET_OTHERS_CORES and same for o, same in zip(others, same_mode))} of {len(others)}: other processes under "
        f"{QUIET_OTHERS_CORES} cores during the round and both members' compiled calls in the same allocator mode "
        f"({sum(same_mode)} of {len(same_mode)} rounds were)",
    )
    say("fidelity_total_s", time.perf_counter() - started)


if __name__ == "__main__":
    if sys.argv[1:2] == ["child"]:
        sys.path.insert(0, ROOT)
        child(sys.argv[2:])
    else:
        sys.exit(
            "python -m tests.bench.paired child THREADS ITERS WARMUP MIN_RUN FIRST SEGMENTS [DEVICE BATCH [METHODS]] "
            "(started by tests.bench fidelity)"
        )
