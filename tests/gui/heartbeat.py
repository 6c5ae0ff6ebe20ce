"""GUI responsiveness during a cold compile: a 10 ms QTimer on the GUI thread while the
app's own worker runs one profile (default resnet18 with inductor, a fresh inductor cache
so the compile is cold). `python -m tests.bench gui` calls `measure_heartbeat`. The same
timer also runs from the window's show until what torch offers has loaded (the launch), and
each phase reports its worst gap, p99 and the cores the machine's other processes used
meanwhile (so a figure from a busy machine reads as one), and for the run the GUI thread's own
CPU time and its wait for a CPU in each gap over 20 ms (Linux schedstat), and the machine's
floor at the same time: a bare process that only sleeps 10 ms at a time (FLOOR_SCRIPT), and the
CPU the virtual machine's host took (steal). The run's first gap, the window's answer to the
click on Run (its charts and tables reset), is not in the run's figures: it is given on its own
(`run_start_gap_ms`, with the GUI thread's CPU in it). The launch phase
ends once the catalog's helpers are done (torch's offer, then the timm and Hugging Face names added to the
model list); `cold_catalog` starts with an empty catalog cache, so both helpers run.

Also `measure_launch`: seconds from process start to the main window's first show event,
as `python main.py` does it (a subprocess that prints the time and exits); and `launch_rounds`:
the same beside a bare Qt window, in alternating rounds (`python -m tests.bench launch`).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

from core import PROJECT_ROOT as ROOT
from tests.scratch import scratch_dir


def measure_launch(runs: int = 3) -> float:
    """Best of `runs` launches: seconds from process start to the window's first show."""
    env = dict(
        os.environ,
        QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"),
        XDG_CONFIG_HOME=scratch_dir("cp-launch-config-"),
    )
    times = []
    for _ in range(runs):
        out = subprocess.run(
            [sys.executable, os.path.join(ROOT, "main.py"), "--print-launch-time", "--exit-after-show"],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        ).stdout
        m = re.search(r"launch_to_window_s: ([\d.]+)", out)
        if m:
            times.append(float(m.group(1)))
    return min(times) if times else float("nan")


# The same measure for a bare Qt window: PySide6's QApplication and an empty QMainWindow of the
# app's size, its age at the first show event taken as the app takes it (core.run.process_clock,
# standard library only). What the machine takes to start Python and Qt and show a window, beside
# which the app's own part of its launch reads.
BARE_WINDOW_SCRIPT = """\
from core.run.process_clock import process_age_s
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication, QMainWindow

app = QApplication(["bare-window"])


class Window(QMainWindow):
    def showEvent(self, event):
        super().showEvent(event)
        print(f"launch_to_window_s: {process_age_s():.3f}", flush=True)
        QTimer.singleShot(0, app.quit)


window = Window()
window.resize(1400, 900)
window.show()
app.exec()
"""


def launch_rounds(rounds: int = 8) -> dict:
    """Process start to the first show, the app (`main.py --print-launch-time --exit-after-show`)
    and a bare Qt window (BARE_WINDOW_SCRIPT) in alternating rounds, the order flipping each
    round, with bytecode cached (a scratch PYTHONPYCACHEPREFIX, filled by one launch of each
    first, left out) and fresh settings; per round the difference app - bare and the cores
    the machine's other processes used. The launch goal (0.8 s, issue 22) is an absolute time
    on a machine whose speed varies by ~1.8x from hour to hour; the difference is the app's own."""
    from tests.bench import CpuWatch

    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = scratch_dir("cp-launch-pyc-")
    commands = {
        "app": [sys.executable, os.path.join(ROOT, "main.py"), "--print-launch-time", "--exit-after-show"],
        "bare": [sys.executable, "-c", BARE_WINDOW_SCRIPT],
    }

    def once(name: str) -> float:
        run_env = dict(env, XDG_CONFIG_HOME=scratch_dir("cp-launch-config-"))
        out = subprocess.run(commands[name], env=run_env, cwd=ROOT, capture_output=True, text=True, timeout=120)
        m = re.search(r"launch_to_window_s: ([\d.]+)", out.stdout)
        if not m:
            raise RuntimeError(f"{name}: no launch time printed (exit {out.returncode}): {out.stderr[-1000:]}")
        return float(m.group(1))

    once("app"), once("bare")  # the bytecode cache filled
    times: dict[str, list[float]] = {"app": [], "bare": []}
    others = []
    for r in range(rounds):
        watch = CpuWatch()
        for name in ("app", "bare") if r % 2 == 0 else ("bare", "app"):
            times[name].append(once(name))
        others.append(watch.others_cores())
    return {"app": times["app"], "bare": times["bare"], "others_cores": others}


