"""How a job times its calls: eager and compiled alternate in blocks (so drift hits both
alike; blocks rather than single calls, measured in docs/BENCHMARKS.md), a fixed number of
calls a side or, with --iters auto, blocks until the speedup's interval is narrow enough."""

from __future__ import annotations

import resource
import time
from typing import TYPE_CHECKING

from core.vocab import events as ev
from core.vocab import records as rec

if TYPE_CHECKING:
    from core.measure.context import JobContext
    from core.models import LoadedModel


MIN_ALTERNATIONS = 4


def effective_block(iters: int, block: int) -> int:
    """The block length a run really uses: the asked one, shortened so that each side gets
    at least MIN_ALTERNATIONS blocks (with 20 iterations and blocks of 25 the sides would
    otherwise never alternate: all eager calls, then all compiled)."""
    return max(1, min(block, -(-iters // MIN_ALTERNATIONS)))


def describe_alternation(iters: int, block: int) -> str:
    """What the benchmark does, in words (the phase detail and the report say it)."""
    used = effective_block(iters, block)
    blocks = -(-iters // used)
    text = f"eager and compiled alternating in {blocks} blocks of {used} calls"
    if used != block:
        text += f" (blocks of {block} asked; shortened so the sides alternate at least {MIN_ALTERNATIONS} times)"
    return text


def alternating(iters: int, block: int):
    """(side, iteration) pairs: `block` eager calls, then `block` compiled calls, and so on,
    so slow drift (thermal, other load) hits both sides alike."""
    block = max(1, block)
    for start in range(0, iters, block):
        stop = min(iters, start + block)
        for side in ("eager", "compiled"):
            for i in range(start, stop):
                yield side, i


class CallCosts:
    """Page faults and CPU time of each side's timed calls, from getrusage read before and after
    each block (a few microseconds, never inside a timed call)."""

    def __init__(self, process: int = 0):
        self.process = process
        self.totals = {side: [0, 0, 0, 0.0, 0.0] for side in rec.SIDES}  # calls, minflt, majflt, utime, stime
        self._before = None

    def start(self) -> None:
        self._before = resource.getrusage(resource.RUSAGE_SELF)

    def stop(self, side: str, calls: int) -> None:
        after, before = resource.getrusage(resource.RUSAGE_SELF), self._before
        t = self.totals[side]
        t[0] += calls
        t[1] += after.ru_minflt - before.ru_minflt
        t[2] += after.ru_majflt - before.ru_majflt
        t[3] += after.ru_utime - before.ru_utime
        t[4] += after.ru_stime - before.ru_stime

    def records(self) -> tuple[rec.CallCost, ...]:
        return tuple(
            rec.CallCost(side, t[0], t[1], t[2], round(t[3] * 1000.0, 3), round(t[4] * 1000.0, 3), self.process)
            for side, t in self.totals.items()
            if t[0]
        )


def time_blocks(job: JobContext, loaded: LoadedModel, calls: dict) -> None:
    """A fixed `iters` calls a side per process, in alternating blocks."""
    spec = job.spec
    iters = spec.iters
    block = effective_block(iters, spec.block_size)
    job.enter("benchmark", f"{iters} timed iterations per side, {describe_alternation(iters, spec.block_size)}")
    timed, record, Sample, inputs = job.timed, job.record, rec.LatencySample, loaded.inputs
    costs = CallCosts(spec.repeat)
    for start in range(0, iters, block):
        stop = min(iters, start + block)
        for side in rec.SIDES:
            fn, before = calls[side]
            costs.start()
            for i in range(start, stop):
                record(Sample(side, i, timed(fn, inputs, before)))
            costs.stop(side, stop - start)
    job.flush()
    job.emit(ev.CallCostsMeasured, costs=costs.records())


def time_until_precise(job: JobContext, loaded: LoadedModel, calls: dict) -> None:
    """--iters auto: alternate blocks of eager and compiled calls until the speedup's 95%
    interval (of this process's calls) is within ±precision_pct %, or this process's share
    of max_time_s is spent, or AUTO_ITERS_CAP calls a side; the phase detail shows the
    interval as it narrows (between blocks, never inside a timed call)."""
    from core.analysis.stats import speedup
    from core.vocab.limits import AUTO_ITERS_CAP

    spec = job.spec
    budget = spec.benchmark_budget_s()
    block = max(1, spec.block_size)
    target = spec.precision_pct
    job.enter(
        "benchmark",
        f"timing blocks of {block} calls a side until the speedup is known within "
        f"±{target:g}% (at most {budget:.0f} s)",
    )
    timed, record, Sample, inputs = job.timed, job.record, rec.LatencySample, loaded.inputs
    times: dict[str, list[float]] = {"eager": [], "compiled": []}
    costs = CallCosts(spec.repeat)
    start = time.perf_counter()
    last_check = last_report = start
    i = 0
    while i < AUTO_ITERS_CAP:
        stop = min(AUTO_ITERS_CAP, i + block)
        for side in ("eager", "compiled"):
            fn, before = calls[side]
            costs.start()
            for j in range(i, stop):
                ms = timed(fn, inputs, before)
                times[side].append(ms)
                record(Sample(side, j, ms))
            costs.stop(side, stop - i)
        i = stop
        now = time.perf_counter()
        if i < MIN_ALTERNATIONS * block and now - start < budget:
            continue
        if now - last_check < 0.25 and now - start < budget:
            continue  # the interval is recomputed at most 4 times a second
        last_check = now
        sp = speedup(times["eager"], times["compiled"], resamples=400)
        half = 100.0 * (sp.ci_high - sp.ci_low) / (2.0 * sp.value)
        done = half <= target or now - start >= budget
        if done or now - last_report >= 1.0:
            last_report = now
            job.emit(
                ev.PhaseChanged,
                phase="benchmark",
                detail=(
                    f"{job.process_note}{i} calls a side, speedup {sp.value:.3f}x [{sp.ci_low:.3f}-{sp.ci_high:.3f}]"
                    f" ±{half:.1f}% (target ±{target:g}%), {now - start:.0f} of {budget:.0f} s"
                ),
                step=int(now - start) if not done else int(budget),
                steps=max(1, int(budget)),
                process=spec.repeat,
            )
        if done:
            break
    job.flush()
    job.emit(ev.CallCostsMeasured, costs=costs.records())


MIN_THROUGHPUT_BLOCKS = 10  # blocks a side at least: a median and an interval need several


def throughput_blocks(job: JobContext) -> int:
    """Blocks a side the throughput method times: the job's calls a side over THROUGHPUT_CALLS,
    at least MIN_THROUGHPUT_BLOCKS."""
    from core.vocab.config import THROUGHPUT_CALLS

    return max(MIN_THROUGHPUT_BLOCKS, -(-job.spec.fixed_calls() // THROUGHPUT_CALLS))


def time_throughput(job: JobContext, loaded: LoadedModel, calls: dict, as_samples: bool) -> None:
    """The throughput method (as torch.utils.benchmark.Timer and triton's do_bench time): blocks
    of THROUGHPUT_CALLS calls back to back, one synchronisation a block, the time a call = the
    block's time / THROUGHPUT_CALLS, eager and compiled blocks alternating. `as_samples`: the
    blocks are the job's timed samples (--timing throughput); else (--timing both, after the
    latency benchmark) they are sent apart (ThroughputMeasured)."""
    from core.vocab.config import THROUGHPUT_CALLS, timing_method_text

    blocks = throughput_blocks(job)
    job.enter("benchmark", f"{blocks} blocks a side; {timing_method_text('throughput')}")
    found = []
    inputs, Sample = loaded.inputs, rec.LatencySample
    costs = CallCosts(job.spec.repeat)
    for b in range(blocks):
        for side in rec.SIDES:
            fn, before = calls[side]
            costs.start()
            sample = Sample(side, b, job.timed_block(fn, inputs, before, THROUGHPUT_CALLS))
            costs.stop(side, THROUGHPUT_CALLS)
            if as_samples:
                job.record(sample)
            else:
                found.append(sample)
                job.check_stop()
    job.flush()
    if as_samples:
        job.emit(ev.CallCostsMeasured, costs=costs.records())
    else:
        job.emit(ev.ThroughputMeasured, samples=tuple(found))
