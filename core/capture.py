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

torch keeps only the last 64 compilation-metric records; `Capture` reads and clears them after
every graph break, recompile and compiled call, with torch's limit raised (set_compilation_
metrics_limit), so past 64 compiles every figure is still counted; should torch drop records
before they are read anyway, `Capture.partial` says so.
"""
from __future__ import annotations

import dataclasses
import json
import linecache
import logging
import os
import re
import sys
import sysconfig
from typing import Callable

from core.events import CompileResult, GraphBreak, Recompile

_GB_URL = re.compile(r"(https://\S+/gb/(gb\d{4})\.html)", re.I)
# Text fallback only. "(.+?)" with DOTALL: a path may hold a newline or a colon.
_AT = re.compile(r"Graph break.*? in user code at (.+?):(\d+)\s*\n\s*Graph Break Reason:", re.S)
_AT_LAST = re.compile(r"Graph break.*? in user code at (.+):(\d+)\s*$", re.S)
_TB_FILE = re.compile(r'^\s*File "(.*)", line (\d+), in (.*)$', re.M)
_RECOMPILE = re.compile(r"Recompiling function (\S+) in (.+?)\s*\n\s*triggered by", re.S)
_FRAME = re.compile(r"Line: (\d+), Name: (.*?), Filename: (.*)$", re.S)
_ANOTHER_BREAK = "*** While handling this graph break, another graph break occurred: ***"
_SKIP_PREFIX = "Failed to handle graph break gracefully. Skipping the function"
RECOMPILE_LIMIT_TYPE = "Dynamo recompile limit exceeded"
CONTEXT_LINES = 5
METRICS_LIMIT = 100_000  # torch's deque between two reads; we read (and clear) it constantly

_registry: dict | None = None


def gb_registry() -> dict:
    """torch's graph-break registry: GB id → [{Gb_type, Explanation, Hints}, ...]."""
    global _registry
    if _registry is None:
        import torch._dynamo

        path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
        try:
            with open(path) as fh:
                _registry = json.load(fh)
        except (OSError, ValueError):
            _registry = {}
    return _registry


def _registry_type(code: str) -> str:
    for entry in gb_registry().get(code, []):
        if not entry.get("Gb_type", "_").startswith("_"):
            return entry["Gb_type"]
    return ""


def _registry_code(gb_type: str) -> str:
    for code, entries in gb_registry().items():
        if any(e.get("Gb_type") == gb_type for e in entries):
            return code
    return ""


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip()


# ------------------------------------------------------------------ paths and source


def _folder(path: str) -> str:
    return os.path.normcase(os.path.abspath(path))


def is_under(path: str, folder: str) -> bool:
    """True when `path` lies inside `folder`, compared by whole path components: the torch
    folder does not contain `.../site-packages/torchvision/`."""
    if not path or not folder:
        return False
    p, f = _folder(path), _folder(folder)
    return p == f or p.startswith(f.rstrip(os.sep) + os.sep)


def _torch_dir() -> str:
    import torch

    return os.path.dirname(torch.__file__)


CORE_DIR = os.path.dirname(os.path.abspath(__file__))
_PACKAGE_DIRS = ("site-packages", "dist-packages")


def _parts(path: str) -> list[str]:
    return [p for p in re.split(r"[\\/]", path) if p]


def _stdlib_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple({paths.get("stdlib", ""), paths.get("platstdlib", "")} - {""})


def is_library(path: str) -> bool:
    """torch, an installed package (site-packages, dist-packages) or the standard library."""
    if not path or path.startswith("<"):
        return True
    if is_under(path, _torch_dir()) or any(d in _parts(path) for d in _PACKAGE_DIRS):
        return True
    return any(is_under(path, d) for d in _stdlib_dirs())


def is_user_code(path: str) -> bool:
    """The user's own code: not torch, not an installed package, not this project's core/."""
    return not is_library(path) and not is_under(path, CORE_DIR)


