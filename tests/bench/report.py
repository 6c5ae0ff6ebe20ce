"""Large reports (issue 7, item 8): what 10^6 and 2×10^6 timed samples cost after a run.

`python -m tests.bench report` calls `run()`. For a synthetic JobResult of N timed samples in
total (N/2 per side, alternating in blocks of 25, as a run of `--iters N/2` makes them) it
measures, each in a fresh process (`python -m tests.bench.report STEP N FOLDER [--tracemalloc]`):

  summary    `result.summary()` with the bootstrap CI
  write      `core.report.files.write_report([result], folder)` (the summary's bootstrap included,
             as the CLI pays it; torch._dynamo.config imported beforehand, as in the CLI
             and the app, see `_load_torch_config`)
  load       `core.report.files.load_report(folder)`
  gui        the app offscreen: MainWindow, `open_session(report.json)`, events processed until
             the charts' redraw timers are idle, then `window.grab()` (every widget painted)
  gui_cli    `main.py --session F/report.json --screenshot PNG` end to end (includes Python and
             Qt start-up, torch loading in the catalog thread and the app's 900 ms pause
             before the picture), measured from outside: wall time and the process's peak RSS
             (os.wait4)

Time and RSS come from runs without tracemalloc (repeated, interleaved; median and range);
the tracemalloc peak from one extra run per step (tracemalloc slows Python allocations).
RSS: the process's high-water mark is reset (/proc/self/clear_refs) once the input is built,
so `peak` is the step's own high-water mark and `delta` what the step added above the RSS it
started from. `ru_maxrss` (getrusage at the end) is printed too but is not reset that way, and
on Linux it also holds the spawning process's RSS at fork/exec time: read it as an upper bound
(the driver keeps itself small for that reason, the reports are written by a child).

It also times `main.py profile TINY.py --iters 1000000 --backend eager --block 25` once (the
limit: 10^6 timed calls per side), reading the CLI's progress lines on stderr: the time after
the job ended (its "completed" line) until the process exits is the statistics + writing.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from tests.scratch import remove_scratch, scratch_dir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIZES = (1_000_000, 2_000_000)
STEPS = ("summary", "write", "load", "gui")
MB = 1024 * 1024

TINY_MODEL = '''"""A tiny model for the large-report benchmark: one 8x8 linear layer."""
import torch


def get_model():
    return torch.nn.Linear(8, 8)


def get_example_inputs():
    return (torch.randn(1, 8),)
'''


def say(name: str, value) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{name}: {value}", flush=True)


# ------------------------------------------------------------------ the synthetic report


def build_result(total: int, seed: int = 0):
    """A completed JobResult with `total` timed samples (total/2 per side, alternating in
    blocks of 25), a compile result, memory peaks and one resource reading per 0.2 s of a
    run at ~50 µs a call, as `--iters total/2` of a tiny model would produce."""
    import numpy as np

    from core.analysis.results import JobResult
    from core.vocab import events as ev
    from core.vocab import records as rec
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    iters = total // 2
    block = 25
    spec = JobSpec(
        f"bench{total}", ModelSpec("resnet18"), CompileConfig(backend="eager"), warmup=0, iters=iters, block_size=block
    )
    result = JobResult(spec)
    # side codes 0 = eager, 1 = compiled: blocks of 25 of each in turn
    pos = np.arange(total)
    blk, within = pos // (2 * block), pos % (2 * block)
    side = (within >= block).astype(np.uint8)
    iteration = (blk * block + within % block).astype(np.uint32)
    rng = np.random.default_rng(seed)
    latency = np.where(side == 0, 0.020, 0.035) * rng.lognormal(0.0, 0.15, total)
    result.samples.extend_columns(
        side=side, iteration=iteration, warmup=np.zeros(total, dtype=bool), latency_ms=latency
    )
    # everything else as the job's events would bring it (JobResult.apply sets the status)
    job = spec.job_id
    run_s = total * 50e-6
    events = [
        ev.JobStarted(
            job, pid=1, environment={"python": "3.11", "torch": "2.14.1", "threads": 2, "device": "cpu", "cpu": "bench"}
        ),
        ev.CompileFinished(
            job,
            result=rec.CompileResult(
                compile_time_s=0.4,
                dynamo_s=0.3,
                cache_state="n/a",
                frames_compiled=1,
                graph_count=1,
                op_count=1,
                guard_count=5,
            ),
        ),
    ]
    events += [ev.MemoryMeasured(job, peak=rec.MemoryPeak(p, 400.0)) for p in ("eager", "compile", "compiled")]
    events += [
        ev.ResourceSampled(job, sample=rec.ResourceSample(round(i * 0.2, 3), "benchmark", 100.0, 420.0))
        for i in range(int(run_s / 0.2))
    ]
    completed = getattr(ev, "JobCompleted", None) or getattr(ev, "JobFinished")
    events.append(completed(job, wall_time_s=run_s))
    for event in events:
        result.apply(event)
    return result


# ------------------------------------------------------------------ one measurement (child side)


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _load_torch_config() -> None:
    """Import what the CLI and the app have imported before they write a report: the CLI
    validates the settings with torch (core.vocab.config), the app loads torch for its catalog.
    Writing a report reads torch._dynamo.config's keys (the suggestions), which would otherwise
    be paid for inside the measured step (an import of torch: seconds and ~600 MB)."""
    try:
        from core.vocab.config import dynamo_config_defaults

        dynamo_config_defaults()
    except ImportError:
        pass


def _measure(step: str, total: int, folder: str, use_tracemalloc: bool) -> dict:
    """Prepare the step's input, then run the step alone and measure it."""
    import tracemalloc

    from core.measure.environment import peak_rss_mb, reset_peak_rss

    report_json = os.path.join(folder, "report.json")
    if step == "prepare":  # the report the load and gui steps read, made here to keep the driver small
        from core.report.files import write_report

        write_report([build_result(total)], folder)
        return {
            "step": step,
            "n": total,
            **{name: os.path.getsize(os.path.join(folder, name)) / MB for name in ("report.json", "latency.csv")},
        }
    if step in ("summary", "write"):
        result = build_result(total)
        from core.report.files import write_report

        if step == "write":
            _load_torch_config()

        out = os.path.join(folder, f"write-{os.getpid()}")
        action = {"summary": lambda: result.summary(), "write": lambda: write_report([result], out)}[step]
        extra = {}
    elif step == "load":
        from core.report.files import load_report

        action = lambda: load_report(folder)  # noqa: E731
        extra = {}
    elif step == "gui":
        action, extra = _gui_action(report_json)
    else:
        raise SystemExit(f"unknown step {step!r}")
    import gc

    gc.collect()
    reset_peak_rss()
    start_rss = _rss_mb()
    if use_tracemalloc:
        tracemalloc.start()
    t0 = time.perf_counter()
    value = action()
    elapsed = time.perf_counter() - t0
    row = {"step": step, "n": total, "seconds": elapsed, "start_rss_mb": start_rss}
    if use_tracemalloc:
        row["tracemalloc_peak_mb"] = tracemalloc.get_traced_memory()[1] / MB
        tracemalloc.stop()
    else:
        row["peak_rss_mb"] = peak_rss_mb()
        row["ru_maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    if step == "summary":
        row["speedup_ci"] = [value["speedup_ci_low"], value["speedup_ci_high"]]
    if step == "write":
        row["files_mb"] = {name: os.path.getsize(os.path.join(out, name)) / MB for name in sorted(os.listdir(out))}
        shutil.rmtree(out, ignore_errors=True)
    if extra:
        row.update(extra.get("detail", {}))
    return row


def _gui_action(report_json: str):
    """Build the window (torch loaded by its catalog thread, as in the app), then return the
    measured action: open the session and draw everything once."""
    os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from gui import qt_compat

    qt_compat.install()
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from gui.widgets.theme import apply_chart_theme
    from gui.window.main_window import MainWindow

    app = QApplication.instance() or QApplication([])
    apply_chart_theme()
    settings = QSettings(os.path.join(scratch_dir("bench-report-gui-"), "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(1400, 900)
    window.show()
    deadline = time.monotonic() + 180
    while window.torch_info is None and time.monotonic() < deadline:  # torch loads in the background
        app.processEvents()
        time.sleep(0.01)
    for _ in range(20):
        app.processEvents()
    detail: dict = {}
    timers = [
        getattr(window.latency_chart, "_redraw", None),
        getattr(window.distribution_chart, "_timer", None),
        getattr(window.summary_panel.model, "_timer", None),
    ]
    timers = [t for t in timers if t is not None]
    png = os.path.join(scratch_dir("bench-report-png-"), "x.png")

    def action():
        t0 = time.perf_counter()
        ok = window.open_session(report_json)
        t1 = time.perf_counter()
        if not ok:
            raise SystemExit(f"open_session failed: {window.last_error}")
        app.processEvents()
        while any(t.isActive() for t in timers) and time.perf_counter() - t1 < 60:
            app.processEvents()
            time.sleep(0.005)
        app.processEvents()
        t2 = time.perf_counter()
        image = window.grab()
        t3 = time.perf_counter()
        image.save(png)
        detail["detail"] = {
            "open_session_s": t1 - t0,
            "events_s": t2 - t1,
            "grab_s": t3 - t2,
            "png_bytes": os.path.getsize(png),
        }
        return ok

    return action, detail


def child_main(argv: list[str]) -> int:
    step, total, folder = argv[0], int(argv[1]), argv[2]
    sys.path.insert(0, ROOT) if ROOT not in sys.path else None
    row = _measure(step, total, folder, "--tracemalloc" in argv)
    print("RESULT " + json.dumps(row), flush=True)
    remove_scratch()  # os._exit runs no atexit
    os._exit(0)  # the app's threads (torch catalog) need no orderly teardown here


# ------------------------------------------------------------------ the driver (parent side)


def _child(step: str, total: int, folder: str, use_tracemalloc: bool = False, timeout: float = 900) -> dict:
    cmd = [sys.executable, "-m", "tests.bench.report", step, str(total), folder]
    if use_tracemalloc:
        cmd.append("--tracemalloc")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[7:])
    raise RuntimeError(f"{step} {total} failed (exit {proc.returncode}): {proc.stderr[-3000:]}")


def _gui_cli(report_json: str, timeout: float = 900) -> dict:
    """`main.py --session REPORT --screenshot PNG`: wall time to the picture and to exit, peak RSS."""
    png = os.path.join(scratch_dir("bench-report-cli-"), "x.png")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", XDG_CONFIG_HOME=scratch_dir("bench-report-cfg-"))
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "main.py", "--session", report_json, "--screenshot", png],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    shot = None
    done = None
    while done is None:
        if shot is None and os.path.exists(png):
            shot = time.perf_counter() - t0
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            done = (status, usage)
            break
        if time.perf_counter() - t0 > timeout:
            proc.kill()
        time.sleep(0.02)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(done[0])
    err = proc.stderr.read().decode(errors="replace")
    if proc.returncode != 0 or not os.path.exists(png):
        raise RuntimeError(f"main.py --session failed ({proc.returncode}): {err[-2000:]}")
    return {
        "step": "gui_cli",
        "seconds_to_screenshot": shot if shot is not None else wall,
        "seconds": wall,
        "ru_maxrss_mb": done[1].ru_maxrss / 1024,
    }


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3g} ({min(values):.3g}-{max(values):.3g}, n={len(values)})"


