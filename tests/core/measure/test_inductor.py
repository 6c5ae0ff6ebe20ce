"""One real end-to-end inductor job (C++ codegen with g++): ~22 s cold, ~4 s with a warm cache."""

from core.run.runner import JobRunner
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
