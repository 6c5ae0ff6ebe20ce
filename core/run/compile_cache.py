"""Each compile config compiles in an inductor cache of its own.

Inductor keeps what it compiles on disk (TORCHINDUCTOR_CACHE_DIR, /tmp/torchinductor_$USER by
default): the FX-graph cache, keyed by the config, and the C++/Triton kernels, keyed by their
source. Two configs of one model share most kernels, so in one cache the config profiled second
reused the first's kernels and its "cold" compile (an FX-graph cache miss) read half the first's:
on the verdicts bench, mnasnet0_5's max-autotune-no-cudagraphs 8.2 s after inductor's 16.3 s, and
that difference alone made a tie a call read "clear". Here each config label has its own folder
under the product's cache folder (core.run.torch_info.cache_folder), shared by every run and
process of that config: a config's first compile is cold in its own cache whatever ran before it,
a later one finds its own FX-graph entries (the cache state the report shows: hit or miss), and
no config's compile time depends on which other config ran first.

Only the inductor backend compiles kernels; the others keep the machine's default cache.

The folders grow with every model profiled. `config_caches` lists them (size, files, last used)
and `clear_config_caches` removes them (all, or the configs named), for `main.py cache` and the
app's Compile caches dialog; a folder a running job holds (core.measure.cache_hold) is kept.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import re
import shutil
import time

from core.measure.cache_hold import IN_USE_FILE, LABEL_FILE, name_folder, try_exclusive
from core.run.torch_info import cache_folder
from core.vocab.config import CompileConfig, JobSpec
from core.vocab.formatting import disk_size

CACHED_BACKENDS = ("inductor",)
CACHE_COLUMNS = ("config", "size", "files", "last used", "")
IN_USE = "in use by a running job"
AFTER_CLEAR = (
    "they only make later profiles of the same models compile faster: each config's next profile compiles cold"
)


def config_cache_dir(config: CompileConfig) -> str | None:
    """The inductor cache folder of `config` (None for a backend that compiles no kernels):
    a readable slug of its label and a digest of the whole label (labels are unique per config)."""
    if config.backend not in CACHED_BACKENDS:
        return None
    return os.path.join(cache_folder(), "inductor", folder_name(config.label))


def folder_name(label: str) -> str:
    """The cache folder's name of the config labelled `label`: a readable slug and a digest."""
    slug = re.sub(r"[^A-Za-z0-9._=-]+", "_", label)[:60]
    digest = hashlib.sha256(label.encode()).hexdigest()[:10]
    return f"{slug}-{digest}"


def with_config_cache(spec: JobSpec) -> JobSpec:
    """`spec` with its config's cache folder (JobSpec.compile_cache_dir), unless it names one. A
    folder that cannot be made or written (a read-only home; inductor would fail the compile on it)
    or that a symlink leads out of the product's cache folder leaves the machine's default cache."""
    if spec.compile_cache_dir:
        return spec
    folder = config_cache_dir(spec.config)
    if folder is None:
        return spec
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return spec
    if not os.access(folder, os.W_OK | os.X_OK):
        return spec
    # a folder linked elsewhere (a planted symlink) would have inductor write outside the product's
    # cache folder: it keeps the machine's default instead (the caches' folder itself may be a
    # link the user made, to a larger disk: followed)
    if os.path.realpath(folder) != os.path.join(os.path.realpath(caches_root()), os.path.basename(folder)):
        return spec
    name_folder(folder, spec.config.label)
    return dataclasses.replace(spec, compile_cache_dir=folder)


def caches_root() -> str:
    """The folder the configs' inductor caches are in."""
    return os.path.join(cache_folder(), "inductor")


@dataclasses.dataclass(frozen=True)
class ConfigCache:
    """One config's inductor cache folder as it stands: its label (the folder's name where it
    has none recorded), size in bytes, files, and when anything in it last changed (epoch s)."""

    label: str
    path: str
    size_bytes: int
    files: int
    last_used: float | None
    in_use: bool = False

    def cells(self) -> tuple[str, str, str, str, str]:
        """Its row, as CACHE_COLUMNS name them (the CLI's listing and the app's dialog)."""
        when = "-" if self.last_used is None else time.strftime("%Y-%m-%d %H:%M", time.localtime(self.last_used))
        return self.label, disk_size(self.size_bytes), f"{self.files:,}", when, IN_USE if self.in_use else ""

    @property
    def names(self) -> tuple[str, str]:
        """What names it for a clear: its label, or its folder's name."""
        return self.label, os.path.basename(self.path)


