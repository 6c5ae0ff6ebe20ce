"""torch's compilation metrics turned into our figures: compile times and their breakdown, FX
cache state, graphs, ops, guards, skipped frames, the recompile limit, and the coverage
sentence (how much of the model really runs compiled)."""

from __future__ import annotations

from core.capture.break_records import RECOMPILE_LIMIT_TYPE, parse_break_message, registry_code
from core.vocab.formatting import count
from core.vocab.records import CompileResult


def reset_compile_state() -> None:
    """Forget earlier compiles of this process: code caches, counters and metrics.

    A job runs in a fresh child, so this only matters when `run_job` is called in-process
    (tests); `torch._dynamo.reset()` alone keeps `counters` and the metrics."""
    import torch._dynamo
    from torch._dynamo.utils import clear_compilation_metrics, counters

    torch._dynamo.reset()
    counters.clear()
    clear_compilation_metrics()


def is_recompile_limit(metric) -> bool:
    """This compile attempt hit dynamo's recompile limit (torch then runs new inputs of the
    frame eagerly). Read from the failure's graph-break type (GB0039 in torch 2.14), not text."""
    if not metric.fail_type:
        return False
    if metric.fail_type == "FailOnRecompileLimitHit":
        return True
    info = parse_break_message(metric.fail_reason or "")
    return info["reason"] == RECOMPILE_LIMIT_TYPE or (
        bool(info["gb_code"]) and info["gb_code"] == registry_code(RECOMPILE_LIMIT_TYPE)
    )


def skipped_frames(metrics: list, failed=()) -> list:
    """Metrics of frames dynamo gave up on (fail_type set): the model ran those eagerly. The
    compile ids in `failed` made torch raise instead: they ran nothing."""
    return [m for m in metrics if m.fail_type and str(m.compile_id or "") not in failed]


def summarize_compile(
    metrics: list,
    compile_time_s: float,
    backend: str,
    graph_breaks: int,
    partial: bool = False,
    *,
    job_metrics: list | None = None,
    failed: dict[str, str] | None = None,
    graphs_per_call: float | None = None,
) -> CompileResult:
    """The compile's figures. Times and the cache state are the first compiled call's
    (`metrics`, `compile_time_s`); graphs, ops, guards and frames count every compile of the
    job so far (`job_metrics`, default `metrics`; graphs as torch counts them, unique_graphs,
    which graphs.csv lists too). `graph_breaks` is the breaks one call passes, `failed` the
    compiles that made torch raise (compile id → torch's error), `graphs_per_call` the graphs a
    profiled call ran (the op profile's count; None without one)."""
    from torch._dynamo.utils import counters

    def total_s(attr):
        return sum((getattr(m, attr, None) or 0) for m in metrics) / 1e6

    failed = failed or {}
    counted = metrics if job_metrics is None else job_metrics
    compiled = [m for m in counted if not m.fail_type and m.graph_op_count is not None]
    skipped = skipped_frames(counted, failed)
    first_graphs = sum(1 for m in metrics if not m.fail_type and m.graph_op_count)
    hits = sum(
        (m.inductor_fx_local_cache_hit_count or 0) + (m.inductor_fx_remote_cache_hit_count or 0) for m in metrics
    )
    misses = sum(
        (m.inductor_fx_local_cache_miss_count or 0) + (m.inductor_fx_remote_cache_miss_count or 0) for m in metrics
    )
    if backend != "inductor" or hits + misses == 0:
        cache = "n/a"
    else:
        cache = "hit" if misses == 0 else ("miss" if hits == 0 else "partial")
    graph_count = int(counters["stats"].get("unique_graphs", 0))
    op_count = sum(m.graph_op_count or 0 for m in compiled)
    coverage, full = describe_coverage(
        graph_count,
        op_count,
        graph_breaks,
        skipped,
        graphs_per_call=graphs_per_call,
        first_call_graphs=first_graphs,
        failure="; ".join(dict.fromkeys(failed.values())),
    )
    forward_s, backward_s = forward_backward_s(metrics)
    if partial:
        coverage += (
            " (Partial figures: torch dropped compilation metrics before they were read, so "
            "compile times and op counts miss some compiles.)"
        )
    return CompileResult(
        compile_time_s=compile_time_s,
        dynamo_s=total_s("dynamo_cumulative_compile_time_us"),
        aot_autograd_s=total_s("aot_autograd_cumulative_compile_time_us"),
        inductor_s=total_s("inductor_cumulative_compile_time_us"),
        codegen_s=total_s("inductor_code_gen_cumulative_compile_time_us"),
        cache_state=cache,
        fx_cache_hits=hits,
        fx_cache_misses=misses,
        frames_compiled=len(compiled),
        frames_skipped=len(skipped),
        graph_count=graph_count,
        op_count=op_count,
        guard_count=sum(m.guard_count or 0 for m in compiled),
        coverage=coverage,
        fully_compiled=full and not partial,
        forward_compile_s=forward_s,
        backward_compile_s=backward_s,
        kernel_compile_s=total_s("triton_compile_time_us"),
        autotune_s=total_s("compile_time_autotune_time_us"),
    )


