"""The app's benchmarks: `gui` (the GUI thread's heartbeat while the app cold-compiles and
launches, tests/gui/heartbeat.py), `launch` (process start to a visible window) and `charts`
(a frame of the latency and distribution charts)."""

from __future__ import annotations

import os
import statistics
import time

from tests.bench import CpuWatch, _opt, say


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
