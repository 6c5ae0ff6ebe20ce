"""The zoo on Ray against the local executor, per job (issue 22.4): `python -m tests.bench zoo`.

Run it in a fresh network namespace, as every Ray check here (Ray otherwise talks to the
machine's own address):

    unshare -n sh -c 'ip link set lo up; python -m tests.bench zoo [--rounds R] [--jobs N]'

Each round runs the same zoo (N copies of a tiny MLP, `--backend eager --iters 5 --warmup 1
--op-profile 0 --processes 1`) once on the local executor and once on a local Ray instance, the
order alternating round by round. Per job = the median time from one job's result line to the
next one's: each such interval holds one whole job and the hand-over to the next, on both
executors, and none holds Ray's start or stop (once per zoo, reported apart). The ratio Ray /
local is taken within a round. What other processes used meanwhile is sampled each second
(processes outside the zoo's tree: its own Ray processes and job children are inside it), with the host's
steal, so a round run on a busy machine is recognisable; the verdict rests on the quiet rounds.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

from core import PROJECT_ROOT as ROOT
from tests.gui.heartbeat import _steal_s

TARGET_RATIO = 1.10
MIN_QUIET_ROUNDS = 3  # fewer quiet rounds than this give no verdict: single rounds spread ±15 %
QUIET_OTHERS_CORES = 0.25  # as the fidelity bench's quiet rounds
ZOO_SETTINGS = ["--backend", "eager", "--iters", "5", "--warmup", "1", "--op-profile", "0", "--processes", "1"]
_TCK = os.sysconf("SC_CLK_TCK")


def job_ends(lines: list[tuple[float, str]]) -> list[float]:
    """The times of the lines that end a job (`[i/N] model · config: <result>`), neither a
    `started` line (`: started`, on Ray `: started on NODE`) nor an error."""
    return [t for t, line in lines if " · " in line and ": started" not in line and "error" not in line]


def per_job_s(ends: list[float]) -> float | None:
    """The median interval between consecutive job ends, or None with fewer than two."""
    gaps = [b - a for a, b in zip(ends, ends[1:])]
    return statistics.median(gaps) if gaps else None


def _processes() -> dict[tuple[int, int], tuple[int, int]]:
    """(pid, start time) → (parent pid, CPU jiffies used so far); the start time (jiffies since
    boot) tells a reused pid from the process it replaces."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        out[(int(name), int(fields[19]))] = (int(fields[1]), int(fields[11]) + int(fields[12]))
    return out


def _boot_jiffies() -> int:
    """Jiffies since boot now (the clock of /proc/PID/stat's start time)."""
    with open("/proc/uptime") as fh:
        return int(float(fh.read().split()[0]) * _TCK)


class OthersSampler:
    """Cores used by the processes outside `root`'s tree and other than this one, sampled each
    `every` seconds, and the host's steal. A sampler, not a difference of totals: the zoo's Ray
    processes and job children come and go, and the machine's total minus this tree's waited-for
    children would count Ray's own processes as someone else's work. The bench's own load
    (--load: its children, outside the zoo's tree) counts as others'.

    A process once seen in the tree stays the zoo's when its parent ends and it is handed to init
    (Ray's processes at shutdown), and so do its children. A process that started since the last
    sample is counted whole; one that ends between samples loses its last second (under-counted:
    a short-lived process of someone else's may go unseen)."""

    def __init__(self, root: int, every: float = 1.0):
        self.root, self.every, self.cpu_s = root, every, 0.0
        self.by_pid: dict[int, float] = {}  # the CPU seconds counted, per process
        self._ours: set[tuple[int, int]] = set()
        self._stop = threading.Event()
        self._t0, self._steal0 = time.monotonic(), _steal_s()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _is_ours(self, key: tuple[int, int], table: dict, keys_by_pid: dict[int, tuple[int, int]]) -> bool:
        path = []
        for _ in range(64):
            if key in self._ours or key[0] == self.root:
                self._ours.update(path)
                self._ours.add(key)
                return True
            path.append(key)
            parent = table[key][0]
            if parent <= 1 or parent not in keys_by_pid:
                return False
            key = keys_by_pid[parent]
        return False

    def _run(self) -> None:
        me = os.getpid()
        before, since = _processes(), _boot_jiffies()
        while not self._stop.wait(self.every):
            now, at = _processes(), _boot_jiffies()
            keys_by_pid = {key[0]: key for key in now}
            for key, (_, jiffies) in now.items():
                if key[0] == me or self._is_ours(key, now, keys_by_pid):
                    continue
                if key in before:
                    used = max(0, jiffies - before[key][1]) / _TCK
                elif key[1] >= since:  # started since the last sample: all of it
                    used = jiffies / _TCK
                else:
                    continue
                if used > 0:
                    self.cpu_s += used
                    self.by_pid[key[0]] = self.by_pid.get(key[0], 0.0) + used
            before, since = now, at

    def result(self) -> tuple[float, float]:
        """(other processes' cores, the host's steal in cores) since the start."""
        self._stop.set()
        self._thread.join()
        wall = max(time.monotonic() - self._t0, 1e-9)
        return self.cpu_s / wall, (_steal_s() - self._steal0) / wall


