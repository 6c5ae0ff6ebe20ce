"""Benchmarks: `python -m tests.bench NAME [options]` prints one `name: value` line per figure.

NAME is a group (core = overhead, fidelity, wall; all = core + gui) or one benchmark:

  overhead    the engine's own cost per timed call on a no-op model, through the real code
              path (`core.measure.job.Job.benchmark`: alternating blocks, `timed()`, `record()` with its
              SampleLog write() per call and batched sends over a pipe), minus a bare loop of the
              same calls; also without the sample log, to show the write's share
              (target < 5 µs; options --iters N per side, --rounds R)
  fidelity    resnet18 eager and inductor-compiled on CPU, the engine's median against
              torch.utils.benchmark.Timer.blocked_autorange; per side the median over rounds of
              the ratio engine / Timer with a distribution-free 95% interval, each round's
              figures, the cores other processes took meanwhile and each member's compiled page
              faults a call; the verdict rests on the graded rounds (quiet, one allocator mode)
              and rounds stop once it is decided (target: within 3%). `--pairing process` (the
              default, tests/bench_paired.py): one fresh process a round, the engine's own Job
              and Timer on the same model objects, Timer readings before, between and after 4
              segments of the engine's timed blocks (options --rounds, --min-rounds, --budget-s,
              --iters a side a segment, --segments, --min-run-time, --threads, --allocator,
              --device cuda and --batch N for a GPU, this pairing only).
              `--pairing processes`: each member its own fresh processes, interleaved (options
              as above and --processes per member): what the per-process spread adds
  wall        a full `main.py profile resnet18` against a bare script that only compiles and
              times the same iterations, runs alternating (target: ratio ≤ 1.10)
  report      large reports (tests/bench_report.py): for 10^6 and 2×10^6 timed samples, time,
              RSS high-water and tracemalloc peak of the summary with its bootstrap CI, of
              writing, of loading and of opening the report in the app offscreen (in-process
              and `main.py --session --screenshot`), each in a fresh process; the sizes of
              report.json and latency.csv; and one `main.py profile` of a tiny model with
              --iters 1000000 (time after the job ended). Options --repeats, --sizes, --steps,
              --no-cli, --no-profile, --profile-iters
  stats       the summary step of `report` alone (statistics and the bootstrap at 10^6 and
              2×10^6 samples)
  alternation (not in core) Timer against plain loops alternating eager/compiled in blocks of
              1, 5 and 25, in one process: why the engine alternates in blocks
  freezing    (not in core) resnet18 at batch 1 on the CPU in one process: eager, plain inductor
              and inductor with freezing=True, in interleaved rounds (options --rounds, --threads):
              the evidence behind the `freezing` suggestion
  quality, auto, advice   (not in core) the trust benchmarks of tests/bench_trust.py: grades
              under synthetic load, --iters auto, and whether applied suggestions helped
  zoo         (not in core) the zoo on a local Ray instance against the local executor, per
              job, in interleaved rounds (tests/bench_zoo.py; options --rounds, --jobs, --load N
              burning processes beside it; target: Ray ≤ 1.10 × local). Run it in a fresh network
              namespace: unshare -n sh -c 'ip link set lo up; python -m tests.bench zoo'
  gui         a 10 ms GUI timer's worst stall while the app cold-compiles resnet18
              (target < 50 ms) and while it launches (--cold-catalog: with the catalog's
              helpers running), max, p99 and the other processes' cores, and the launch
              time, from tests/gui/heartbeat.py; per gap over 20 ms the GUI thread's CPU, its
              wait for a CPU and the app's other threads' (the "accounted" worst: the most of a
              gap the app can be blamed for); --attribute: also the GUI thread's events of
              1 ms or more in those gaps (slows the GUI thread: not for the figures)
  launch      (not in core) process start to a visible window: the app against a bare Qt window
              (QApplication and an empty QMainWindow), alternating rounds with cached bytecode
              (option --rounds, 8): medians, ranges and the app's own part (app - bare a round)

The machine is shared and noisy: compare ratios measured side by side, quote medians with their
spread, not single absolute times.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
import uuid

from tests.scratch import scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ITERS, WARMUP = 50, 5
FIDELITY_ROUNDS, FIDELITY_ITERS, FIDELITY_MIN_RUN_S = 30, 100, 2.0
# Load subsets of the fidelity rounds, by the cores other processes used during both members
# of a round (never by the ratio): "quiet" (< 0.25 core), and "a core left" (≤ 1.05: with one
# torch thread on 2 cores the measurement still had a core of its own, 0.05 for jiffy rounding).
QUIET_OTHERS_CORES = 0.25
CORE_LEFT_OTHERS_CORES = 1.05
# The fidelity bench's allocator settings for both members of a round (bench_fidelity says why).
ALLOCATORS = {
    "steady": "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=33554432",
    "default": "",
}
SLOW_MODE_FAULTS = 500  # compiled page faults a call above which a process is in glibc's slow mode


def _mode(faults_per_call: float) -> str:
    return "slow" if faults_per_call > SLOW_MODE_FAULTS else "fast"


def _opt(args, name: str, default):
    """The value after `name` in a benchmark's extra arguments, else `default`."""
    args = list(args)
    return args[args.index(name) + 1] if name in args else default


