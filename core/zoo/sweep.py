"""Running a zoo: every model × config as one ordinary job, each model's report written as
its jobs end, the zoo's tables (core.zoo.results) kept up to date beside them.

    ZooSweep.prepare()  claim DIR and a folder per model; with --resume, keep the jobs an
                        earlier run completed (read from DIR/<model>/report.json)
    executor.run(jobs, sweep)   LocalExecutor here (one JobRunner per slot, `--parallel N`)
                                or core.zoo.ray_executor.RayExecutor (Ray tasks); both call the
                                ZooListener hooks, from their own threads
    ZooSweep.finish()   the final zoo.csv / zoo_summary.csv / zoo.json

Each model's report is rewritten whenever one of its jobs ends, so a sweep stopped at any
point (Ctrl+C, a driver killed) leaves reports that `--resume` completes. Nothing here
imports Ray: a local sweep never loads it.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import socket
import threading
from collections import deque
from dataclasses import dataclass

from core.analysis.results import JobResult
from core.report.files import OutputFolder, ReportError, load_report, write_report
from core.vocab import events as ev
from core.vocab.artifacts import JobArtifacts, read_manifest, resolve
from core.vocab.config import JobSpec
from core.vocab.records import JobStatus
from core.zoo.files import ZOO_FILES, folder_names, load_zoo, write_zoo
from core.zoo.results import Zoo, ZooRow

# JobSpec fields that must match for a finished job to count towards a resumed sweep.
RESUME_FIELDS = (
    "model",
    "config",
    "warmup",
    "iters",
    "device",
    "threads",
    "inference_mode",
    "block_size",
    "op_profile_calls",
    "sweep_shapes",
    "processes",
    "precision_pct",
    "max_time_s",
)


@dataclass(frozen=True)
class ZooJob:
    """One model × config of a sweep: `index` of `total` (from 1) among the jobs this run
    runs; `folder` the model's report folder name inside the zoo folder."""

    model: str
    folder: str
    spec: JobSpec
    index: int
    total: int

    @property
    def label(self) -> str:
        return f"[{self.index}/{self.total}] {self.model} · {self.spec.config.label}"


class ZooListener:
    """What an executor tells the sweep; every method is optional, and may be called from
    an executor's thread (the sweep and its listeners lock what they share)."""

    def on_job_started(self, job: ZooJob, node: str = "") -> None:
        """The job started running; `node` names the Ray node it runs on ("" locally)."""

    def on_event(self, job: ZooJob, event: ev.Event) -> None:
        """An event of the running job (the local executor forwards all; Ray JobStarted and
        PhaseChanged)."""

    def on_job_ended(self, job: ZooJob, result: JobResult) -> None:
        """The job ended (completed, failed or cancelled); called exactly once per job."""


def ended_without_running(spec: JobSpec, terminal: ev.Event) -> JobResult:
    """The result of a job that ended without a result of its own (cancelled in the queue, a
    Ray node that died with it)."""
    result = JobResult(spec)
    result.apply(terminal)
    return result


def same_settings(a: JobSpec, b: JobSpec) -> list[str]:
    """The RESUME_FIELDS in which two jobs differ."""
    da, db = a.to_dict(), b.to_dict()
    return [k for k in RESUME_FIELDS if da.get(k) != db.get(k)]


def remove_config_artifacts(root: str, label: str) -> None:
    """Remove what an unfinished earlier attempt of this config wrote, before it runs again:
    only inside the artifact folders the folder's manifest lists (ours), never through a
    symbolic link."""
    arts = JobArtifacts.for_label(label)
    ours = read_manifest(root).folders
    for rel in (arts.trace("eager"), arts.trace("compiled"), arts.compile_log):
        if rel.split("/")[0] not in ours:
            continue
        path = resolve(root, rel)  # never through a symbolic link out of the folder
        if path and os.path.isfile(path):
            try:
                os.unlink(path)
            except OSError:
                pass
    for rel in (arts.graphs_dir, arts.torch_trace_dir, arts.tlparse_dir):
        if rel.split("/")[0] not in ours:
            continue
        path = resolve(root, rel)
        if path and os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)


def _refuse_a_zoo_there(zoo_dir: str, resume: bool, overwrite: bool) -> None:
    there = [n for n in ZOO_FILES if os.path.exists(os.path.join(zoo_dir, n))]
    if there and not (resume or overwrite):
        raise ReportError(
            f"{zoo_dir} already holds a zoo ({', '.join(there)}); pass --resume to complete "
            "it, --overwrite to replace it, or choose a new folder."
        )


def reserve_zoo_folder(zoo_dir: str, resume: bool = False, overwrite: bool = False) -> OutputFolder:
    """The zoo's folder, locked and checked as the sweep will claim it (core.report.files
    OutputFolder.reserve), nothing in it changed: raises ReportError naming the problem. The
    caller passes it to ZooSweep, or `abandon`s it when a setting is refused."""
    root = OutputFolder(zoo_dir, report=False).reserve()
    try:
        _refuse_a_zoo_there(root.path, resume, overwrite)
    except BaseException:
        root.abandon()
        raise
    return root


