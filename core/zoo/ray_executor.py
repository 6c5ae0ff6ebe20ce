"""The Ray executor of a zoo: every job is a Ray task (Ray places them; nothing here does).

Only `--executor ray` imports this module, so a local sweep never loads Ray.

- Joining a cluster is bounded: the address is first tried with a plain TCP connection (a
  refused or unreachable port is said at once), then Ray connects on a thread of its own
  while the main thread waits, at most `connect_timeout` seconds (Ray's own connect waits
  with no end when something at the address accepts and never answers, and holds the main
  thread so that Ctrl+C would act only when it gives up).
- Jobs are handed to Ray in the zoo's order, no more at a time than the cluster's live nodes
  have room for (Ray started tasks handed over together in any order, so two jobs meant to
  run side by side could run one after the other on one node); a node that dies shrinks the
  room, so it is never handed another job.

- Each task claims what keeps its timings its own: one GPU (and one CPU) for `--device cuda`;
  for a CPU job the `--threads` it asked for or, without it, every CPU of the smallest node,
  so one job runs per node (Ray sets OMP_NUM_THREADS to the CPUs claimed, and torch uses that
  many threads; the report records them).
- On its node the task runs the job exactly as the local executor does (core.run.runner.JobRunner:
  a child process, its timeout, crash isolation) in a temporary folder, and returns the
  JobResult as report.json holds it plus the files the job wrote (traces, graphs, logs) as
  a tar archive; the driver writes both into DIR/<model>/.
- Our code travels to every node with the job (runtime_env py_modules: the `core` package),
  and so do model and weights files a node does not have at the same path (with the same
  content); each node needs Python, Ray, torch and the model sources' packages.
- Tasks are never retried (max_retries=0): a node or worker that dies mid-job ends that job
  as failed with the cause, the sweep goes on, and `--resume` runs it again.
- Progress: each task puts its start (with its node) and its phase changes on a progress
  actor; the driver waits on the first of a task's end and the actor's next batch of items
  (no polling: progress lines show as they happen and a job's node is not woken 5 times a
  second), and drops an item that arrives after its job's end.
- What costs time besides the job itself is kept small (docs/BENCHMARKS.md): the task's files are
  packed at gzip level 1 (level 9 took 2.2 s for a 27 MB report folder of traces, level 1
  0.11 s at 1.3 times the size), and NVML is started once per Ray worker, as the local
  executor's runner keeps one GPU monitor for all its jobs.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections import deque

import ray
import ray.exceptions as rex

from core.analysis.result_json import result_from_dict
from core.analysis.results import JobResult
from core.vocab import events as ev
from core.vocab.config import JobSpec
from core.vocab.limits import ConfigError
from core.zoo.ray_cluster import (
    ADDRESS_HELP,
    CONNECT_TIMEOUT_S,
    LOCAL_START_TIMEOUT_S,
    ConnectTimeout,
    QuietThreadWarning,
    exit_on_sigterm,
    probe,
    tasks_runtime_env,
)
from core.zoo.ray_task import Progress, file_sha256, files_of, run_remote_job, unpack_files
from core.zoo.sweep import ZooJob, ZooListener, ended_without_running

POLL_S = 0.2  # the longest the driver waits before it looks at a cancel and the cluster's room
TAKE_TIMEOUT_S = 10.0  # the progress actor answers in milliseconds; past this it is taken as lost
ROOM_EVERY_S = 2.0  # how often the cluster's room for jobs is read again while jobs run
_RESOURCE_NAMES = {"num_cpus": "CPU", "num_gpus": "GPU"}  # a task's claim → a node's resource


def failure_reason(exc: BaseException, node: str, phase: str) -> tuple[str, str]:
    """(reason, detail) for a task that ended with a Ray error instead of a result."""
    where = f" ({node})" if node else ""
    during = f" during its {phase} phase" if phase else ""
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
    if isinstance(exc, rex.NodeDiedError):
        reason = f"the Ray node running it{where} died{during}"
    elif isinstance(exc, rex.WorkerCrashedError):
        reason = (
            f"the Ray worker running it{where} died{during} (its node was lost, or the worker was killed, "
            "e.g. for memory)"
        )
    elif isinstance(exc, (rex.ObjectLostError, rex.OwnerDiedError)):
        reason = f"its result was lost with a Ray node{where}{during}"
    elif isinstance(exc, rex.RuntimeEnvSetupError):
        reason = f"Ray could not set up the job's environment on its node{where}: {first}"
    elif isinstance(exc, rex.RayTaskError):
        cause = getattr(exc, "cause", None)
        reason = f"the Ray task{where} raised {type(cause).__name__ if cause else 'an error'}: {cause or first}"
    else:
        reason = f"Ray could not run it{where}: {type(exc).__name__}: {first}"
    return reason, str(exc)[-4000:]


class RayExecutor:
    """Runs a zoo's jobs as Ray tasks on a local Ray instance or the cluster at `address`."""

    def __init__(self, address: str | None = None, connect_timeout: float | None = None):
        self.address = address
        if connect_timeout is None:
            connect_timeout = CONNECT_TIMEOUT_S if address else LOCAL_START_TIMEOUT_S
        self.connect_timeout = connect_timeout
        # True once a connect was given up while Ray's own still runs on its thread: the process
        # must then end without Python's teardown (os._exit: core.cli.zoo), which ran under that
        # thread's native code and aborted it now and then (std::bad_alloc, exit -6 for 2)
        self.connect_abandoned = False
        self.progress = None  # the Progress actor
        self._refs: dict = {}
        self._cancelled = False
        self._started_ray = False
        self._release: threading.Event | None = None  # lets the thread that ran ray.init end
        self.cpus_per_job: int | None = None
        # job id → (node, start, end) by the nodes' clocks: which jobs shared a node when
        self.timeline: dict[str, tuple[str, float | None, float | None]] = {}

    # ------------------------------------------------------------------ set-up

    def connect(self, specs: list[JobSpec]) -> None:
        """Start or join Ray and check the cluster can run these jobs; ConfigError if not."""
        runtime_env = tasks_runtime_env()
        if self.address:
            probe(self.address)
            kwargs = {"address": self.address}
        else:  # a local instance, reachable from this machine only
            kwargs = {"include_dashboard": False, "_node_ip_address": "127.0.0.1"}
        try:
            self._init(runtime_env=runtime_env, log_to_driver=False, logging_level="WARNING", **kwargs)
        except ConnectTimeout:
            raise
        except Exception as exc:
            where = f"the Ray cluster at {self.address}" if self.address else "a local Ray instance"
            raise ConfigError(f"could not start or join {where}: {type(exc).__name__}: {exc}") from None
        self._started_ray = True
        self._check(specs)
        self.progress = ray.remote(num_cpus=0)(Progress).remote()

    def _init(self, **kwargs) -> None:
        """ray.init on a thread of its own, waited for at most `connect_timeout` seconds in
        steps short enough for Ctrl+C (KeyboardInterrupt here) to act at once. The thread then
        stays until `close()`: a local instance's processes die with the thread that started
        them (Ray has the kernel kill them when their parent thread ends)."""
        outcome: dict = {}
        connected = threading.Event()
        release = self._release = threading.Event()

        def connect() -> None:
            try:
                ray.init(**kwargs)
                outcome["done"] = True
            except BaseException as exc:  # handed to the waiting thread
                outcome["error"] = exc
            connected.set()
            if "done" in outcome:
                release.wait()

        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, exit_on_sigterm)
        quiet = QuietThreadWarning()
        ray_log = logging.getLogger("ray._private.worker")
        ray_log.addFilter(quiet)
        thread = threading.Thread(target=connect, name="ray-connect", daemon=True)
        started = time.monotonic()
        try:
            thread.start()
            while not connected.wait(0.1) and time.monotonic() - started < self.connect_timeout:
                pass
        finally:
            ray_log.removeFilter(quiet)
            # still connecting (timed out, or Ctrl+C): the thread stays inside ray.init
            self.connect_abandoned = not connected.is_set()
        if not connected.is_set():  # left to the thread (daemon: it ends with the process)
            if self.address:
                raise ConnectTimeout(
                    f"the Ray cluster at {self.address} did not answer within {self.connect_timeout:g} s "
                    f"(something there accepts connections but does not answer as Ray does, or the cluster "
                    f"is overloaded); {ADDRESS_HELP}. --ray-timeout S waits longer."
                )
            raise ConnectTimeout(
                f"a local Ray instance did not start within {self.connect_timeout:g} s; check the machine's "
                "load and memory. --ray-timeout S waits longer."
            )
        if "error" in outcome:
            raise outcome["error"]

    def _check(self, specs: list[JobSpec]) -> None:
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        cpus = [int(n["Resources"].get("CPU", 0)) for n in nodes if n["Resources"].get("CPU", 0) >= 1]
        gpus = max((n["Resources"].get("GPU", 0) for n in nodes), default=0)
        where = f"the Ray cluster at {self.address}" if self.address else "the local Ray instance"
        if not cpus:
            raise ConfigError(f"{where} has no node with a CPU to run jobs on.")
        if any(s.device == "cuda" for s in specs) and gpus < 1:
            raise ConfigError(
                f"--device cuda: {where} has no GPU (its nodes offer {', '.join(sorted({str(c) for c in cpus}))} "
                "CPUs and no GPU); use --device cpu or a cluster with GPUs."
            )
        threads = max((s.threads or 0 for s in specs), default=0)
        if threads and threads > max(cpus):
            raise ConfigError(
                f"--threads {threads}: no node of {where} has that many CPUs (the largest has {max(cpus)})."
            )
        self.cpus_per_job = min(cpus)

    def resources(self, spec: JobSpec) -> dict:
        """What one job claims: a GPU and a CPU on CUDA, else its threads or a whole (smallest) node."""
        if spec.device == "cuda":
            return {"num_gpus": 1, "num_cpus": spec.threads or 1}
        return {"num_cpus": spec.threads or self.cpus_per_job or 1}

    # ------------------------------------------------------------------ running

    def room(self, spec: JobSpec) -> int:
        """How many jobs like `spec` the cluster's live nodes hold at once (at least 1, so a job
        that fits nowhere right now is still handed to Ray, which waits for room)."""
        need = self.resources(spec)
        room = 0
        for node in ray.nodes():
            if not node.get("Alive"):
                continue
            have = node.get("Resources", {})
            fits = [int(have.get(_RESOURCE_NAMES[key], 0) // n) for key, n in need.items() if n]
            room += min(fits) if fits else 0
        return max(1, room)

    def run(self, jobs: list[ZooJob], listener: ZooListener) -> None:
        """Hand the jobs to Ray in order as room frees up, and each result to the listener as
        its task ends."""
        shipped = {}
        for job in jobs:
            for path in files_of(job.spec):
                if path not in shipped and os.path.isfile(path):
                    with open(path, "rb") as fh:
                        shipped[path] = (file_sha256(path), ray.put(fh.read()))
        by_id = {job.spec.job_id: job for job in jobs}
        phases: dict[str, str] = {}
        nodes: dict[str, str] = {}
        ended_ids: set[str] = set()
        waiting = deque(jobs)
        room = {"jobs": 0, "read": -ROOM_EVERY_S}
        progress = {"take": None, "lost": self.progress is None}  # the pending take on the actor

        def submit() -> None:
            """Hand over the next jobs while the cluster has room (cancelled ones end here)."""
            while waiting:
                job = waiting[0]
                if self._cancelled:
                    waiting.popleft()
                    listener.on_job_ended(
                        job, ended_without_running(job.spec, ev.JobCancelled(job.spec.job_id, "queue"))
                    )
                    continue
                if time.monotonic() - room["read"] >= ROOM_EVERY_S:
                    room["jobs"], room["read"] = self.room(job.spec), time.monotonic()
                if len(self._refs) >= room["jobs"]:
                    return
                waiting.popleft()
                mine = [p for p in files_of(job.spec) if p in shipped]
                ref = run_remote_job.options(**self.resources(job.spec)).remote(
                    job.spec,
                    self.progress,
                    tuple(mine),
                    tuple(shipped[p][0] for p in mine),
                    *(shipped[p][1] for p in mine),
                )
                self._refs[ref] = job

        def deliver(item) -> None:
            kind, job_id, payload = item[:3]
            job = by_id.get(job_id)
            if job is None or job_id in ended_ids:
                return  # a progress item that came after its job's end (puts are fire and forget)
            if kind == "started":
                nodes[job_id] = payload
                self.timeline[job_id] = (payload, item[3], None)
                listener.on_job_started(job, payload)
            elif kind == "event":
                if isinstance(payload, ev.PhaseChanged):
                    phases[job_id] = payload.phase
                listener.on_event(job, payload)
            else:  # "ended": payload is (the task's ref, what ray.get gave or raised)
                ended_ids.add(job_id)
                self._refs.pop(payload[0], None)
                result, ended = self._result(payload[1], job, nodes.get(job_id, ""), phases.get(job_id, ""))
                node, started, _ = self.timeline.get(job_id, (nodes.get(job_id, ""), None, None))
                self.timeline[job_id] = (node, started, ended)
                listener.on_job_ended(job, result)

        def taken() -> list:
            """Every progress item the actor holds now, (time on its node, item) each; none once
            the actor is lost (the jobs still end)."""
            ref, progress["take"] = progress["take"], None
            if progress["lost"]:
                return []
            try:
                if ref is None:
                    ref = self.progress.take.remote(wait=False)
                elif not ray.wait([ref], timeout=0)[0]:
                    self.progress.wake.remote()  # the pending take returns what there is (a later one would miss it)
                return [(i[3], i) for i in ray.get(ref, timeout=TAKE_TIMEOUT_S)]
            except Exception:  # the actor or its node died: progress is a courtesy
                progress["lost"] = True
                return []

        def poll(ready, items) -> None:
            """Hand over what happened, in the order it happened on the nodes (a job that ended
            and the one that took its place may arrive together)."""
            for ref in ready:
                try:
                    outcome = ray.get(ref)
                    ended = float(outcome["ended"])
                except BaseException as exc:  # the task's Ray error (KeyboardInterrupt: a cancel)
                    outcome, ended = exc, time.time()
                items.append((ended, ("ended", self._refs[ref].spec.job_id, (ref, outcome))))
            for _, item in sorted(items, key=lambda x: x[0]):
                deliver(item)

        submit()
        while self._refs:
            # Wait for the first of: a task's end, the next progress item, POLL_S (a cancel, the room)
            if progress["take"] is None and not progress["lost"]:
                progress["take"] = self.progress.take.remote()
            watched = [*self._refs, *([progress["take"]] if progress["take"] is not None else [])]
            if ray.wait(watched, num_returns=1, timeout=POLL_S)[0]:
                ready = ray.wait(watched, num_returns=len(watched), timeout=0)[0]
                items = taken() if progress["take"] in ready else []
                ended = [ref for ref in ready if ref in self._refs]
                if ended:  # their last items may be on the way: take what the actor holds
                    items += taken()
                    room["read"] = -ROOM_EVERY_S  # a node may have gone with the job: read the room again
                poll(ended, items)
            submit()
        poll([], taken())

    def _result(self, outcome, job: ZooJob, node: str, phase: str) -> tuple[JobResult, float]:
        """The job's result (or its failure, from the Ray error it ended with) and when it ended."""
        job_id = job.spec.job_id
        if isinstance(outcome, (rex.TaskCancelledError, KeyboardInterrupt)) or (
            self._cancelled and isinstance(outcome, BaseException)
        ):
            return ended_without_running(job.spec, ev.JobCancelled(job_id, phase=phase or "queue")), time.time()
        if isinstance(outcome, BaseException):
            reason, detail = failure_reason(outcome, node, phase)
            return (
                ended_without_running(job.spec, ev.JobFailed(job_id, reason=reason, detail=detail, phase=phase)),
                time.time(),
            )
        payload = outcome
        try:
            result = result_from_dict(payload["result"], f"the result of {job.label}")
        except Exception as exc:
            return ended_without_running(
                job.spec,
                ev.JobFailed(
                    job_id,
                    reason=f"its result from {payload.get('node') or 'its node'} could not be read: {exc}",
                    phase=phase,
                ),
            ), time.time()
        result.spec = job.spec  # the driver's paths (the node's were temporary)
        if payload.get("artifacts"):
            unpack_files(payload["artifacts"], job.spec.artifacts_dir)
        return result, float(payload.get("ended") or time.time())

    def cancel(self) -> None:
        """Cancel every task not yet ended (their jobs end as cancelled)."""
        self._cancelled = True
        for ref in list(self._refs):
            try:
                ray.cancel(ref)
            except Exception:
                pass

    def close(self) -> None:
        """Let go of Ray (a local instance stops); nothing when Ray never connected (a connect
        that timed out still waits on its thread)."""
        if self._started_ray:
            try:
                if self.progress is not None:
                    ray.kill(self.progress)
            except Exception:
                pass
            ray.shutdown()
            self._started_ray = False
        if self._release is not None:
            self._release.set()
