"""Reports: summary.csv, latency.csv, graph_breaks.csv, resources.csv, recompiles.csv,
variants.csv (shape sweeps only), ops.csv, time_breakdown.csv and graphs.csv (core.report.explain_tables)
and report.json. Jobs write their own files into the folder while they run (core.vocab.artifacts).

Every file is written atomically (temporary file in the same folder, then rename), so a
crash never leaves half a report. Text cells that a spreadsheet would run as a formula
(starting with = + - @, a tab or a carriage return) are prefixed with a quote; numbers are
written as numbers. `load_report` reads report.json back into JobResults.
"""

from __future__ import annotations

import csv
import io
import json
import os
import tempfile
from typing import Any, Callable, Iterable

import numpy as np

from core.analysis.result_json import result_from_dict, result_to_dict
from core.analysis.results import SUMMARY_COLUMNS, JobResult
from core.analysis.stats import median_or_none
from core.analysis.variants import items_per_s
from core.report.explain_tables import explain_tables
from core.vocab.artifacts import existing_artifact_dirs, remove_artifacts

# Version 2: samples as columns (core.vocab.samples), a graph break's `count` split into `logged`
# and `per_call`, latency.csv's `phase` column renamed `side`. Version 1 reports still open.
REPORT_VERSION = 2
READABLE_VERSIONS = (1, 2)

LATENCY_COLUMNS = ["config", "side", "process", "iteration", "latency_ms"]
GRAPH_BREAK_COLUMNS = [
    "config",
    "reason",
    "gb_code",
    "file",
    "line",
    "source",
    "logged",
    "per_call",
    "frame_skipped",
    "eager_function",
    "user_file",
    "user_line",
    "compile_id",
    "cost_ms_per_call",
    "explanation",
    "hints",
    "doc_url",
]
RESOURCE_COLUMNS = [
    "config",
    "t_s",
    "phase",
    "process",
    "cpu_percent",
    "machine_cpu_percent",
    "rss_mb",
    "gpu_util_percent",
    "gpu_mem_mb",
]
RECOMPILE_COLUMNS = ["config", "function", "location", "reasons"]
VARIANT_COLUMNS = [
    "config",
    "dynamic",
    "variant",
    "input_shapes",
    "outcome",
    "recompiled",
    "recompile_reason",
    "compiles",
    "compile_time_s",
    "recompile_limit_hit",
    "ran_eagerly",
    "eager_median_ms",
    "compiled_median_ms",
    "batch_size",
    "eager_items_per_s",
    "compiled_items_per_s",
    "peak_mb",
    "error",
]

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


class ReportError(OSError):
    """The report could not be written or read; the message names the path and the fix."""


class FolderInUseError(ReportError):
    """The output folder holds another run's report (or another run is writing it)."""


def safe_cell(value):
    """Make a value safe for a spreadsheet: formula-like text gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START):
        return "'" + text
    return text


def csv_text(columns: list[str], rows: Iterable[dict], cell: Callable[[Any], Any] | None = None) -> str:
    """A CSV file's text: the header, then each row's `columns` (a missing key is empty),
    every cell through `cell` (default `safe_cell`: no spreadsheet formulas)."""
    cell = cell or safe_cell
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c)) for c in columns])
    return buf.getvalue()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def atomic_write(path: str, text: str | Iterable[str]) -> None:
    """Write via a temporary file and a rename, so a reader never sees half a file; the file
    gets the permissions the user's umask gives new files (mkstemp alone makes them 0600).
    `text` may come in chunks (an iterable of str), so a large file is never whole in memory."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                for chunk in text:
                    fh.write(chunk)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


LATENCY_CHUNK_ROWS = 50_000


def _latency_csv(parts):
    """latency.csv from columns, in chunks of LATENCY_CHUNK_ROWS rows (a million rows in about
    a second, the csv module takes ~4; never the whole file in memory: at 2×10^6 samples the
    whole text cost ~400 MB)."""
    from core.vocab.records import SIDES

    yield ",".join(LATENCY_COLUMNS) + "\n"
    for label, side, process, iteration, latency_ms in parts:
        prefix = csv_text(["c"], [{"c": label}]).split("\n", 1)[1].rstrip("\n")  # quoted, formula-safe
        for start in range(0, len(latency_ms), LATENCY_CHUNK_ROWS):
            stop = start + LATENCY_CHUNK_ROWS
            names = np.array(SIDES, dtype=object)[side[start:stop]]
            yield "".join(
                f"{prefix},{n},{p},{i},{v!r}\n"
                for n, p, i, v in zip(
                    names.tolist(),
                    process[start:stop].tolist(),
                    iteration[start:stop].tolist(),
                    latency_ms[start:stop].tolist(),
                )
            )


