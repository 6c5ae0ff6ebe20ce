"""Capturing graph breaks, recompiles and compile metrics from the real compile.

Graph breaks come from torch's own `graph_breaks` log artifact (what `TORCH_LOGS=graph_breaks`
prints), recompiles from the `recompiles` artifact, both through a logging.Handler in the
job's process. We do not run a second `torch._dynamo.explain` pass: it compiles with another
backend and reports a data-dependent branch only as "generic_jump" with no GB code.

Structured data before text: the handler runs synchronously inside torch's logging call, so
it reads the objects torch formatted the message from (`log_graph_break`'s exception, its
`frame_loc` and user stack; the exception attached to a frame-skip record; the code object and
guard failures of a recompile). Locations therefore survive any file name (a newline, a colon)
and every frame of the user stack is known. Only when torch changes and those objects are not
found is the message text parsed.

Every record becomes a GraphBreak event at once (nothing is held back, so a cancelled, timed
out or crashed compile keeps what it found), tagged with torch's compile id ("0/0"). Frames
dynamo gave up on entirely are known from the compilation metrics, which carry the same compile
id: such a frame ran eagerly, and a follow-up event with frame_skipped=True and that compile id
moves the breaks logged in it to a skipped-frame row (see results.JobResult._add_graph_break).
A frame whose compile made torch raise (the exception reached the job: `Capture.compile_raised`)
did not run eagerly: its follow-up has compile_failed=True and torch's error instead. The metric
of a compile over the recompile limit names no function; torch's warning about it does (read
from the code object it formats), and so does the recompile record of that compile id.

CUDA-graph skips (modes reduce-overhead and max-autotune) come from the records of torch's
`log_cudagraph_skip_and_bump_counter` (picked out by the function that logged them, not by
their text), and from torch's `cudagraph_skips` counter for the skips it counts without
logging (graphs with no GPU device): each becomes a CudagraphSkipped event as it happens.

torch keeps only the last 64 compilation-metric records; `Capture` reads and clears them after
every graph break, recompile and compiled call, with torch's limit raised (set_compilation_
metrics_limit), so past 64 compiles every figure is still counted; should torch drop records
before they are read anyway, `Capture.partial` says so.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from typing import Callable

from core.capture.break_records import (
    current_compile_id,
    current_trace,
    error_summary,
    exception_names,
    make_break,
    metric_stack,
    parse_break_message,
    read_break_record,
    read_recompile_limit_record,
    read_recompile_record,
    split_location,
    stack_key,
    user_frame,
)
from core.vocab.records import CudagraphSkip, GraphBreak, Recompile
from core.vocab.source_paths import describe_function, is_user_code

METRICS_LIMIT = 100_000  # torch's deque between two reads; we read (and clear) it constantly
CUDAGRAPH_SKIP_FUNCTION = "log_cudagraph_skip_and_bump_counter"  # torch/_inductor/cudagraph_utils.py
STACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
SKIP_PREFIX = re.compile(r"(?:skipping|disabling) cudagraphs? (?:for backward )?due to\s+")


class _Handler(logging.Handler):
    def __init__(self, callback):
        super().__init__(logging.DEBUG)
        self._callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._callback(record)
        except Exception:  # a format change in torch must not kill the job
            logging.getLogger(__name__).debug("graph-break capture failed", exc_info=True)


class Capture:
    """Graph breaks, recompiles and compile metrics of one job, reported as they happen.

    `on_graph_break(gb)` is called once per graph_breaks record, with logged=1, and once
    more, with frame_skipped=True and the same compile id, when the compilation metrics show
    that the frame was skipped (under fullgraph=True a failed frame is not skipped: the
    compile fails, and the break is reported as an ordinary one at the offending line).

    per_call (1 or 0 on each record; their sum is the figure) counts a break each time a
    compiled call passes it, with dynamo's restarts removed. How a restart shows: a break
    inside a function dynamo had inlined (depth > 0) makes it restart the analysis of the
    frame it compiles and break at the call instead; that function then runs as a frame of
    its own, which dynamo compiles and where the same break is logged again, on the same path
    through the model (the stack of user frames), until it is logged at depth 0. A restart
    of the same frame re-logs it under the same compile id (another attempt). Those re-logs
    are not passes. A further compile of the path (a recompile for another module or shape)
    is one; passes are counted per compiled call (each first call of a job or sweep variant)
    and a break's per_call is the most passes any one call made.
    """

    def __init__(
        self,
        on_graph_break: Callable[[GraphBreak], None],
        on_recompile: Callable[[Recompile], None],
        fullgraph: bool = False,
        on_cudagraph_skip: Callable[[CudagraphSkip], None] | None = None,
    ):
        self._on_break, self._on_recompile, self.fullgraph = on_graph_break, on_recompile, fullgraph
        self._on_cudagraph_skip = on_cudagraph_skip
        self.cudagraph_skips: list[CudagraphSkip] = []
        self._cudagraph_logged = 0  # skips torch logged (its counter is bumped just after the record)
        self._cudagraph_unlogged = 0  # skips reported from torch's counter alone
        self.metrics: list = []  # every compilation metric, in order (config dumps dropped)
        self.partial = False  # torch dropped metrics before they were read
        self._emitted: dict[str, list[tuple]] = {}  # compile id → [(break, path, counted as a pass, call)]
        self._seen: set[tuple] = set()  # (compile id, site, stack): an attempt of that compile logged it
        self._open: dict[tuple, str] = {}  # (site, stack) → compile id that logged it inlined
        self._call = 0  # which compiled call (first_call) records belong to
        self._passes: dict[tuple, dict[int, int]] = {}  # site → {call: passes in that call}
        self._credited: dict[tuple, int] = {}  # site → per_call sent so far
        self._skipped_rows: set[tuple] = set()
        self.ordinary: dict[tuple, list[int]] = {}  # site → [logged, per_call], skipped frames excluded
        self._functions: dict[str, tuple[str, str, int]] = {}  # compile id → (name, file, line) torch named
        self._raised: set[str] | None = None  # while a compiled call's exception is read: its type names
        self.failed: dict[str, str] = {}  # compile id → torch's error, for compiles that made torch raise

    # ---- metrics
    def poll(self) -> list:
        """Read the compilation metrics torch recorded since the last poll (and clear torch's
        copy); report frames that were skipped. Returns the new metrics."""
        from torch._dynamo import utils

        self._unlogged_cudagraph_skips()
        new = utils.get_compilation_metrics()
        if not new:
            return []
        utils.clear_compilation_metrics()
        if len(new) >= METRICS_LIMIT:
            self.partial = True
        fresh = []
        for m in new:
            if getattr(m, "is_runtime", False):
                continue
            m = _slim(m)
            self.metrics.append(m)
            fresh.append(m)
        raising = None  # the last failure of the exception being read: nothing compiled after it
        if self._raised:
            raising = next((m for m in reversed(fresh) if m.fail_type and m.fail_type in self._raised), None)
        for m in fresh:
            if m.fail_type:
                self._frame_failed(m, raised=m is raising)
        return fresh

    def compile_raised(self, exc: BaseException) -> None:
        """A compiled call raised `exc`: a frame compile that failed with it made torch raise
        (rather than skip the frame); it is reported as a failed compile. Called before the
        metrics of that call are read (nothing runs between torch's raise and the caller)."""
        self._raised = exception_names(exc)
        try:
            self.poll()
        finally:
            self._raised = None

    def mark(self) -> int:
        """Start of a compiled call that may compile: returns a mark for metrics_since."""
        self.poll()
        self._call += 1
        self._open.clear()  # a restart's re-log comes within the call that restarted
        return len(self.metrics)

    def metrics_since(self, mark: int) -> list:
        self.poll()
        return self.metrics[mark:]

    # ---- records
    def on_break_record(self, record: logging.LogRecord) -> None:
        self.poll()  # a frame that failed before this record is reported first
        rec = read_break_record(record)
        if rec.preamble:
            return
        compile_id, _attempt = current_trace()
        info = parse_break_message(rec.message)
        if not info["reason"]:
            info["reason"] = parse_break_message(record.getMessage())["reason"] or "graph break"
        user = user_frame(rec.stack) if not is_user_code(rec.file) else ("", 0)
        site = (info["reason"], rec.file, rec.line)
        path = (site, stack_key(rec.stack))
        if (compile_id,) + path in self._seen:  # dynamo re-analysed the same frame
            is_pass = False
        elif path in self._open:  # logged again by the frame dynamo broke out to
            is_pass = False
            if rec.depth:
                self._open[path] = compile_id
            else:
                del self._open[path]
        else:
            is_pass = True
            if rec.depth:
                self._open[path] = compile_id
        self._seen.add((compile_id,) + path)
        per_call = 0
        if is_pass:
            calls = self._passes.setdefault(site, {})
            calls[self._call] = calls.get(self._call, 0) + 1
            if calls[self._call] > self._credited.get(site, 0):
                per_call = 1
                self._credited[site] = self._credited.get(site, 0) + 1
        gb = make_break(
            info,
            rec.file,
            rec.line,
            logged=1,
            per_call=per_call,
            compile_id=compile_id,
            user_file=user[0],
            user_line=user[1],
        )
        self._emitted.setdefault(compile_id, []).append((gb, path, is_pass, self._call))
        counts = self.ordinary.setdefault(gb.key, [0, 0])
        counts[0] += 1
        counts[1] += per_call
        self._on_break(gb)

    def on_recompile_record(self, record: logging.LogRecord) -> None:
        self.poll()
        rc = read_recompile_record(record, current_compile_id())
        if rc is not None:
            file, line = split_location(rc.location)
            self._functions.setdefault(rc.compile_id, (rc.function, file, line))
            self._on_recompile(rc)

    def on_convert_frame_record(self, record: logging.LogRecord) -> None:
        """torch's recompile-limit warning: the function it names, for that compile id."""
        named = read_recompile_limit_record(record)
        if named is not None:
            self._functions[current_compile_id()] = named

    def on_cudagraph_record(self, record: logging.LogRecord) -> None:
        if record.funcName != CUDAGRAPH_SKIP_FUNCTION:  # another warning of the cudagraphs artifact
            return
        skip = read_cudagraph_skip(record.getMessage(), current_compile_id())
        self._cudagraph_logged += 1  # after reading: a record we cannot read is still counted, as unlogged
        self._report_cudagraph_skip(skip)

    def _unlogged_cudagraph_skips(self) -> None:
        """Skips torch counted without logging a reason (poll() runs around every compiled
        call, record and phase of the job, never between a logged skip's record and its
        count). On an FX-graph cache hit torch replays the counts the cached compile made,
        so a skip logged then comes back here without its reason."""
        if self._on_cudagraph_skip is None:
            return
        from torch._dynamo.utils import counters

        unlogged = int(counters["inductor"].get("cudagraph_skips", 0)) - self._cudagraph_logged
        while self._cudagraph_unlogged < unlogged:
            self._cudagraph_unlogged += 1
            self._report_cudagraph_skip(CudagraphSkip("", compile_id=current_compile_id()))

    def _report_cudagraph_skip(self, skip: CudagraphSkip) -> None:
        self.cudagraph_skips.append(skip)
        if self._on_cudagraph_skip is not None:
            self._on_cudagraph_skip(skip)

    def _frame_failed(self, m, raised: bool = False) -> None:
        compile_id = str(m.compile_id or "")
        records = self._emitted.pop(compile_id, [])
        info = parse_break_message(m.fail_reason or "") if m.fail_reason else None
        break_error = bool(info and info["reason"] and info["gb_code"])  # a graph break made it fail
        if raised and not break_error:  # torch's error itself is the reason
            info = {
                "reason": error_summary(m.fail_type, m.fail_reason or ""),
                "gb_code": "",
                "doc_url": "",
                "explanation": m.fail_reason or "",
                "hints": (),
            }
        if (info is None or not info["reason"]) and records:
            first = records[0][0]
            info = {
                "reason": first.reason,
                "gb_code": first.gb_code,
                "doc_url": first.doc_url,
                "explanation": first.explanation,
                "hints": first.hints,
            }
        if info is None or not info["reason"]:
            info = {
                "reason": m.fail_type,
                "gb_code": "",
                "doc_url": "",
                "explanation": m.fail_reason or "",
                "hints": (),
            }
        # the function: from the metric, else as torch's recompile-limit warning or the
        # recompile record of this compile id named it (that metric names none)
        name, code_file, first_line = m.co_name or "", m.co_filename or "", m.co_firstlineno or 0
        if not name and compile_id in self._functions:
            name, code_file, first_line = self._functions[compile_id]
        file, line = m.fail_user_frame_filename or "", m.fail_user_frame_lineno or 0
        if not file and records:
            file, line = records[-1][0].file, records[-1][0].line
        if not file:
            frames = metric_stack(m)
            file, line = (frames[-1][0], frames[-1][1]) if frames else ("", 0)
        if not file and code_file:  # nothing inside the frame failed: the function is the place
            file, line = code_file, first_line
        if records and records[-1][0].user_file:
            user = (records[-1][0].user_file, records[-1][0].user_line)
        elif is_user_code(file):
            user = ("", 0)
        else:
            user = user_frame(metric_stack(m))
        if raised:
            what = f" compiling {describe_function(name, code_file, first_line)}" if name else ""
            error = f"for a graph break ({info['reason']}, {info['gb_code']})" if break_error else info["reason"]
            self.failed[compile_id] = f"{error}{what}"
        if self.fullgraph and (break_error or not raised):  # the compile fails at this break
            if not records:
                gb = make_break(info, file, line, compile_id=compile_id, user_file=user[0], user_line=user[1])
                counts = self.ordinary.setdefault(gb.key, [0, 0])
                counts[0] += 1
                counts[1] += 1
                self._on_break(gb)
            return
        for gb, path, is_pass, call in records:  # these records now belong to the skipped frame
            if is_pass:  # the next record on its path (the frame runs eagerly, what it calls is
                self._passes[gb.key][call] -= 1  # compiled on its own) is the pass instead
                self._open.pop(path, None)
            if gb.per_call:
                self._credited[gb.key] -= 1
            counts = self.ordinary.get(gb.key)
            if counts:
                counts[0] -= gb.logged
                counts[1] -= gb.per_call
                if counts[0] <= 0:
                    del self.ordinary[gb.key]
        if raised:  # torch raised: nothing ran eagerly, the call never ended
            failed = make_break(
                info,
                file,
                line,
                logged=max(1, len(records)),
                per_call=0,
                compile_id=compile_id,
                compile_failed=True,
                user_file=user[0],
                user_line=user[1],
            )
            self._on_break(failed)
            return
        eager = describe_function(name or "?", code_file, first_line)
        row = (info["reason"], file, line, eager)
        per_call = 0 if row in self._skipped_rows else 1
        self._skipped_rows.add(row)
        self._on_break(
            make_break(
                info,
                file,
                line,
                logged=max(1, len(records)),
                per_call=per_call,
                frame_skipped=True,
                compile_id=compile_id,
                eager_function=eager,
                user_file=user[0],
                user_line=user[1],
            )
        )

    # ---- figures
    def sites(self) -> int:
        return len(self.ordinary)

    def per_call(self) -> int:
        return sum(c[1] for c in self.ordinary.values())


def _slim(m):
    """A compilation metric without its config dumps (~30 kB each): we keep every one."""
    try:
        return dataclasses.replace(
            m, dynamo_config=None, inductor_config=None, compiler_config=None, functorch_config=None
        )
    except (TypeError, ValueError):
        return m


def read_cudagraph_skip(message: str, compile_id: str = "") -> CudagraphSkip:
    """torch's skip message: its first line (without the "Found from" that introduces the
    stack), and the innermost frame of that stack in the user's code (else the innermost)."""
    reason = message.split("\n", 1)[0].strip()
    reason = re.sub(r"\.?\s*Found from\b.*$", "", reason).strip()  # the stack may start on this line
    # torch may wrap a reason that has its prefix already: "skipping cudagraphs due to skipping ..."
    prefixes = re.match(f"(?:{SKIP_PREFIX.pattern})+", reason)
    if prefixes:
        reason = SKIP_PREFIX.findall(prefixes.group(0))[-1] + reason[prefixes.end() :]
    frames = [(f, int(n)) for f, n in STACK_FRAME.findall(message)]
    user = [fr for fr in frames if is_user_code(fr[0])]
    file, line = (user or frames or [("", 0)])[-1]
    return CudagraphSkip(reason, file, line, compile_id)


def install(
    on_graph_break: Callable[[GraphBreak], None],
    on_recompile: Callable[[Recompile], None],
    fullgraph: bool = False,
    on_cudagraph_skip: Callable[[CudagraphSkip], None] | None = None,
) -> Capture:
    """Turn on torch's graph_breaks and recompiles artifacts and route them to a new Capture;
    with `on_cudagraph_skip` (a CUDA-graph mode), route torch's CUDA-graph skips there too."""
    import torch._dynamo.convert_frame  # noqa: F401  (creates the artifact loggers)
    import torch._dynamo.guards  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401
    import torch._logging
    from torch._dynamo import utils

    if on_cudagraph_skip is not None:
        import torch._inductor.cudagraph_utils  # noqa: F401  (its warnings reach us with the artifact off)
    capture = Capture(on_graph_break, on_recompile, fullgraph, on_cudagraph_skip)
    utils.clear_compilation_metrics()  # what an earlier compile left is not this job's
    utils.set_compilation_metrics_limit(METRICS_LIMIT)
    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    for name in list(logging.root.manager.loggerDict):
        logger = logging.getLogger(name)
        if not isinstance(logger, logging.Logger):
            continue
        for handler in [h for h in logger.handlers if isinstance(h, _Handler)]:
            logger.removeHandler(handler)  # install() again (in-process tests) replaces, never doubles
        if name.endswith(".__graph_breaks"):
            logger.addHandler(_Handler(capture.on_break_record))
        elif name.endswith(".__recompiles"):
            logger.addHandler(_Handler(capture.on_recompile_record))
        elif name.endswith(".__cudagraphs") and on_cudagraph_skip is not None:
            logger.addHandler(_Handler(capture.on_cudagraph_record))
        elif name == "torch._dynamo.convert_frame":  # its recompile-limit warning names the function
            logger.addHandler(_Handler(capture.on_convert_frame_record))
    return capture
