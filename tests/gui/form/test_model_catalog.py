"""The model list fills in two steps: torch's offer (the window is ready to run), then the
timm and Hugging Face names. Both come from a cache kept per installation or from a helper
process: torch, timm and transformers are never imported into the app's own process."""

from __future__ import annotations

import json
import sys

from core.run.torch_info import TorchInfo, torch_info_to_json
from gui.form.model_panel import ModelPanel
from gui.run import torch_info_loader

TORCH_INFO = TorchInfo(backends=("eager",), modes=("default",), models=("resnet18",), versions={"torch": "x"})
TORCH_HELPER = f"print({json.dumps(torch_info_to_json(TORCH_INFO))!r})"  # what the real helper prints


def test_more_models_are_appended_without_duplicates(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models(("resnet18", "alexnet"))
    panel.add_models(("timm:resnet50", "resnet18", "hf:bert"))
    assert panel.names.stringList() == ["resnet18", "alexnet", "timm:resnet50", "hf:bert"]


def _loader(
    monkeypatch,
    cached,
    helper='import json; print(json.dumps(["timm:x", "hf:y"]))',
    torch_cached=TORCH_INFO,
    torch_helper="raise SystemExit('not to be run')",
):
    monkeypatch.setattr(torch_info_loader, "cached_torch_info", lambda: torch_cached)
    monkeypatch.setattr(torch_info_loader, "torch_info_command", lambda: [sys.executable, "-c", torch_helper])
    monkeypatch.setattr(torch_info_loader, "cached_more_models", lambda: cached)
    monkeypatch.setattr(torch_info_loader, "more_models_command", lambda: [sys.executable, "-c", helper])
    loader = torch_info_loader.TorchInfoLoader()
    got = []
    loader.sig_loaded.connect(lambda c: got.append(("catalog", c.backends)))
    loader.sig_more_models.connect(lambda names: got.append(("more", names)))
    return loader, got


def test_torch_info_arrives_before_the_slow_names_from_a_helper_process(qtbot, monkeypatch):
    loader, got = _loader(monkeypatch, None)
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert got == [("catalog", ("eager",)), ("more", ("timm:x", "hf:y"))]
    assert loader.torch_info.gpu_monitor is not None  # opened here (NVML), with its reason


def test_without_a_cache_torch_info_comes_from_its_helper_and_a_broken_torch_is_said(qtbot, monkeypatch):
    loader, got = _loader(monkeypatch, ("timm:cached",), torch_cached=None, torch_helper=TORCH_HELPER)
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert got == [("catalog", ("eager",)), ("more", ("timm:cached",))]
    assert loader.torch_info.models == ("resnet18",) and loader.torch_info.versions == {"torch": "x"}
    broken = "import sys; print('ImportError: libtorch_cpu.so: cannot open', file=sys.stderr); sys.exit(1)"
    loader, got = _loader(monkeypatch, None, torch_cached=None, torch_helper=broken)
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 1, timeout=20000)
    assert got == [("catalog", ())] and "libtorch_cpu.so" in loader.torch_info.error
    assert loader.helpers_running == 0  # no names asked of a torch that does not load


def test_cached_names_need_no_helper_and_a_failing_helper_is_said(qtbot, monkeypatch):
    loader, got = _loader(monkeypatch, ("timm:cached",), helper="raise SystemExit(3)")
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert got[1] == ("more", ("timm:cached",))
    loader, got = _loader(monkeypatch, None, helper="import sys; print('broken', file=sys.stderr); sys.exit(3)")
    loader.start()
    qtbot.waitUntil(lambda: loader.more_models_error != "", timeout=20000)
    assert got == [("catalog", ("eager",))] and loader.more_models_error == "broken"


def test_the_caches_are_read_off_the_gui_thread(qtbot, monkeypatch):
    # the names' cache is keyed by four packages' versions (their metadata read and parsed):
    # 7-8 ms of the GUI thread when it was read there (issue 22)
    import threading

    readers = []
    loader, got = _loader(monkeypatch, None)
    monkeypatch.setattr(
        torch_info_loader, "cached_more_models", lambda: readers.append(threading.current_thread()) or ("timm:c",)
    )
    monkeypatch.setattr(
        torch_info_loader, "cached_torch_info", lambda: readers.append(threading.current_thread()) or TORCH_INFO
    )
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert got == [("catalog", ("eager",)), ("more", ("timm:c",))]
    assert len(readers) == 2 and threading.main_thread() not in readers


def test_stop_ends_a_helper_still_running(qtbot, monkeypatch):
    loader, got = _loader(monkeypatch, None, helper="import time; time.sleep(60)")
    loader.start()
    qtbot.waitUntil(lambda: loader.helpers_running == 1, timeout=20000)
    process = loader._processes[0]
    pid = process.processId()
    loader.stop()
    assert loader.helpers_running == 0 and got == [("catalog", ("eager",))]
    import psutil

    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE


def test_the_names_are_listed_and_cached_by_a_real_helper_process(tmp_path, monkeypatch):
    """python -m core.cli.helpers more-models: what the app runs; timm and transformers are imported
    there, and the cache it writes is what the next start reads."""
    import json
    import subprocess

    from core.run import torch_info as catalog

    monkeypatch.setenv(catalog.CACHE_ENV, str(tmp_path))
    out = subprocess.run(
        catalog.more_models_command(),
        cwd=catalog.ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**__import__("os").environ, catalog.CACHE_ENV: str(tmp_path)},
    )
    assert out.returncode == 0, out.stderr[-2000:]
    names = json.loads(out.stdout.strip().splitlines()[-1])
    assert "timm:resnet50" in names and "hf:bert" in names
    assert catalog.cached_more_models() == tuple(names)


def test_the_loader_says_once_when_nothing_more_comes_from_the_cache(qtbot, monkeypatch):
    """sig_settled: after the cached names (the window's own launch work is done), when a helper
    lists what was not cached (seconds of waiting), or when torch does not load; the window starts
    the charts' import thread then (gui.window.main_window). `start` twice starts once."""
    loader, got = _loader(monkeypatch, ("timm:cached",))
    settled = []
    loader.sig_settled.connect(lambda: settled.append(list(got)))
    loader.start()
    loader.start()
    qtbot.waitUntil(lambda: bool(settled), timeout=20000)
    qtbot.wait(50)
    assert settled == [[("catalog", ("eager",)), ("more", ("timm:cached",))]] and loader.settled
    loader, got = _loader(monkeypatch, None, helper="import time; time.sleep(60)")
    settled = []
    loader.sig_settled.connect(lambda: settled.append(loader.helpers_running))
    loader.start()
    qtbot.waitUntil(lambda: bool(settled), timeout=20000)
    assert settled == [1]  # the names' helper runs: nothing waits for it
    loader.stop()
    loader, got = _loader(monkeypatch, None, torch_cached=None, torch_helper="raise SystemExit(1)")
    settled = []
    # what the signal saw when it came (the helper may end before this test looks again)
    loader.sig_settled.connect(lambda: settled.append((loader.helpers_running, loader.torch_info)))
    loader.start()
    qtbot.waitUntil(lambda: bool(settled), timeout=20000)
    assert settled == [(1, None)]  # torch's own helper runs
    qtbot.waitUntil(lambda: loader.torch_info is not None, timeout=20000)
    qtbot.wait(50)
    assert len(settled) == 1
