"""Whether the profiled calls (the Time breakdown) and the timed calls (the Summary's medians)
tell the same story, and in words which figure is which when they do not.

The two are different measurements: the timed medians come from the benchmark's calls (the
figures every verdict rests on); the Time breakdown explains a few calls made afterwards under
torch.profiler, which slows each call down. So a profiled call is normally somewhat slower
than the timed median. Two things cannot come from the profiler and mean the timing was
disturbed (a busy machine, a throttled CPU): a profiled call far *faster* than the timed
median, or the two pointing opposite ways (one says compiled is faster, the other slower).
Both are flagged with the measurement-quality grade (core.analysis.quality) beside them.
No Qt; any thread.
"""

from __future__ import annotations

from core.vocab.formatting import fmt_ms

# A profiled call this many times faster than the timed median is not the profiler's doing.
PROFILED_FASTER = 1.5
# Speedups pointing opposite ways: one above 1 + this, the other below 1 - this.
OPPOSITE_MARGIN = 0.05


def figures_disagree(
    eager_median: float | None,
    compiled_median: float | None,
    eager_profiled: float | None,
    compiled_profiled: float | None,
) -> list[str]:
    """What disagrees between the timed medians and the profiled calls (ms), in words; []
    when they agree or a figure is missing."""
    if not all(x and x > 0 for x in (eager_median, compiled_median, eager_profiled, compiled_profiled)):
        return []
    problems = []
    for side, median, profiled in (
        ("eager", eager_median, eager_profiled),
        ("compiled", compiled_median, compiled_profiled),
    ):
        if median / profiled >= PROFILED_FASTER:
            problems.append(
                f"the {side} timed median ({fmt_ms(median)}) is {median / profiled:.1f}× the {side} profiled call "
                f"({fmt_ms(profiled)}), though the profiler only slows calls down"
            )
    timed, profiled = eager_median / compiled_median, eager_profiled / compiled_profiled
    low, high = 1 - OPPOSITE_MARGIN, 1 + OPPOSITE_MARGIN
    if (timed > high and profiled < low) or (timed < low and profiled > high):
        problems.append(
            f"the timed calls say compiled is {_speed(timed)}, the profiled calls that it is {_speed(profiled)}"
        )
    return problems


def _speed(speedup: float) -> str:
    return f"{speedup:.2f}× faster" if speedup >= 1 else f"{1 / speedup:.2f}× slower"


def agreement_note(result) -> str:
    """For a JobResult with an op profile: a sentence naming both figures and saying they
    disagree, with the timing's grade; "" when they agree (or there is nothing to compare)."""
    profile = result.op_profile
    if profile is None or profile.eager is None or profile.compiled is None:
        return ""
    eager, compiled = result.stats("eager"), result.stats("compiled")
    if eager is None or compiled is None:
        return ""
    problems = figures_disagree(eager.median, compiled.median, profile.eager.ms_per_call, profile.compiled.ms_per_call)
    if not problems:
        return ""
    quality = result.quality(ci=result.ended)
    graded = f" The timing is graded {quality.sentence()}." if quality is not None else ""
    return (
        f"The timed medians ({fmt_ms(eager.median)} eager, {fmt_ms(compiled.median)} compiled: the benchmark's calls, "
        f"which the speedup rests on) and the profiled calls of the Time breakdown ({fmt_ms(profile.eager.ms_per_call)} "
        f"eager, {fmt_ms(profile.compiled.ms_per_call)} compiled: a few calls after the benchmark, under the "
        f"profiler) disagree: {'; '.join(problems)}.{graded} Something else on the machine likely slowed the "
        "benchmark: re-run on a quieter machine before trusting the speedup."
    )


MEDIANS_DIFFER = 0.10
"""The pooled medians' ratio this far (relative) from the speedup: said, with why."""


def medians_note(summary: dict) -> str:
    """Why the speedup is not the pooled medians' ratio, when they differ by more than
    MEDIANS_DIFFER ("" otherwise): with several processes the speedup combines each process's
    own eager/compiled ratio (processes can run at different speeds for their whole life), and
    the pooled medians mix those speeds. A reader dividing 118.6 ms by 30.1 ms found 3.94x beside
    a speedup of 1.68x and distrusted the tool."""
    eager, compiled, speedup = summary.get("eager_median_ms"), summary.get("compiled_median_ms"), summary.get("speedup")
    if not (eager and compiled and speedup) or eager <= 0 or compiled <= 0 or speedup <= 0:
        return ""
    pooled = eager / compiled
    if abs(pooled / speedup - 1.0) <= MEDIANS_DIFFER:
        return ""
    return (
        f"the speedup ({speedup:.2f}x) combines each process's own eager/compiled ratio; the medians pooled over "
        f"the processes ({fmt_ms(eager)} / {fmt_ms(compiled)} = {pooled:.2f}x) mix processes that ran at "
        "different speeds, so they are not divided to get it"
    )


def methods_note(summary: dict) -> str:
    """--timing both: when the latency and the throughput speedups differ beyond their intervals,
    why, in one sentence ("" otherwise)."""
    lat = (summary.get("speedup"), summary.get("speedup_ci_low"), summary.get("speedup_ci_high"))
    thr = (
        summary.get("throughput_speedup"),
        summary.get("throughput_speedup_ci_low"),
        summary.get("throughput_speedup_ci_high"),
    )
    if None in lat or None in thr:
        return ""
    if lat[2] >= thr[1] and thr[2] >= lat[1]:
        return ""
    return (
        f"The two methods differ beyond the noise (latency {lat[0]:.2f}x, throughput {thr[0]:.2f}x): a call timed "
        "alone pays the CPU's launch work and the synchronisation, which calls back to back overlap with the "
        "device's work; latency is what one request waits, throughput what a stream of calls gets."
    )
