"""The model list fills in two steps: torch's catalog (the window is ready to run), then the
timm and Hugging Face names, listed by a helper process (never imported into the app's) and
cached per installed versions."""

from __future__ import annotations

import sys

from gui.form.model_panel import ModelPanel
from gui.run import torch_info_loader


def test_more_models_are_appended_without_duplicates(qtbot):
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models(("resnet18", "alexnet"))
    panel.add_models(("timm:resnet50", "resnet18", "hf:bert"))
    assert panel.names.stringList() == ["resnet18", "alexnet", "timm:resnet50", "hf:bert"]


def _loader(monkeypatch, cached, helper='import json; print(json.dumps(["timm:x", "hf:y"]))'):
    from core.run.torch_info import TorchInfo

    order = []
    monkeypatch.setattr(
        torch_info_loader, "load_torch_info", lambda: order.append("torch") or TorchInfo(backends=("eager",))
    )
    monkeypatch.setattr(torch_info_loader, "cached_more_models", lambda: cached)
    monkeypatch.setattr(torch_info_loader, "more_models_command", lambda: [sys.executable, "-c", helper])
    loader = torch_info_loader.TorchInfoLoader()
    got = []
    loader.sig_loaded.connect(lambda c: got.append(("catalog", c.backends)))
    loader.sig_more_models.connect(lambda names: got.append(("more", names)))
    return loader, got, order


def test_the_catalog_arrives_before_the_slow_names_from_a_helper_process(qtbot, monkeypatch):
    loader, got, order = _loader(monkeypatch, None)
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert order == ["torch"] and got == [("catalog", ("eager",)), ("more", ("timm:x", "hf:y"))]


def test_cached_names_need_no_helper_and_a_failing_helper_is_said(qtbot, monkeypatch):
    loader, got, _ = _loader(monkeypatch, ("timm:cached",), helper="raise SystemExit(3)")
    loader.start()
    qtbot.waitUntil(lambda: len(got) == 2, timeout=20000)
    assert got[1] == ("more", ("timm:cached",))
    loader, got, _ = _loader(monkeypatch, None, helper="import sys; print('broken', file=sys.stderr); sys.exit(3)")
    loader.start()
    qtbot.waitUntil(lambda: loader.more_models_error != "", timeout=20000)
    assert got == [("catalog", ("eager",))] and loader.more_models_error == "broken"


def test_the_names_are_listed_and_cached_by_a_real_helper_process(tmp_path, monkeypatch):
    """python -m core.run.torch_info more-models: what the app runs; timm and transformers are imported
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
