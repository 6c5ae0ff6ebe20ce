"""The configs' inductor cache folders listed and cleared (core.run.compile_cache, `main.py
cache`): a folder a running job holds is kept, links are neither followed nor removed, and a
job's child holds its folder for its whole life (core.measure.cache_hold)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest

from core.run.compile_cache import (
    LABEL_FILE,
    clear_config_caches,
    config_cache_dir,
    config_caches,
    with_config_cache,
)
from core.vocab.config import CompileConfig
from tests.core.helpers import make_spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def filled(config: CompileConfig, size: int) -> str:
    """A config's folder as a job leaves it: labelled, with a kernel of `size` bytes."""
    folder = with_config_cache(make_spec("m.py", config=config)).compile_cache_dir
    os.makedirs(os.path.join(folder, "fxgraph"), exist_ok=True)
    with open(os.path.join(folder, "fxgraph", "kernel.so"), "wb") as f:
        f.write(b"x" * size)
    return folder


def hold_in_a_process(folder: str) -> subprocess.Popen:
    """Another process holding `folder`, as a job's child does; returns once it holds it."""
    code = (
        "import sys, time\nfrom core.measure.cache_hold import hold_cache_folder\n"
        "assert hold_cache_folder(sys.argv[1]) is not None\nprint('held', flush=True)\ntime.sleep(120)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", code, folder], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def test_caches_are_listed_with_their_label_size_and_files_largest_first(cache):
    plain = filled(CompileConfig("inductor"), 3000)
    autotune = filled(CompileConfig("inductor", mode="max-autotune-no-cudagraphs"), 9000)
    listed = config_caches()
    assert [c.label for c in listed] == ["inductor/max-autotune-no-cudagraphs", "inductor"]
    assert [c.path for c in listed] == [autotune, plain]
    assert [c.size_bytes for c in listed] == [9000, 3000] and [c.files for c in listed] == [1, 1]
    assert all(c.last_used and not c.in_use for c in listed)
    with open(os.path.join(plain, LABEL_FILE)) as f:
        assert f.read().strip() == "inductor"


def test_clear_removes_the_named_or_all_and_keeps_a_held_one(cache):
    plain = filled(CompileConfig("inductor"), 3000)
    autotune = filled(CompileConfig("inductor", mode="max-autotune-no-cudagraphs"), 9000)
    freezing = filled(CompileConfig("inductor", inductor_options=(("freezing", True),)), 100)
    done = clear_config_caches(["inductor"])
    assert [c.label for c in done.removed] == ["inductor"] and done.freed_bytes == 3000
    assert not os.path.exists(plain) and os.path.isdir(autotune)
    holder = hold_in_a_process(autotune)
    try:
        assert [c.in_use for c in config_caches() if c.path == autotune] == [True]
        done = clear_config_caches()
        assert [c.path for c in done.in_use] == [autotune] and [c.path for c in done.removed] == [freezing]
        assert os.path.isfile(os.path.join(autotune, "fxgraph", "kernel.so"))  # nothing of it removed
    finally:
        holder.kill()
        holder.wait()
    done = clear_config_caches()  # its job ended: now it goes
    assert [c.path for c in done.removed] == [autotune] and config_caches() == []
    assert sorted(os.listdir(cache / "inductor")) == []  # no half-removed folder left behind


def test_a_folder_is_named_by_its_folder_name_when_it_has_no_label(cache):
    folder = config_cache_dir(CompileConfig("inductor"))
    os.makedirs(folder)  # made before folders were labelled
    assert [c.label for c in config_caches()] == [os.path.basename(folder)]
    assert [c.path for c in clear_config_caches([os.path.basename(folder)]).removed] == [folder]