def measure_reports(repeats: int = 3, steps=STEPS, sizes=SIZES, cli: bool = True) -> dict:
    """Every step for every size: `repeats` timed runs interleaved (size and step order
    alternating by round), then one tracemalloc run each."""
    base = tempfile.mkdtemp(prefix="bench-report-")
    folders = {}
    for total in sizes:  # the report the load and gui steps read (written by a child: this process stays small)
        folders[total] = os.path.join(base, f"n{total}")
        row = _child("prepare", total, folders[total])
        say(f"report_{total}_report_json_mb", row["report.json"])
        say(f"report_{total}_latency_csv_mb", row["latency.csv"])
    rows: dict[tuple[str, int], list[dict]] = {}
    steps = list(steps) + (["gui_cli"] if cli and "gui" in steps else [])
    for r in range(repeats):
        order = [(s, n) for n in sizes for s in steps]
        if r % 2:
            order.reverse()
        for step, total in order:
            if step == "gui_cli":
                row = _gui_cli(os.path.join(folders[total], "report.json"))
            else:
                row = _child(step, total, folders[total])
            rows.setdefault((step, total), []).append(row)
            say(
                f"report_{total}_{step}_run{r}",
                json.dumps({k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}),
            )
    for step, total in [(s, n) for n in sizes for s in steps if s != "gui_cli"]:
        row = _child(step, total, folders[total], use_tracemalloc=True)
        rows[(step, total)][0]["tracemalloc_peak_mb"] = row["tracemalloc_peak_mb"]
        say(f"report_{total}_{step}_tracemalloc_peak_mb", row["tracemalloc_peak_mb"])
    for (step, total), runs in rows.items():
        say(f"report_{total}_{step}_seconds", _spread([x["seconds"] for x in runs]))
        if step == "gui_cli":
            say(f"report_{total}_{step}_seconds_to_screenshot", _spread([x["seconds_to_screenshot"] for x in runs]))
            say(f"report_{total}_{step}_ru_maxrss_mb", _spread([x["ru_maxrss_mb"] for x in runs]))
            continue
        say(f"report_{total}_{step}_peak_rss_mb", _spread([x["peak_rss_mb"] for x in runs]))
        say(f"report_{total}_{step}_rss_delta_mb", _spread([x["peak_rss_mb"] - x["start_rss_mb"] for x in runs]))
        say(f"report_{total}_{step}_ru_maxrss_mb", _spread([x["ru_maxrss_mb"] for x in runs]))
        if step == "gui":
            for key in ("open_session_s", "events_s", "grab_s"):
                say(f"report_{total}_{step}_{key}", _spread([x[key] for x in runs]))
    shutil.rmtree(base, ignore_errors=True)
    return rows