def _label_of(folder: str) -> str:
    try:
        with open(os.path.join(folder, LABEL_FILE), encoding="utf-8", errors="replace") as f:
            label = f.read(500).strip()
    except OSError:
        label = ""
    return label or os.path.basename(folder)


def _measure(folder: str) -> tuple[int, int, float | None]:
    """(bytes, files, newest modification) of a folder's files, links not followed."""
    size = files = 0
    newest = None
    for root, dirs, names in os.walk(folder, followlinks=False):
        for name in names:
            try:
                st = os.lstat(os.path.join(root, name))
            except OSError:
                continue  # removed while being counted (a job compiling)
            if name in (IN_USE_FILE, LABEL_FILE) and root == folder:
                continue
            size += st.st_size
            files += 1
            newest = st.st_mtime if newest is None else max(newest, st.st_mtime)
    return size, files, newest


def _config_folders() -> list[str]:
    """The configs' cache folders: real folders directly under caches_root() (a link there is
    not the product's, and is neither counted nor removed)."""
    root = caches_root()
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return []
    return [
        os.path.join(root, n)
        for n in names
        if os.path.isdir(os.path.join(root, n)) and not os.path.islink(os.path.join(root, n))
    ]


def _held(folder: str) -> bool:
    """A running job holds `folder` (its lock cannot be taken now); a folder no job ever held
    is not given a lock file by being listed."""
    try:
        fd = try_exclusive(folder, create=False)
    except OSError:
        return False  # no lock file (never held), or none that can be opened: no job holds it
    if fd is None:
        return True
    os.close(fd)
    return False


def config_caches() -> list[ConfigCache]:
    """Every config's inductor cache folder, largest first."""
    caches = []
    for folder in _config_folders():
        size, files, newest = _measure(folder)
        caches.append(ConfigCache(_label_of(folder), folder, size, files, newest, _held(folder)))
    return sorted(caches, key=lambda c: (-c.size_bytes, c.label))


@dataclasses.dataclass(frozen=True)
class Cleared:
    """What a clear did: the caches removed, those kept because a running job holds them, and
    those that could not be removed (with why)."""

    removed: tuple[ConfigCache, ...] = ()
    in_use: tuple[ConfigCache, ...] = ()
    failed: tuple[tuple[ConfigCache, str], ...] = ()

    @property
    def freed_bytes(self) -> int:
        return sum(c.size_bytes for c in self.removed)

    def lines(self) -> list[tuple[bool, str]]:
        """What it did, a line each: (whether it went wrong, the line)."""
        said = [(False, f"removed {c.label} ({disk_size(c.size_bytes)})") for c in self.removed]
        said += [
            (False, f"kept {c.label}: a running job compiles into it (clear it when the job has ended)")
            for c in self.in_use
        ]
        said += [(True, f"could not remove {c.label} ({c.path}): {why}") for c, why in self.failed]
        if said:
            said.append((False, f"{disk_size(self.freed_bytes)} freed"))
        return said


def unknown_labels(labels) -> list[str]:
    """The labels among `labels` that name no cache folder."""
    known = {name for c in config_caches() for name in c.names}
    return [label for label in labels if label not in known and folder_name(label) not in known]


def clear_config_caches(labels=None) -> Cleared:
    """Remove the configs' cache folders (all, or those of `labels`), each while holding its
    exclusive lock, so that no job starts compiling into it meanwhile; one a job holds is kept."""
    removed, in_use, failed = [], [], []
    for cache in config_caches():
        if labels is not None and not set(cache.names) & ({*labels} | {folder_name(x) for x in labels}):
            continue
        try:
            fd = try_exclusive(cache.path)
        except OSError as exc:
            failed.append((cache, f"its lock file cannot be opened: {exc.strerror or exc}"))
            continue
        if fd is None:
            in_use.append(cache)
            continue
        # renamed first, under the lock, so a job starting now makes a fresh folder, never half of
        # this one; the lock is let go once renamed (a job waiting for it finds its lock file gone,
        # and holds a fresh folder at once, not after the whole removal)
        doomed = f"{cache.path}.removing-{os.getpid()}-{time.monotonic_ns()}"
        try:
            os.rename(cache.path, doomed)
        except OSError as exc:
            failed.append((cache, exc.strerror or str(exc)))
            continue
        finally:
            os.close(fd)
        try:
            shutil.rmtree(doomed)
            removed.append(cache)
        except OSError as exc:
            failed.append((cache, f"{exc.strerror or exc} (what is left is at {doomed})"))
    return Cleared(tuple(removed), tuple(in_use), tuple(failed))
