"""Benchmarks of verdicts a user can trust (python -m tests.bench quality|auto|advice).

  quality   the same profile on a quiet machine and under a synthetic background load (1, then
            2 processes each burning a core), interleaved in rounds, on a slow and a fast model:
            per run the grade (core.analysis.quality) with its figures, the speedup and the
            recommendation; at the end, per load, how the grades fell, and whether any firm
            verdict under load contradicted the quiet one. Options --rounds, --models,
            --loads, --max-time, --processes
  auto      --iters auto on a quiet machine: calls needed per process and the interval
            reached, for a fast and a slow model. Options --models, --precision, --max-time
  advice    models where compiled is slower than eager on this CPU: the top suggestion with an
            apply-and-re-run change, applied; whether the speedup moved beyond the noise
            (core.decide.compare.change_effect). Options --models, --max-time

Every run is a real `main.py profile` (its own processes); the machine's load is recorded
with every figure (core.analysis.quality's others_cores, from the runner's own readings).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TINY = '''"""A small MLP: calls of tens of microseconds."""
import torch


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 256))


def get_example_inputs():
    return (torch.randn(16, 256),)
'''
FIRM = ("clear", "indistinguishable", "only option")


def say(name: str, value) -> None:
    if isinstance(value, float):
        value = f"{value:.4g}"
    print(f"{name}: {value}", flush=True)


def _opt(args, name: str, default):
    args = list(args)
    return args[args.index(name) + 1] if name in args else default


def burners(n: int) -> list[subprocess.Popen]:
    """n processes that each keep a core busy until stopped (a background load)."""
    return [subprocess.Popen([sys.executable, "-c", "while True:\n    pass"]) for _ in range(n)]


def stop(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()


def model_source(name: str, folder: str) -> str:
    if name == "tiny":
        path = os.path.join(folder, "tiny_mlp.py")
        if not os.path.exists(path):
            with open(path, "w") as fh:
                fh.write(TINY)
        return path
    return name


def profile(source: str, out: str, *extra: str) -> tuple[dict, float]:
    """One real `main.py profile`; (its report.json, the wall time)."""
    t0 = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "main.py",
            "profile",
            source,
            "--op-profile",
            "0",
            "--out",
            out,
            "--overwrite",
            "--quiet",
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=3600,
    )
    wall = time.monotonic() - t0
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"profile {source} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    with open(os.path.join(out, "report.json")) as fh:
        return json.load(fh), wall


def _job_line(doc: dict) -> dict:
    job = doc["jobs"][0]
    s, q = job["summary"], job["quality"]
    return {
        "grade": q["grade"],
        "reason": (q["reasons"] or [""])[0],
        "others": q["others_cores"],
        "iqr_e": s["eager_iqr_pct"],
        "iqr_c": s["compiled_iqr_pct"],
        "p90_e": s["eager_p90_over_median"],
        "p90_c": s["compiled_p90_over_median"],
        "drift_e": s["eager_drift_pct"],
        "drift_c": s["compiled_drift_pct"],
        "procs": s["process_speedups"],
        "spread": s["process_spread_pct"],
        "speedup": s["speedup"],
        "ci": (s["speedup_ci_low"], s["speedup_ci_high"]),
        "precision": s["precision_pct"],
        "calls": s["iterations"],
        "confidence": doc["recommendation"]["confidence"],
        "choice": doc["recommendation"]["choice"],
    }


def _fmt(x, spec=".3g"):
    return "-" if x is None else format(x, spec)


def bench_quality(args=()) -> None:
    rounds = int(_opt(args, "--rounds", 2))
    models = _opt(args, "--models", "resnet18,tiny").split(",")
    loads = [int(x) for x in _opt(args, "--loads", "0,1,2").split(",")]
    max_time = _opt(args, "--max-time", "20")
    processes = _opt(args, "--processes", "3")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for rnd in range(rounds):
            order = loads[rnd % len(loads) :] + loads[: rnd % len(loads)]  # rotate so no load always goes first
            for load in order:
                for name in models:
                    source = model_source(name, tmp)
                    procs = burners(load)
                    try:
                        time.sleep(1.0 if load else 0.0)
                        doc, wall = profile(
                            source,
                            os.path.join(tmp, "r"),
                            "--backend",
                            "inductor",
                            "--max-time",
                            max_time,
                            "--processes",
                            processes,
                        )
                    finally:
                        stop(procs)
                    line = {"round": rnd, "load": load, "model": name, "wall_s": wall, **_job_line(doc)}
                    rows.append(line)
                    say(
                        f"quality_run[{rnd}/{load} burners/{name}]",
                        f"{line['grade']} (others {_fmt(line['others'])} cores; iqr e/c {_fmt(line['iqr_e'])}/"
                        f"{_fmt(line['iqr_c'])}%; p90/med e/c {_fmt(line['p90_e'])}/{_fmt(line['p90_c'])}; drift e/c "
                        f"{_fmt(line['drift_e'])}/{_fmt(line['drift_c'])}%; processes {line['procs']} spread "
                        f"{_fmt(line['spread'])}%; speedup {_fmt(line['speedup'])} [{_fmt(line['ci'][0])}-"
                        f"{_fmt(line['ci'][1])}] ±{_fmt(line['precision'])}%; {line['calls']} calls; decision "
                        f"{line['confidence']}: {line['choice'] or '-'}; {wall:.0f} s) {line['reason']}",
                    )
    for load in loads:
        mine = [r for r in rows if r["load"] == load]
        grades = {g: sum(r["grade"] == g for r in mine) for g in ("quiet", "noisy", "unusable", "unknown")}
        say(f"quality_grades[{load} burners]", ", ".join(f"{g} {n}" for g, n in grades.items() if n))
    contradictions = 0
    for name in models:
        quiet = [r for r in rows if r["model"] == name and r["load"] == 0 and r["confidence"] in FIRM]
        for r in rows:
            if (
                r["model"] == name
                and r["load"]
                and r["confidence"] in FIRM
                and quiet
                and r["choice"] not in {q["choice"] for q in quiet}
            ):
                contradictions += 1
                say(
                    "quality_contradiction",
                    f"{name} under {r['load']} burners: {r['choice']} (quiet: "
                    f"{', '.join(sorted({q['choice'] for q in quiet}))})",
                )
    say("quality_firm_contradictions_under_load", contradictions)
    quiet_rows = [r for r in rows if r["load"] == 0]
    for key in ("others", "iqr_e", "iqr_c", "p90_e", "p90_c", "drift_e", "drift_c", "spread"):
        values = [abs(r[key]) for r in quiet_rows if r[key] is not None]
        if values:
            say(f"quality_quiet_max[{key}]", max(values))


def bench_auto(args=()) -> None:
    models = _opt(args, "--models", "tiny,resnet18").split(",")
    precision = _opt(args, "--precision", "2")
    max_time = _opt(args, "--max-time", "60")
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            doc, wall = profile(
                model_source(name, tmp),
                os.path.join(tmp, "r"),
                "--backend",
                "inductor",
                "--precision",
                precision,
                "--max-time",
                max_time,
            )
            job = doc["jobs"][0]
            line = _job_line(doc)
            from core.vocab.samples import SampleStore

            store = SampleStore.from_json(job["samples"])
            per_process = {p: len(v) for p, v in store.by_process("compiled").items()}
            say(
                f"auto[{name}]",
                f"{line['calls']} calls a side in all, per process {per_process}; speedup "
                f"{_fmt(line['speedup'])} [{_fmt(line['ci'][0])}-{_fmt(line['ci'][1])}] ±{_fmt(line['precision'])}% "
                f"(asked ±{precision}%, reached {job['quality']['precision_reached']}); grade {line['grade']}, "
                f"others {_fmt(line['others'])} cores; wall {wall:.0f} s",
            )


def _config_args(config: dict) -> list[str]:
    out = ["--backend", config["backend"], "--mode", config["mode"], "--dynamic", config["dynamic"]]
    if config["fullgraph"]:
        out.append("--fullgraph")
    for k, v in (config.get("dynamo_config") or {}).items():
        out += ["--dynamo-config", f"{k}={v}"]
    for k, v in (config.get("inductor_options") or {}).items():
        out += ["--inductor-option", f"{k}={v}"]
    return out


def bench_advice(args=()) -> None:
    from core.decide.compare import change_effect
    from core.decide.suggestions import suggest
    from core.report.files import load_report

    models = _opt(args, "--models", "resnet18,mobilenet_v3_small,timm:resnet18,hf:bert").split(",")
    max_time = _opt(args, "--max-time", "20")
    moved = tried = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            extra = ["--hf-config", "num_hidden_layers=2", "--seq-len", "64"] if name.startswith("hf:") else []
            before_dir = os.path.join(tmp, "before")
            profile(name, before_dir, "--backend", "inductor", "--max-time", max_time, *extra)
            (before,), _ = load_report(before_dir)
            found = [s for s in suggest([before]) if s.changes and not s.changes[0].rerun_only]
            say(
                f"advice_before[{name}]",
                f"speedup {before.summary()['speedup']:.3f} "
                f"[{before.summary()['speedup_ci_low']:.3f}-{before.summary()['speedup_ci_high']:.3f}], "
                f"timing {before.quality().grade}; suggestions: {', '.join(s.rule for s in suggest([before])) or '-'}",
            )
            if not found:
                continue
            top = found[0]
            new = top.changes[0].apply(before.config)
            after_dir = os.path.join(tmp, "after")
            profile(name, after_dir, *_config_args(new.to_dict()), "--max-time", max_time, *extra)
            (after,), _ = load_report(after_dir)
            effect = change_effect(before, after, f"{top.rule} ({top.changes[0].description})")
            tried += 1
            beyond = "beyond the noise" in effect and after.summary()["speedup"] > before.summary()["speedup"]
            moved += beyond
            say(f"advice_after[{name}]", effect)
    say("advice_top_suggestion_helped", f"{moved} of {tried}")


BENCHES = {"quality": bench_quality, "auto": bench_auto, "advice": bench_advice}
