"""torch's own compile log, kept per job (`--compile-log LEVEL`), and tlparse.

torch.compile has no `verbose=True`; torch's real switch is `TORCH_LOGS` /
`torch._logging.set_logs`. A job applies the LEVEL string (TORCH_LOGS syntax:
"graph_breaks,recompiles", "+dynamo,inductor,guards,output_code") with `set_logs` and has
torch write the log to `compile_log/<config>.log` (torch's own file handler, through
TORCH_LOGS_OUT, so the lines look exactly as torch prints them). The graph_breaks and
recompiles artifacts are always on: the job's capture reads them (core.capture.live).

`read_log` turns such a file into entries (level, compile id, artifact, text) for a log
view with search and a level filter; `run_tlparse` makes tlparse's HTML from a job's
structured trace (core.capture.graphs writes it).
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

DEFAULT_COMPILE_LOG = "graph_breaks,recompiles"
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
                raise CompileLogError(f"--compile-log: {name!r} is an artifact (on or off); write it without "
                                      f"'{raw[0]}'.")
            out[name] = True
        elif log_registry.is_log(name) or name == "torch" or _is_module(name):
            out[name] = level
        else:
            names = sorted(set(log_registry.log_alias_to_log_qnames) | set(log_registry.visible_artifacts))
            raise CompileLogError(
                f"--compile-log: {name!r} is neither a torch log nor a log artifact. Use torch's TORCH_LOGS "
                f"names, comma separated, '+' for debug level (e.g. {EXAMPLE}). Valid names: {', '.join(names)}.")
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


_LINE = re.compile(r"^(?:\[rank\d+\]:)?([VIWEC])(\d{4} \d\d:\d\d:\d\d\.\d+) (\d+) (\S+?:\d+)\]"
                   r"(?: \[([^\]\s]+)\])?(?: \[__(\w+)\])? ?(.*)$")


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
                entries.append(LogEntry("warning", "", "", "", "", f"[the log goes on: {size / 2**20:,.0f} MB in all, "
                                        f"only the first {max_bytes / 2**20:,.0f} MB are shown; the whole file is "
                                        f"{path}]"))
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
    return [e for e in entries if LEVEL_ORDER.index(e.level) >= low and
            (not needle or needle in e.text.lower() or needle in e.compile_id or needle in e.artifact.lower())]


def tlparse_executable() -> str | None:
    """tlparse (pip package `tlparse`) beside this Python, or on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "tlparse")
    return here if os.access(here, os.X_OK) else shutil.which("tlparse")


TLPARSE_MISSING = ("tlparse is not installed (pip install tlparse); torch's structured traces are in torch_trace/ "
                   "for when it is.")


def trace_files(folder: str) -> list[str]:
    """The structured-trace files (*.log) in `folder`, plain files only (no symbolic links)."""
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return []
    paths = [os.path.join(folder, n) for n in names if n.endswith(".log")]
    return [p for p in paths if os.path.isfile(p) and not os.path.islink(p)]


def run_tlparse(trace_dir: str, out_dir: str, timeout_s: float = 300) -> str:
    """Run tlparse on the structured trace in `trace_dir` (it takes the file, not the
    folder) into `out_dir`, which must not exist yet: tlparse is never given `--overwrite`
    (which deletes the folder first), so it writes only into a folder it creates. Returns ""
    on success, else why not, in one sentence."""
    exe = tlparse_executable()
    if exe is None:
        return TLPARSE_MISSING
    files = trace_files(trace_dir)
    if not files:
        return f"no structured trace in {trace_dir} (the job ended before compiling?)"
    if os.path.lexists(out_dir):
        return f"{out_dir} exists already; tlparse writes only into a new folder"
    try:
        proc = subprocess.run([exe, files[-1], "-o", out_dir, "--no-browser"],
                              capture_output=True, text=True, timeout=timeout_s)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"tlparse failed: {exc}"
    if proc.returncode != 0:
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
        return f"tlparse failed: {tail[0]}"
    return ""