def display_path(path: str) -> str:
    """A path as a person reads it: relative to its package for installed code
    (`transformers/models/bert/modeling_bert.py`), relative to the working folder when under
    it, else the file name. Reports keep the full path; this is for showing it."""
    if not path:
        return ""
    parts = _parts(path)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in _PACKAGE_DIRS and i + 1 < len(parts):
            return "/".join(parts[i + 1:])
    try:
        rel = os.path.relpath(path, os.getcwd())
    except ValueError:  # another drive on Windows
        rel = ""
    if rel and not rel.startswith(os.pardir + os.sep) and rel != os.pardir:
        return rel
    return os.path.basename(path) or path


def source_line(file: str, line: int) -> str:
    if not file or line <= 0:
        return ""
    return linecache.getline(file, line).strip()


def source_context(file: str, line: int, around: int = CONTEXT_LINES) -> tuple[int, tuple[str, ...]]:
    """(number of the first line, the lines) around `line`, read now so that a report never
    needs the file again. (0, ()) when the file cannot be read."""
    if not file or line <= 0:
        return 0, ()
    lines = linecache.getlines(file)
    if not lines or line > len(lines):
        return 0, ()
    start = max(1, line - around)
    stop = min(len(lines), line + around)
    return start, tuple(s.rstrip("\r\n") for s in lines[start - 1:stop])


def describe_function(name: str, file: str, first_line: int) -> str:
    """"name (file:line)", at the `def` line: a code object's first line is that of its first
    decorator (for Hugging Face models often `@auto_docstring`)."""
    line = first_line or 0
    if file and line > 0:
        for offset in range(0, 40):
            text = linecache.getline(file, line + offset).strip()
            if not text:
                if offset and not linecache.getline(file, line + offset + 1):
                    break
                continue
            if re.match(r"(async\s+)?def\s|class\s", text):
                line += offset
                break
            if offset == 0 and not text.startswith("@"):
                break
    where = f"{display_path(file)}:{line}" if file else ""
    return f"{name} ({where})" if where else name


# ------------------------------------------------------------------ messages


def parse_break_message(text: str) -> dict:
    """Reason, GB code, documentation link, explanation and hints of one graph-break message:
    the text of torch's Unsupported exception (first line: its gb_type), or a whole
    `graph_breaks` log message (the reason follows "Graph Break Reason:"). Only the first
    break of a chain ("While handling this graph break, another graph break occurred") is
    read: it is the cause."""
    text = text.split(_ANOTHER_BREAK, 1)[0]
    lines = text.splitlines()
    if any(s.startswith("Graph Break Reason:") for s in lines):
        idx = next(i for i, s in enumerate(lines) if s.startswith("Graph Break Reason:"))
        lines = [lines[idx].split(":", 1)[1].strip()] + lines[idx + 1:]
    reason_lines: list[str] = []
    explanation: list[str] = []
    hints: list[str] = []
    section = "reason"
    for raw in lines:
        s = raw.strip()
        if s.startswith("Explanation:"):
            section = "explanation"
            explanation.append(s.split(":", 1)[1].strip())
            continue
        if s.startswith("Hint:"):
            section = "hint"
            hints.append(s.split(":", 1)[1].strip())
            continue
        if s.startswith(("Developer debug context:", "For more details", "User code traceback:",
                         "Stack variable source attribution:")):
            section = ""
            continue
        if section == "reason" and s:
            reason_lines.append(s)
        elif section == "explanation":
            explanation.append(raw.rstrip())
        elif section == "hint" and s:
            hints[-1] += " " + s
    url_match = _GB_URL.search(text)
    url, code = (url_match.group(1), url_match.group(2).upper()) if url_match else ("", "")
    reason = reason_lines[-1].rstrip(":") if reason_lines else ""
    if reason.startswith(_SKIP_PREFIX):
        reason = ""
    if not reason and code:
        reason = _registry_type(code)
    if reason and not code:
        code = _registry_code(reason)
    return {"reason": reason, "gb_code": code, "doc_url": url,
            "explanation": _dedent("\n".join(explanation)), "hints": tuple(hints)}


