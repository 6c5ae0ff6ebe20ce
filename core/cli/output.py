"""What the commands print: progress on stderr (a tqdm bar on a terminal, a line per phase
otherwise) and each config's figures, time breakdown, throughput and the decision on stdout."""

from __future__ import annotations

import signal
import sys
from typing import Callable

from core.analysis.figure_agreement import medians_note, methods_note
from core.analysis.quality import process_note
from core.analysis.results import JobResult
from core.analysis.stats import median_or_none
from core.analysis.time_breakdown import PROFILED
from core.analysis.variants import variant_outcome
from core.capture.compile_watch import STALL_S, stalled_text
from core.run.runner import RunListener
from core.vocab import events as ev
from core.vocab.config import JobSpec, timing_method_text
from core.vocab.formatting import cell, count, fmt_ms
from core.vocab.op_records import TIME_CATEGORY_LABELS
from core.vocab.records import JobStatus
from core.vocab.source_paths import display_path
from core.vocab.terminal import terminal_text


def say(text: str = "", file=None, flush: bool = False) -> None:
    """Print a line that may carry text from torch's records, file names or a report, made safe
    for a terminal (core.vocab.terminal): every line the commands print goes through here."""
    print(terminal_text(text), file=file, flush=flush)


class Progress(RunListener):
    """Progress on stderr: a tqdm bar per job on a terminal (phase in the description,
    calls as the count), one line per phase otherwise (logs, CI), nothing with --quiet."""

    LINE_EVERY_S = 5.0  # without a bar: the benchmark's narrowing interval at most this often

    def __init__(self, quiet: bool = False, bar: bool | None = None):
        self.quiet = quiet
        self.use_bar = (sys.stderr.isatty() if bar is None else bar) and not quiet
        self.bar = None
        self._label = ""
        self._last_line = (0.0, "")
        self._held = ""  # a narrowing-interval line not printed yet (at most one every LINE_EVERY_S)
        self._changed = (0.0, "")  # when the phase's detail last changed, and to what
        self._stall_said = False

    def on_job_started(self, index: int, total: int, spec: JobSpec) -> None:
        self._label = f"[{index}/{total}] {spec.config.label}"
        if self.use_bar:
            from tqdm import tqdm

            planned = spec.planned_calls()
            count = (
                None
                if planned is None
                else spec.timed_processes() * (spec.warmup_calls("eager") + spec.warmup_calls("compiled") + 2 * planned)
            )
            self.bar = tqdm(
                total=count,
                desc=terminal_text(self._label),
                unit="call",
                file=sys.stderr,
                dynamic_ncols=True,
                leave=True,
            )
        elif not self.quiet:
            say(f"{self._label}: starting", file=sys.stderr, flush=True)

    def on_event(self, event: ev.Event) -> None:
        import time

        if isinstance(event, ev.PhaseChanged):
            self._changed, self._stall_said = (time.monotonic(), event.detail or event.phase), False
            if self.bar is not None:
                detail = (
                    event.detail
                    if (event.phase == "benchmark" and " calls a side, speedup " in event.detail)
                    or (event.phase == "compile" and event.detail.startswith("compiling "))
                    else event.phase
                )
                self.bar.set_description(terminal_text(f"{self._label}: {detail}"))
            elif not self.quiet:
                now, (last, phase) = time.monotonic(), self._last_line
                if phase == event.phase and phase in ("benchmark", "compile") and now - last < self.LINE_EVERY_S:
                    self._held = event.detail  # said when the phase ends: the interval reached
                    return
                self._flush_held()
                self._last_line = (now, event.phase)
                say(f"{self._label}: {event.detail or event.phase}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.LatencyMeasured) and self.bar is not None:
            self.bar.update(len(event.samples))
        elif isinstance(event, ev.ResourceSampled) and self._last_line[1] == "compile" and not self.quiet:
            since, detail = self._changed
            if not self._stall_said and time.monotonic() - since >= STALL_S:
                self._stall_said = True
                self._flush_held()
                text = stalled_text(detail, time.monotonic() - since, "--compile-log +dynamo,inductor shows more")
                say(f"{self._label}: {text}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.ProcessEnded) and event.status != JobStatus.COMPLETED and not self.quiet:
            say(f"{self._label}: {process_note(event)}", file=sys.stderr, flush=True)

    def _flush_held(self) -> None:
        if self._held:
            say(f"{self._label}: {self._held}", file=sys.stderr, flush=True)
            self._held = ""

    def on_job_ended(self, index: int, total: int, spec: JobSpec, terminal: ev.Event) -> None:
        if not self.quiet and self.bar is None:
            self._flush_held()
        status = {
            ev.JobCompleted: JobStatus.COMPLETED,
            ev.JobFailed: JobStatus.FAILED,
            ev.JobCancelled: JobStatus.CANCELLED,
        }[type(terminal)]
        if self.bar is not None:
            self.bar.set_description(f"{self._label}: {status}")
            self.bar.close()
            self.bar = None
        elif not self.quiet:
            say(f"{self._label}: {status}", file=sys.stderr, flush=True)


def print_summary(results: list[JobResult]) -> None:
    for r in results:
        print_config(r)


def config_lines(r: JobResult, summary: dict | None = None) -> list[str]:
    """One config's figures and findings as the CLI prints them after a run, line by line (the
    app's Summary shows them for the selected config). `summary`: `r.summary()` when the
    caller has it already (most of the cost: 20 ms at 500,000 calls a side)."""
    lines: list[str] = []
    print_config(r, out=lines.append, summary=summary)
    return lines


def print_config(r: JobResult, out: Callable[[str], None] = say, summary: dict | None = None) -> None:
    """One config's block: status, medians and speedup, the timing's grade, the kernel's cost,
    accuracy, compile, memory, coverage, CUDA graphs, the time breakdown, sweeps, dynamic
    dimensions and graph breaks."""
    s = summary if summary is not None else r.summary()
    out(f"{s['config']}: {s['status']}")
    if r.failure_reason:
        out(f"  reason: {r.failure_reason}")
    if r.ended and not r.environment:  # never started (cancelled in the queue): nothing measured
        return
    if not r.spec.sweep_shapes and not r.spec.sweep_batch:
        out(
            f"  eager median {cell(s['eager_median_ms'], '.3f', ' ms')}, compiled median "
            f"{cell(s['compiled_median_ms'], '.3f', ' ms')}, speedup {cell(s['speedup'], '.2f', 'x')} "
            f"[95% CI {cell(s['speedup_ci_low'])}-{cell(s['speedup_ci_high'])}]"
        )
        note = medians_note(s)
        if note:
            out(f"  ({note})")
        out(f"  ({timing_method_text(s['timing_method'])})")
        if s["throughput_speedup"] is not None:
            out(
                f"  throughput: eager {cell(s['throughput_eager_ms'], '.3f', ' ms')}, compiled "
                f"{cell(s['throughput_compiled_ms'], '.3f', ' ms')} a call, speedup "
                f"{cell(s['throughput_speedup'], '.2f', 'x')} [95% CI {cell(s['throughput_speedup_ci_low'])}-"
                f"{cell(s['throughput_speedup_ci_high'])}] ({timing_method_text('throughput')})"
            )
            differ = methods_note(s)
            if differ:
                out(f"  {differ}")
    out(f"  timing: {r.quality().line()}")
    costs = [(side, r.call_cost(side)) for side in ("eager", "compiled")]
    if all(c is not None and c.calls for _, c in costs):
        out(
            "  OS kernel time (system CPU) a timed call: "
            + "; ".join(
                f"{side} {c.per_call('sys_ms'):.3f} ms with {c.per_call('minor_faults'):,.0f} page faults"
                for side, c in costs
            )
        )
    if s["accuracy"]:
        errors = (
            f" (max abs error {cell(s['max_abs_error'], '.3g')}, max rel error "
            f"{cell(s['max_rel_error'], '.3g')}, cosine {cell(s['cosine'], '.6f')})"
            if s["max_abs_error"] is not None
            else ""
        )
        out(f"  accuracy: {s['accuracy']}{errors}: {s['accuracy_reason']}")
    if s["backward_compile_s"] is not None:
        out(
            f"  training step compile: forward graphs {cell(s['forward_compile_s'], '.2f', ' s')}, backward "
            f"graphs {cell(s['backward_compile_s'], '.2f', ' s')}"
        )
    sites = s["graph_break_sites"]
    breaks = (
        "-"
        if sites is None
        else f"{sites:d} place{'' if sites == 1 else 's'} ({cell(s['graph_break_per_call'], 'd')} per call)"
    )
    out(
        f"  compile {cell(s['compile_time_s'], '.2f', ' s')} (cache {s['cache_state'] or '-'}), "
        f"break-even {cell(s['break_even_iters'], '.0f', ' calls')}, graphs {cell(s['graph_count'], 'd')}, "
        f"graph breaks {breaks}, "
        # nothing compiled (a job that failed before its compile): no count, as for the others
        f"recompiles {s['recompile_count'] if s['graph_count'] is not None else '-'}"
    )
    out(
        f"  peak RSS of the job process (its compile workers not counted): eager {cell(s['eager_peak_mb'], '.0f', ' MB')}, compile "
        f"{cell(s['compile_peak_mb'], '.0f', ' MB')}, compiled {cell(s['compiled_peak_mb'], '.0f', ' MB')}"
    )
    if s["coverage"]:
        out(f"  {s['coverage']}")
    word, story = r.cudagraph_state()
    if word:
        out(f"  CUDA graphs: {word}: " + story.replace("\n", "\n    "))
    print_time_breakdown(r, out=out)
    if r.spec.sweep_batch:
        print_throughput(r, out=out)
    for v in [] if r.spec.sweep_batch else r.variants:
        what = variant_outcome(v, with_time=True)
        eager_ms, compiled_ms = median_or_none(v.eager_ms), median_or_none(v.compiled_ms)
        out(
            f"  variant {v.index} {', '.join(v.input_shapes)}: {what}; eager "
            f"{cell(eager_ms, '.3f', ' ms')}, compiled {cell(compiled_ms, '.3f', ' ms')}"
        )
    print_dynamic_dims(r, out=out)
    print_graph_breaks(r, out=out)


def print_dynamic_dims(r: JobResult, out: Callable[[str], None] = say) -> None:
    """After a run that recompiled: per input dimension the sizes seen and the guards that failed
    on it (core.analysis.dynamic_dims), then the dimensions to mark, as the flag that re-runs
    with them, or why dynamic shapes cannot help."""
    from core.analysis.dynamic_dims import analyse, cannot_help

    a = analyse(r)
    if not a.recompiles:
        return
    for row in a.rows:
        guard = f", torch's guard failed on it {row.guard_failures}x" if row.guard_failures else ""
        guard += f"; {row.specialized}" if row.specialized else ""
        out(
            f"  sizes {row.where}: {', '.join(map(str, row.values))} "
            f"({row.recompiles} recompile(s), {row.compile_s:.2f} s{guard})"
        )
    why_not = cannot_help(a)
    if why_not:
        out(f"  dynamic shapes cannot help: {why_not}")
    elif a.to_mark:
        flags = " ".join(f"--mark-dynamic {m.input}:{m.dim}:{m.min}:{m.max}" for m in a.marks())
        out(f"  to compile these sizes once: {flags}")


def print_graph_breaks(r: JobResult, out: Callable[[str], None] = say) -> None:
    """One line per graph-break row: a break (how many times a call passes it: counted in the op
    profile's calls, or said to come from the compile alone), a skipped frame (what ran
    eagerly), or a compile that made torch raise (nothing ran eagerly)."""
    profiled = r.op_profile is not None and r.op_profile.compiled is not None
    for g in r.graph_breaks:
        where = f"{display_path(g.file)}:{g.line}" if g.file else "?"
        code = f" {g.gb_code}" if g.gb_code else ""
        if g.compile_failed:
            out(f"  compile failed{code} at {where} (torch raised, nothing ran eagerly): {g.reason}")
        elif g.frame_skipped:
            out(f"  frame skipped {g.gb_code or '-'} at {where}, ran eagerly: {g.eager_function}: {g.reason}")
        else:
            cost = r.break_cost(g)
            costs = f", costs {fmt_ms(cost.cost_ms_per_call)} a call" if cost else ""
            source = (
                "" if r.per_call_counted(g) else " from the compile alone" + ("" if profiled else ": no op profile")
            )
            out(
                f"  graph break {g.gb_code or '-'} at {where} (x{g.per_call} per call{source}, logged "
                f"{g.logged}x{costs}): {g.reason}"
            )
        if g.explanation and g.explanation != g.reason:
            out(f"    torch: {g.explanation}")
        for hint in g.advice[:2]:
            out(f"    hint: {hint}")


def print_throughput(r: JobResult, out: Callable[[str], None] = say) -> None:
    """A batch sweep's table: one line per batch size, and the best compiled throughput."""
    from core.analysis.variants import best_batch, throughput_rows

    out("  batch   eager ms  compiled ms   eager items/s  compiled items/s  speedup  peak MB  what torch did")
    for row in throughput_rows(r.variants):
        if row["error"]:
            out(f"  {row['batch_size']:>5}  {row['error']}")
            continue
        out(
            f"  {row['batch_size']:>5} {cell(row['eager_median_ms'], '10.3f')} {cell(row['compiled_median_ms'], '12.3f')} "
            f"{cell(row['eager_items_per_s'], '15.1f')} {cell(row['compiled_items_per_s'], '17.1f')} "
            f"{cell(row['speedup'], '7.2f', 'x')} {cell(row['peak_mb'], '8.0f')}  "
            f"{variant_outcome(r.variants[[v.batch_size for v in r.variants].index(row['batch_size'])], True)}"
        )
    best = best_batch(r.variants)
    if best:
        out(
            f"  best compiled throughput at batch size {best['batch_size']}: "
            f"{best['compiled_items_per_s']:,.1f} items/s, speedup {cell(best['speedup'], '.2f', 'x')} there"
        )


def print_time_breakdown(r: JobResult, top: int = 5, out: Callable[[str], None] = say) -> None:
    """The op profile in a few lines: the verdict, each side's time by category, what ran."""
    p = r.op_profile
    if p is None:
        return
    if p.note:
        out(f"  op profile: {p.note}")
    if r.time_verdict():
        out(f"  {r.time_verdict()}")
    for side in (p.eager, p.compiled):
        if side is None or not side.calls:
            continue
        parts = ", ".join(
            f"{TIME_CATEGORY_LABELS[c]} {fmt_ms(ms)}" for c, ms in side.time_by_category().items() if ms >= 0.0005
        )
        launched = count(side.operators_per_call, "operator") + (
            f", {count(side.kernels_per_call, 'kernel')}, {count(side.graphs_per_call, 'graph')}"
            if side.side == "compiled"
            else ""
        )
        left_out = f"; {count(side.outlier_calls, 'interrupted call')} left out" if side.outlier_calls else ""
        out(f"  {side.side} under the profiler: {fmt_ms(side.ms_per_call)} a call ({launched}{left_out}): {parts}")
        tops = ", ".join(
            f"{o.name}{f' [{o.graph}]' if o.graph else ''} {fmt_ms(o.self_ms_per_call)}" for o in side.top_ops(top)
        )
        if tops:
            out(f"    top: {tops}")
    print_lines(r, out=out)


def print_lines(r: JobResult, top: int = 3, out: Callable[[str], None] = say) -> None:
    """The source lines that lost most time compiled (core.measure.line_profile), and what the
    lines account for on each side."""
    p = r.op_profile
    if p is None or not p.lines:
        return
    lost = sorted((t for t in p.lines if t.lost_ms is not None and t.lost_ms > 0), key=lambda t: -t.lost_ms)[:top]
    # each side's call under its own instrument (neither is the timed median above)
    eager_share = f"{fmt_ms(p.lines_eager_ms)} of the {fmt_ms(p.lines_eager_call_ms)} eager call timed line by line"
    compiled_side = p.compiled.ms_per_call if p.compiled is not None else None
    compiled_share = (
        f", {fmt_ms(p.lines_compiled_ms)} of the {fmt_ms(compiled_side)} compiled call {PROFILED}"
        if compiled_side is not None
        else ""
    )
    out(f"  by source line ({len(p.lines)} lines; lines.csv): they account for {eager_share}{compiled_share}")
    if p.lines_note:
        out(f"    {p.lines_note.strip()}")
    for t in lost:
        mark = " (graph break)" if t.graph_break else ""
        out(
            f"    lost most: {display_path(t.file)}:{t.line}{mark} eager {fmt_ms(t.eager_ms)}, compiled "
            f"{fmt_ms(t.compiled_ms)} (+{fmt_ms(t.lost_ms)}): {t.source[:80]}"
        )


def print_decision(results: list[JobResult], calls: int) -> None:
    """The recommendation, its code and the suggestions, as report.json and recommendation.txt hold them."""
    from core.decide.suggestions import held_back_note, suggestion_sections
    from core.report.report_contents import decision

    rec, suggestions = decision(results, calls)
    say(f"\nRecommendation for {rec.calls:,} calls ({rec.how_sure}):")
    say(f"  {rec.sentence}")
    if rec.memory:
        say(f"  {rec.memory}")
    if rec.break_even_calls is not None:
        say(f"  Compiling pays for itself after {rec.break_even_calls:,.0f} calls.")
    if rec.per_call_basis and rec.choice:  # the sentence quotes a time a call only when it chose
        say(f"  {rec.per_call_basis}")
    if rec.code:
        say("\n" + rec.code.rstrip())
    for heading, group in suggestion_sections(rec, suggestions):
        say(f"\n{heading}:")
        for s in group:
            say(s.text())
    held = held_back_note(results)
    if held:
        say(f"\n{held}")


class CancelOnInterrupt:
    """Ctrl+C while the block runs cancels the work (`cancel()`, said once on stderr) instead
    of raising, so what was measured is still written; the previous handler comes back at
    the end. `interrupted` tells the command to exit 130."""

    def __init__(self, cancel: Callable[[], None], keeps: str):
        self._cancel, self._keeps = cancel, keeps
        self.interrupted = False
        self._previous = None

    def _on_sigint(self, *_) -> None:
        if not self.interrupted:
            say(f"\ninterrupted: cancelling; {self._keeps}.", file=sys.stderr, flush=True)
        self.interrupted = True
        self._cancel()

    def __enter__(self) -> "CancelOnInterrupt":
        self._previous = signal.signal(signal.SIGINT, self._on_sigint)
        return self

    def __exit__(self, *exc) -> None:
        # None: the handler before was not set from Python; Python's own (KeyboardInterrupt) then
        signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.default_int_handler)
