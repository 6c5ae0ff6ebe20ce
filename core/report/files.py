"""A report folder and its files: the folder claimed for one run (OutputFolder), every report file
written into it (write_report; what they hold is core.report.report_contents'), and report.json
read back into JobResults (load_report). Jobs write their own files into the folder while they
run (core.vocab.artifacts).

Every file is written atomically (temporary file in the same folder, then rename), and a report
whole or not at all: every file is written in full before any is renamed into place, so a full
disk or a crash never leaves half a report (nor half of a file).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Any, Iterable

from core.analysis.result_json import result_from_dict
from core.analysis.results import JobResult
from core.report.report_contents import REPORT_VERSION, decision_files, report_json, report_tables
from core.vocab.artifacts import (
    ARTIFACT_DIRS,
    MANIFEST,
    Manifest,
    present_artifact_dirs,
    read_manifest,
    remove_owned,
    umask,
    write_manifest,
)


class ReportError(OSError):
    """The report could not be written or read; the message names the path and the fix."""


class OtherKindError(ReportError):
    """The file is a report of another kind than a model's (`kind`: "script" for `main.py run`,
    "generation" for `profile --task generate`): its reader is another."""

    def __init__(self, message: str, kind: str, path: str):
        super().__init__(message)
        self.kind, self.path = kind, path


OTHER_KINDS = {"script": "a script run (main.py run)", "generation": "a text generation (profile --task generate)"}


class FolderInUseError(ReportError):
    """The output folder holds another run's report (or another run is writing it)."""