def parse_graph_break(text: str) -> GraphBreak | None:
    """Parse one `graph_breaks` log message into a GraphBreak (None if it is not one).

    The fallback when torch's objects are not at hand; the location then comes from the text
    ("in user code at PATH:LINE" up to "Graph Break Reason:", so a path may hold a newline)."""
    if not text.strip():
        return None
    m = _AT.search(text)
    if m is None:
        m = _AT_LAST.search(text.split("\nGraph Break Reason:", 1)[0])
    file, line = (m.group(1), int(m.group(2))) if m else ("", 0)
    if not file:
        frames = _TB_FILE.findall(text)
        if frames:
            file, line = frames[-1][0], int(frames[-1][1])
    info = parse_break_message(text)
    if not info["reason"]:
        return None
    return _make_break(info, file, line)


def _make_break(info: dict, file: str, line: int, **extra) -> GraphBreak:
    start, context = source_context(file, line)
    return GraphBreak(reason=info["reason"], gb_code=info["gb_code"], doc_url=info["doc_url"],
                      explanation=info["explanation"], hints=info["hints"], file=file or "", line=line or 0,
                      source=source_line(file, line), context_start=start, context=context, **extra)


def parse_recompile(text: str, compile_id: str = "") -> Recompile | None:
    m = _RECOMPILE.search(text)
    if not m:
        return None
    reasons = tuple(s.strip()[2:].strip() for s in text.splitlines() if s.strip().startswith("- "))
    return Recompile(function=m.group(1), location=m.group(2), reasons=reasons, compile_id=compile_id)


# ------------------------------------------------------------------ stacks


Frame = tuple  # (filename, lineno, name)


def _frames_of(stack) -> list[Frame]:
    """(filename, line, name) of a traceback.StackSummary / list of FrameSummary."""
    out = []
    for f in stack or ():
        try:
            out.append((str(f.filename), int(f.lineno or 0), str(f.name)))
        except (AttributeError, TypeError, ValueError):
            continue
    return out


def _model_frames(frames: list[Frame]) -> list[Frame]:
    """The frames below the job's own call into the model: frames up to and including the
    last one in this project's core/ are the caller's (the job, a test, the command line)."""
    last_core = max((i for i, f in enumerate(frames) if is_under(f[0], CORE_DIR)), default=-1)
    return frames[last_core + 1:]


def _user_frame(frames: list[Frame]) -> tuple[str, int]:
    """The innermost frame of the user's own code in a stack (outermost first)."""
    for file, line, _ in reversed(_model_frames(frames)):
        if is_user_code(file):
            return file, line
    return "", 0


def _stack_key(frames: list[Frame]) -> tuple:
    """The path through the model to a break (file and line of each frame below the job's
    call, torch's own frames left out): the records dynamo's restarts make of one break
    share it, whichever frame dynamo was compiling when it logged them."""
    torch_dir = _torch_dir()
    return tuple((f, n) for f, n, _ in _model_frames(frames) if not is_under(f, torch_dir))


def _metric_stack(metric) -> list[Frame]:
    frames = []
    for entry in metric.stack_trace or ():
        m = _FRAME.search(str(entry))
        if m:
            frames.append((m.group(3), int(m.group(1)), m.group(2)))
    return frames


# ------------------------------------------------------------------ structured records


@dataclasses.dataclass
class _BreakRecord:
    """What one graph_breaks log record is about, from torch's objects where found."""

    message: str  # the Unsupported exception's text (or the whole log text)
    file: str
    line: int
    stack: list  # [(filename, line, name)], outermost first
    structured: bool
    preamble: bool = False  # a warning torch logs before the graph break it then raises
    depth: int = 0  # frames dynamo had inlined below the frame it was compiling


def _find_frame(names: dict[str, str]):
    """The innermost caller frame whose code is one of `names` (code name → file name)."""
    f = sys._getframe(2)
    while f is not None:
        want = names.get(f.f_code.co_name)
        if want and os.path.basename(f.f_code.co_filename) == want:
            return f
        f = f.f_back
    return None


_RESUME = re.compile(r"^torch_dynamo_resume_in_(.+)_at_\d+$")