class ZooSweep(ZooListener):
    """The sweep's state: which jobs to run, every result (kept and new) by model, the
    folders it holds, and the files it writes. `inner` hears every hook after the sweep
    (the command line's progress, the app's worker)."""

    def __init__(
        self,
        zoo_dir: str,
        specs_by_model: dict[str, list[JobSpec]],
        options: dict,
        overwrite: bool = False,
        resume: bool = False,
        inner: ZooListener | None = None,
        root: OutputFolder | None = None,
    ):
        """`root`: the zoo's folder as `reserve_zoo_folder` reserved it (the command line checks
        --out before the settings); else it is reserved and claimed by `prepare`."""
        self.zoo_dir = os.path.abspath(os.path.expanduser(zoo_dir))
        self._reserved = root
        self.specs_by_model = specs_by_model
        self.options = options
        self.overwrite, self.resume = overwrite, resume
        self.inner = inner or ZooListener()
        self.folders: dict[str, str] = {}
        self.results: dict[str, dict[str, JobResult]] = {m: {} for m in specs_by_model}  # model → label → result
        self.kept = 0
        self.write_errors: list[str] = []  # a report that could not be written while jobs ran
        self._claimed: dict[str, OutputFolder] = {}
        self._root: OutputFolder | None = None
        self._lock = threading.RLock()  # jobs end on executor threads; zoo() may be read from any
        self.host = socket.gethostname()

    # ------------------------------------------------------------------ before the first job

    def prepare(self) -> list[ZooJob]:
        """Claim the zoo folder and one folder per model, keep what --resume may keep, and
        return the jobs to run. Raises ReportError (nothing claimed is kept) when a folder
        cannot be used."""
        try:
            return self._prepare()
        except BaseException:
            self.release()
            raise

    def _prepare(self) -> list[ZooJob]:
        # a folder holding a profile report is refused
        self._root = (self._reserved or OutputFolder(self.zoo_dir, report=False)).claim()
        _refuse_a_zoo_there(self.zoo_dir, self.resume, self.overwrite)
        taken = {}
        if self.resume and os.path.exists(os.path.join(self.zoo_dir, "zoo.json")):
            taken = load_zoo(self.zoo_dir).models
        self.folders = folder_names(list(self.specs_by_model), taken)
        pending: list[tuple[str, JobSpec]] = []
        for model, specs in self.specs_by_model.items():
            path = os.path.join(self.zoo_dir, self.folders[model])
            kept = self._kept_results(model, path, specs) if self.resume else {}
            self._claimed[model] = OutputFolder(path, overwrite=self.overwrite, extend=self.resume).claim()
            for spec in specs:
                if spec.config.label in kept:
                    self.results[model][spec.config.label] = kept[spec.config.label]
                    self.kept += 1
                else:
                    if self.resume:
                        remove_config_artifacts(path, spec.config.label)
                    pending.append((model, dataclasses.replace(spec, artifacts_dir=path)))
        return [ZooJob(m, self.folders[m], s, i, len(pending)) for i, (m, s) in enumerate(pending, 1)]

    def _kept_results(self, model: str, path: str, specs: list[JobSpec]) -> dict[str, JobResult]:
        """The completed jobs of an earlier run in `path` that this run asks for again."""
        if not os.path.exists(os.path.join(path, "report.json")):
            return {}
        results, _ = load_report(path)
        labels = {s.config.label: s for s in specs}
        kept = {}
        for r in results:
            spec = labels.get(r.config.label)
            if r.spec.model.source != specs[0].model.source:
                raise ReportError(
                    f"{path} holds a report of {r.spec.model.source}, not {model}; resume with the "
                    "same models in the same order, or choose a new folder."
                )
            if spec is None or r.status != JobStatus.COMPLETED:
                continue
            differ = same_settings(r.spec, spec)
            if differ:
                raise ReportError(
                    f"--resume: {path} measured config '{r.config.label}' with other settings "
                    f"({', '.join(differ)} differ); resume with the same options as the first run, "
                    "or pass --overwrite to start over."
                )
            kept[r.config.label] = r
        # what the earlier run measured that this one does not ask for stays in the model's report
        self.results[model].update({r.config.label: r for r in results if r.config.label not in labels and r.ended})
        return kept

    # ------------------------------------------------------------------ while jobs run

    def on_job_started(self, job: ZooJob, node: str = "") -> None:
        self.inner.on_job_started(job, node)

    def on_event(self, job: ZooJob, event: ev.Event) -> None:
        self.inner.on_event(job, event)

    def on_job_ended(self, job: ZooJob, result: JobResult) -> None:
        if result.environment and "node" not in result.environment:
            result.environment["node"] = self.host
        with self._lock:
            self.results[job.model][job.spec.config.label] = result
            try:
                self._write_model(job.model)
                write_zoo(self.zoo(finished=False), self.zoo_dir)
            except OSError as exc:
                self.write_errors.append(str(exc))
        self.inner.on_job_ended(job, result)

    def _write_model(self, model: str) -> None:
        mine = self.results[model]
        order = [s.config.label for s in self.specs_by_model[model]]
        ordered = [mine[label] for label in order if label in mine] + [r for k, r in mine.items() if k not in order]
        options = {**self.options, "model": model, "zoo": self.zoo_dir}
        write_report(ordered, self._claimed[model].path, options, folder=self._claimed[model])

    # ------------------------------------------------------------------ the zoo's tables

    def zoo(self, finished: bool = True) -> Zoo:
        """The zoo as it stands (a job not ended yet is a "pending" row). Any thread."""
        with self._lock:
            return self._zoo(finished)

    def _zoo(self, finished: bool) -> Zoo:
        rows = []
        for model, specs in self.specs_by_model.items():
            for spec in specs:
                result = self.results[model].get(spec.config.label)
                rows.append(
                    ZooRow.from_result(model, self.folders[model], result)
                    if result is not None
                    else ZooRow(model, self.folders[model], spec.config.label, "pending", backend=spec.config.backend)
                )
        configs = list(dict.fromkeys(s.config.label for specs in self.specs_by_model.values() for s in specs))
        return Zoo(dict(self.folders), configs, rows, self.options, finished, self.zoo_dir)

    def finish(self) -> Zoo:
        """Write the final tables and let go of the folders; returns the zoo."""
        try:
            with self._lock:
                for model in self.specs_by_model:
                    if self.results[model] and not os.path.exists(
                        os.path.join(self.zoo_dir, self.folders[model], "report.json")
                    ):
                        self._write_model(model)
                zoo = self.zoo(finished=True)
                write_zoo(zoo, self.zoo_dir)
            return zoo
        finally:
            self.release()

    def removed_texts(self) -> list[str]:
        """What --overwrite removed from each model's folder, as sentences."""
        return [f.removed_text() for f in self._claimed.values() if f.removed]

    def release(self) -> None:
        for folder in self._claimed.values():
            folder.release()
        if self._root is not None:
            self._root.release()
        elif self._reserved is not None:  # never claimed: a folder the reserve made goes again
            self._reserved.abandon()

    def all_results(self) -> list[JobResult]:
        return [r for mine in self.results.values() for r in mine.values()]


