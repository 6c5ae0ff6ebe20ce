"""What a zoo's Ray task does on its node (core.zoo.ray_executor hands the tasks out): the job's
files (which a job needs, and the shipped copies where the node lacks them), the progress it puts
on the driver's actor, its GPU monitor and temporary folder, the job itself (`run_remote_job`,
through core.run.runner.JobRunner), and the files it wrote packed for the driver."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import io
import os
import shutil
import socket
import tarfile
import tempfile
import time
from typing import TYPE_CHECKING

import ray

from core.analysis.result_json import result_to_dict
from core.vocab import events as ev
from core.vocab.config import JobSpec

if TYPE_CHECKING:
    from core.run.sampling import GpuMonitor

PACK_LEVEL = 1  # gzip level of a job's files (see core.zoo.ray_executor's docstring)
_FORWARDED = (ev.JobStarted, ev.PhaseChanged)


def node_name() -> str:
    """This node as the zoo names it: host name and the start of Ray's node id (nodes of a
    cluster simulated on one machine share the host name)."""
    return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()[:6]}"


def file_sha256(path: str) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def files_of(spec: JobSpec) -> list[str]:
    """The local files a job needs: its model file and its weights file."""
    from core.models import source_kind, split_factory

    found = []
    if source_kind(spec.model.source) not in ("torchvision", "timm", "hf"):
        found.append(split_factory(spec.model.source)[0])
    if spec.model.weights:
        found.append(spec.model.weights)
    return found


def _localize(spec: JobSpec, shipped: dict, folder: str) -> JobSpec:
    """The spec with every file this node lacks (or holds with other content) replaced by the
    shipped copy (`shipped`: path → (sha256, bytes)) written into `folder`."""
    from core.models import split_factory

    def place(path: str) -> str:
        sha, data = shipped[path]
        if os.path.isfile(path) and file_sha256(path) == sha:
            return path
        copy = os.path.join(folder, "files", sha[:12], os.path.basename(path))
        os.makedirs(os.path.dirname(copy), exist_ok=True)
        with open(copy, "wb") as fh:
            fh.write(data)
        return copy

    model = spec.model
    path, factory = split_factory(model.source)
    if path in shipped:
        model = dataclasses.replace(model, source=place(path) + (f":{factory}" if model.source != path else ""))
    if model.weights and model.weights in shipped:
        model = dataclasses.replace(model, weights=place(model.weights))
    return dataclasses.replace(spec, model=model)


class Progress:
    """The tasks' progress for the driver (a Ray actor claiming no CPU): tasks put items, the
    driver takes them in batches, waiting in `take` until there is one."""

    def __init__(self):
        self._items: list = []
        self._arrived = asyncio.Event()

    # async, as every method here: they run on the actor's event loop, one at a time
    async def put(self, item) -> None:
        self._items.append(item)
        self._arrived.set()

    async def wake(self) -> None:
        """Let a waiting take return now, with what there is."""
        self._arrived.set()

    async def take(self, wait: bool = True) -> list:
        """Every item put since the last take; with `wait`, not before there is one (or a wake)."""
        if wait:
            await self._arrived.wait()
        self._arrived.clear()
        items, self._items = self._items, []
        return items


class _Forward:
    """The task's RunListener: puts its phase changes on the driver's progress actor."""

    def __init__(self, progress, job_id: str):
        self.progress, self.job_id = progress, job_id

    def put(self, item) -> None:
        # Fire and forget: a task that waits in ray.get lends its CPUs to the next task until
        # the wait ends, and that task would then time itself beside this one on the node.
        try:
            self.progress.put.remote(item)
        except Exception:
            pass  # progress is a courtesy; the result still comes back

    def on_job_started(self, index, total, spec) -> None:
        pass

    def on_event(self, event) -> None:
        if isinstance(event, _FORWARDED):
            self.put(("event", self.job_id, event, time.time()))

    def on_job_ended(self, index, total, spec, terminal) -> None:
        pass

    def on_status(self, status) -> None:
        pass


_GPU_MONITORS: dict[int, GpuMonitor] = {}  # this worker's, by the GPU Ray gave its task


def gpu_monitor(gpu_ids: list) -> GpuMonitor:
    """The NVML reader for the GPU Ray gave this task (NVML counts physical GPUs; Ray gives
    their ids), started once per worker process: a worker runs task after task."""
    from core.run.sampling import GpuMonitor

    try:
        index = int(gpu_ids[0]) if gpu_ids else 0
    except (TypeError, ValueError):
        index = 0  # GpuMonitor's default
    if index not in _GPU_MONITORS:
        _GPU_MONITORS[index] = GpuMonitor(index)
    return _GPU_MONITORS[index]


TASK_FOLDER_PREFIX = "compile-profiler-zoo-"


def task_folder() -> tempfile.TemporaryDirectory:
    """A task's own temporary folder, named by its worker's pid; the folders of workers that are
    gone are removed first (`sweep_task_folders`)."""
    sweep_task_folders()
    return tempfile.TemporaryDirectory(prefix=f"{TASK_FOLDER_PREFIX}{os.getpid()}-")


def sweep_task_folders(root: str | None = None) -> list[str]:
    """Remove the task folders whose worker process is gone: a task cancelled (Ctrl+C on a zoo)
    or a hung job's task ends with its worker killed, before its folder is removed (one was left
    in /tmp at each such end). Only folders of this product's name with a pid that no longer
    runs, owned by this user, never through a symbolic link; the paths removed."""
    root = root or tempfile.gettempdir()
    removed = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return removed
    for entry in entries:
        name = entry.name
        if not name.startswith(TASK_FOLDER_PREFIX):
            continue
        pid = name[len(TASK_FOLDER_PREFIX) :].split("-", 1)[0]
        if not pid.isdigit() or _process_runs(int(pid)):
            continue
        try:
            if not entry.is_dir(follow_symlinks=False) or entry.stat(follow_symlinks=False).st_uid != os.getuid():
                continue
        except OSError:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed.append(entry.path)
    return removed


def _process_runs(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's: it runs
        return True
    return True


@ray.remote(max_retries=0)
def run_remote_job(spec: JobSpec, progress, paths: tuple, shas: tuple, *contents: bytes) -> dict:
    """One zoo job on this node: {"result": JobResult as a dict, "artifacts": tar.gz bytes
    or b"", "node": this node's name, "ended": its clock when the job ended}. The job's
    files come as `paths`, their `shas` and `contents` (object refs given as arguments, so
    Ray fetches them before the task starts: nothing here waits in ray.get)."""
    shipped = {p: (sha, data) for p, sha, data in zip(paths, shas, contents)}
    from core.run.runner import JobRunner

    node = node_name()
    forward = _Forward(progress, spec.job_id)
    forward.put(("started", spec.job_id, node, time.time()))
    gpu = gpu_monitor(ray.get_gpu_ids())
    with task_folder() as tmp:
        artifacts = os.path.join(tmp, "artifacts")
        os.makedirs(artifacts)
        local = dataclasses.replace(_localize(spec, shipped, tmp), artifacts_dir=artifacts)
        runner = JobRunner(listener=None, on_event=forward.on_event, gpu=gpu)
        try:
            result = runner.run(local)
        finally:
            runner.close()
        result.environment["node"] = node
        packed = pack_files(artifacts)
        return {"result": result_to_dict(result), "artifacts": packed, "node": node, "ended": time.time()}


def pack_files(folder: str) -> bytes:
    """The files a job wrote as a tar.gz at PACK_LEVEL, or b"" when it wrote none."""
    if not any(os.scandir(folder)):
        return b""
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz", compresslevel=PACK_LEVEL) as tar:
        tar.add(folder, arcname=".")
    return packed.getvalue()


def unpack_files(data: bytes, folder: str) -> None:
    """What pack_files packed, into `folder` ("data" filter: nothing outside the folder)."""
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(folder, filter="data")