# The machine's floor, measured beside the app: a bare Python process (no Qt, no imports but the
# standard library's) that only sleeps 10 ms at a time, in the app's own session (so the same
# scheduling group as the GUI), from the run's start to its end. Its worst gap is what this
# machine gave a thread that did nothing at that time: a gap of the app's at or under it is the
# machine's, not the app's. Per gap over 20 ms also its CPU and its wait for a CPU (schedstat):
# with neither, the virtual machine's CPU itself was away (the host's steal).
FLOOR_SCRIPT = r"""
import json, signal, sys, time
def stop(*_):
    raise KeyboardInterrupt
signal.signal(signal.SIGTERM, stop)  # SIGTERM: a shell's background job ignores SIGINT, and so its children
def wait_ms():
    try:
        with open('/proc/thread-self/schedstat') as f:
            return int(f.read().split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0
gaps, stalls = [], []
last, cpu, wait = time.perf_counter(), time.thread_time(), wait_ms()
print('ready', flush=True)
try:
    while True:
        time.sleep(0.010)
        now, c, w = time.perf_counter(), time.thread_time(), wait_ms()
        gap = (now - last) * 1000.0
        gaps.append(gap)
        if gap > 20.0:
            stalls.append((round(gap, 1), round((c - cpu) * 1000.0, 1), round(w - wait, 1)))
        last, cpu, wait = now, c, w
except KeyboardInterrupt:
    pass
gaps.sort()
print(json.dumps({
    'max': round(gaps[-1], 1) if gaps else None,
    'p99': round(gaps[int(0.99 * (len(gaps) - 1))], 1) if gaps else None,
    'over_20': sum(g > 20.0 for g in gaps),
    'over_20_away': sum(1 for g, c, w in stalls if c < 2.0 and w < 2.0),
    'worst': sorted(stalls, reverse=True)[:3],
}), flush=True)
"""


