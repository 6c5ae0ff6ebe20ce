"""torch's offer read in a helper process (python -m core.cli.helpers torch-info) and cached
per installation, so the app never imports torch: the JSON round trip, the cache, the real
helper."""

from __future__ import annotations

import json
import os
import subprocess

from core.run import torch_info
from core.run.torch_info import TorchInfo, torch_info_from_json, torch_info_to_json


def test_the_json_round_trip_keeps_what_the_pickers_and_checks_need():
    info = TorchInfo(
        backends=("eager", "inductor"),
        modes=("default", "max-autotune"),
        models=("resnet18",),
        cuda_available=True,
        versions={"torch": "2.14.1", "cuda_available": True},
        gpu_reason="",
        gpu_monitor=object(),  # a live handle: not written
        dynamo_defaults={"allow_rnn": False, "cache_size_limit": 8, "ignored": {"b", "a"}, "f": print},
        all_backends=("eager", "inductor", "tvm"),
    )
    back = torch_info_from_json(json.loads(json.dumps(torch_info_to_json(info))))
    assert back.backends == info.backends and back.modes == info.modes and back.models == info.models
    assert back.all_backends == ("eager", "inductor", "tvm") and back.cuda_available is True
    assert back.dynamo_defaults["allow_rnn"] is False and back.dynamo_defaults["cache_size_limit"] == 8
    assert back.dynamo_defaults["ignored"] == ["a", "b"] and back.gpu_monitor is None


def test_a_cache_that_is_not_torch_info_is_ignored(tmp_path, monkeypatch):
    monkeypatch.setenv(torch_info.CACHE_ENV, str(tmp_path))
    assert torch_info.cached_torch_info() is None
    path = torch_info._torch_info_cache_path()
    for text in ("[1, 2]", "{not json", json.dumps({"backends": [1]}), json.dumps({"cuda_available": "yes"})):
        with open(path, "w") as fh:
            fh.write(text)
        assert torch_info.cached_torch_info() is None
    torch_info.write_torch_info_cache(TorchInfo(error="could not load torch"))  # a failure is not kept
    assert torch_info.cached_torch_info() is None


def test_the_real_helper_prints_and_caches_torch_info(tmp_path):
    env = {**os.environ, torch_info.CACHE_ENV: str(tmp_path)}
    out = subprocess.run(
        torch_info.torch_info_command(), cwd=torch_info.ROOT, capture_output=True, text=True, timeout=300, env=env
    )
    assert out.returncode == 0, out.stderr[-2000:]
    info = torch_info_from_json(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "inductor" in info.backends and "eager" in info.all_backends and "resnet18" in info.models
    assert "default" in info.modes and "allow_rnn" in info.dynamo_defaults
    assert info.versions["torch"]
    files = os.listdir(tmp_path)
    assert len(files) == 1 and files[0].startswith("torch-info-")


def _offer_json() -> dict:
    return torch_info_to_json(
        TorchInfo(backends=("inductor",), modes=("default",), models=("resnet18",), all_backends=("eager", "inductor"))
    )


def test_an_oversize_or_too_deep_cache_is_absent_and_rebuilt(tmp_path, monkeypatch):
    """The reported case: a 280 MB cache was parsed whole (50 s, 13.6 GB)."""
    monkeypatch.setenv(torch_info.CACHE_ENV, str(tmp_path))
    path = torch_info._torch_info_cache_path()
    with open(path, "w") as fh:
        fh.write(json.dumps(_offer_json()) + " " * torch_info.CACHE_MAX_BYTES)  # valid JSON, too large
    assert torch_info.cached_torch_info() is None
    with open(path, "w") as fh:
        fh.write("[" * 200_000 + "]" * 200_000)  # json.load raised RecursionError
    assert torch_info.cached_torch_info() is None
    with open(torch_info._more_models_cache_path(), "w") as fh:
        fh.write(json.dumps(["timm:a"]) + " " * torch_info.CACHE_MAX_BYTES)
    assert torch_info.cached_more_models() is None
    torch_info.write_torch_info_cache(torch_info_from_json(_offer_json()))  # the rebuild replaces it
    assert torch_info.cached_torch_info().all_backends == ("eager", "inductor")


def test_a_helper_printing_too_much_is_refused():
    import pytest

    assert torch_info.helper_json("log line\n" + json.dumps(["a"])) == ["a"]
    with pytest.raises(ValueError, match="more than"):
        torch_info.helper_json(json.dumps(["a" * torch_info.CACHE_MAX_BYTES]))


def test_a_cache_without_torchs_own_backends_is_stale(tmp_path, monkeypatch):
    """The reported case: a stale cache answered "Unknown backend 'inductor'"."""
    monkeypatch.setenv(torch_info.CACHE_ENV, str(tmp_path))
    stale = {**_offer_json(), "all_backends": ["eager", "tvm"]}
    with open(torch_info._torch_info_cache_path(), "w") as fh:
        json.dump(stale, fh)
    assert torch_info.cached_torch_info() is None