def tlparse_into_report(root: str, label: str) -> tuple[str, str]:
    """tlparse's HTML for config `label` written into the report folder `root` that this run
    owns (`--tlparse`): into tlparse/<config>/, a folder made for it (never through a
    symbolic link, never over an existing one). (path of its index.html, "") or ("", why not)."""
    from core.vocab.artifacts import ArtifactPathError, JobArtifacts, make_dirs, resolve

    files = JobArtifacts.for_label(label)
    trace_dir = resolve(root, files.torch_trace_dir)
    if trace_dir is None:
        return "", f"no structured trace for {label} in {os.path.join(root, 'torch_trace')}"
    try:
        out_dir = os.path.dirname(make_dirs(root, files.tlparse_dir + "/index.html"))
    except (ArtifactPathError, OSError) as exc:
        return "", f"cannot write tlparse's report: {exc}"
    if os.listdir(out_dir):
        return "", f"{out_dir} is not empty; tlparse writes only into a new folder"
    os.rmdir(out_dir)  # tlparse makes the folder itself
    problem = run_tlparse(trace_dir, out_dir)
    index = os.path.join(out_dir, "index.html")
    if problem:
        return "", problem
    return (index, "") if os.path.isfile(index) else ("", f"tlparse wrote no index.html into {out_dir}")


TLPARSE_PREFIX = "compile-profiler-tlparse-"
"""The app's tlparse reports go into fresh folders named so in the temporary folder."""
TLPARSE_KEEP = 20
_tlparse_made: dict[tuple, str] = {}  # this process's reports: (trace file, size, mtime) → index.html


def tlparse_job(root: str, label: str) -> tuple[str, str]:
    """tlparse's HTML report of one config's structured trace in the artifacts folder `root`
    (a report folder anyone may have made): (path of its index.html, "") or ("", why not).

    The report is generated by this call, or by an earlier call of this process for the same
    trace, into a fresh folder of its own (tempfile.mkdtemp, readable by this user only): a
    report folder's own tlparse/ (HTML anyone could have put there, or a symbolic link) is
    never opened or written. The trace is read only from root's own torch_trace/ folder, never
    through a symbolic link."""
    import tempfile

    from core.vocab.artifacts import JobArtifacts, resolve

    trace_dir = resolve(root, JobArtifacts.for_label(label).torch_trace_dir)
    files = trace_files(trace_dir) if trace_dir else []
    if not files:
        return "", f"no structured trace for {label} in {os.path.join(root, 'torch_trace')} (the job ended " \
                   "before compiling, or the report was saved without it)"
    stat = os.stat(files[-1])
    key = (files[-1], stat.st_size, stat.st_mtime_ns)
    index = _tlparse_made.get(key, "")
    if index and os.path.isfile(index):
        return index, ""
    _prune_tlparse_folders()
    parent = tempfile.mkdtemp(prefix=TLPARSE_PREFIX)
    out_dir = os.path.join(parent, "report")
    problem = run_tlparse(trace_dir, out_dir)
    index = os.path.join(out_dir, "index.html")
    if problem or not os.path.isfile(index):
        shutil.rmtree(parent, ignore_errors=True)
        return "", problem or f"tlparse wrote no index.html into {out_dir}"
    _tlparse_made[key] = index
    return index, ""


def _prune_tlparse_folders(keep: int = TLPARSE_KEEP) -> None:
    """Remove all but the newest `keep` tlparse folders this user's app made (only folders with
    our prefix that the user owns, never through a symbolic link)."""
    import tempfile

    base = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(base) if n.startswith(TLPARSE_PREFIX)]
    except OSError:
        return
    mine = []
    for n in names:
        path = os.path.join(base, n)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if os.path.isdir(path) and not os.path.islink(path) and st.st_uid == os.getuid():
            mine.append((st.st_mtime, path))
    for _, path in sorted(mine, reverse=True)[keep - 1:]:
        shutil.rmtree(path, ignore_errors=True)