class Floor:
    """FLOOR_SCRIPT in a child process, from its construction to result()."""

    def __init__(self):
        self.proc = subprocess.Popen([sys.executable, "-S", "-c", FLOOR_SCRIPT], stdout=subprocess.PIPE, text=True)
        self.proc.stdout.readline()  # 'ready': its clock runs
        self.steal0 = _steal_s()

    def result(self) -> dict:
        """Stop it; its figures (empty if it printed none)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            out, _ = self.proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return {}
        lines = [line for line in out.splitlines() if line.startswith("{")]
        return (
            json.loads(lines[-1]) if lines else {"error": f"exit status {self.proc.returncode}, printed {out[-200:]!r}"}
        )


def _steal_s() -> float:
    """CPU seconds the host has taken from this virtual machine (/proc/stat's steal; 0 elsewhere)."""
    try:
        with open("/proc/stat") as f:
            return int(f.readline().split()[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return 0.0


def _runqueue_wait_ms() -> float:
    """Milliseconds this thread has waited, ready, for a CPU (Linux schedstat; 0 elsewhere)."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e6
    except (OSError, ValueError, IndexError):
        return 0.0


def _process_threads_ms() -> float:
    """Milliseconds every thread of this process has run or waited, ready, for a CPU (the sum of
    Linux schedstat's first two fields over /proc/self/task; 0 elsewhere). Less the GUI thread's
    own, it is the time the app's other threads (the run's event reader, the resource sampler,
    Qt's) took or wanted a CPU: a gap in which neither they nor the GUI thread ran nor waited
    was not the app's doing (the bare process's gaps of that kind: the virtual CPU was away)."""
    total = 0
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return 0.0
    for tid in tasks:
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                run, wait = f.read().split()[:2]
            total += int(run) + int(wait)
        except (OSError, ValueError):
            pass  # a thread that ended meanwhile
    return total / 1e6


class _Attribution:
    """`--attribute`: the GUI thread's top-level events (QApplication.notify, not nested) that took
    1 ms or more of its CPU, named by receiver and event type, and the `gui.widgets.turns` piece
    run in each; `tick` takes the list of the gap that just ended. Costs the GUI thread a Python
    call per event: for finding what fills a gap, not for the figures."""

    def __init__(self):
        from gui.widgets import turns

        self.events: list[tuple[float, str]] = []
        self.depth = 0
        self.piece = ""
        original = turns._run_one

        def run_one():
            self.piece = getattr(turns._pieces[0][1], "__qualname__", "?") if turns._pieces else ""
            original()

        turns._run_one = run_one

    def notify(self, base, receiver, event) -> bool:
        if self.depth:
            return base(receiver, event)
        self.depth, self.piece, cpu = 1, "", time.thread_time()
        try:
            return base(receiver, event)
        finally:
            self.depth = 0
            took = (time.thread_time() - cpu) * 1000.0
            if took >= 1.0:
                name = type(receiver).__name__ + (f"/{self.piece}" if self.piece else "")
                self.events.append((round(took, 1), f"{name}:{event.type().name}"))

    def take(self) -> list[tuple[float, str]]:
        out, self.events = sorted(self.events, reverse=True)[:4], []
        return out


INTERVAL_MS = 10  # the heartbeat timer's period


def measure_heartbeat(
    model: str = "resnet18",
    backend: str = "inductor",
    iters: int = 30,
    warmup: int = 3,
    timeout_s: float = 900.0,
    launch: bool = True,
    cold_catalog: bool = False,
    attribute: bool = False,
) -> dict:
    """Run one profile through the app's worker and record the GUI thread's timer gaps
    (`attribute`: and the GUI thread's events of 1 ms or more in each gap over 20 ms,
    `_Attribution`)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    # A fresh cache: the job process inherits this, so its inductor compile is cold.
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = scratch_dir("cp-heartbeat-inductor-")
    if cold_catalog:  # core.run.torch_info's cache: torch's offer and the model names come from helpers
        os.environ["COMPILE_PROFILER_CACHE"] = scratch_dir("cp-heartbeat-catalog-")
    sys.path.insert(0, ROOT) if ROOT not in sys.path else None
    from gui import qt_compat

    qt_compat.install()
    import numpy as np
    from PySide6.QtCore import QEventLoop, QSettings, QTimer
    from PySide6.QtWidgets import QApplication

    from core.vocab.config import CompileConfig
    from gui.window.main_window import MainWindow
    from tests.bench import CpuWatch

    attribution = _Attribution() if attribute else None
    if attribution is not None and QApplication.instance() is None:

        class _AttributedApp(QApplication):
            def notify(self, receiver, event):
                return attribution.notify(super().notify, receiver, event)

        _app = _AttributedApp([])
    else:
        _app = QApplication.instance() or QApplication([])  # kept referenced while the window runs
    settings = QSettings(os.path.join(scratch_dir("cp-heartbeat-"), "s.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings)
    window.resize(1400, 900)
    window.show()
    # Per gap also the GUI thread's own CPU time in it (time.thread_time): a long gap the thread
    # spent running was the app's own work; one it spent waiting was the GIL (another thread)
    # or the machine's scheduler (a busy machine).
    # And, on Linux, the time the thread was ready to run but waited for a CPU (schedstat): a
    # gap with little CPU and a long wait is the machine's scheduler (the job's threads on every
    # core), not the app.
    # And the app's other threads' CPU and waits for a CPU (_process_threads_ms): the part of a
    # gap the app can be blamed for is at most the timer's period plus all of these ("accounted");
    # the rest, when nothing of the app ran or waited, was the machine's (the virtual CPU away).
    gaps: list[float] = []
    busy: list[float] = []
    waits: list[float] = []
    accounted: list[float] = []
    last = [time.perf_counter(), time.thread_time(), _runqueue_wait_ms(), _process_threads_ms()]

    # gaps over 20 ms (the goal): (gap, GUI thread CPU, its wait for a CPU, the other threads'
    # CPU and waits, status bar then[, the GUI thread's events of 1 ms or more with --attribute])
    stalls: list[tuple] = []
    busiest: list[tuple] = []  # --attribute: the 5 gaps of the most GUI CPU (CPU, gap, its events)

    def tick():
        now, cpu, wait, threads = time.perf_counter(), time.thread_time(), _runqueue_wait_ms(), _process_threads_ms()
        gaps.append((now - last[0]) * 1000.0)
        busy.append((cpu - last[1]) * 1000.0)
        waits.append(wait - last[2])
        others = max(0.0, threads - last[3] - busy[-1] - waits[-1])
        accounted.append(min(gaps[-1], INTERVAL_MS + busy[-1] + waits[-1] + others))
        events = attribution.take() if attribution is not None else None
        if events:
            busiest.append((round(busy[-1], 1), round(gaps[-1], 1), events))
            busiest.sort(reverse=True)
            del busiest[5:]
        if gaps[-1] > 20.0 and len(gaps) > 1:
            stall = (round(gaps[-1], 1), round(busy[-1], 1), round(waits[-1], 1), round(others, 1))
            stall += (window.status_label.text()[:70],) + ((events,) if events is not None else ())
            stalls.append(stall)
        last[:] = [now, cpu, wait, threads]

    timer = QTimer()
    timer.setInterval(INTERVAL_MS)
    timer.timeout.connect(tick)
    # The launch: the window is shown, torch's offer loads in a helper; the real event loop runs.
    launch_watch = CpuWatch(descendants=True)
    last[:] = [time.perf_counter(), time.thread_time(), _runqueue_wait_ms(), _process_threads_ms()]
    timer.start()
    launch_started = time.monotonic()
    deadline = launch_started + 300
    loader = window.torch_info_loader
    # ...and the chart views are built after the show (gui.window.view_slot), pyqtgraph imported
    # on a worker thread: the launch phase lasts until they are in place too
    while (
        window.torch_info is None or loader.helpers_running or not all(slot.built for slot in window.views)
    ) and time.monotonic() < deadline:
        wait = QEventLoop()
        QTimer.singleShot(20, wait.quit)
        wait.exec()
    wait = QEventLoop()
    QTimer.singleShot(300, wait.quit)  # the names from the cache are added on the next turn of the loop
    wait.exec()
    launch_s = time.monotonic() - launch_started
    timer.stop()
    launch_gaps, launch_busy, launch_others = list(gaps[1:]), list(busy[1:]), launch_watch.others_cores()
    launch_accounted = list(accounted[1:])
    for kept in (gaps, busy, waits, accounted):
        kept.clear()
    launch_stalls, stalls[:] = list(stalls), []
    launch_busiest, busiest[:] = list(busiest), []
    window.set_model(model, trusted=True)
    window.config_panel.queue.clear()
    window.config_panel.set_config(CompileConfig(backend=backend))
    window.config_panel.iters.setValue(iters)
    window.config_panel.warmup.setValue(warmup)

    loop = QEventLoop()  # the real event loop, as app.exec() runs it
    window.sig_run_finished.connect(loop.quit)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    started = time.monotonic()
    run_watch = CpuWatch(descendants=True)
    floor = Floor()
    try:
        # the timer from before the click: the first gap is the window's whole answer to it
        # (run_profile itself and the layout and paint it leaves for the next turn)
        last[:] = [time.perf_counter(), time.thread_time(), _runqueue_wait_ms(), _process_threads_ms()]
        timer.start()
        if not window.run_profile():
            raise RuntimeError(f"could not start: {window.last_error}")
        loop.exec()
        timer.stop()
        run_s = time.monotonic() - started
        run_others = run_watch.others_cores()
        steal = (_steal_s() - floor.steal0) / max(run_s, 1e-9)
    finally:
        bare = floor.result()
    result = window.session.results[0]
    window.close()
    values = np.asarray(gaps[1:] or [float("nan")])
    own = np.asarray(busy[1:] or [float("nan")])
    waited = np.asarray(waits[1:] or [float("nan")])
    blamed = np.asarray(accounted[1:] or [float("nan")])
    launch_values = np.asarray(launch_gaps or [float("nan")])
    worst = int(np.argmax(values))
    out = {
        "heartbeat_max_ms": round(float(values.max()), 1),
        "heartbeat_p99_ms": round(float(np.percentile(values, 99)), 1),
        "gui_thread_cpu_in_worst_gap_ms": round(float(own[worst]), 1),
        "gui_thread_waited_for_a_cpu_in_worst_gap_ms": round(float(waited[worst]), 1),
        "gui_thread_busiest_gap_cpu_ms": round(float(own.max()), 1),
        "gaps_over_50ms": int((values > 50).sum()),
        # the first gap after Run was clicked (the window's answer to the click: the charts and
        # tables reset for the new run) is left out of the figures above and given here
        "run_start_gap_ms": round(float(gaps[0]), 1) if gaps else None,
        "run_start_gui_thread_cpu_ms": round(float(busy[0]), 1) if busy else None,
        "worst_stalls": sorted(stalls, reverse=True)[:5],
        "gaps_over_20ms": int((values > 20).sum()),
        # of those, the gaps in which the GUI thread ran under 2 ms: the app's work did not make them
        "gaps_over_20ms_gui_thread_under_2ms": int(((values > 20) & (own < 2)).sum()),
        # the worst gap the GUI thread worked in (2 ms or more of its CPU): the app's own part,
        # beside the machine's floor below (the worst gaps of a cold compile are the floor's)
        "heartbeat_max_gui_thread_worked_ms": round(float(values[own >= 2].max()), 1) if (own >= 2).any() else None,
        # the worst gap counting only the timer's period and what the app's threads ran or waited
        # for a CPU in it: the most of a gap the app can be blamed for (the rest: the machine's)
        "heartbeat_max_accounted_ms": round(float(blamed.max()), 1),
        "gaps_over_20ms_accounted": int((blamed > 20).sum()),
        "ticks": int(values.size),
        "other_processes_cores": round(run_others, 2),  # the host's steal counted in
        # the floor: a bare process that only sleeps 10 ms at a time, beside the app, meanwhile
        "bare_process_heartbeat_max_ms": bare.get("max"),
        "bare_process_heartbeat_p99_ms": bare.get("p99"),
        "bare_process_gaps_over_20ms": bare.get("over_20"),
        # of those, the gaps it neither ran nor waited for a CPU in: the virtual CPU was away
        "bare_process_gaps_over_20ms_vcpu_away": bare.get("over_20_away"),
        "bare_process_worst_stalls": bare.get("worst"),
        **({"bare_process_error": bare["error"]} if "error" in bare else {}),
        "host_steal_cores": round(steal, 3),
        "launch_heartbeat_max_ms": round(float(launch_values.max()), 1),
        "launch_heartbeat_p99_ms": round(float(np.percentile(launch_values, 99)), 1),
        "launch_heartbeat_max_accounted_ms": round(max(launch_accounted or [float("nan")]), 1),
        "launch_gui_thread_busiest_gap_cpu_ms": round(max(launch_busy or [float("nan")]), 1),
        "launch_ticks": int(launch_values.size),
        "launch_phase_s": round(launch_s, 1),
        "launch_worst_stalls": sorted(launch_stalls, reverse=True)[:3],
        "models_listed": window.model_panel.names.rowCount(),
        "launch_other_processes_cores": round(launch_others, 2),
        "run_s": round(run_s, 1),
        "status": result.status,
        "compile_time_s": round(result.compile.compile_time_s, 1) if result.compile else None,
        "cache_state": result.compile.cache_state if result.compile else None,
    }
    if attribution is not None:
        out["busiest_gaps_attributed"] = busiest
        out["launch_busiest_gaps_attributed"] = launch_busiest
    if launch:
        out["launch_to_window_s"] = round(measure_launch(), 3)
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    print(measure_heartbeat(*(args[:2] if args else ())))
