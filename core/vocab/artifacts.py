"""The files a job writes beside the report: where each one goes, by one rule.

A job gets a folder (`JobSpec.artifacts_dir`: the report folder on the command line, a
session folder in the app) and writes, as it goes, so that a failed or cancelled job keeps
what it wrote:

    traces/<name>-eager.json, traces/<name>-compiled.json   Chrome traces of the op profile
    graphs/<name>/<graph>.code.py, .guards.txt, .output_code.py   what the compiler made
    compile_log/<name>.log                                   torch's own log (--compile-log)
    torch_trace/<name>/                                      torch's structured trace (tlparse)
    tlparse/<name>/                                          tlparse's HTML (--tlparse)

`<name>` is the config label made safe as a file name (`artifact_name`); `<graph>` is the
graph's compile id, "0/0" written "0_0". Paths inside events and report.json are relative
to the folder, so a report folder can be moved or copied whole (`copy_artifacts`).

Which files and folders of a report folder are ours has one rule: its manifest
(`.compile-profiler-manifest.json`, written by core.report.files when a run claims the folder
and when its report is written) lists them. Only what a manifest lists is ever removed or
replaced (`--overwrite`, `copy_artifacts`); a user's own `graphs/` or `traces/` beside a report is
never touched, and removing never follows a symbolic link.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field

ARTIFACT_DIRS = ("traces", "graphs", "compile_log", "torch_trace", "tlparse")
MANIFEST = ".compile-profiler-manifest.json"
MAX_MANIFEST_BYTES = 1 << 16  # a manifest lists a few dozen names
_UNSAFE = re.compile(r"[^A-Za-z0-9._=+-]")


def safe_name(text: str) -> str:
    """`text` with every character that is not safe in a file name on every system (letters,
    digits, . _ = + -) replaced by "_": the one rule for the file and folder names we make."""
    return _UNSAFE.sub("_", text)


def artifact_name(label: str) -> str:
    """A config label as a file name: "inductor/dynamic=false" → "inductor_dynamic=false".
    A label that needed more than its slashes replaced gets a short hash of the label, so
    two labels never share a name."""
    plain = label.replace("/", "_")
    safe = safe_name(plain).strip(".") or "config"
    if safe != plain:
        safe = f"{safe[:80]}-{hashlib.sha1(label.encode()).hexdigest()[:8]}"
    return safe


def graph_file_stem(graph: str) -> str:
    """A graph id as part of a file name: "0/0" → "0_0"."""
    return safe_name(graph.replace("/", "_")) or "graph"


@dataclass(frozen=True)
class JobArtifacts:
    """Where one config's files go, relative to the artifacts folder (a pure function of
    its label: the CLI, the job, the report and the app's views all ask this one place)."""

    name: str

    @classmethod
    def for_label(cls, label: str) -> "JobArtifacts":
        return cls(artifact_name(label))

    def trace(self, side: str) -> str:
        return f"traces/{self.name}-{side}.json"

    @property
    def graphs_dir(self) -> str:
        return f"graphs/{self.name}"

    def graph_file(self, graph: str, kind: str) -> str:
        """kind: "code.py" (the FX graph), "guards.txt" or "output_code.py" (inductor)."""
        return f"{self.graphs_dir}/{graph_file_stem(graph)}.{kind}"

    @property
    def compile_log(self) -> str:
        return f"compile_log/{self.name}.log"

    @property
    def torch_trace_dir(self) -> str:
        return f"torch_trace/{self.name}"

    @property
    def tlparse_dir(self) -> str:
        return f"tlparse/{self.name}"


def resolve(root: str, relative: str) -> str | None:
    """The absolute path of an existing artifact (`relative`, e.g. "graphs/x/0_0.code.py",
    built with JobArtifacts from the config label, never taken from a report) under `root`,
    or None when it would leave root's artifact folders (.., an absolute path) or does not
    exist, or when any part of it below `root` is a symbolic link (a linked file, or a linked
    `compile_log/` folder pointing at /var/log): a report folder may come from anyone, so a
    view reads only what lies inside it. `root` itself is the folder the user chose."""
    if not root or not relative or os.path.isabs(relative):
        return None
    parts = relative.replace("\\", "/").split("/")
    if parts[0] not in ARTIFACT_DIRS or any(p in ("", ".", "..") for p in parts):
        return None
    real_root = os.path.realpath(root)
    expected = os.path.join(real_root, *parts)
    path = os.path.realpath(os.path.join(root, *parts))
    if path != expected or not os.path.isdir(os.path.join(real_root, parts[0])):
        return None  # a symbolic link somewhere below root (realpath moved the path)
    return path if os.path.exists(path) else None


