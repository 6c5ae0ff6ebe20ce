"""One real end-to-end inductor job (C++ codegen with g++): ~22 s cold, ~4 s with a warm cache."""

import os

from core.run.compile_cache import config_cache_dir
from core.run.runner import JobRunner
from core.vocab.config import CompileConfig
from tests.core.helpers import MLP_MODEL, make_spec


def test_inductor_end_to_end(write_model):
    result = JobRunner().run(make_spec(write_model(MLP_MODEL), backend="inductor", iters=20, timeout_s=240))
    assert result.status == "completed", result.failure_reason + "\n" + result.failure_detail
    c = result.compile
    assert c.fully_compiled and c.graph_count == 1 and c.op_count >= 3
    assert c.cache_state in ("hit", "miss", "partial")
    assert c.fx_cache_hits + c.fx_cache_misses >= 1
    if c.cache_state == "miss":
        assert c.inductor_s > 0
    s = result.summary()
    assert s["speedup"] > 0 and s["speedup_ci_low"] <= s["speedup"] <= s["speedup_ci_high"]
    assert len(result.latencies("compiled")) == 20
    # it compiled in its config's own inductor cache (core.run.compile_cache), which kept its kernels
    own = config_cache_dir(result.spec.config)
    assert result.environment["inductor_cache_dir"] == own
    assert os.path.isdir(own) and os.listdir(own)


def test_each_inductor_config_has_its_own_cache_folder_under_the_products():
    from core.run.torch_info import cache_folder

    plain, autotune = CompileConfig("inductor"), CompileConfig("inductor", mode="max-autotune-no-cudagraphs")
    freezing = CompileConfig("inductor", inductor_options=(("freezing", True),))
    folders = [config_cache_dir(c) for c in (plain, autotune, freezing)]
    assert len(set(folders)) == 3
    assert all(f.startswith(os.path.join(cache_folder(), "inductor") + os.sep) for f in folders)
    assert config_cache_dir(CompileConfig("inductor")) == folders[0]  # the same config, the same folder
    # the backends that compile no kernels keep the machine's default cache
    assert config_cache_dir(CompileConfig("eager")) is None and config_cache_dir(CompileConfig("aot_eager")) is None


def test_a_cache_folder_that_cannot_be_made_leaves_the_machines_default(tmp_path, monkeypatch):
    from core.run.compile_cache import with_config_cache

    spec = make_spec("m.py", backend="inductor")
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(tmp_path / "cache"))
    assert with_config_cache(spec).compile_cache_dir == config_cache_dir(spec.config)
    assert os.path.isdir(config_cache_dir(spec.config))
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(blocked))
    assert with_config_cache(spec).compile_cache_dir is None
    assert with_config_cache(make_spec("m.py", backend="eager")).compile_cache_dir is None


def test_a_cache_folder_linked_elsewhere_is_not_written_through(tmp_path, monkeypatch):
    from core.run.compile_cache import with_config_cache

    spec = make_spec("m.py", backend="inductor")
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(tmp_path / "cache"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (tmp_path / "cache" / "inductor").mkdir(parents=True)
    os.symlink(outside, config_cache_dir(spec.config))
    assert with_config_cache(spec).compile_cache_dir is None and os.listdir(outside) == []
    # a linked cache folder itself (the product's whole folder elsewhere, on purpose) is followed
    os.unlink(config_cache_dir(spec.config))
    real = tmp_path / "real"
    (real / "inductor").mkdir(parents=True)
    os.symlink(real, tmp_path / "linked")
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(tmp_path / "linked"))
    assert with_config_cache(spec).compile_cache_dir == config_cache_dir(spec.config)
