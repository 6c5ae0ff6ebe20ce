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
              default, tests/bench/paired.py): one fresh process a round, the engine's own Job
              and Timer on the same model objects, Timer readings before, between and after the
              segments of the engine's timed blocks; --timing latency|throughput|both (default
              both: each method its segments, alternating, each its ratios and verdict a side,
              and a line a side comparing the two) (options --rounds, --min-rounds, --budget-s,
              --iters a side a segment, --segments per method, --min-run-time, --threads,
              --allocator, --device cuda and --batch N for a GPU, this pairing only).
              `--pairing processes`: each member its own fresh processes, interleaved (options
              as above and --processes per member): what the per-process spread adds
  wall        a full `main.py profile resnet18` against a bare script that only compiles and
              times the same iterations, runs alternating (target: ratio ≤ 1.10)
  report      large reports (tests/bench/report.py): for 10^6 and 2×10^6 timed samples, time,
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
  quality, auto, advice   (not in core) the trust benchmarks of tests/bench/trust.py: grades
              under synthetic load, --iters auto, and whether applied suggestions helped
  zoo         (not in core) the zoo on a local Ray instance against the local executor, per
              job, in interleaved rounds (tests/bench/zoo.py; options --rounds, --jobs, --load N
              burning processes beside it; target: Ray ≤ 1.10 × local). Run it in a fresh network
              namespace: unshare -n sh -c 'ip link set lo up; python -m tests.bench zoo'
  gui         a 10 ms GUI timer's worst stall while the app cold-compiles resnet18
              (target < 50 ms) and while it launches (--cold-catalog: with the catalog's
              helpers running), max, p99 and the other processes' cores, and the launch
              time, from tests/gui/heartbeat.py; per gap over 20 ms the GUI thread's CPU, its
              wait for a CPU and the app's other threads' (the "accounted" worst: the most of a
              gap the app can be blamed for); --attribute: also the GUI thread's events of
              1 ms or more in those gaps (slows the GUI thread: not for the figures)
  verdicts    (not in core) are the verdicts right? (tests/bench/verdicts.py, issue 45) per model the
              default profile's recommendation against the truth of every tune candidate timed in
              more processes (options --models, --candidates, --truth-processes, --out, --resume)
  launch      (not in core) process start to a visible window: the app against a bare Qt window
              (QApplication and an empty QMainWindow), alternating rounds with cached bytecode
              (option --rounds, 8): medians, ranges and the app's own part (app - bare a round)

The machine is shared and noisy: compare ratios measured side by side, quote medians with their
spread, not single absolute times.
"""

from __future__ import annotations

import os
import sys
import time

from tests.bench import ROOT, python_loop_s


def main(argv: list[str]) -> int:
    which = argv[0] if argv else "core"
    if which in ("-h", "--help", "help"):
        print(__doc__)
        return 0
    sys.path.insert(0, ROOT)
    print(f"# python -m tests.bench {which}  ({time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores)", flush=True)
    # best of 3, before the benchmark's own load
    print(f"# machine: a pure-Python loop of 2,000,000 additions, {python_loop_s():.3f} s", flush=True)
    from tests.bench.app import bench_charts, bench_gui, bench_launch
    from tests.bench.engine import bench_alternation, bench_freezing, bench_overhead, bench_wall
    from tests.bench.fidelity import fidelity
    from tests.bench.generation import bench_generation
    from tests.bench.report import bench_report, bench_stats
    from tests.bench.script import bench_script, bench_script_logs
    from tests.bench.trust import BENCHES as TRUST
    from tests.bench.verdicts import bench_verdicts
    from tests.bench.zoo import bench_zoo

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
        "verdicts": bench_verdicts,
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
