"""torch's own compile log, kept per job (`--compile-log LEVEL`).

torch.compile has no `verbose=True`; torch's real switch is `TORCH_LOGS` /
`torch._logging.set_logs`. A job applies the LEVEL string (TORCH_LOGS syntax:
"graph_breaks,recompiles", "+dynamo,inductor,guards,output_code") with `set_logs` and has
torch write the log to `compile_log/<config>.log` (torch's own file handler, through
TORCH_LOGS_OUT, so the lines look exactly as torch prints them). The graph_breaks and
recompiles artifacts are always on: the job's capture reads them (core.capture.live).

`read_log` turns such a file into entries (level, compile id, artifact, text) for a log
view with search and a level filter (core.report.tlparse makes tlparse's HTML from a job's
structured trace, which core.capture.graphs writes).
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass

ALWAYS_ON = ("graph_breaks", "recompiles")  # the capture needs them, whatever the user asks
LEVELS = {"V": "debug", "I": "info", "W": "warning", "E": "error", "C": "critical"}
LEVEL_ORDER = ("debug", "info", "warning", "error", "critical")
EXAMPLE = "+dynamo,inductor,guards,output_code"


class CompileLogError(ValueError):
    """A LEVEL string torch would refuse; the message lists what torch accepts."""


def parse_settings(settings: str) -> dict[str, int | bool]:
    """A TORCH_LOGS-style string as `torch._logging.set_logs(modules=...)` takes it: a log
    name ("dynamo", "+inductor", "-aot") → its level, an artifact ("output_code") → True.
    Raises CompileLogError naming the unknown name and the valid ones. An empty LEVEL
    (`--compile-log ""`) imports nothing; any other imports torch (its log registry)."""
    if not any(s.strip() for s in (settings or "").split(",")):
        return {}
    from torch._logging._internal import log_registry

    out: dict[str, int | bool] = {}
    for raw in (s.strip() for s in settings.split(",")):
        if not raw:
            continue
        level = logging.DEBUG if raw[0] == "+" else logging.ERROR if raw[0] == "-" else logging.INFO
        name = raw.lstrip("+-")
        if name == "all":
            name = "torch"
        if log_registry.is_artifact(name):
            if raw[0] in "+-":
                raise CompileLogError(
                    f"--compile-log: {name!r} is an artifact (on or off); write it without '{raw[0]}'."
                )
            out[name] = True
        elif log_registry.is_log(name) or name == "torch" or _is_module(name):
            out[name] = level
        else:
            names = sorted(set(log_registry.log_alias_to_log_qnames) | set(log_registry.visible_artifacts))
            raise CompileLogError(
                f"--compile-log: {name!r} is neither a torch log nor a log artifact. Use torch's TORCH_LOGS "
                f"names, comma separated, '+' for debug level (e.g. {EXAMPLE}). Valid names: {', '.join(names)}."
            )
    return out


def _is_module(name: str) -> bool:
    if not name.startswith("torch."):
        return False
    import importlib.util

    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


class CompileLog:
    """torch's logging set to `settings` for one job, written to `path` as well as stderr.
    `close()` detaches the file (torch's next set_logs would too)."""

    def __init__(self, settings: str, path: str | None):
        import torch._logging

        self.path = path
        modules = {**parse_settings(settings), **{a: True for a in ALWAYS_ON}}
        # TORCH_LOGS in the environment makes set_logs a no-op (and the capture deaf): the
        # job's own setting replaces it.
        self._saved = {k: os.environ.pop(k, None) for k in ("TORCH_LOGS", "TORCH_LOGS_OUT")}
        try:
            if path:
                os.environ["TORCH_LOGS_OUT"] = path  # read by set_logs: torch adds its file handler
            torch._logging.set_logs(modules=modules)
        finally:
            os.environ.pop("TORCH_LOGS_OUT", None)

    def close(self) -> None:
        if self.path:
            for logger in [logging.getLogger(n) for n in list(logging.root.manager.loggerDict)]:
                for h in list(getattr(logger, "handlers", ())):
                    if isinstance(h, logging.FileHandler) and h.baseFilename == os.path.abspath(self.path):
                        logger.removeHandler(h)
                        h.close()
        for key, value in self._saved.items():
            if value is not None:
                os.environ[key] = value


@dataclass(frozen=True)
class LogEntry:
    """One message of torch's compile log: `level` one of LEVEL_ORDER, `compile_id` "0/0"
    (with "_1" for a restarted analysis) when torch was compiling, `artifact` the log
    artifact ("graph_breaks", "output_code") or "", `source` torch's file:line."""

    level: str
    time: str
    source: str
    compile_id: str
    artifact: str
    text: str


_LINE = re.compile(
    r"^(?:\[rank\d+\]:)?([VIWEC])(\d{4} \d\d:\d\d:\d\d\.\d+) (\d+) (\S+?:\d+)\]"
    r"(?: \[([^\]\s]+)\])?(?: \[__(\w+)\])? ?(.*)$"
)


MAX_LOG_BYTES = 64 * 2**20  # what a log view reads of the start of a compile log
TAIL_LOG_BYTES = 8 * 2**20  # and of its end (the rest between is named, not read)
MAX_LINE_CHARS = 100_000  # a longer line is cut (a 2 GB line without a break must not fill memory)


def _size_text(n: float) -> str:
    return f"{n / 2**30:,.1f} GB" if n >= 2**30 else f"{n / 2**20:,.0f} MB" if n >= 2**20 else f"{n / 2**10:,.0f} KB"


CUT_ARTIFACT = "not read"  # the artifact of the entry standing for the part of a log left unread


def unread_part(entries: list[LogEntry]) -> str:
    """The sentence saying what of the log was not read ("" when it was read whole)."""
    cut = next((e for e in entries if e.artifact == CUT_ARTIFACT and not e.source), None)
    return cut.text.removeprefix("[... ").removesuffix(" ...]") if cut else ""


def cut_note(path: str, size: int, head: int, tail: int) -> str:
    """The sentence for a log read only in part: its size, what was read and what was not."""
    skipped = max(0, size - head - tail)
    return (
        f"{path} is {_size_text(size)}: shown are its first {_size_text(head)} and its last {_size_text(tail)}; "
        f"the {_size_text(skipped)} between were not read (open the file itself for them)"
    )


class _Parser:
    """Lines of torch's log into LogEntry objects (consecutive lines of one message joined)."""

    def __init__(self, max_entries: int):
        self.entries: list[LogEntry] = []
        self.max_entries = max_entries
        self.key, self.lines = None, []

    def close(self) -> None:
        if self.key is not None:
            k = self.key
            self.entries.append(LogEntry(k[0], k[1], k[2], k[3], k[4], "\n".join(self.lines)))
        self.key, self.lines = None, []

    def full(self) -> bool:
        return len(self.entries) >= self.max_entries

    def line(self, raw: str) -> bool:
        """Take one line; False once `max_entries` entries are made."""
        m = _LINE.match(raw)
        if m is None:
            if self.key is None:
                self.key, self.lines = ("info", "", "", "", ""), []
            self.lines.append(raw)
            return True
        k = (LEVELS[m.group(1)], m.group(2), m.group(4), m.group(5) or "", m.group(6) or "")
        if k != self.key:
            self.close()
            if self.full():
                return False
            self.key, self.lines = k, []
        self.lines.append(m.group(7))
        return True


def _read_lines(fh, parser: _Parser, budget: int) -> int:
    """Parse lines of the binary file `fh` from where it is until `budget` bytes are read (a
    line cut at MAX_LINE_CHARS), the file ends or the parser is full; returns the bytes read."""
    read = 0
    while read < budget:
        raw = fh.readline(MAX_LINE_CHARS)
        if not raw:
            break
        read += len(raw)
        if not raw.endswith(b"\n") and len(raw) >= MAX_LINE_CHARS:
            while read < budget:  # the rest of a line too long to show
                more = fh.readline(MAX_LINE_CHARS)
                read += len(more)
                if not more or more.endswith(b"\n"):
                    break
            raw += b" [line cut]"
        if not parser.line(raw.decode("utf-8", errors="replace").rstrip("\n")):
            break
    return read


def read_log(
    path: str, max_entries: int = 200_000, max_bytes: int = MAX_LOG_BYTES, tail_bytes: int = TAIL_LOG_BYTES
) -> list[LogEntry]:
    """The entries of a compile log, consecutive lines of one message joined (torch prefixes
    every line of a multi-line message); a line without torch's prefix joins the entry
    before it. A log longer than `max_bytes` + `tail_bytes` is read at its start (`max_bytes`)
    and its end (`tail_bytes`, from the first whole line) only, never whole (a report folder
    may hold a compile log of any size): an entry between the two says what was left unread
    (cut_note). Lines are cut at MAX_LINE_CHARS. Only a regular file is read."""
    from core.vocab.artifacts import open_regular

    try:
        fh = open_regular(path, "rb")
    except (OSError, ValueError):
        return []
    parser = _Parser(max_entries)
    with fh:
        size = os.fstat(fh.fileno()).st_size
        head = _read_lines(fh, parser, max_bytes if size > max_bytes + tail_bytes else size + 1)
        parser.close()
        if head >= size or parser.full():
            return parser.entries
        start = max(head, size - tail_bytes)
        fh.seek(start - 1)
        if fh.read(1) != b"\n":
            fh.readline(MAX_LINE_CHARS)  # the part of a line the tail starts in (a long line: skipped no further)
        tail_start = fh.tell()
        note = cut_note(path, size, head, size - tail_start)
        parser.entries.append(LogEntry("warning", "", "", "", CUT_ARTIFACT, f"[... {note} ...]"))
        _read_lines(fh, parser, size - tail_start + 1)
        parser.close()
    return parser.entries


def read_job_log(root: str, label: str) -> list[LogEntry]:
    """The compile log of config `label` in report/session folder `root` (its path from the
    label, confined to the folder: core.vocab.artifacts.resolve)."""
    from core.vocab.artifacts import JobArtifacts, resolve

    path = resolve(root, JobArtifacts.for_label(label).compile_log)
    return read_log(path) if path else []


def filter_log(entries: list[LogEntry], min_level: str = "debug", text: str = "") -> list[LogEntry]:
    """Entries at `min_level` or above whose text, compile id or artifact holds `text`
    (case-insensitive): the log view's level filter and search."""
    low = LEVEL_ORDER.index(min_level)
    needle = text.lower()
    return [
        e
        for e in entries
        if LEVEL_ORDER.index(e.level) >= low
        and (not needle or needle in e.text.lower() or needle in e.compile_id or needle in e.artifact.lower())
    ]