def artifact_folder(root: str, name: str) -> str:
    """`root`'s artifact folder `name` ("traces", "tlparse", ...) when it is a real folder
    inside root (not a symbolic link), else ""."""
    path = resolve(root, name) if name in ARTIFACT_DIRS else None
    return path if path and os.path.isdir(path) else ""


def open_regular(path: str, mode: str = "r", **kwargs):
    """`open(path)` for reading, only when `path` is a regular file, checked on the opened file
    itself (no window between a check and the open: a FIFO put there meanwhile would block the
    reader, a device would never end); OSError otherwise. The last part of `path` may not be a
    symbolic link."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        os.set_blocking(fd, True)
        return open(fd, mode, **kwargs)
    except BaseException:
        os.close(fd)
        raise


def read_text(root: str, relative: str, max_chars: int = 4_000_000) -> str:
    """An artifact's text for a view ("" when missing, unreadable, not a regular file or outside
    `root`), cut at `max_chars` with a note (inductor's output code for a big model runs to
    megabytes; a crafted report may hold a file of any size)."""
    path = resolve(root, relative)
    if path is None:
        return ""
    try:
        with open_regular(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(max_chars + 1)
    except (OSError, ValueError):
        return ""
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n\n[... cut at {max_chars:,} characters; the whole file is {path} ...]\n"
    return text


class ArtifactPathError(OSError):
    """An artifact folder that is not ours to write into (a symbolic link, or not a folder)."""


def make_dirs(root: str, relative_file: str) -> str:
    """Create the folders a file under `root` needs; returns the file's absolute path. Refuses (ArtifactPathError) to create or write through a
    symbolic link below `root`: a folder someone linked elsewhere is never written into."""
    parts = relative_file.replace("\\", "/").split("/")
    if parts[0] not in ARTIFACT_DIRS or any(p in ("", ".", "..") for p in parts):
        raise ArtifactPathError(f"{relative_file!r} is not a path inside an artifact folder")
    os.makedirs(root, exist_ok=True)
    folder = root
    for part in parts[:-1]:
        folder = os.path.join(folder, part)
        if os.path.islink(folder) or (os.path.lexists(folder) and not os.path.isdir(folder)):
            raise ArtifactPathError(f"{folder} is a symbolic link or not a folder; nothing is written through it")
        if not os.path.exists(folder):
            os.mkdir(folder)
    path = os.path.join(root, *parts)
    if os.path.islink(path):
        raise ArtifactPathError(f"{path} is a symbolic link; nothing is written through it")
    return path


def write_text(root: str, relative_file: str, text: str) -> str:
    """Write an artifact whole or not at all (a temporary file renamed into place): a full disk
    leaves no empty or half file behind."""
    path = make_dirs(root, relative_file)
    write_whole(path, text)
    return path


def write_whole(path: str, text: str) -> None:
    """Write `path` whole or not at all: a temporary file beside it, renamed into place, with the
    permissions the user's umask gives new files (a full disk leaves no half file)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=os.path.basename(path), dir=os.path.dirname(path) or ".")
    try:
        os.fchmod(fd, 0o666 & ~umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def umask() -> int:
    """The process's umask (read by setting it and putting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


# ------------------------------------------------------------------ the manifest: what is ours


@dataclass
class Manifest:
    """What compile-profiler wrote into one folder: report `files` (names in the folder) and
    artifact `folders` (ARTIFACT_DIRS names). A name listed whose file is not there is no harm."""

    files: set[str] = field(default_factory=set)
    folders: set[str] = field(default_factory=set)

    def to_json(self) -> str:
        return json.dumps(
            {"tool": "compile-profiler", "files": sorted(self.files), "folders": sorted(self.folders)}, indent=1
        )


def _plain_name(name) -> bool:
    return isinstance(name, str) and bool(name) and safe_name(name) == name and name not in (".", "..")


def read_manifest(root: str) -> Manifest:
    """The manifest in `root`; an empty one when there is none, or it is unreadable, too big, not
    a regular file (a symbolic link counts as none) or not ours: then nothing there is ours. Only
    plain names are taken (never a path), and only artifact folder names as folders."""
    path = os.path.join(root, MANIFEST)
    try:
        with open_regular(path, "rb") as fh:
            raw = fh.read(MAX_MANIFEST_BYTES + 1)
        doc = json.loads(raw) if len(raw) <= MAX_MANIFEST_BYTES else None
    except (OSError, ValueError, RecursionError):
        return Manifest()
    if not isinstance(doc, dict) or doc.get("tool") != "compile-profiler":
        return Manifest()
    files, folders = doc.get("files"), doc.get("folders")
    return Manifest(
        {n for n in files if _plain_name(n) and n != MANIFEST} if isinstance(files, list) else set(),
        {n for n in folders if isinstance(n, str) and n in ARTIFACT_DIRS} if isinstance(folders, list) else set(),
    )


def write_manifest(root: str, manifest: Manifest) -> None:
    """Write `root`'s manifest whole or not at all (OSError when it cannot be written)."""
    path = os.path.join(root, MANIFEST)
    if os.path.islink(path):
        os.unlink(path)  # the link itself, never its target
    write_whole(path, manifest.to_json())


def present_artifact_dirs(root: str) -> list[str]:
    """The ARTIFACT_DIRS names present in `root` (whatever they are: folders, links, files)."""
    return [d for d in ARTIFACT_DIRS if os.path.lexists(os.path.join(root, d))]


def count_files(folder: str) -> int:
    """The files below `folder`, symbolic links not followed."""
    return sum(len(names) for _, _, names in os.walk(folder))


def remove_owned(root: str, name: str, folder: bool) -> str:
    """Remove `root/name`, a file or folder a manifest lists; returns what was removed, in
    words ("graphs/ (12 files)"). Refuses (OSError) anything that is not what we write there: a
    symbolic link (never followed, never removed) or a file where a folder belongs. Folders are
    removed without following a link inside them (shutil.rmtree's descriptor-based walk)."""
    path = os.path.join(root, name)
    st = os.lstat(path)
    if folder:
        if not stat.S_ISDIR(st.st_mode):
            raise OSError(f"{path} is not a folder (a symbolic link?); compile-profiler wrote a folder there")
        files = count_files(path)
        shutil.rmtree(path)
        return f"{name}/ ({files} file{'s' if files != 1 else ''})"
    if not stat.S_ISREG(st.st_mode):
        raise OSError(f"{path} is not a regular file (a symbolic link?); compile-profiler wrote a file there")
    os.unlink(path)
    return name


def _links(folder: str, names: list[str]) -> list[str]:
    """copytree's ignore: a symbolic link inside an artifact folder is never copied (nor followed)."""
    return [n for n in names if os.path.islink(os.path.join(folder, n))]


def copy_artifacts(source: str, destination: str) -> list[str]:
    """Copy every artifact folder of `source` into `destination` (the app exports a session
    folder into a report folder), replacing the destination's when its manifest lists them;
    a user's own folder of that name (one no manifest lists) is left alone and not copied
    over. The folders copied are added to the destination's manifest. Returns the folders
    skipped so."""
    skipped: list[str] = []
    if os.path.abspath(source) == os.path.abspath(destination):
        return skipped
    manifest = read_manifest(destination)
    copied = False
    for d in ARTIFACT_DIRS:
        src = artifact_folder(source, d)
        if not src:
            continue
        dst = os.path.join(destination, d)
        if os.path.lexists(dst):
            if d not in manifest.folders:
                skipped.append(d)
                continue
            remove_owned(destination, d, folder=True)
        manifest.folders.add(d)
        write_manifest(destination, manifest)  # listed before it is there: a copy cut short stays ours
        shutil.copytree(src, dst, ignore=_links)
        copied = True
    if copied:
        write_manifest(destination, manifest)
    return skipped


def copy_config_artifacts(source: str, destination: str, label: str) -> None:
    """Copy one config's files (traces, graphs, compile log, structured trace) from the folder
    `source` into `destination`, reading only what lies inside source's artifact folders (no
    symbolic link followed) and writing through make_dirs: the app keeps a config's files
    when its result stays on screen beside a new run's. Missing files are skipped."""
    a = JobArtifacts.for_label(label)
    for rel in (a.trace("eager"), a.trace("compiled"), a.compile_log):
        path = resolve(source, rel)
        if path and os.path.isfile(path):
            shutil.copyfile(path, make_dirs(destination, rel))
    for rel in (a.graphs_dir, a.torch_trace_dir):
        folder = resolve(source, rel)
        if not folder or not os.path.isdir(folder):
            continue
        for name in os.listdir(folder):
            path = resolve(source, f"{rel}/{name}")
            if path and os.path.isfile(path):
                shutil.copyfile(path, make_dirs(destination, f"{rel}/{name}"))
