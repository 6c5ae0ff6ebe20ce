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

    timers: list[dict[str, tuple[float, int, float]]] = []  # segments + 1 Timer readings, bracketing
    engine: list[dict[str, float]] = []  # each segment's engine median per side

    class Paired(Job):
        def benchmark(self, loaded, compiled) -> None:
            xs = tuple(loaded.inputs)
            fns = {"eager": loaded.model, "compiled": compiled}
            timers.append(by_timer(fns, xs, order))
            for k in range(segments):
                self.flush()
                seen = {side: len(result.latencies(side)) for side in order}
                super().benchmark(loaded, compiled)  # the engine's own timed blocks, `iters` calls a side
                engine.append(
                    {side: float(statistics.median(result.latencies(side).tolist()[seen[side] :])) for side in order}
                )
                timers.append(by_timer(fns, xs, order if k % 2 else order[::-1]))

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
) -> tuple[dict, float]:
    """Run one round's process, watched by the runner's ProcessSampler at its rate; returns
    what it printed and the cores other processes used meanwhile."""
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


def bench_fidelity_paired(args: list[str] = ()) -> None:  # noqa: C901 - one linear procedure
    """Rounds of one fresh process each (see the module's docstring); per side the median over
    rounds of engine / Timer with a distribution-free 95% interval; the verdict rests on the graded
    rounds (other processes under QUIET_OTHERS_CORES during the round and both members' compiled
    calls in one allocator mode), and rounds stop once both sides are decided."""
    from tests.bench import ALLOCATORS, FIDELITY_MIN_RUN_S, QUIET_OTHERS_CORES, WARMUP, _mode, _opt, say
    from tests.bench.fidelity import _decided, graded, say_subsets

    rounds = int(_opt(args, "--rounds", 40))
    iters = int(_opt(args, "--iters", 50))  # a side, per segment
    segments = int(_opt(args, "--segments", 4))
    min_run = float(_opt(args, "--min-run-time", FIDELITY_MIN_RUN_S))
    min_rounds = min(rounds, int(_opt(args, "--min-rounds", 10)))
    budget_s = float(_opt(args, "--budget-s", 20 * 60))
    threads = int(_opt(args, "--threads", 1))  # why one: tests.bench.fidelity.bench_fidelity
    # --device cuda: Timer synchronizes the GPU itself, the engine after each call (core.measure.job)
    device = str(_opt(args, "--device", "cpu"))
    batch = int(_opt(args, "--batch", 1))
    allocator = str(_opt(args, "--allocator", "steady"))
    if allocator not in ALLOCATORS:
        raise SystemExit(f"--allocator: one of {', '.join(ALLOCATORS)}")
    if ALLOCATORS[allocator]:
        os.environ["GLIBC_TUNABLES"] = ALLOCATORS[allocator]
    else:
        os.environ.pop("GLIBC_TUNABLES", None)
    say("threads", threads)
    say(
        "fidelity_settings",
        f"pairing: one process a round (the engine's Job and Timer on the same model objects, Timer before, between and "
        f"after each of the engine's {segments} segments of timed blocks); {rounds} rounds (at least {min_rounds}, none started after "
        f"{budget_s:.0f} s); Timer blocked_autorange(min_run_time={min_run:g}) per side; engine iters={iters} a side a segment "
        f"warmup={WARMUP} block_size=25 threads={threads}; allocator {allocator} "
        f"(GLIBC_TUNABLES={ALLOCATORS[allocator] or 'unset'}); resnet18 batch {batch} on {device}",
    )
    started = time.perf_counter()
    # the first round compiles resnet18 cold when the FX cache is empty; later rounds hit it
    ratios: dict[str, list[float]] = {"eager": [], "compiled": []}
    drift: dict[str, list[float]] = {"eager": [], "compiled": []}
    others: list[float] = []
    same_mode: list[bool] = []
    for r in range(rounds):
        if r >= min_rounds and time.perf_counter() - started > budget_s:
            say("fidelity_stopped_early", f"after {r} rounds: the {budget_s:.0f} s budget is spent")
            break
        if r >= min_rounds and _decided(ratios, others, same_mode):
            say("fidelity_stopped_early", f"after {r} rounds: both sides' graded rounds are decided")
            break
        first = "eager" if r % 2 == 0 else "compiled"
        t0 = time.perf_counter()
        found, busy = _round(
            threads, iters, WARMUP, min_run, first, segments, timeout_s=900, device=device, batch=batch
        )
        others.append(busy)
        modes = {_mode(found["engine_faults"]["compiled"]), _mode(found["timer_faults"]["compiled"])}
        same_mode.append(len(modes) == 1)
        cells = []
        for side in ("eager", "compiled"):
            t = [reading[side] for reading in found["timer"]]
            e = [segment[side] for segment in found["engine"]]
            # each segment of the engine against the Timer readings just before and just after it
            per_segment = [e[k] / math.sqrt(t[k] * t[k + 1]) for k in range(len(e))]
            ratios[side].append(statistics.median(per_segment))
            drift[side].append(max(t) / min(t))
            cells.append(
                f"{side} timer {'/'.join(f'{v:.1f}' for v in t)} (x{found['timer_per_block'][side]}) engine "
                f"{'/'.join(f'{v:.1f}' for v in e)} ms, ratio {ratios[side][-1]:.3f} "
                f"(segments {'/'.join(f'{v:.3f}' for v in per_segment)})"
            )
        say(
            f"fidelity_round{r:02d}",
            f"timer's first side {first}: {'; '.join(cells)} (Timer readings between the engine's segments); compiled page "
            f"faults a call: timer {found['timer_faults']['compiled']:.0f}, engine {found['engine_faults']['compiled']:.0f} "
            f"({'/'.join(sorted(modes))}); accuracy {found['accuracy'] or '-'}; {time.perf_counter() - t0:.1f} s; other "
            f"processes used {busy:.2f} cores{' (quiet)' if busy < QUIET_OTHERS_CORES else ''}",
        )

    for side in ("eager", "compiled"):
        say_subsets(side, ratios[side], others, same_mode)
        if drift[side]:
            say(
                f"fidelity_{side}_timer_spread_within_a_round_median",
                f"{statistics.median(drift[side]):.3f} (range {min(drift[side]):.3f}-{max(drift[side]):.3f}; the "
                "slowest Timer reading of a round over its fastest: the machine's drift that the pairing cancels)",
            )
    say(
        "fidelity_graded_rounds",
        f"{len(graded(ratios['eager'], others, same_mode))} of {len(others)}: other processes under "
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
            "python -m tests.bench.paired child THREADS ITERS WARMUP MIN_RUN FIRST (started by tests.bench fidelity)"
        )
