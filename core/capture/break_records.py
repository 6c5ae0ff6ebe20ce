"""Reading torch's graph-break, frame-skip and recompile log records into GraphBreak and
Recompile: from the objects torch formatted the message from where they are found (see
core.capture.live), from the message text otherwise."""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import re
import sys

from core.vocab.records import GraphBreak, Recompile
from core.vocab.source_paths import CORE_DIR, is_under, is_user_code, source_context, source_line, torch_dir

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


def registry_code(gb_type: str) -> str:
    for code, entries in gb_registry().items():
        if any(e.get("Gb_type") == gb_type for e in entries):
            return code
    return ""


def _dedent(text: str) -> str:
    import textwrap

    return textwrap.dedent(text).strip()


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
        lines = [lines[idx].split(":", 1)[1].strip()] + lines[idx + 1 :]
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
        if s.startswith(
            (
                "Developer debug context:",
                "For more details",
                "User code traceback:",
                "Stack variable source attribution:",
            )
        ):
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
        code = registry_code(reason)
    return {
        "reason": reason,
        "gb_code": code,
        "doc_url": url,
        "explanation": _dedent("\n".join(explanation)),
        "hints": tuple(hints),
    }


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
    return make_break(info, file, line)


def make_break(info: dict, file: str, line: int, **extra) -> GraphBreak:
    start, context = source_context(file, line)
    return GraphBreak(
        reason=info["reason"],
        gb_code=info["gb_code"],
        doc_url=info["doc_url"],
        explanation=info["explanation"],
        hints=info["hints"],
        file=file or "",
        line=line or 0,
        source=source_line(file, line),
        context_start=start,
        context=context,
        **extra,
    )


def parse_recompile(text: str, compile_id: str = "") -> Recompile | None:
    m = _RECOMPILE.search(text)
    if not m:
        return None
    reasons = tuple(s.strip()[2:].strip() for s in text.splitlines() if s.strip().startswith("- "))
    return Recompile(function=m.group(1), location=m.group(2), reasons=reasons, compile_id=compile_id)


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
    return frames[last_core + 1 :]


def user_frame(frames: list[Frame]) -> tuple[str, int]:
    """The innermost frame of the user's own code in a stack (outermost first)."""
    for file, line, _ in reversed(_model_frames(frames)):
        if is_user_code(file):
            return file, line
    return "", 0


def stack_key(frames: list[Frame]) -> tuple:
    """The path through the model to a break (file and line of each frame below the job's
    call, torch's own frames left out): the records dynamo's restarts make of one break
    share it, whichever frame dynamo was compiling when it logged them."""
    torch_folder = torch_dir()
    return tuple((f, n) for f, n, _ in _model_frames(frames) if not is_under(f, torch_folder))


def metric_stack(metric) -> list[Frame]:
    frames = []
    for entry in metric.stack_trace or ():
        m = _FRAME.search(str(entry))
        if m:
            frames.append((m.group(3), int(m.group(1)), m.group(2)))
    return frames


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
        return _BreakRecord(
            _exception_text(exc), real_stack[-1][0], real_stack[-1][1], _full_stack(exc) or real_stack, True
        )
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
            return Recompile(
                function=code.co_name,
                location=f"{code.co_filename}:{code.co_firstlineno}",
                reasons=flat,
                compile_id=compile_id,
            )
    return parse_recompile(record.getMessage(), compile_id)


# The start of torch's recompile-limit warning (convert_frame._compile, logged with the code
# object at hand): the template, not the formatted text.
RECOMPILE_LIMIT_WARNING = "torch._dynamo hit config."
_LIMIT_FUNCTION = re.compile(r"function: '(.*?)' \((.*):(\d+)\)")


def read_recompile_limit_record(record: logging.LogRecord) -> tuple[str, str, int] | None:
    """(name, file, first line) of the function torch's recompile-limit warning names, from the
    code object it formats them from (its text otherwise); None for any other record. The
    compilation metric of that failed compile names no function; torch's log does."""
    if not str(record.msg).startswith(RECOMPILE_LIMIT_WARNING):
        return None
    frame = _find_frame({"_compile": "convert_frame.py"})
    code = frame.f_locals.get("code") if frame is not None else None
    if code is not None and hasattr(code, "co_name") and hasattr(code, "co_filename"):
        return str(code.co_name), str(code.co_filename), int(code.co_firstlineno or 0)
    m = _LIMIT_FUNCTION.search(record.getMessage())
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


def split_location(location: str) -> tuple[str, int]:
    """A Recompile's "file:line" as (file, line); a file name may hold a colon."""
    file, _, line = location.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (location, 0)


def exception_names(exc: BaseException | None) -> set[str]:
    """The type names of an exception and of every exception it was raised from (the names
    torch's compilation metrics give as fail_type)."""
    names: set[str] = set()
    seen = 0
    while exc is not None and seen < 20:
        names.update({type(exc).__qualname__, type(exc).__name__})
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return names


def error_summary(fail_type: str, fail_reason: str) -> str:
    """torch's error in one line: its type and the first line of its message (with the next
    when the first only introduces it, as "backend='inductor' raised:" does)."""
    lines = [t.strip() for t in (fail_reason or "").splitlines() if t.strip()]
    text = lines[0] if lines else ""
    if text.endswith(":") and len(lines) > 1:
        text = f"{text} {lines[1]}"
    return f"{fail_type}: {text}" if text else fail_type


def current_trace() -> tuple[str, int]:
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


def current_compile_id() -> str:
    return current_trace()[0]
