"""A model file chosen in the app, checked before it becomes the next run's: read, never run,
and without torch (the app's process never imports it). A .py file that does not parse, or lacks
get_model() / get_example_inputs() at its top level (core.models.python_files.check_file, as
`profile` checks it), and a .pt2 that is not a zip with the layout torch.export.save writes (one
folder holding archive_format saying pt2) were accepted and failed only once a job had started.

This is the layout only: what a .pt2 archive may make torch.export.load run is checked by
core.models.export_archives.check_export_archive in the job, which needs torch. No Qt; any thread.
"""

from __future__ import annotations

import os
import zipfile

from core.models.base import ModelLoadError

ARCHIVE_HINT = "torch.export.save writes a zip archive holding one folder with archive_format, models/ and data/"


def check_chosen_model_file(path: str) -> str:
    """Why `path` (a model file just chosen) cannot be profiled, as the job would say it ("" when
    nothing read here says so: the job checks the rest)."""
    try:
        if path.endswith(".py"):
            from core.models.python_files import check_file

            check_file(path)
        elif path.endswith(".pt2"):
            check_archive_layout(path)
    except ModelLoadError as exc:
        return str(exc)
    return ""


def check_archive_layout(path: str) -> None:
    """ModelLoadError when the .pt2 at `path` is not a zip archive laid out as torch.export.save
    lays it out (entry names only, and the archive_format entry of a few bytes, are read)."""
    if not os.path.isfile(path):
        return  # the caller says it is missing
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(f"not a torch.export archive ({exc}); {ARCHIVE_HINT}.", file=path) from None
    with archive:
        names = archive.namelist()
        root = names[0].split("/", 1)[0] if names and "/" in names[0] else ""
        if not root or any(not n.startswith(root + "/") for n in names):
            raise ModelLoadError(f"not a torch.export archive (not one folder); {ARCHIVE_HINT}.", file=path)
        # torch's reader finds an entry without regard to case
        entry = next((n for n in names if n.lower() == f"{root}/archive_format".lower()), None)
        info = archive.getinfo(entry) if entry is not None else None
        if info is None or info.file_size > 16 or archive.read(info) != b"pt2":
            raise ModelLoadError(
                f"not a torch.export archive (no archive_format saying pt2); {ARCHIVE_HINT}.", file=path
            )
