"""A shape or batch sweep inside a job: every input variant in turn against one compiled model,
so recompiles (and the recompile limit) follow the pattern torch really applies; per variant
its warm-ups, the compile it triggers and alternating timed calls (core.measure.timing)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.capture import compile_metrics
from core.measure.environment import peak_rss_mb
from core.measure.failures import is_out_of_memory
from core.measure.timing import alternating, effective_block
from core.models import ModelLoadError, describe_input
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.formatting import MB

if TYPE_CHECKING:
    from core.measure.context import JobContext
    from core.models import LoadedModel


def run_sweep(job: JobContext, loaded: LoadedModel):
    """Every input variant in turn, against one compiled model, so the recompiles (and
    the recompile limit) follow the pattern torch really applies. Returns the compiled
    model and the first variant's inputs (compiled for already: the accuracy check's)."""
    spec = job.spec
    if spec.sweep_batch:  # --sweep-batch: the model's inputs at each batch size
        from core.models.values import with_batch_size

        loaded.variants = [with_batch_size(loaded.inputs, b) for b in spec.sweep_batch]
    if not loaded.variants:
        raise ModelLoadError(
            "the model defines no get_input_variants(); a shape sweep needs a model file "
            "whose get_input_variants() returns a list of input tuples.",
            file=spec.model.source,
        )
    variants = [job.to_device(v) for v in loaded.variants]
    compiled = job.compile(loaded, variants[0])
    seen_shapes: set[tuple] = set()
    limit_reached = False
    for i, inputs in enumerate(variants):
        shapes = tuple(describe_input(x) for x in inputs)
        job.enter("sweep", f"variant {i + 1}/{len(variants)}: {', '.join(shapes)}", i + 1, len(variants))
        if not spec.sweep_batch:
            limit_reached = measure_variant(job, loaded.model, i, inputs, shapes, compiled, seen_shapes, limit_reached)
            continue
        batch = spec.sweep_batch[i]
        job.start_memory_phase()
        try:
            limit_reached = measure_variant(
                job, loaded.model, i, inputs, shapes, compiled, seen_shapes, limit_reached, batch
            )
        except Exception as exc:  # out of memory ends this batch size, not the run
            if not is_out_of_memory(exc):
                raise
            if job.cuda:
                job.torch.cuda.empty_cache()
            first = next((t for t in str(exc).splitlines() if t.strip()), type(exc).__name__)
            job.emit(
                ev.VariantMeasured,
                variant=rec.VariantResult(
                    index=i,
                    input_shapes=shapes,
                    compiles=0,
                    recompiled=False,
                    batch_size=batch,
                    peak_mb=variant_peak_mb(job),
                    error=f"out of memory at batch size {batch}: {first}",
                ),
            )
    return compiled, variants[0]


def variant_peak_mb(job: JobContext) -> float:
    if job.cuda:
        return round(job.torch.cuda.max_memory_allocated() / MB, 2)
    return round(peak_rss_mb(), 2)


def measure_variant(
    job: JobContext, eager, i, inputs, shapes, compiled, seen_shapes, limit_reached, batch=None
) -> bool:
    """One sweep variant: eager and compiled warm-up, the compile it triggers, alternating
    timed calls; emits its VariantResult and returns whether the recompile limit is reached."""
    spec = job.spec
    before, timed = job.step_marker(), job.timed
    for _ in range(spec.warmup):
        timed(eager, inputs)
    if i == 0:
        compile_s, metrics = job.last_compile_s, job.last_compile_metrics
    else:
        compile_s, metrics = job.first_call(compiled, inputs)
    for _ in range(spec.warmup):
        timed(compiled, inputs, before)
    times = {"eager": [], "compiled": []}
    calls = {"eager": (eager, job.eager_before()), "compiled": (compiled, before)}
    iters = spec.fixed_calls()
    for side, _ in alternating(iters, effective_block(iters, spec.block_size)):
        fn, step = calls[side]
        times[side].append(timed(fn, inputs, step))
        job.check_stop()
    eager_ms, compiled_ms = times["eager"], times["compiled"]
    hit = any(compile_metrics.is_recompile_limit(m) for m in metrics)  # by graph-break type, not text
    limit_reached = limit_reached or hit
    new_shape = shapes not in seen_shapes
    seen_shapes.add(shapes)
    compiles = len(metrics)
    job.emit(
        ev.VariantMeasured,
        variant=rec.VariantResult(
            index=i,
            input_shapes=shapes,
            compiles=compiles,
            recompiled=i > 0 and compiles > 0,
            recompile_reasons=tuple(m.recompile_reason for m in metrics if m.recompile_reason),
            compile_time_s=compile_s if compiles else 0.0,
            recompile_limit_hit=hit,
            ran_eagerly=limit_reached and new_shape and (hit or compiles == 0),
            eager_ms=tuple(eager_ms),
            compiled_ms=tuple(compiled_ms),
            batch_size=batch,
            peak_mb=variant_peak_mb(job) if batch is not None else None,
        ),
    )
    return limit_reached