def report_tables(results: list[JobResult]) -> dict:
    """File name → CSV text for every CSV of the report (latency.csv as a generator of
    chunks: see atomic_write)."""
    latency, breaks, resources, recompiles, variants = [], [], [], [], []
    for r in results:
        label = r.config.label
        cols = r.samples.columns()
        timed = ~cols["warmup"]
        latency.append(
            (label, cols["side"][timed], cols["process"][timed], cols["iteration"][timed], cols["latency_ms"][timed])
        )
        breaks += [
            {
                "config": label,
                **{k: getattr(g, k) for k in GRAPH_BREAK_COLUMNS[1:] if k not in ("hints", "cost_ms_per_call")},
                "hints": " | ".join(g.hints),
                "cost_ms_per_call": (cost := r.break_cost(g)) and cost.cost_ms_per_call,
            }
            for g in r.graph_breaks
        ]
        resources += [
            {
                "config": label,
                "t_s": s.t_s,
                "phase": s.phase,
                "process": s.process,
                "cpu_percent": s.cpu_percent,
                "machine_cpu_percent": s.machine_cpu_percent,
                "rss_mb": s.rss_mb,
                "gpu_util_percent": s.gpu_util_percent,
                "gpu_mem_mb": s.gpu_mem_mb,
            }
            for s in r.resources
        ]
        recompiles += [
            {"config": label, "function": c.function, "location": c.location, "reasons": " | ".join(c.reasons)}
            for c in r.recompiles
        ]
        variants += [
            {
                "config": label,
                "dynamic": r.config.dynamic,
                "variant": v.index,
                "input_shapes": "; ".join(v.input_shapes),
                "outcome": v.outcome,
                "recompiled": v.recompiled,
                "recompile_reason": " | ".join(v.recompile_reasons),
                "compiles": v.compiles,
                "compile_time_s": v.compile_time_s,
                "recompile_limit_hit": v.recompile_limit_hit,
                "ran_eagerly": v.ran_eagerly,
                "eager_median_ms": median_or_none(v.eager_ms),
                "compiled_median_ms": median_or_none(v.compiled_ms),
                "batch_size": v.batch_size,
                "eager_items_per_s": items_per_s(v.batch_size, v.eager_ms),
                "compiled_items_per_s": items_per_s(v.batch_size, v.compiled_ms),
                "peak_mb": v.peak_mb,
                "error": v.error,
            }
            for v in r.variants
        ]
    return {
        "summary.csv": csv_text(SUMMARY_COLUMNS, (r.summary() for r in results)),
        "latency.csv": _latency_csv(latency),
        "graph_breaks.csv": csv_text(GRAPH_BREAK_COLUMNS, breaks),
        "resources.csv": csv_text(RESOURCE_COLUMNS, resources),
        "recompiles.csv": csv_text(RECOMPILE_COLUMNS, recompiles),
        **({"variants.csv": csv_text(VARIANT_COLUMNS, variants)} if variants else {}),
        **{name: csv_text(columns, rows) for name, (columns, rows) in explain_tables(results).items()},
    }


def report_json(results: list[JobResult], options: dict | None = None, sections: dict | None = None) -> str:
    """The whole report as JSON; `sections` adds top-level entries (the recommendation, the
    suggestions, a tune run's candidates) beside the environment and the options."""
    environment = next((r.environment for r in results if r.environment), {})
    doc = {
        "report_version": REPORT_VERSION,
        "tool": "compile-profiler",
        "environment": environment,
        "options": options or {},
        **{k: v for k, v in (sections or {}).items() if k not in ("report_version", "tool", "jobs")},
        "jobs": [result_to_dict(r) for r in results],
    }
    return json.dumps(doc, indent=1, default=str)