def _root_code_name(tx) -> str:
    """The name of the code object dynamo is compiling (the root of the translator chain)."""
    try:
        while getattr(tx, "parent", None) is not None:
            tx = tx.parent
        return str(tx.f_code.co_name)
    except AttributeError:
        return ""


def _full_stack(exc, root_code_name: str = "") -> list[Frame]:
    """The Python stack above dynamo (frames running now) and the frames dynamo was
    tracing (the exception's real_stack), outermost first. torch's own "User code traceback"
    merges consecutive frames of the same name (`forward` calling another module's
    `forward`), so the same break would read differently from one compile to the next; here
    only a resume function is merged into the function it continues (the frame being
    compiled is one when `root_code_name` says so)."""
    try:
        from torch._dynamo.exc import get_stack_above_dynamo

        above = _frames_of(get_stack_above_dynamo())
        traced = _frames_of(getattr(exc, "real_stack", None))
    except Exception:
        return []
    m = _RESUME.match(root_code_name or "")
    if traced and m and traced[0][2] == m.group(1):
        traced[0] = (traced[0][0], traced[0][1], root_code_name)
    frames = above + traced
    out: list[Frame] = []
    for file, line, name in frames:
        m = _RESUME.match(name)
        base = m.group(1) if m else name
        if m and out and out[-1][0] == file and out[-1][2] == base:
            out[-1] = (file, line, base)
        else:
            out.append((file, line, base))
    return out


def _exception_text(exc) -> str:
    return str(getattr(exc, "msg", None) or exc)


def read_break_record(record: logging.LogRecord) -> _BreakRecord:
    text = record.getMessage()
    frame = _find_frame({"log_graph_break": "symbolic_convert.py", "unimplemented_with_warning": "exc.py"})
    if frame is not None and frame.f_code.co_name == "unimplemented_with_warning":
        return _BreakRecord(text, "", 0, [], True, preamble=True)
    if frame is not None:
        loc = frame.f_locals
        exc, frame_loc = loc.get("exc"), loc.get("frame_loc")
        if exc is not None and frame_loc:
            stack = _full_stack(exc, _root_code_name(loc.get("self"))) or _frames_of(loc.get("user_stack"))
            depth = max(0, len(_frames_of(getattr(exc, "real_stack", None))) - 1)
            return _BreakRecord(_exception_text(exc), str(frame_loc[0]), int(frame_loc[1]), stack, True, depth=depth)
    exc = record.exc_info[1] if record.exc_info else None
    real_stack = _frames_of(getattr(exc, "real_stack", None))
    if exc is not None and real_stack:  # dynamo skipping a frame it cannot resume (convert_frame)
        return _BreakRecord(_exception_text(exc), real_stack[-1][0], real_stack[-1][1],
                            _full_stack(exc) or real_stack, True)
    gb = parse_graph_break(text)
    frames = [(f, int(n), name) for f, n, name in _TB_FILE.findall(text)]
    return _BreakRecord(text, gb.file if gb else "", gb.line if gb else 0, frames, False)


def read_recompile_record(record: logging.LogRecord, compile_id: str) -> Recompile | None:
    frame = _find_frame({"get_and_maybe_log_recompilation_reasons": "guards.py"})
    if frame is not None:
        code, reasons = frame.f_locals.get("frame"), frame.f_locals.get("reasons")
        code = getattr(code, "f_code", None)
        if code is not None and reasons is not None:
            flat = tuple(r.strip() for reason in reasons for r in str(reason).splitlines() if r.strip())
            return Recompile(function=code.co_name, location=f"{code.co_filename}:{code.co_firstlineno}",
                             reasons=flat, compile_id=compile_id)
    return parse_recompile(record.getMessage(), compile_id)


def _current_trace() -> tuple[str, int]:
    """torch's compile id ("0/0") and analysis attempt of the compile running now."""
    try:
        from torch._guards import CompileContext

        tid = CompileContext.current_trace_id()
        if tid is not None:
            return str(tid.compile_id), int(tid.attempt)
        cid = CompileContext.current_compile_id()
        return (str(cid) if cid is not None else ""), 0
    except Exception:
        return "", 0


def _current_compile_id() -> str:
    return _current_trace()[0]


