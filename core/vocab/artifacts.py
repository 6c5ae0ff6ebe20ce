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
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from dataclasses import dataclass

ARTIFACT_DIRS = ("traces", "graphs", "compile_log", "torch_trace", "tlparse")
MARKER = ".compile-profiler"  # in every artifact folder we made: only such folders are ever removed
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


def read_text(root: str, relative: str, max_chars: int = 4_000_000) -> str:
    """An artifact's text for a view ("" when missing, unreadable or outside `root`), cut
    at `max_chars` with a note (inductor's output code for a big model runs to megabytes)."""
    path = resolve(root, relative)
    if path is None or not os.path.isfile(path):
        return ""
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read(max_chars + 1)
    except OSError:
        return ""
    if len(text) > max_chars:
        text = text[:max_chars] + f"\n\n[... cut at {max_chars:,} characters; the whole file is {path} ...]\n"
    return text


class ArtifactPathError(OSError):
    """An artifact folder that is not ours to write into (a symbolic link, or not a folder)."""


def make_dirs(root: str, relative_file: str) -> str:
    """Create the folders a file under `root` needs (marking each artifact folder as ours);
    returns the file's absolute path. Refuses (ArtifactPathError) to create or write through a
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
    marker = os.path.join(root, parts[0], MARKER)
    if len(parts) > 1 and not os.path.exists(marker):
        with open(marker, "w", encoding="utf-8") as fh:
            fh.write("written by compile-profiler; removed with the report it belongs to\n")
    return path


def write_text(root: str, relative_file: str, text: str) -> str:
    path = make_dirs(root, relative_file)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)
    return path


def existing_artifact_dirs(root: str) -> list[str]:
    """The artifact folders in `root` that an earlier run of ours wrote (they carry MARKER)."""
    return [d for d in ARTIFACT_DIRS if os.path.exists(os.path.join(root, d, MARKER))]


def remove_artifacts(root: str) -> None:
    """Remove the artifact folders of an earlier run (only folders carrying our MARKER: a
    user's own `graphs/` beside a report is never touched)."""
    for d in existing_artifact_dirs(root):
        shutil.rmtree(os.path.join(root, d), ignore_errors=True)


def copy_artifacts(source: str, destination: str) -> list[str]:
    """Copy every artifact folder of `source` into `destination` (the app exports a session
    folder into a report folder), replacing the destination's when they are ours (they carry
    MARKER); a user's own folder of that name is left alone and not copied over. Returns
    the folders skipped so."""
    skipped: list[str] = []
    if os.path.abspath(source) == os.path.abspath(destination):
        return skipped
    for d in ARTIFACT_DIRS:
        src = os.path.join(source, d)
        if os.path.isdir(src):
            dst = os.path.join(destination, d)
            if os.path.lexists(dst) and not os.path.exists(os.path.join(dst, MARKER)):
                skipped.append(d)
                continue
            shutil.rmtree(dst, ignore_errors=True)
            shutil.copytree(src, dst)
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