def decision(results: list[JobResult], calls: int | None = None):
    """(Recommendation, suggestions) for `calls` expected calls (core.decide.recommend, core.decide.suggestions):
    what every report carries in report.json and recommendation.txt."""
    from core.decide.recommend import DEFAULT_CALLS, recommend
    from core.decide.suggestions import suggest

    calls = calls or DEFAULT_CALLS
    return recommend(results, calls), suggest(results, calls)


def decision_files(results: list[JobResult], calls: int | None = None) -> tuple[dict, dict[str, str]]:
    """(report.json sections, {"recommendation.txt": text}) of the decision."""
    rec, suggestions = decision(results, calls)
    text = rec.text()
    if suggestions:
        text += "\nSuggestions from the measurements:\n" + "\n".join(s.text() for s in suggestions) + "\n"
    return (
        {"recommendation": rec.to_dict(), "suggestions": [s.to_dict() for s in suggestions]},
        {"recommendation.txt": text},
    )


REPORT_FILES = (
    "summary.csv",
    "latency.csv",
    "graph_breaks.csv",
    "resources.csv",
    "recompiles.csv",
    "variants.csv",
    "ops.csv",
    "graphs.csv",
    "time_breakdown.csv",
    "recommendation.txt",
    "report.json",
)
# and the folders jobs write into while they run (core.vocab.artifacts.ARTIFACT_DIRS): traces/,
# graphs/, compile_log/, torch_trace/, tlparse/