# ------------------------------------------------------------------ the capture


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

    def __init__(self, on_graph_break: Callable[[GraphBreak], None], on_recompile: Callable[[Recompile], None],
                 fullgraph: bool = False):
        self._on_break, self._on_recompile, self.fullgraph = on_graph_break, on_recompile, fullgraph
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

    # ---- metrics
    def poll(self) -> list:
        """Read the compilation metrics torch recorded since the last poll (and clear torch's
        copy); report frames that were skipped. Returns the new metrics."""
        from torch._dynamo import utils

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
            if m.fail_type:
                self._frame_failed(m)
        return fresh

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
        compile_id, _attempt = _current_trace()
        info = parse_break_message(rec.message)
        if not info["reason"]:
            info["reason"] = parse_break_message(record.getMessage())["reason"] or "graph break"
        user = _user_frame(rec.stack) if not is_user_code(rec.file) else ("", 0)
        site = (info["reason"], rec.file, rec.line)
        path = (site, _stack_key(rec.stack))
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
        gb = _make_break(info, rec.file, rec.line, logged=1, per_call=per_call, compile_id=compile_id,
                         user_file=user[0], user_line=user[1])
        self._emitted.setdefault(compile_id, []).append((gb, path, is_pass, self._call))
        counts = self.ordinary.setdefault(gb.key, [0, 0])
        counts[0] += 1
        counts[1] += per_call
        self._on_break(gb)

    def on_recompile_record(self, record: logging.LogRecord) -> None:
        self.poll()
        rc = read_recompile_record(record, _current_compile_id())
        if rc is not None:
            self._on_recompile(rc)

    def _frame_failed(self, m) -> None:
        compile_id = str(m.compile_id or "")
        records = self._emitted.pop(compile_id, [])
        info = parse_break_message(m.fail_reason or "") if m.fail_reason else None
        if (info is None or not info["reason"]) and records:
            first = records[0][0]
            info = {"reason": first.reason, "gb_code": first.gb_code, "doc_url": first.doc_url,
                    "explanation": first.explanation, "hints": first.hints}
        if info is None or not info["reason"]:
            info = {"reason": m.fail_type, "gb_code": "", "doc_url": "", "explanation": m.fail_reason or "",
                    "hints": ()}
        file, line = m.fail_user_frame_filename or "", m.fail_user_frame_lineno or 0
        if not file and records:
            file, line = records[-1][0].file, records[-1][0].line
        if not file:
            frames = _metric_stack(m)
            file, line = (frames[-1][0], frames[-1][1]) if frames else ("", 0)
        if records and records[-1][0].user_file:
            user = (records[-1][0].user_file, records[-1][0].user_line)
        elif is_user_code(file):
            user = ("", 0)
        else:
            user = _user_frame(_metric_stack(m))
        if self.fullgraph:  # nothing runs eagerly: the compile fails at this line
            if not records:
                gb = _make_break(info, file, line, compile_id=compile_id, user_file=user[0], user_line=user[1])
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
        eager = describe_function(m.co_name or "?", m.co_filename or "", m.co_firstlineno or 0)
        row = (info["reason"], file, line, eager)
        per_call = 0 if row in self._skipped_rows else 1
        self._skipped_rows.add(row)
        self._on_break(_make_break(info, file, line, logged=max(1, len(records)), per_call=per_call,
                                   frame_skipped=True, compile_id=compile_id, eager_function=eager,
                                   user_file=user[0], user_line=user[1]))

    # ---- figures
    def sites(self) -> int:
        return len(self.ordinary)

    def per_call(self) -> int:
        return sum(c[1] for c in self.ordinary.values())


def _slim(m):
    """A compilation metric without its config dumps (~30 kB each): we keep every one."""
    try:
        return dataclasses.replace(m, dynamo_config=None, inductor_config=None, compiler_config=None,
                                   functorch_config=None)
    except (TypeError, ValueError):
        return m