def test_links_are_neither_counted_nor_followed_nor_removed(cache, tmp_path):
    outside = tmp_path / "outside"
    (outside / "inside").mkdir(parents=True)
    (outside / "inside" / "precious").write_bytes(b"p" * 500)
    (cache / "inductor").mkdir(parents=True)
    os.symlink(outside, cache / "inductor" / "planted")  # a folder's worth of link
    folder = filled(CompileConfig("inductor"), 10)
    os.symlink(outside, os.path.join(folder, "fxgraph", "link"))  # a link inside a real folder
    assert [c.size_bytes for c in config_caches()] == [10]  # the 500 bytes behind the link not counted
    done = clear_config_caches()
    assert [c.path for c in done.removed] == [folder]
    assert (outside / "inside" / "precious").read_bytes() == b"p" * 500 and os.path.islink(
        cache / "inductor" / "planted"
    )


def test_a_hold_taken_while_a_clear_removes_the_folder_lands_in_a_fresh_one(cache):
    """The clear renames then removes the folder while holding its lock; a job starting then
    waits, finds its lock file gone, and holds a new folder at the same path."""
    from core.measure.cache_hold import hold_cache_folder, try_exclusive

    folder = filled(CompileConfig("inductor"), 10)
    fd = try_exclusive(folder)
    got = {}
    t = threading.Thread(target=lambda: got.setdefault("fd", hold_cache_folder(folder)))
    t.start()
    time.sleep(0.2)
    assert t.is_alive()  # waiting for the clear
    os.rename(folder, folder + ".removing-test")
    os.close(fd)
    t.join(10)
    assert got["fd"] is not None and os.path.isdir(folder) and os.listdir(folder) == [".in-use"]
    assert os.fstat(got["fd"]).st_ino == os.stat(os.path.join(folder, ".in-use")).st_ino
    os.close(got["fd"])


def test_a_jobs_child_holds_its_cache_folder_until_it_ends(cache, write_model, tmp_path):
    """The real child process (core.measure.child), on a model that takes a while to build."""
    from core.run.runner import JobRunner

    started = tmp_path / "building"
    model = write_model(
        f"""
        import pathlib, time
        import torch

        def get_model():
            pathlib.Path({str(started)!r}).touch()
            time.sleep(4)
            return torch.nn.Linear(4, 4)

        def get_example_inputs():
            return (torch.randn(2, 4),)
        """
    )
    folder = str(cache / "inductor" / "held-by-the-job")
    spec = make_spec(model, compile_cache_dir=folder, timeout_s=120)
    results = []
    job = threading.Thread(target=lambda: results.append(JobRunner().run(spec)))
    job.start()
    deadline = time.monotonic() + 90
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    done = clear_config_caches()
    assert [c.path for c in done.in_use] == [folder] and done.removed == ()
    job.join(120)
    assert results and results[0].status == "completed", results[0].failure_reason
    assert [c.path for c in clear_config_caches().removed] == [folder]


def test_the_cache_command_lists_clears_and_refuses_an_unknown_label(cache):
    filled(CompileConfig("inductor"), 2048)
    env = {**os.environ, "COMPILE_PROFILER_CACHE": str(cache)}

    def cmd(*args):
        return subprocess.run(
            [sys.executable, "main.py", "cache", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
        )

    listed = cmd()
    assert listed.returncode == 0 and "inductor" in listed.stdout and "2 KiB" in listed.stdout
    wrong = cmd("--clear", "inductr")
    assert (
        wrong.returncode == 2
        and "no compile cache for 'inductr'" in wrong.stderr
        and "Nothing was removed" in wrong.stderr
    )
    assert config_caches()
    cleared = cmd("--clear", "inductor")
    assert cleared.returncode == 0 and "removed inductor (2 KiB)" in cleared.stdout and config_caches() == []
    assert "no compile caches" in cmd().stdout


def test_a_folder_made_before_labels_is_cleared_by_its_configs_label(cache):
    """The new user's finding: `cache --clear inductor/max-autotune-no-cudagraphs`, as the help
    says, was refused for a folder made before folders were labelled (listed by its name)."""
    folder = config_cache_dir(CompileConfig("inductor", mode="max-autotune-no-cudagraphs"))
    os.makedirs(folder)
    from core.run.compile_cache import unknown_labels

    assert unknown_labels(["inductor/max-autotune-no-cudagraphs", "nope"]) == ["nope"]
    assert [c.path for c in clear_config_caches(["inductor/max-autotune-no-cudagraphs"]).removed] == [folder]