class OutputFolder:
    """A report folder claimed for one run, from before the first job to the last file.

    It holds exactly one run: a folder that already holds a report is refused unless
    `overwrite` (then every report file the new run does not write is removed, so no stale
    variants.csv stays beside an unrelated report). Two runs cannot write into one folder at
    once: the folder is locked (flock) while claimed. Claiming also proves the folder is
    writable, before any work starts (`/proc` passes os.access for root, not a real write).
    `extend`: the run completes the report already there (zoo --resume keeps its finished
    jobs), so it is neither refused nor are its artifact folders removed."""

    def __init__(self, path: str, overwrite: bool = False, extend: bool = False):
        self.path = os.path.abspath(os.path.expanduser(path))
        self.overwrite = overwrite
        self.extend = extend
        self._fd: int | None = None

    def claim(self) -> "OutputFolder":
        import fcntl

        try:
            os.makedirs(self.path, exist_ok=True)
            fd = os.open(self.path, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as exc:
            raise ReportError(
                f"cannot use {self.path} as the report folder: {exc.strerror or exc}. "
                "Choose a folder you can write to (--out DIR)."
            ) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise FolderInUseError(
                f"{self.path} is being written by another run right now; "
                "choose another --out folder or wait for that run to end."
            ) from None
        self._fd = fd
        try:
            existing = [n for n in REPORT_FILES if os.path.exists(os.path.join(self.path, n))]
            existing += [f"{d}/" for d in existing_artifact_dirs(self.path)]
            if existing and not (self.overwrite or self.extend):
                raise FolderInUseError(
                    f"{self.path} already holds a report ({', '.join(existing)}); "
                    "choose a new folder, or pass --overwrite to replace it."
                )
            if not self.extend:
                remove_artifacts(self.path)  # the earlier run's: jobs write theirs from now on
            probe = tempfile.NamedTemporaryFile(dir=self.path, prefix=".probe-", delete=True)
            probe.close()
        except FolderInUseError:
            self.release()
            raise
        except OSError as exc:
            self.release()
            raise ReportError(
                f"cannot write to {self.path}: {exc.strerror or exc}. Choose a folder you can write to (--out DIR)."
            ) from exc
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None

    def __enter__(self) -> "OutputFolder":
        return self.claim() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()


def write_report(
    results: list[JobResult],
    out_dir: str,
    options: dict | None = None,
    overwrite: bool = False,
    folder: OutputFolder | None = None,
    calls: int | None = None,
    sections: dict | None = None,
) -> list[str]:
    """Write every report file into `out_dir` (created if needed); returns the paths.

    The recommendation for `calls` expected calls (default `options["calls"]`, else
    core.decide.recommend.DEFAULT_CALLS) and the suggestions go into report.json and
    recommendation.txt; `sections` adds further top-level entries to report.json.

    The folder must not hold another report unless `overwrite` (see OutputFolder); pass
    `folder` when the caller claimed it already (the CLI claims it before the first job).
    Raises ReportError with a clear message when the folder cannot be written; nothing in
    `results` is changed, so the caller can offer another folder.
    """
    claimed = folder is None
    folder = folder or OutputFolder(out_dir, overwrite).claim()
    try:
        extra, texts = decision_files(results, calls or (options or {}).get("calls"))
        files = {
            **report_tables(results),
            **texts,
            "report.json": report_json(results, options, {**extra, **(sections or {})}),
        }
        paths = []
        for name, text in files.items():
            path = os.path.join(folder.path, name)
            atomic_write(path, text)
            paths.append(path)
        for name in REPORT_FILES:  # an earlier run's file this run does not write
            if name not in files:
                try:
                    os.unlink(os.path.join(folder.path, name))
                except FileNotFoundError:
                    pass
        return paths
    except OSError as exc:
        if isinstance(exc, ReportError):
            raise
        raise ReportError(
            f"cannot write the report to {folder.path}: {exc.strerror or exc}. "
            "Choose a folder you can write to (--out DIR)."
        ) from exc
    finally:
        if claimed:
            folder.release()


MAX_JSON_BYTES = 1 << 30  # 1 GiB: about 50 million timed samples


def max_json_bytes() -> int:
    """The largest report.json or zoo.json read here: MAX_JSON_BYTES, or an eighth of the
    memory available when that is less (parsing takes about five times the file's size)."""
    import psutil

    return int(min(MAX_JSON_BYTES, psutil.virtual_memory().available // 8))


def read_json_file(path: str, name: str) -> tuple[Any, str]:
    """(the parsed JSON, the file's path) of `path`, or of `path/name` when `path` is a folder;
    ReportError names the file when it cannot be opened or is not JSON."""
    if os.path.isdir(path):
        path = os.path.join(path, name)
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ReportError(f"cannot open {path}: {exc.strerror or exc}") from exc
    if not os.path.isfile(path):
        raise ReportError(f"{path} is not a regular file (a device or a pipe?); a {name} is a file.")
    limit = max_json_bytes()
    if size > limit:  # parsed JSON takes several times its size: refuse before reading
        raise ReportError(
            f"{path} is {size / 2**20:,.0f} MB; this machine reads a {name} of at most "
            f"{limit / 2**20:,.0f} MB (parsing takes several times the file's size in memory)."
        )
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh), path
    except OSError as exc:
        raise ReportError(f"cannot open {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"{path} is not a valid {name}: {exc}") from exc


def load_report(path: str) -> tuple[list[JobResult], dict]:
    """Read a report.json (or the folder holding one) back: (results, document header).

    Every value is type-checked: a ReportError names the file and the field that is wrong.
    `header["warnings"]` lists sentences to show the user (a report of another version)."""
    from core.vocab.schema import SchemaError

    doc, path = read_json_file(path, "report.json")
    if not isinstance(doc, dict) or "jobs" not in doc:
        raise ReportError(f"{path} is not a compile-profiler report (no 'jobs').")
    warnings = []
    version = doc.get("report_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ReportError(f"{path}: report_version must be a whole number, not {version!r}.")
    if version > REPORT_VERSION:
        warnings.append(
            f"This report was written by a newer compile-profiler (report version {version}; this one "
            f"reads versions up to {REPORT_VERSION}). What this version knows is shown; newer "
            "figures are left out. Update compile-profiler to see everything."
        )
    elif version < REPORT_VERSION:
        warnings.append(
            f"This report was written by an older compile-profiler (report version {version}); it was "
            f"converted on reading (version {REPORT_VERSION}). Figures added since then are empty."
        )
    if not isinstance(doc["jobs"], list):
        raise ReportError(f"{path}: jobs must be a list.")
    try:
        results = [result_from_dict(j, f"jobs[{i}]") for i, j in enumerate(doc["jobs"])]
    except SchemaError as exc:
        hint = " (it comes from a newer compile-profiler)" if version > REPORT_VERSION else ""
        raise ReportError(f"{path} cannot be opened{hint}: {exc}.") from exc
    header = {k: v for k, v in doc.items() if k != "jobs"}
    header["warnings"] = warnings
    return results, header