def install(on_graph_break: Callable[[GraphBreak], None], on_recompile: Callable[[Recompile], None],
            fullgraph: bool = False) -> Capture:
    """Turn on torch's graph_breaks and recompiles artifacts and route them to a new Capture."""
    import torch._dynamo.convert_frame  # noqa: F401  (creates the artifact loggers)
    import torch._dynamo.guards  # noqa: F401
    import torch._dynamo.symbolic_convert  # noqa: F401
    import torch._logging
    from torch._dynamo import utils

    capture = Capture(on_graph_break, on_recompile, fullgraph)
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
    return capture


# ------------------------------------------------------------------ compile metrics


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
        bool(info["gb_code"]) and info["gb_code"] == _registry_code(RECOMPILE_LIMIT_TYPE))


def skipped_frames(metrics: list) -> list:
    """Metrics of frames dynamo gave up on (fail_type set): the model ran those eagerly."""
    return [m for m in metrics if m.fail_type]


def summarize_compile(metrics: list, compile_time_s: float, backend: str, graph_breaks: int,
                      partial: bool = False) -> CompileResult:
    from torch._dynamo.utils import counters

    def total_s(attr):
        return sum((getattr(m, attr, None) or 0) for m in metrics) / 1e6

    compiled = [m for m in metrics if not m.fail_type and m.graph_op_count is not None]
    skipped = skipped_frames(metrics)
    hits = sum((m.inductor_fx_local_cache_hit_count or 0) + (m.inductor_fx_remote_cache_hit_count or 0)
               for m in metrics)
    misses = sum((m.inductor_fx_local_cache_miss_count or 0) + (m.inductor_fx_remote_cache_miss_count or 0)
                 for m in metrics)
    if backend != "inductor" or hits + misses == 0:
        cache = "n/a"
    else:
        cache = "hit" if misses == 0 else ("miss" if hits == 0 else "partial")
    graph_count = int(counters["stats"].get("unique_graphs", 0))
    op_count = sum(m.graph_op_count or 0 for m in compiled)
    coverage, full = describe_coverage(graph_count, op_count, graph_breaks, skipped)
    if partial:
        coverage += (" (Partial figures: torch dropped compilation metrics before they were read, so "
                     "compile times and op counts miss some compiles.)")
    return CompileResult(
        compile_time_s=compile_time_s,
        dynamo_s=total_s("dynamo_cumulative_compile_time_us"),
        aot_autograd_s=total_s("aot_autograd_cumulative_compile_time_us"),
        inductor_s=total_s("inductor_cumulative_compile_time_us"),
        codegen_s=total_s("inductor_code_gen_cumulative_compile_time_us"),
        cache_state=cache, fx_cache_hits=hits, fx_cache_misses=misses,
        frames_compiled=len(compiled), frames_skipped=len(skipped),
        graph_count=graph_count, op_count=op_count,
        guard_count=sum(m.guard_count or 0 for m in compiled),
        coverage=coverage, fully_compiled=full and not partial,
    )


def describe_coverage(graph_count: int, op_count: int, graph_breaks: int, skipped: list) -> tuple[str, bool]:
    """One sentence on how much of the model runs compiled: the first thing a user needs.
    `graph_breaks` is the number of breaks one call passes (skipped frames not included)."""
    if graph_count == 0 or op_count == 0:
        if skipped:
            why = parse_break_message(skipped[0].fail_reason or "")["reason"] or \
                (skipped[0].fail_reason or "").split("\n", 1)[0]
            return (f"Nothing was compiled: dynamo skipped the model's frame ({why}), so it runs eagerly "
                    "and compiling changes nothing.", False)
        return ("Nothing was compiled: dynamo captured no operations, so the model runs eagerly.", False)
    if graph_breaks == 0 and not skipped and graph_count == 1:
        return (f"Fully compiled: one graph of {op_count} ops, no graph breaks.", True)
    parts = [f"Partly compiled: {graph_count} graphs ({op_count} ops)"]
    if graph_breaks:
        parts.append(f"split by {graph_breaks} graph break{'s' if graph_breaks != 1 else ''}")
    if skipped:
        parts.append(f"{len(skipped)} frame{'s' if len(skipped) != 1 else ''} skipped and run eagerly")
    return (", ".join(parts) + "; code between graphs runs eagerly in Python.", False)