class LocalExecutor:
    """Runs a zoo's jobs on this machine through core.run.runner.JobRunner: `parallel` jobs at
    a time (default one: jobs side by side share cores, memory bandwidth and caches, which
    skews their timings), each in its own process with its timeout, as `profile` runs them."""

    def __init__(self, parallel: int = 1):
        if parallel < 1:
            raise ValueError("parallel must be at least 1")
        self.parallel = parallel
        self._cancelled = threading.Event()
        self._runners: list = []
        self._lock = threading.Lock()

    def run(self, jobs: list[ZooJob], listener: ZooListener) -> None:
        """Run every job; each ends with listener.on_job_ended, cancelled ones included."""
        queue = deque(jobs)
        slots = min(self.parallel, len(jobs))
        if slots <= 1:
            self._slot(queue, listener)
            return
        threads = [
            threading.Thread(target=self._slot, args=(queue, listener), name=f"zoo-slot-{i}", daemon=True)
            for i in range(slots)
        ]
        for t in threads:
            t.start()
        for t in threads:
            while t.is_alive():
                t.join(0.2)  # the main thread stays free for Ctrl+C

    def _slot(self, queue: deque, listener: ZooListener) -> None:
        from core.run.runner import JobRunner

        hooks = _RunnerHooks(listener)
        runner = JobRunner(listener=hooks)
        with self._lock:
            self._runners.append(runner)
            if self._cancelled.is_set():
                runner.cancel()
        try:
            while True:
                with self._lock:
                    if not queue:
                        return
                    job = queue.popleft()
                if self._cancelled.is_set():
                    listener.on_job_ended(
                        job, ended_without_running(job.spec, ev.JobCancelled(job.spec.job_id, phase="queue"))
                    )
                    continue
                hooks.job = job
                result = runner.run(job.spec, job.index, job.total)
                listener.on_job_ended(job, result)
        finally:
            runner.close()

    def cancel(self) -> None:
        """Cancel the running jobs and every queued one (any thread)."""
        self._cancelled.set()
        with self._lock:
            runners = list(self._runners)
        for r in runners:
            r.cancel()


class _RunnerHooks:
    """A JobRunner's listener for one slot: passes its job's start and events on."""

    def __init__(self, listener: ZooListener):
        self.listener, self.job = listener, None

    def on_job_started(self, index, total, spec) -> None:
        self.listener.on_job_started(self.job)

    def on_event(self, event: ev.Event) -> None:
        self.listener.on_event(self.job, event)

    def on_job_ended(self, index, total, spec, terminal) -> None:
        pass  # the executor reports the folded result

    def on_status(self, status) -> None:
        pass