def _stage(path: str, text: str | Iterable[str]) -> str:
    """Write `text` into a temporary file beside `path`; its name (removed again on failure)."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=folder)
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            if isinstance(text, str):
                fh.write(text)
            else:
                for chunk in text:
                    fh.write(chunk)
    except BaseException:
        _unlink_quietly(tmp)
        raise
    return tmp


def _unlink_quietly(path: str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def atomic_write(path: str, text: str | Iterable[str]) -> None:
    """Write via a temporary file and a rename, so a reader never sees half a file; the file
    gets the permissions the user's umask gives new files (mkstemp alone makes them 0600).
    `text` may come in chunks (an iterable of str), so a large file is never whole in memory."""
    tmp = _stage(path, text)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink_quietly(tmp)
        raise


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
    "lines.csv",
    "compile_stages.csv",
    "recommendation.txt",
    "functions.csv",  # a script run's (core.report.script_report)
    "calls.csv",
    "compile_frames.csv",
    "output.txt",
    "summary.txt",
    "report.json",
)
REPORT_FILE_PATTERNS = ("generate_*.py",)  # a generation profile's scripts (core.cli.generate)


def report_files_in(path: str) -> list[str]:
    """The report files (REPORT_FILES and REPORT_FILE_PATTERNS' names) present in the folder `path`."""
    import fnmatch

    found = [n for n in REPORT_FILES if os.path.lexists(os.path.join(path, n))]
    try:
        names = sorted(os.listdir(path))
    except OSError:
        names = []
    return found + [n for n in names if any(fnmatch.fnmatchcase(n, p) for p in REPORT_FILE_PATTERNS)]


# and the folders jobs write into while they run (core.vocab.artifacts.ARTIFACT_DIRS): traces/,
# graphs/, compile_log/, torch_trace/, tlparse/; the manifest (core.vocab.artifacts.MANIFEST) lists
# which of them a run wrote.


class OutputFolder:
    """A report folder claimed for one run, from before the first job to the last file.

    It holds exactly one run: a folder that already holds a report is refused unless
    `overwrite`. What is ours is what the folder's manifest lists (core.vocab.artifacts): with
    `overwrite` exactly that is removed (`removed` says what, for the caller to tell the user),
    and a report file or artifact folder no manifest lists (a user's own `graphs/`, or a report
    from before manifests) is never removed nor written into: the claim is refused, naming it.
    Two runs cannot write into one folder at once: the folder is locked (flock) while claimed.
    Claiming also proves the folder is writable, before any work starts (`/proc` passes
    os.access for root, not a real write), and writes the manifest: the artifact folders this
    run may create are listed before a job creates them, so a run cut short leaves nothing
    unlisted. `extend`: the run completes the report already there (zoo --resume keeps its
    finished jobs), so it is neither refused nor is anything removed. `report=False`: the
    folder is only locked and checked to hold no report (a zoo's own folder), no manifest."""

    def __init__(self, path: str, overwrite: bool = False, extend: bool = False, report: bool = True):
        self.path = os.path.abspath(os.path.expanduser(path))
        self.overwrite = overwrite
        self.extend = extend
        self.report = report
        self.manifest = Manifest()
        self.removed: list[str] = []  # what --overwrite removed, in words ("graphs/ (12 files)")
        self._fd: int | None = None
        self._listing = False  # this claim wrote the manifest (a refused one leaves the earlier alone)
        self.created: list[str] = []  # the folders `reserve` made, innermost first (`abandon` removes them)

    def claim(self) -> "OutputFolder":
        """Lock the folder, check it, remove what --overwrite replaces and list this run's files.
        After `reserve`, the rest of the claim."""
        if self._fd is None:
            self.reserve()
        with self._abandoned_if_refused():
            self._take()
            if self.report:
                write_manifest(self.path, self.manifest)
                self._listing = True
        return self

    def reserve(self) -> "OutputFolder":
        """Lock the folder and refuse it as `claim` would, changing nothing in it: a command checks
        its --out at once, before the seconds its settings' checks take (torch imported), and
        claims it (`claim`) once they pass; a refused setting then `abandon`s it. A missing folder
        is made (`created`), to prove it can be."""
        import fcntl

        if os.path.lexists(self.path) and not os.path.isdir(self.path):
            what = "a link to nothing" if os.path.islink(self.path) else "a file"
            raise ReportError(
                f"cannot use {self.path} as the report folder: it is {what}, not a folder. Choose a folder (--out DIR)."
            )
        try:
            missing, parent = [], self.path  # the folders makedirs is about to make, innermost first
            while not os.path.isdir(parent) and os.path.dirname(parent) != parent:
                missing.append(parent)
                parent = os.path.dirname(parent)
            os.makedirs(self.path, exist_ok=True)
            self.created = missing
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
        with self._abandoned_if_refused():
            self._take(check_only=True)
            probe = tempfile.NamedTemporaryFile(dir=self.path, prefix=".probe-", delete=True)
            probe.close()
        return self

    @contextlib.contextmanager
    def _abandoned_if_refused(self):
        """Around the checks and writes of a locked folder: a refusal or a failed write abandons
        it (released, and what `reserve` made removed) and is raised as a ReportError."""
        try:
            yield
        except FolderInUseError:
            self.abandon()
            raise
        except OSError as exc:
            self.abandon()
            raise ReportError(
                f"cannot write to {self.path}: {exc.strerror or exc}. Choose a folder you can write to (--out DIR)."
            ) from exc

    def abandon(self) -> None:
        """Release a reserved folder no run wrote into; the folder itself is removed when `reserve`
        made it and it is still empty (a refused setting leaves no empty folder behind)."""
        if self.created and not self._listing:
            for folder in self.created:  # innermost first, while still locked: another run cannot take it
                try:
                    os.rmdir(folder)  # only an empty folder
                except OSError:
                    break
        self.created = []
        self.release()

    def _take(self, check_only: bool = False) -> None:
        """Refuse a folder that is not ours to write, remove what --overwrite replaces, and set
        the manifest this run starts from; `check_only`: refuse, nothing else."""
        earlier = read_manifest(self.path)
        files = report_files_in(self.path)
        folders = present_artifact_dirs(self.path)
        ours = [n for n in files if n in earlier.files] + [f"{d}/" for d in folders if d in earlier.folders]
        foreign = [n for n in files if n not in earlier.files] + [f"{d}/" for d in folders if d not in earlier.folders]
        absent = {d for d in ARTIFACT_DIRS if d not in folders}
        if self.extend:  # what is there stays; what this run adds is listed
            if not check_only:
                self.manifest = Manifest(earlier.files & set(files), (earlier.folders & set(folders)) | absent)
            return
        if not self.report:
            if files or ours:
                raise FolderInUseError(
                    f"{self.path} already holds a report of `profile` ({', '.join(files + ours)}); choose another folder."
                )
            return
        if not (ours or foreign):
            if not check_only:
                self.manifest = Manifest(set(), set(ARTIFACT_DIRS))
            return
        if foreign and (self.overwrite or not ours):
            why = (
                "its manifest does not list them"
                if os.path.lexists(os.path.join(self.path, MANIFEST))
                else "no manifest of a run lists them: a report of an older compile-profiler, or files of your own"
            )
            raise FolderInUseError(
                f"{self.path} holds {', '.join(foreign)}, which no run of compile-profiler wrote there ({why}). "
                "They are never removed, --overwrite removes only what a run wrote, and a run would write into "
                "them: move or delete them yourself, or choose another folder (--out DIR)."
            )
        if not self.overwrite:
            raise FolderInUseError(
                f"{self.path} already holds a report ({', '.join(ours + foreign)}); "
                "choose a new folder, or pass --overwrite to replace it."
            )
        if check_only:
            return
        for name in files:  # every one is ours here; files first, so a refusal below leaves folders
            self.removed.append(remove_owned(self.path, name, folder=False))
        for d in folders:
            self.removed.append(remove_owned(self.path, d, folder=True))
        self.manifest = Manifest(set(), set(ARTIFACT_DIRS))

    def removed_text(self) -> str:
        """What --overwrite removed, as a sentence ("" when nothing)."""
        if not self.removed:
            return ""
        return (
            f"--overwrite: removed the earlier run's {', '.join(self.removed)} from {self.path} "
            "(what its manifest listed; nothing else there was touched)."
        )

    def write_manifest(self) -> None:
        """Write the manifest as it stands (the report's files and the artifact folders listed)."""
        write_manifest(self.path, self.manifest)

    def release(self) -> None:
        if self._fd is not None:
            if self._listing:  # the folders this run reserved and never made are no longer listed
                self.manifest.folders &= set(present_artifact_dirs(self.path))
                try:
                    write_manifest(self.path, self.manifest)
                except OSError:
                    pass  # still listed as reserved: a user's folder made there since would count as ours
                self._listing = False
            os.close(self._fd)  # closing the descriptor releases the lock
            self._fd = None

    def __enter__(self) -> "OutputFolder":
        return self.claim() if self._fd is None else self

    def __exit__(self, *exc) -> None:
        self.release()


def write_report(
    results: list[JobResult],
    report_dir: str,
    options: dict | None = None,
    overwrite: bool = False,
    folder: OutputFolder | None = None,
    calls: int | None = None,
    sections: dict | None = None,
) -> list[str]:
    """Write every report file into `report_dir` (created if needed); returns the paths.

    The recommendation for `calls` expected calls (default `options["calls"]`, else
    core.decide.recommend.DEFAULT_CALLS) and the suggestions go into report.json and
    recommendation.txt; `sections` adds further top-level entries to report.json.

    The folder must not hold another report unless `overwrite` (see OutputFolder); pass
    `folder` when the caller claimed it already (the CLI claims it before the first job).
    The report is written whole or not at all: every file goes into a temporary file first,
    and only when all are written are they renamed into place (the manifest listing them
    first); a report file an earlier write of this run made that this one does not is removed.
    Raises ReportError with a clear message when the folder cannot be written (then nothing of
    this write is left there); nothing in `results` is changed, so the caller can offer
    another folder.
    """
    claimed = folder is None
    folder = folder or OutputFolder(report_dir, overwrite).claim()
    staged: list[tuple[str, str]] = []
    try:
        extra, texts = decision_files(results, calls or (options or {}).get("calls"))
        if sections and "tune" in sections:  # what the budget did, beside the answer it allowed
            from core.decide.tune import tune_lines

            texts["recommendation.txt"] += "\n" + "\n".join(tune_lines(sections["tune"])) + "\n"
        files = {
            **report_tables(results),
            **texts,
            "report.json": report_json(results, options, {**extra, **(sections or {})}),
        }
        for name, text in files.items():
            path = os.path.join(folder.path, name)
            staged.append((_stage(path, text), path))
        stale = folder.manifest.files - set(files)
        folder.manifest.files |= set(files)
        folder.write_manifest()  # the files are listed before they appear
        for tmp, path in staged:
            os.replace(tmp, path)
        staged = []
        for name in sorted(stale):  # an earlier write's file (ours: the manifest lists it) this one does not make
            try:
                remove_owned(folder.path, name, folder=False)
            except FileNotFoundError:
                pass
        folder.manifest.files = set(files)
        folder.write_manifest()
        return [os.path.join(folder.path, name) for name in files]
    except OSError as exc:
        if isinstance(exc, ReportError):
            raise
        raise ReportError(
            f"cannot write the report to {folder.path}: {exc.strerror or exc}. "
            "Choose a folder you can write to (--out DIR)."
        ) from exc
    finally:
        for tmp, _ in staged:
            _unlink_quietly(tmp)
        if claimed:
            folder.release()


def max_json_bytes() -> int:
    """The largest report.json or zoo.json read here: MAX_JSON_BYTES, or an eighth of the
    memory available when that is less (parsing takes about five times the file's size)."""
    import psutil

    from core.vocab.limits import MAX_JSON_BYTES

    return int(min(MAX_JSON_BYTES, psutil.virtual_memory().available // 8))


def read_json_file(path: str, name: str) -> tuple[Any, str]:
    """(the parsed JSON, the file's path) of `path`, or of `path/name` when `path` is a folder;
    ReportError names the file when it cannot be opened or is not JSON. In a folder, a `name`
    that is a symbolic link is refused: the folder's report would be read from elsewhere (the
    user names such a file directly when they mean it)."""
    if os.path.isdir(path):
        folder, path = path, os.path.join(path, name)
        if os.path.islink(path):
            raise ReportError(
                f"{name} in {folder} is a symbolic link (to {os.readlink(path)}), not the folder's own "
                f"file; nothing was read. Open the file it points to by its own path if you trust it."
            )
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
            f"{limit / 2**20:,.0f} MB (parsing takes several times the file's size in memory). Nothing of "
            "it was read."
        )
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh), path
    except OSError as exc:
        raise ReportError(f"cannot open {path}: {exc.strerror or exc}") from exc
    except (ValueError, RecursionError) as exc:
        raise ReportError(f"{path} is not a valid {name}: {exc}{_cut_short(exc, size)}{_linked(path)}") from exc


def _cut_short(exc: Exception, size: int) -> str:
    """What a parse error at the file's very end means: the file stops before its JSON does."""
    # a JSON document ends with its outermost } or ]: one that starts as JSON but does not end so
    # was cut off (the parser points at the string or value left open, not at the end)
    text = exc.doc.strip() if isinstance(exc, json.JSONDecodeError) else ""
    if size and text[:1] in ("{", "[") and not text.endswith(("}", "]")):
        return (
            ". The file ends before its JSON does: it was cut short (a copy or a write that did not "
            "finish); copy it again from where the run wrote it"
        )
    return ""


def _linked(path: str) -> str:
    return f" ({path} is a symbolic link to {os.path.realpath(path)})" if os.path.islink(path) else ""


def load_report(path: str) -> tuple[list[JobResult], dict]:
    """Read a report.json (or the folder holding one) back: (results, document header).

    Every value is type-checked: a ReportError names the file and the field that is wrong.
    `header["warnings"]` lists sentences to show the user (a report of another version)."""
    from core.vocab.schema import SchemaError

    doc, path = read_json_file(path, "report.json")
    if isinstance(doc, dict) and "jobs" not in doc and isinstance(doc.get("kind"), str) and doc["kind"] in OTHER_KINDS:
        raise OtherKindError(
            f"{path} is the report of {OTHER_KINDS[doc['kind']]}, not of a model's profile.", doc["kind"], path
        )
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
