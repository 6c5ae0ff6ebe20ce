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
    Raises CompileLogError naming the unknown name and the valid ones."""
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


MAX_LOG_BYTES = 64 * 2**20  # what a log view reads of a compile log (the rest is named, not read)
MAX_LINE_CHARS = 100_000  # a longer line is cut (a 2 GB line without a break must not fill memory)


def read_log(path: str, max_entries: int = 200_000, max_bytes: int = MAX_LOG_BYTES) -> list[LogEntry]:
    """The entries of a compile log, consecutive lines of one message joined (torch prefixes
    every line of a multi-line message); a line without torch's prefix joins the entry
    before it. Reads at most `max_bytes` and lines of at most MAX_LINE_CHARS characters: a log
    longer than that ends with an entry saying how much was left unread (a report folder may
    hold a compile log of any size)."""
    entries: list[LogEntry] = []
    key, lines = None, []

    def close():
        if key is not None:
            entries.append(LogEntry(key[0], key[1], key[2], key[3], key[4], "\n".join(lines)))

    try:
        if not os.path.isfile(path):
            return []
        size = os.path.getsize(path)
        fh = open(path, encoding="utf-8", errors="replace")
    except OSError:
        return []
    read = 0
    with fh:
        while True:
            raw = fh.readline(MAX_LINE_CHARS)
            if not raw:
                break
            read += len(raw)
            if read > max_bytes:
                close()
                key = None
                entries.append(
                    LogEntry(
                        "warning",
                        "",
                        "",
                        "",
                        "",
                        f"[the log goes on: {size / 2**20:,.0f} MB in all, "
                        f"only the first {max_bytes / 2**20:,.0f} MB are shown; the whole file is "
                        f"{path}]",
                    )
                )
                return entries
            if not raw.endswith("\n") and len(raw) >= MAX_LINE_CHARS:
                while True:  # the rest of a line too long to show
                    more = fh.readline(MAX_LINE_CHARS)
                    read += len(more)
                    if not more or more.endswith("\n") or read > max_bytes:
                        break
                raw += " [line cut]"
            raw = raw.rstrip("\n")
            m = _LINE.match(raw)
            if m is None:
                if key is None:
                    key, lines = ("info", "", "", "", ""), []
                lines.append(raw)
                continue
            k = (LEVELS[m.group(1)], m.group(2), m.group(4), m.group(5) or "", m.group(6) or "")
            if k != key:
                close()
                if len(entries) >= max_entries:
                    return entries
                key, lines = k, []
            lines.append(m.group(7))
    close()
    return entries


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
