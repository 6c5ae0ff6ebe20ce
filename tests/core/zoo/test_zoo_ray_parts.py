"""The Ray executor's parts that need no Ray instance (core.zoo.ray_task, core.zoo.ray_cluster;
nothing started): how a task packs the job's files and the driver unpacks them, the progress actor's batches,
and the GPU monitor a Ray worker keeps for task after task."""

import asyncio
import importlib.util
import io
import os
import tarfile

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")


def test_a_jobs_files_pack_fast_and_come_back_whole(tmp_path):
    from core.zoo.ray_task import pack_files, unpack_files

    folder = tmp_path / "artifacts"
    (folder / "traces").mkdir(parents=True)
    trace = b'{"traceEvents": [' + b'{"name": "aten::addmm", "ts": 1},' * 20000 + b"{}]}"
    (folder / "traces" / "eager.json").write_bytes(trace)
    (folder / "eager.log").write_text("compile log\n")
    packed = pack_files(str(folder))
    # gzip's header says which level packed it (XFL 4: the fastest; level 9 writes 2): level 9
    # took 2.2 s for a 27 MB report folder of traces, level 1 0.11 s (docs/BENCHMARKS.md)
    assert packed[:2] == b"\x1f\x8b" and packed[8] == 4
    assert len(packed) < len(trace) / 10  # still compressed for a cluster's network
    unpack_files(packed, str(tmp_path / "back"))
    assert (tmp_path / "back" / "traces" / "eager.json").read_bytes() == trace
    assert (tmp_path / "back" / "eager.log").read_text() == "compile log\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    assert pack_files(str(empty)) == b""