def say(name: str, value) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{name}: {value}", flush=True)


def median_interval(values, confidence: float = 0.95) -> tuple[float, float, float]:
    """Distribution-free interval for the median of `values`: the order statistics
    (x_(j), x_(n+1-j)) with the largest j whose coverage, 1 - 2·P(Binomial(n, 1/2) < j), is
    still at least `confidence`. Returns (low, high, exact coverage); with too few values
    for the confidence asked, (min, max) and their coverage."""
    from math import comb

    x = sorted(values)
    n = len(x)
    best = (x[0], x[-1], 1 - 2 * 0.5**n)
    below = 0.0  # P(B <= j - 1)
    for j in range(1, (n + 1) // 2 + 1):
        below += comb(n, j - 1) / 2**n
        coverage = 1 - 2 * below
        if coverage < confidence:
            break
        best = (x[j - 1], x[n - j], coverage)
    return best


def bootstrap_median_interval(values, resamples: int = 10000, seed: int = 0) -> tuple[float, float]:
    """95% percentile-bootstrap interval of the median (for comparison; with ~12 values it is
    coarse, the order-statistic interval is the one quoted)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    idx = np.random.default_rng(seed).integers(0, v.size, size=(resamples, v.size))
    low, high = np.percentile(np.median(v[idx], axis=1), [2.5, 97.5])
    return float(low), float(high)


class CpuWatch:
    """How much CPU *other* processes used during a measurement: the machine's busy time
    (/proc/stat) minus this process's and its waited-for children's (os.times), in cores
    (0 = nobody else ran, 2 = both cores of this machine busy with others' work)."""

    def __init__(self, descendants: bool = False):
        # descendants: also count this process's live descendants as its own (psutil), for a
        # measurement whose children still run when it ends (the app's job child, helpers).
        self.descendants = descendants
        self.t0, self.busy0, self.own0 = time.perf_counter(), self._busy(), self._own()

    @staticmethod
    def _busy() -> float:
        with open("/proc/stat") as fh:
            v = [int(x) for x in fh.readline().split()[1:]]
        idle = v[3] + v[4]  # idle + iowait
        return (sum(v[:8]) - idle) / os.sysconf("SC_CLK_TCK")

    def _own(self) -> float:
        t = os.times()
        own = t.user + t.system + t.children_user + t.children_system
        if self.descendants:
            import psutil

            for child in psutil.Process().children(recursive=True):
                try:
                    c = child.cpu_times()
                    own += c.user + c.system + c.children_user + c.children_system
                except psutil.Error:
                    pass  # ended meanwhile: counted once reaped
        return own

    def others_cores(self) -> float:
        wall = time.perf_counter() - self.t0
        others = (self._busy() - self.busy0) - (self._own() - self.own0)
        return max(0.0, others / wall) if wall > 0 else 0.0


TIMER_SCRIPT = f"""
import json, resource, sys, torch, torchvision
from torch.utils.benchmark import Timer
order, threads, min_run = sys.argv[1].split(","), int(sys.argv[2]), float(sys.argv[3])
torch.set_num_threads(threads)
model = torchvision.models.resnet18(weights=None).eval()
x = torch.randn(1, 3, 224, 224)
out = {{}}
with torch.inference_mode():
    fns = {{"eager": model, "compiled": torch.compile(model)}}
    fns["compiled"](x)  # the FX cache is warm: the bench's process compiled first
    for side in order:
        for _ in range({WARMUP}):
            fns[side](x)
        calls = [0]
        def counted(x, fn=fns[side]):  # ~1 µs on a call of over 10 ms: the page faults per call
            calls[0] += 1
            return fn(x)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        m = Timer(stmt="fn(x)", globals={{"fn": counted, "x": x}}, num_threads=threads).blocked_autorange(
            min_run_time=min_run)
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
        out[side] = (m.median * 1000, m.number_per_run, faults / max(1, calls[0]))
print(json.dumps(out))
"""


def bench_fidelity(args: list[str] = ()) -> None:  # noqa: C901 - one linear procedure
    """Interleaved rounds of (Timer, engine) for resnet18 eager and inductor-compiled.

    One round: `--processes` fresh processes of torch.utils.benchmark.Timer.blocked_autorange
    on both sides (TIMER_SCRIPT) and as many engine jobs (`JobRunner().run`, blocks of 25, each a
    fresh process, FX cache warm), interleaved one by one, which member goes first flipping by
    process and by round (the Timer's side order flips by round); each member's figure is the
    median of its processes' medians. Both members are fresh processes: one process can
    run resnet18 a few percent faster or slower than another for its whole life (memory
    placement; measured here: 27.4-31.6 ms eager across four fresh processes), so a Timer kept
    in one long-lived process biased every round alike (the first version of this bench: the
    engine read 6% below it on a quiet machine). Per side the ratio engine median / Timer median is taken per
    round, and the median of those ratios is reported with a distribution-free 95% interval:
    drift between rounds (the shared machine's load) hits both members of a pair alike.
    Each measurement also records how many cores other processes used meanwhile (CpuWatch);
    the same figures are repeated over the rounds in which others used under
    QUIET_OTHERS_CORES, and at most CORE_LEFT_OTHERS_CORES, during both members (subsets
    chosen by load, never by the ratio).
    Stops starting rounds once `--budget-s` has passed and `--min-rounds` are done."""
    import numpy as np
    import torch
    import torchvision

    from core.run.runner import JobRunner
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    rounds = int(_opt(args, "--rounds", FIDELITY_ROUNDS))
    iters = int(_opt(args, "--iters", FIDELITY_ITERS))
    min_run = float(_opt(args, "--min-run-time", FIDELITY_MIN_RUN_S))
    min_rounds = min(rounds, int(_opt(args, "--min-rounds", 10)))  # then no new round once the budget is spent
    budget_s = float(_opt(args, "--budget-s", 13 * 60))
    # One thread by default: on a shared 2-core machine, 2 OpenMP threads stall at every
    # parallel region whenever another process holds a core (resnet18 eager went from 15 ms to
    # 950 ms in such a round), which no pairing can cancel. `--threads 2` measures the default.
    threads = int(_opt(args, "--threads", 1))
    # Each member of a round is the median of `processes` fresh processes (as the engine's own
    # answer to "one process is one draw"), the two members' processes interleaved: with one
    # process each, a quiet round's eager ratio still spread 0.83-1.02 (8 rounds, steady
    # allocator); with three each run one member after the other, the member measured first
    # read slower in 5 of 6 rounds (the machine's speed drifting over the round's minutes).
    processes = int(_opt(args, "--processes", 3))
    # glibc's heap trimming puts each fresh process in a fast or a slow mode for its whole life
    # (BENCHMARKS.md, "One process is one draw": ~8% of processes fast, compiled ~20% quicker
    # there); with both members of a round drawing their own mode, a round's compiled ratio read
    # 0.8 or 1.25 whenever the draws differed, and two runs of this bench disagreed by 3-4
    # points. "steady" (the default) gives both members the same glibc settings (no trimming,
    # a fixed mmap threshold: fast in every process), "default" keeps glibc's own behaviour.
    allocator = str(_opt(args, "--allocator", "steady"))
    if allocator not in ALLOCATORS:
        raise SystemExit(f"--allocator: one of {', '.join(ALLOCATORS)}")
    if ALLOCATORS[allocator]:
        os.environ["GLIBC_TUNABLES"] = ALLOCATORS[allocator]  # the Timer's process and the job's child
    else:
        os.environ.pop("GLIBC_TUNABLES", None)
    torch.set_num_threads(threads)
    model = torchvision.models.resnet18(weights=None).eval()
    x = torch.randn(1, 3, 224, 224)
    started = time.perf_counter()
    say("threads", threads)
    say(
        "fidelity_settings",
        f"{rounds} rounds (at least {min_rounds}, none started after {budget_s:.0f} s); Timer blocked_autorange(min_run_time={min_run:g}) per side; "
        f"engine job iters={iters} warmup={WARMUP} block_size=25 threads={threads}; "
        f"each member the median of {processes} fresh processes; "
        f"allocator {allocator} (GLIBC_TUNABLES={ALLOCATORS[allocator] or 'unset'})",
    )

    with torch.inference_mode():
        compiled = torch.compile(model)
        t0 = time.perf_counter()
        compiled(x)  # compiles here (cold or warm FX cache); the jobs then hit the warm cache
        say("fidelity_parent_first_compile_s", time.perf_counter() - t0)

        def timer(order) -> tuple[dict[str, float], dict[str, float], float]:
            """One fresh process: each side's median and compiled page faults a call, and the
            cores other processes used meanwhile."""
            watch = CpuWatch()  # counts the waited-for child as this process's own
            proc = subprocess.run(
                [sys.executable, "-c", TIMER_SCRIPT, ",".join(order), str(threads), str(min_run)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                check=True,
            )
            found = json.loads(proc.stdout.strip().splitlines()[-1])
            medians, faults = {}, {}
            for side in order:
                # blocks of number_per_run calls: 1 here for resnet18 (a call is over 10 ms), so
                # Timer's median is a median of single calls, like the engine's
                medians[side], calls_per_block[side], faults[side] = found[side]
            return medians, faults, watch.others_cores()

        def engine():
            """One engine job in one fresh process: each side's median, the FX cache state, the
            job's seconds, other processes' cores and the compiled page faults a call."""
            spec = JobSpec(
                uuid.uuid4().hex[:8],
                ModelSpec("resnet18"),
                CompileConfig(),
                warmup=WARMUP,
                iters=iters,
                threads=threads,
            )
            t0 = time.perf_counter()
            watch = CpuWatch()  # the whole job: start-up and compile included (the benchmark is most of it)
            result = JobRunner().run(spec)
            others = watch.others_cores()
            assert result.status == "completed", result.failure_reason
            s = result.summary(ci=False)
            cost = result.call_cost("compiled")
            return (
                {side: float(np.median(result.latencies(side))) for side in ("eager", "compiled")},
                s["cache_state"],
                time.perf_counter() - t0,
                others,
                cost.per_call("minor_faults") if cost else float("nan"),
            )

        ratios: dict[str, list[float]] = {"eager": [], "compiled": []}
        others: list[float] = []
        same_mode: list[bool] = []  # both members' compiled calls in the same allocator mode
        calls_per_block: dict[str, int] = {}
        for r in range(rounds):
            if r >= min_rounds and time.perf_counter() - started > budget_s:
                say("fidelity_stopped_early", f"after {r} rounds: the {budget_s:.0f} s budget is spent")
                break
            if r >= min_rounds and _decided(ratios, others, same_mode):
                say("fidelity_stopped_early", f"after {r} rounds: both sides' graded rounds are decided")
                break
            timer_first = r % 2 == 0
            order = ("eager", "compiled") if timer_first else ("compiled", "eager")
            # the members' processes interleaved (T E E T T E ... flipping by round and process):
            # a drift of the machine's speed over the round's minutes hits both members alike
            ref_ms: dict[str, list[float]] = {"eager": [], "compiled": []}
            eng_ms: dict[str, list[float]] = {"eager": [], "compiled": []}
            ref_faults: list[float] = []
            eng_faults: list[float] = []
            round_others, job_s, caches = [], 0.0, set()
            for k in range(processes):
                for member in ("timer", "engine") if (r + k) % 2 == 0 else ("engine", "timer"):
                    if member == "timer":
                        medians, faults, busy = timer(order)
                        for side in order:
                            ref_ms[side].append(medians[side])
                        ref_faults.append(faults["compiled"])
                    else:
                        medians, cache, seconds, busy, faults = engine()
                        for side in order:
                            eng_ms[side].append(medians[side])
                        eng_faults.append(faults)
                        job_s += seconds
                        caches.add(cache)
                    round_others.append(busy)
            ref = {side: statistics.median(v) for side, v in ref_ms.items()}
            eng = {side: statistics.median(v) for side, v in eng_ms.items()}
            cache = "/".join(sorted(caches))
            others.append(max(round_others))
            modes = {_mode(f) for f in ref_faults + eng_faults}
            same_mode.append(len(modes) == 1)  # every process of both members in one allocator mode
            cells = []
            for side in ("eager", "compiled"):
                ratios[side].append(eng[side] / ref[side])
                cells.append(
                    f"{side} timer {ref[side]:.2f} (x{calls_per_block[side]}) engine {eng[side]:.2f} ms "
                    f"ratio {ratios[side][-1]:.3f}"
                )
            say(
                f"fidelity_round{r:02d}",
                f"{processes} processes a member, interleaved, {'timer' if r % 2 == 0 else 'engine'} first: "
                f"{'; '.join(cells)} (medians of the processes' medians; eager per process: timer "
                f"{'/'.join(f'{v:.1f}' for v in ref_ms['eager'])}, engine {'/'.join(f'{v:.1f}' for v in eng_ms['eager'])}); "
                f"compiled page faults a call per process: timer {'/'.join(f'{f:.0f}' for f in ref_faults)}, "
                f"engine {'/'.join(f'{f:.0f}' for f in eng_faults)} ({'/'.join(sorted(modes))}); jobs {job_s:.1f} s, "
                f"FX cache {cache}; other processes used at most {others[-1]:.2f} cores during a process"
                f"{' (quiet)' if others[-1] < QUIET_OTHERS_CORES else ''}",
            )

    for side in ("eager", "compiled"):
        say_subsets(side, ratios[side], others, same_mode)
    say(
        "fidelity_graded_rounds",
        f"{len(graded(ratios['eager'], others, same_mode))} of {len(others)}: other processes under "
        f"{QUIET_OTHERS_CORES} cores during both members and both members' compiled calls in the same allocator mode "
        f"({sum(same_mode)} of {len(same_mode)} rounds were)",
    )
    say("fidelity_total_s", time.perf_counter() - started)


def say_subsets(side: str, ratios: list[float], others: list[float], same_mode: list[bool]) -> None:
    """`say_ratios` over every round, the quiet ones, those that left a core, and the graded."""
    for subset, v in (
        ("", ratios),
        ("_quiet_rounds", [x for x, o in zip(ratios, others) if o < QUIET_OTHERS_CORES]),
        ("_core_left_rounds", [x for x, o in zip(ratios, others) if o <= CORE_LEFT_OTHERS_CORES]),
        ("_graded", graded(ratios, others, same_mode)),
    ):
        say_ratios(side, subset, v)


def say_ratios(side: str, subset: str, v: list[float]) -> None:
    """One side's fidelity figures over a subset of rounds: median ratio engine / Timer, its
    order-statistic and bootstrap intervals, range and the verdict against ±3%."""
    if not v:
        say(f"fidelity_{side}{subset}", "no such round")
        return
    low, high, coverage = median_interval(v)
    say(f"fidelity_{side}{subset}_ratio_engine_over_timer_median", statistics.median(v))
    say(
        f"fidelity_{side}{subset}_ratio_order_statistic_interval",
        f"{low:.3f}-{high:.3f} (coverage {coverage:.3f}, n={len(v)})",
    )
    if len(v) >= 3:
        b_low, b_high = bootstrap_median_interval(v)
        say(f"fidelity_{side}{subset}_ratio_bootstrap95_interval", f"{b_low:.3f}-{b_high:.3f}")
    say(f"fidelity_{side}{subset}_ratio_min_max", f"{min(v):.3f}-{max(v):.3f}")
    say(f"fidelity_{side}{subset}_within_3pct", _within_3pct(low, high, coverage))


def graded(ratios: list[float], others: list[float], same_mode: list[bool]) -> list[float]:
    """The fidelity rounds a verdict rests on: quiet (other processes under QUIET_OTHERS_CORES
    during both members) and both members in the same allocator mode; chosen by the machine's
    load and the processes' page faults, never by the ratio."""
    return [x for x, o, same in zip(ratios, others, same_mode) if o < QUIET_OTHERS_CORES and same]


def _within_3pct(low: float, high: float, coverage: float) -> str:
    if coverage < 0.95:
        return "too few rounds for a 95% interval"
    if 0.97 <= low and high <= 1.03:
        return "yes"
    if high < 0.97 or low > 1.03:
        return "no: the interval lies outside ±3%"
    return "undecided: the interval reaches beyond ±3%"


def _decided(ratios: dict[str, list[float]], others: list[float], same_mode: list[bool]) -> bool:
    """Both sides' graded rounds give a 95% interval that is inside ±3% or outside it."""
    for side in ("eager", "compiled"):
        v = graded(ratios[side], others, same_mode)
        if not v:
            return False
        verdict = _within_3pct(*median_interval(v))
        if verdict.startswith(("too few", "undecided")):
            return False
    return True


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


def bench_gui(args: list[str] = ()) -> None:
    """`--cold-catalog`: start with an empty catalog cache, so the launch phase runs the helpers
    that list torch's offer and the timm and Hugging Face names (the first start of an install)."""
    from tests.gui.heartbeat import measure_heartbeat

    for name, value in measure_heartbeat(
        cold_catalog="--cold-catalog" in args, attribute="--attribute" in args
    ).items():
        say(name, value)


def bench_launch(args: list[str] = ()) -> None:
    """Process start to a visible window, the app against a bare Qt window in alternating rounds
    (tests/gui/heartbeat.py, `launch_rounds`; option --rounds, 8)."""
    from tests.gui.heartbeat import launch_rounds

    got = launch_rounds(int(_opt(args, "--rounds", 8)))
    app, bare = got["app"], got["bare"]
    mine = [a - b for a, b in zip(app, bare)]
    say("launch_rounds", len(app))
    for name, values in (("app", app), ("bare_window", bare), ("app_minus_bare", mine)):
        say(f"launch_{name}_median_s", statistics.median(values))
        say(f"launch_{name}_range_s", [round(min(values), 3), round(max(values), 3)])
    say("launch_app_over_bare_median", statistics.median(a / b for a, b in zip(app, bare)))
    say("launch_rounds_app_s", [round(v, 3) for v in app])
    say("launch_rounds_bare_s", [round(v, 3) for v in bare])
    say("launch_other_processes_cores", [round(v, 2) for v in got["others_cores"]])


def bench_charts(args: list[str] = ()) -> None:
    """The latency and distribution charts with `--configs` (8) configs x `--points` (10,000)
    timed calls a side, offscreen at 1200x500, `--frames` (40) frames each, median and p90, with
    the machine's other load. Goal (issue 22): 16 ms a frame.

    `live` (a frame while a run streams): the first configs' jobs have ended, the last one is
    running and gains `--step` (100) calls a side before each frame, through the path a run's
    calls take (the session's samples-added signal), then the chart's own redraw (its timer's
    piece: the latency chart's at most every 66 ms, the histograms' every 500 ms) and one full
    paint of the widget into a pixmap. `report` (opening a report): every frame draws all the
    results anew (`show_results`: the curves made, every series binned), then paints."""
    import statistics

    import numpy as np

    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from core.vocab import events as ev
    from core.vocab import records as rec
    from gui.charts.distribution import DistributionChart
    from gui.charts.latency import LatencyChart
    from tests.core.fakes import fake_result

    configs, points, frames, step = (
        int(_opt(args, "--configs", 8)),
        int(_opt(args, "--points", 10000)),
        int(_opt(args, "--frames", 40)),
        int(_opt(args, "--step", 100)),
    )
    app = QApplication.instance() or QApplication([])
    rng = np.random.default_rng(0)

    def results(running: bool) -> list:
        done = [
            fake_result(f"inductor/c{i}", eager_ms=10 + i, compiled_ms=5 + i, n=points, seed=i)
            for i in range(configs - running)
        ]
        if running:  # its last frames' worth of calls still to come
            first = max(points - frames * step, 1)
            done.append(
                fake_result(
                    f"inductor/c{configs - 1}",
                    eager_ms=10 + configs,
                    compiled_ms=5 + configs,
                    n=first,
                    status="running",
                )
            )
        return done

    def more_calls(result, frame: int) -> tuple:
        start = max(points - frames * step, 1) + frame * step
        return tuple(
            rec.LatencySample(side, start + i, float(median * (1 + 0.01 * v)))
            for side, median in (("eager", 10.0 + configs), ("compiled", 5.0 + configs))
            for i, v in enumerate(rng.standard_normal(step))
        )

    for mode in ("live", "report"):
        for name, make in (("latency", LatencyChart), ("distribution", DistributionChart)):
            chart = make()
            chart.resize(1200, 500)
            chart.show()
            shown = results(running=mode == "live")
            chart.show_results(shown)
            app.processEvents()
            chart.grab()  # the first paint builds caches
            watch, data, paint = CpuWatch(), [], []
            for frame in range(frames):
                samples = more_calls(shown[-1], frame)  # as the session receives them, unpickled
                t0 = time.perf_counter()
                if mode == "live":
                    shown[-1].apply(ev.LatencyMeasured(shown[-1].job_id, samples=samples))
                    if name == "latency":
                        chart.add_samples(shown[-1].job_id, samples)
                    else:
                        chart._on_samples_added(shown[-1].job_id, samples)
                    chart._on_redraw()  # what the chart's redraw timer runs
                else:
                    chart.show_results(shown)
                t1 = time.perf_counter()
                chart.grab()  # one full paint
                data.append((t1 - t0) * 1000.0)
                paint.append((time.perf_counter() - t1) * 1000.0)
            frame_ms = sorted(d + p for d, p in zip(data, paint))
            say(
                f"{name} chart, {mode}, {configs} configs x {points} points a side",
                f"frame (data + paint) median {statistics.median(frame_ms):.1f} ms, p90 "
                f"{frame_ms[int(0.9 * (len(frame_ms) - 1))]:.1f} ms ({1000.0 / statistics.median(frame_ms):.0f} fps); "
                f"data {statistics.median(data):.1f} ms, paint {statistics.median(paint):.1f} ms; {frames} frames"
                + (f" of {step} more calls a side" if mode == "live" else "")
                + f"; other processes {watch.others_cores():.2f} cores",
            )
            chart.close()


def bench_report(args: list[str] = ()) -> None:
    from tests.bench_report import run

    run(args)


def bench_stats(args: list[str] = ()) -> None:
    """`result.summary()` (statistics and the bootstrap CI) at 10^6 and 2×10^6 samples only."""
    from tests.bench_report import run

    run(["--steps", "summary", "--no-profile", *args])


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


def fidelity(args: list[str] = ()) -> None:
    """`--pairing process` (the default): both members in one fresh process a round
    (tests.bench_paired); `--pairing processes`: each member its own fresh processes
    (bench_fidelity)."""
    pairing = str(_opt(args, "--pairing", "process"))
    if pairing == "processes" and ("--device" in args or "--batch" in args):
        raise SystemExit("--device and --batch: with --pairing process only (the default)")
    if pairing == "processes":
        bench_fidelity(args)
    elif pairing == "process":
        from tests.bench_paired import bench_fidelity_paired

        bench_fidelity_paired(args)
    else:
        raise SystemExit("--pairing: process or processes")


def python_loop_s(n: int = 2_000_000, repeats: int = 3) -> float:
    """The machine's speed today, as one number: the best of `repeats` runs of a pure-Python
    loop of `n` additions, in seconds. The same code's start took 0.77 s one day and 1.4 s
    another on this VM (docs/BENCHMARKS.md, eleventh session): printed with every benchmark, so
    that figures from two days can be told apart from the machine's."""
    best = float("inf")
    for _ in range(repeats):
        started, total = time.perf_counter(), 0
        for i in range(n):
            total += i
        best = min(best, time.perf_counter() - started)
    return best


def main(argv: list[str]) -> int:
    which = argv[0] if argv else "core"
    if which in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    sys.path.insert(0, ROOT)
    print(f"# python -m tests.bench {which}  ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores)", flush=True)
    # best of 3, before the benchmark's own load
    print(f"# machine: a pure-Python loop of 2,000,000 additions, {python_loop_s():.3f} s", flush=True)
    from tests.bench_generation import bench_generation
    from tests.bench_script import bench_script, bench_script_logs
    from tests.bench_trust import BENCHES as TRUST
    from tests.bench_zoo import bench_zoo

    benches = {
        "overhead": bench_overhead,
        "fidelity": fidelity,
        "wall": bench_wall,
        "gui": bench_gui,
        "launch": bench_launch,
        "charts": bench_charts,
        "alternation": bench_alternation,
        "report": bench_report,
        "stats": bench_stats,
        "freezing": bench_freezing,
        "zoo": bench_zoo,
        "script": bench_script,
        "script-logs": bench_script_logs,
        "generation": bench_generation,
        **TRUST,
    }
    groups = {"core": ["overhead", "fidelity", "wall"], "all": ["overhead", "fidelity", "wall", "gui"]}
    names = groups.get(which, [which])
    if not set(names) <= set(benches):
        print(f"unknown benchmark {which!r}; choose from {', '.join(list(groups) + list(benches))}", file=sys.stderr)
        return 2
    for name in names:
        benches[name](argv[1:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