def forward_backward_s(metrics: list) -> tuple[float | None, float | None]:
    """(forward, backward) compile seconds when a backward was compiled (a training step),
    else (None, None). torch logs the backward graph's compile as its own metrics entry with
    is_forward=False (AOTAutograd compiles it lazily, at the first backward); its wall time is
    end - start. The forward's is dynamo's cumulative time of the other entries."""
    backward = [m for m in metrics if getattr(m, "is_forward", None) is False]
    if not backward:
        return None, None
    back_s = sum(((m.end_time_us or 0) - (m.start_time_us or 0)) for m in backward) / 1e6
    fwd_s = (
        sum((m.dynamo_cumulative_compile_time_us or 0) for m in metrics if getattr(m, "is_forward", None) is not False)
        / 1e6
    )
    return fwd_s, back_s


def describe_coverage(
    graph_count: int,
    op_count: int,
    graph_breaks: int,
    skipped: list,
    graphs_per_call: float | None = None,
    first_call_graphs: int | None = None,
    failure: str = "",
) -> tuple[str, bool]:
    """One sentence on how much of the model runs compiled: the first thing a user needs.
    `graph_count`/`op_count` are the graphs torch compiled over the job and their ops,
    `graph_breaks` the breaks one call passes (skipped frames not included), `graphs_per_call`
    the graphs a profiled call ran (None: not profiled), `first_call_graphs` those the first
    compiled call made, `failure` torch's error when a compile made it raise (the job ended)."""
    made = f"{count(graph_count, 'graph')} ({count(op_count, 'op')})"
    if failure:
        before = f"; torch had compiled {made} before" if graph_count else ""
        return (f"The compile failed: torch raised {failure}; nothing ran eagerly{before}.", False)
    if graph_count == 0 or op_count == 0:
        if skipped:
            why = (
                parse_break_message(skipped[0].fail_reason or "")["reason"]
                or (skipped[0].fail_reason or "").split("\n", 1)[0]
            )
            return (
                f"Nothing was compiled: dynamo skipped the model's frame ({why}), so it runs eagerly "
                "and compiling changes nothing.",
                False,
            )
        return ("Nothing was compiled: dynamo captured no operations, so the model runs eagerly.", False)
    a_call = graphs_per_call if graphs_per_call is not None else first_call_graphs
    one_a_call = a_call == 1 if a_call is not None else graph_count == 1
    if graph_breaks == 0 and not skipped and one_a_call:
        if graph_count == 1:
            return (f"Fully compiled: one graph of {op_count} ops, no graph breaks.", True)
        return (f"Fully compiled: one graph a call, no graph breaks; torch compiled {made} over the job.", True)
    parts = [f"Partly compiled: {made}"]
    if graphs_per_call is not None and graphs_per_call != graph_count:
        parts.append(f"{count(round(graphs_per_call, 1), 'graph')} run a call")
    if graph_breaks:
        parts.append(f"split by {count(graph_breaks, 'graph break')} a call")
    if skipped:
        parts.append(f"{len(skipped)} frame{'s' if len(skipped) != 1 else ''} skipped and run eagerly")
    return (", ".join(parts) + "; code between graphs runs eagerly in Python.", False)
