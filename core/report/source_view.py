"""The "By source line" view's figures (core.measure.line_profile's LineTime rows of a job's op
profile): which lines got slower compiled, what the lines account for on each side, and a
model file's source with each line's times beside it.

A report may come from anyone and names files by their paths, so a source file is read only
when it is a Python file (`.py`), a regular file (no FIFO, no device, no symbolic link as
its last part), under MAX_SOURCE_BYTES, and every line the report recorded (LineTime.source)
reads the same in it: the file the report profiled, unchanged; even then only the lines near
the recorded ones are shown (CONTEXT_LINES). Otherwise only the lines the report holds are
shown, and `SourceFile.note` says why. No Qt; any thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.vocab.artifacts import open_regular
from core.vocab.formatting import fmt_ms
from core.vocab.op_records import LineTime, OpProfile

# A line got slower compiled when it lost at least this much per call and at least this share
# of its eager time: below either, the difference is the profiler's rounding and noise.
SLOWER_MIN_MS = 0.001
SLOWER_RATIO = 1.1
MAX_SOURCE_BYTES = 4_000_000
# Of a file the report profiled, only the lines this near a recorded one are shown: a report names
# any file, and one line of it that is easy to guess ("import torch") would otherwise show it whole.
CONTEXT_LINES = 15
WINDOW_NOTE = f"Shown: the profiled lines and the {CONTEXT_LINES} lines either side of each."


def got_slower(t: LineTime) -> bool:
    """The line takes longer compiled than eager (SLOWER_MIN_MS and SLOWER_RATIO)."""
    lost = t.lost_ms
    return lost is not None and lost >= SLOWER_MIN_MS and t.compiled_ms >= SLOWER_RATIO * t.eager_ms


def line_files(profile: OpProfile | None) -> list[str]:
    """The files the lines are in, the one with most time (eager + compiled) first."""
    totals: dict[str, float] = {}
    for t in profile.lines if profile else ():
        totals[t.file] = totals.get(t.file, 0.0) + t.eager_ms + (t.compiled_ms or 0.0)
    return sorted(totals, key=lambda f: (-totals[f], f))


def accounted_text(profile: OpProfile | None) -> str:
    """What the lines hold of each side's call, what could not be placed on a line, and the
    profile's note on the lines ("" without lines)."""
    if profile is None or not profile.lines:
        return ""
    parts = [
        f"The {len(profile.lines)} lines hold {fmt_ms(profile.lines_eager_ms)} of the "
        f"{fmt_ms(profile.lines_eager_call_ms)} eager call (timed per torch call; the rest is Python between them)"
    ]
    if profile.compiled is not None:
        rest = max(0.0, profile.compiled.ms_per_call - profile.lines_compiled_ms)
        parts.append(
            f"{fmt_ms(profile.lines_compiled_ms)} of the {fmt_ms(profile.compiled.ms_per_call)} compiled call "
            f"({fmt_ms(rest)} on no line: graph entry and exit, guards, runtime wrappers"
            + (
                f", {fmt_ms(profile.lines_unmatched_ms)} of kernels no provenance names"
                if profile.lines_unmatched_ms
                else ""
            )
            + ")"
        )
    text = ", ".join(parts) + "."
    if profile.lines_note:
        text += " Note: " + profile.lines_note.strip()
    return text


@dataclass(frozen=True)
class SourceRow:
    """One line of a source file: its number, its text and its times (None: no time there)."""

    number: int
    text: str
    times: LineTime | None = None


@dataclass(frozen=True)
class SourceFile:
    """A file's lines for the view: the whole file (`whole`), the lines near the recorded ones, or
    only the lines the report recorded, with `note` saying why not the whole file."""

    file: str
    rows: tuple[SourceRow, ...]
    whole: bool
    note: str = ""


def _read_lines(file: str) -> tuple[list[str] | None, str]:
    """(the file's lines, "") or (None, why it is not read)."""
    if not os.path.isabs(file) or not file.endswith(".py"):
        return None, "not a Python file's path"
    try:
        with open_regular(file, "rb") as fh:
            data = fh.read(MAX_SOURCE_BYTES + 1)
    except (OSError, ValueError) as exc:
        return None, f"it cannot be read here ({exc.strerror or exc})" if isinstance(exc, OSError) else str(exc)
    if len(data) > MAX_SOURCE_BYTES:
        return None, f"it is over {MAX_SOURCE_BYTES:,} bytes"
    return data.decode("utf-8", errors="replace").splitlines(), ""


def source_file(file: str, lines: list[LineTime] | tuple[LineTime, ...]) -> SourceFile:
    """`file`'s source with the times of `lines` (those of this file) beside their lines: the lines
    within CONTEXT_LINES of a recorded one when it is the file the report profiled (the module
    docstring says how that is decided), else the recorded lines only."""
    mine = sorted((t for t in lines if t.file == file), key=lambda t: t.line)
    by_number = {t.line: t for t in mine}
    recorded = SourceFile(file, tuple(SourceRow(t.line, t.source, t) for t in mine), whole=False)
    text, why = _read_lines(file)
    if text is None:
        return SourceFile(file, recorded.rows, False, f"Only the profiled lines are shown: {why}.")
    changed = [t.line for t in mine if t.source and (t.line > len(text) or text[t.line - 1].strip() != t.source)]
    if changed or not any(t.source for t in mine):
        where = f"line {changed[0]} reads differently now" if changed else "the report recorded no source text"
        return SourceFile(file, recorded.rows, False, f"Only the profiled lines are shown: {where}.")
    near = {n for t in mine for n in range(t.line - CONTEXT_LINES, t.line + CONTEXT_LINES + 1) if 1 <= n <= len(text)}
    rows = tuple(SourceRow(i, text[i - 1], by_number.get(i)) for i in sorted(near))
    if len(rows) == len(text):
        return SourceFile(file, rows, whole=True)
    return SourceFile(file, rows, False, WINDOW_NOTE)