def test_an_archive_reaching_outside_its_folder_is_refused(tmp_path):
    from core.zoo.ray_task import unpack_files

    hostile = io.BytesIO()
    with tarfile.open(fileobj=hostile, mode="w:gz") as tar:
        info = tarfile.TarInfo("../outside.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"bad"))
    (tmp_path / "report").mkdir()
    with pytest.raises(tarfile.TarError):
        unpack_files(hostile.getvalue(), str(tmp_path / "report"))
    assert not os.path.exists(tmp_path / "outside.txt")


def test_the_progress_actor_hands_over_batches_in_order_and_a_waiting_take_waits():
    from core.zoo.ray_task import Progress

    async def scenario():
        progress = Progress()
        assert await progress.take(wait=False) == []
        waiting = asyncio.ensure_future(progress.take())
        await asyncio.sleep(0.05)
        assert not waiting.done()  # nothing put yet: the driver's wait goes on
        await progress.put(("started", "a", "node", 1.0))
        await progress.put(("event", "a", "phase", 2.0))
        assert await asyncio.wait_for(waiting, 5) == [("started", "a", "node", 1.0), ("event", "a", "phase", 2.0)]
        assert await progress.take(wait=False) == []  # taken once only
        waiting = asyncio.ensure_future(progress.take())
        await asyncio.sleep(0.05)
        await progress.wake()  # the driver wants what there is now: nothing
        assert await asyncio.wait_for(waiting, 5) == []
        await progress.put(("event", "b", "phase", 3.0))
        assert await asyncio.wait_for(progress.take(), 5) == [("event", "b", "phase", 3.0)]

    asyncio.run(scenario())


def test_a_ray_worker_starts_nvml_once_per_gpu_for_task_after_task(monkeypatch):
    import core.run.sampling as sampling
    import core.zoo.ray_task as rx

    started = []

    class CountingMonitor:
        def __init__(self, index=0):
            started.append(index)

    monkeypatch.setattr(sampling, "GpuMonitor", CountingMonitor)
    monkeypatch.setattr(rx, "_GPU_MONITORS", {})
    first = rx.gpu_monitor([])
    assert rx.gpu_monitor([]) is first and started == [0]  # a CPU task: GPU 0's readings, as locally
    assert rx.gpu_monitor(["1"]) is not first and rx.gpu_monitor([1]) is rx.gpu_monitor(["1"])
    assert rx.gpu_monitor(["not a number"]) is first  # Ray gave no usable id: the default GPU
    assert started == [0, 1]


def test_the_folders_of_killed_tasks_are_swept_and_nothing_else(tmp_path):
    """A task cancelled or killed with its worker leaves its temporary folder (a Ray worker is
    killed, no cleanup runs): the next task removes the folders of workers that are gone, named
    by this product's prefix, never a live worker's, another name, or what a link points to."""
    import subprocess
    import sys

    from core.zoo.ray_task import TASK_FOLDER_PREFIX, sweep_task_folders, task_folder

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    dead = tmp_path / f"{TASK_FOLDER_PREFIX}{gone.pid}-abc"
    (dead / "artifacts").mkdir(parents=True)
    (dead / "artifacts" / "eager.log").write_text("partial")
    live = tmp_path / f"{TASK_FOLDER_PREFIX}{os.getpid()}-def"
    live.mkdir()
    other = tmp_path / f"{TASK_FOLDER_PREFIX}notapid-x"
    other.mkdir()
    target = tmp_path / "user-files"
    target.mkdir()
    (target / "keep.txt").write_text("mine")
    link = tmp_path / f"{TASK_FOLDER_PREFIX}{gone.pid}-link"
    link.symlink_to(target, target_is_directory=True)
    assert sweep_task_folders(str(tmp_path)) == [str(dead)]
    assert not dead.exists() and live.exists() and other.exists() and link.is_symlink()
    assert (target / "keep.txt").read_text() == "mine"
    with task_folder() as folder:  # named by this worker's pid: a sweep never takes it
        assert os.path.basename(folder).startswith(f"{TASK_FOLDER_PREFIX}{os.getpid()}-")
        assert folder not in sweep_task_folders(os.path.dirname(folder))
        assert os.path.isdir(folder)


def test_tasks_run_at_the_raylets_priority_and_a_ray_job_s_own_setting_is_not_contradicted():
    import json

    from ray.runtime_env.runtime_env import _merge_runtime_env  # what ray.init does under a Ray job

    from core.zoo.ray_cluster import CORE_DIR, WORKER_NICENESS_VAR, tasks_runtime_env

    alone = tasks_runtime_env({})
    assert alone["py_modules"] == [CORE_DIR] and alone["env_vars"] == {WORKER_NICENESS_VAR: "0"}
    # `ray job submit --entrypoint-num-cpus 1 ...`: the job's runtime_env already sets it, and Ray
    # refuses to merge two runtime_envs that set the same variable (ray.init raised ValueError)
    job_env = {"env_vars": {WORKER_NICENESS_VAR: "0", "OTHER": "1"}}
    submitted = {"RAY_JOB_CONFIG_JSON_ENV_VAR": json.dumps({"runtime_env": job_env, "metadata": {}})}
    under_job = tasks_runtime_env(submitted)
    assert "env_vars" not in under_job
    assert _merge_runtime_env(job_env, alone) is None  # the conflict this avoids
    assert _merge_runtime_env(job_env, under_job)["env_vars"][WORKER_NICENESS_VAR] == "0"
    # a job that sets other variables only: ours is added; an unreadable job config is ignored
    other = {"RAY_JOB_CONFIG_JSON_ENV_VAR": json.dumps({"runtime_env": {"env_vars": {"OTHER": "1"}}})}
    assert tasks_runtime_env(other)["env_vars"] == {WORKER_NICENESS_VAR: "0"}
    assert tasks_runtime_env({"RAY_JOB_CONFIG_JSON_ENV_VAR": "not json"})["env_vars"] == {WORKER_NICENESS_VAR: "0"}
    assert tasks_runtime_env({"RAY_JOB_CONFIG_JSON_ENV_VAR": "[]"})["env_vars"] == {WORKER_NICENESS_VAR: "0"}