def run_zoo(models: list[str], executor: str, out: str) -> dict:
    """One zoo; its per-job time, its start (to the first job's start line) and the lines."""
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, os.path.join(ROOT, "main.py"), "zoo", *models, *ZOO_SETTINGS, "--executor", executor]
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [*cmd, "--out", out], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    sampler = OthersSampler(proc.pid)
    lines = [(time.monotonic() - t0, line.rstrip()) for line in proc.stderr]
    proc.wait()
    total = time.monotonic() - t0
    others, steal = sampler.result()
    ends = job_ends(lines)
    first = next((t for t, line in lines if " · " in line and ": started" in line), None)
    return {
        "per_job_s": per_job_s(ends),
        "jobs": len(ends),
        "rc": proc.returncode,
        "total_s": total,
        "start_s": first,
        "after_last_s": (total - ends[-1]) if ends else None,
        "others_cores": others,
        "steal_cores": steal,
        "tail": [line for _, line in lines[-6:]],
    }


def bench_zoo(args: list[str] = ()) -> None:
    from tests.bench import _opt, say
    from tests.bench.trust import burners, stop
    from tests.core.helpers import MLP_MODEL

    rounds, n_jobs, load = int(_opt(args, "--rounds", 6)), int(_opt(args, "--jobs", 8)), int(_opt(args, "--load", 0))
    if rounds < 1 or n_jobs < 3 or load < 0:
        raise SystemExit(
            "--rounds needs 1 or more, --jobs 3 or more (per job is the median of the intervals "
            "between job ends), --load 0 or more"
        )
    folder = tempfile.mkdtemp(prefix="cp-bench-zoo-")
    procs = burners(load)  # a synthetic load beside both executors (its cores count as others')
    try:
        models = []
        for i in range(1, n_jobs + 1):
            models.append(os.path.join(folder, f"mlp{i}.py"))
            with open(models[-1], "w") as fh:
                fh.write(MLP_MODEL)
        ratios, quiet = [], []
        per: dict[str, list[float]] = {"local": [], "ray": []}
        for r in range(rounds):
            got = {}
            for executor in ("local", "ray") if r % 2 == 0 else ("ray", "local"):
                got[executor] = z = run_zoo(models, executor, os.path.join(folder, f"out-{executor}"))
                if z["rc"] != 0 or z["per_job_s"] is None or z["jobs"] < n_jobs:
                    raise SystemExit(
                        f"the zoo on {executor} failed (exit {z['rc']}, {z['jobs']} jobs):\n" + "\n".join(z["tail"])
                    )
                per[executor].append(z["per_job_s"])
            ratio = got["ray"]["per_job_s"] / got["local"]["per_job_s"]
            others = max(got["local"]["others_cores"], got["ray"]["others_cores"])
            ratios.append(ratio)
            if others < QUIET_OTHERS_CORES:
                quiet.append(ratio)
            print(
                f"round {r + 1}: per job local {got['local']['per_job_s']:.2f} s, Ray {got['ray']['per_job_s']:.2f} s, "
                f"ratio {ratio:.2f}; other processes {got['local']['others_cores']:.2f} / "
                f"{got['ray']['others_cores']:.2f} cores, steal {got['local']['steal_cores']:.2f} / "
                f"{got['ray']['steal_cores']:.2f}; start {got['local']['start_s']:.1f} / {got['ray']['start_s']:.1f} s, "
                f"after the last job {got['local']['after_last_s']:.1f} / {got['ray']['after_last_s']:.1f} s",
                flush=True,
            )
        say("zoo_jobs_per_round", n_jobs)
        say("zoo_per_job_local_median_s", round(statistics.median(per["local"]), 2))
        say("zoo_per_job_ray_median_s", round(statistics.median(per["ray"]), 2))
        say("zoo_ray_over_local_median", round(statistics.median(ratios), 3))
        say("zoo_ray_over_local_range", f"{min(ratios):.2f}-{max(ratios):.2f} over {len(ratios)} rounds")
        say("zoo_quiet_rounds", len(quiet))
        if quiet:
            say("zoo_ray_over_local_quiet_median", round(statistics.median(quiet), 3))
        if len(quiet) >= MIN_QUIET_ROUNDS:
            verdict = "met" if statistics.median(quiet) <= TARGET_RATIO else "not met"
            say("zoo_target_ray_within_10pct_a_job", f"{verdict} (median of {len(quiet)} quiet rounds)")
        else:
            say(
                "zoo_target_ray_within_10pct_a_job",
                f"cannot tell: {len(quiet)} of {rounds} rounds had under {QUIET_OTHERS_CORES} core of other "
                f"load in both runs, {MIN_QUIET_ROUNDS} needed",
            )
    finally:
        stop(procs)
        shutil.rmtree(folder, ignore_errors=True)