def _vm_hwm_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def measure_profile(iters: int = 1_000_000, timeout_s: int = 3600) -> dict:
    """`main.py profile TINY.py --iters ITERS --backend eager --block 25 --out DIR`, once:
    a timeline of its stderr progress lines, and the parent's memory high-water mark (read
    from /proc while it runs; the job's process is a separate one)."""
    work = tempfile.mkdtemp(prefix="bench-report-profile-")
    model = os.path.join(work, "tiny.py")
    with open(model, "w") as fh:
        fh.write(TINY_MODEL)
    out = os.path.join(work, "out")
    cmd = [
        sys.executable,
        "main.py",
        "profile",
        model,
        "--iters",
        str(iters),
        "--backend",
        "eager",
        "--block",
        "25",
        "--timeout",
        str(timeout_s),
        "--out",
        out,
    ]
    say("profile_command", " ".join(["python3", "main.py", "profile", "tiny.py", *cmd[4:-2], "--out", "DIR"]))
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[tuple[float, str]] = []

    def read_err():
        for line in proc.stderr:
            lines.append((time.perf_counter() - t0, line.rstrip()))

    reader = threading.Thread(target=read_err, daemon=True)
    reader.start()
    hwm = 0.0
    while proc.poll() is None:
        value = _vm_hwm_mb(proc.pid)
        if value:
            hwm = max(hwm, value)
        time.sleep(0.1)
    wall = time.perf_counter() - t0
    reader.join(5)
    stdout = proc.stdout.read()
    if proc.returncode != 0:
        raise RuntimeError(f"profile failed ({proc.returncode}): {lines[-5:]} {stdout[-2000:]}")

    def when(pattern: str) -> float:
        return next(t for t, line in lines if re.search(pattern, line))

    t_bench = when(r": \d+ timed iterations per side")
    t_done = when(r": completed$")
    t_written = when(r"^report written to ")
    with open(os.path.join(out, "report.json")) as fh:
        job_wall = json.load(fh)["jobs"][0]["wall_time_s"]
    row = {
        "wall_s": wall,
        "benchmark_started_s": t_bench,
        "job_completed_line_s": t_done,
        "report_written_s": t_written,
        "after_job_s": wall - t_done,
        "stats_and_write_s": t_written - t_done,
        "child_wall_time_s": job_wall,
        "parent_peak_rss_mb": hwm,
        "report_json_mb": os.path.getsize(os.path.join(out, "report.json")) / MB,
        "latency_csv_mb": os.path.getsize(os.path.join(out, "latency.csv")) / MB,
    }
    for line in stdout.splitlines():
        if "median" in line:
            row["summary_line"] = line.strip()
    for t, line in lines:
        say("profile_stderr", f"{t:8.2f} s  {line}")
    for k, v in row.items():
        say(f"profile_{k}", v)
    shutil.rmtree(work, ignore_errors=True)
    return row


def run(args: list[str] = ()) -> None:
    """`python -m tests.bench report [--repeats N] [--no-profile] [--steps a,b] [--sizes n,m]`."""
    args = list(args)

    def opt(name, default):
        return args[args.index(name) + 1] if name in args else default

    repeats = int(opt("--repeats", 3))
    steps = tuple(opt("--steps", ",".join(STEPS)).split(","))
    sizes = tuple(int(float(s)) for s in opt("--sizes", ",".join(map(str, SIZES))).split(","))
    measure_reports(repeats, steps, sizes, cli="--no-cli" not in args)
    if "--no-profile" not in args:
        measure_profile(int(float(opt("--profile-iters", 1_000_000))))


def bench_report(args: list[str] = ()) -> None:
    run(args)


def bench_stats(args: list[str] = ()) -> None:
    """`result.summary()` (statistics and the bootstrap CI) at 10^6 and 2×10^6 samples only."""
    run(["--steps", "summary", "--no-profile", *args])


if __name__ == "__main__":
    sys.exit(child_main(sys.argv[1:]))
