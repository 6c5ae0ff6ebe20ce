"""Reading a job's files back from an artifacts folder (a report folder, or the app's session
folder), for the app's Graphs, compile-log and time-breakdown views.

A report is untrusted: the paths it records (`CompiledGraph.code_file`, `OpProfile.eager_trace`)
are never opened as they are. Every path is rebuilt from core.vocab.artifacts' one rule (the config
label and the graph id, both made safe as file names) and then checked: it must lie inside
the folder's own artifact folders once symbolic links are resolved, and be a plain file. A
file that is missing, refused or unreadable reads as "". Qt-free; any thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from core.capture.compile_log import LogEntry, read_log
from core.vocab.artifacts import JobArtifacts, read_text, resolve


@dataclass(frozen=True)
class GraphTexts:
    """What the compiler made for one graph, as text ("" where there is none)."""

    code: str = ""
    guards: str = ""
    output_code: str = ""


def graph_texts(root: str, label: str, graph: str) -> GraphTexts:
    """The FX code, guards and inductor output code of graph `graph` ("0/0") of the config
    `label`, from `root`'s graphs/ folder."""
    a = JobArtifacts.for_label(label)
    return GraphTexts(
        *(read_text(root, a.graph_file(graph, kind)) for kind in ("code.py", "guards.txt", "output_code.py"))
    )


def compile_log_entries(root: str, label: str) -> list[LogEntry]:
    """The entries of the config's compile_log/<config>.log ([] when there is none)."""
    path = resolve(root, JobArtifacts.for_label(label).compile_log)
    return read_log(path) if path and os.path.isfile(path) else []


def compile_log_path(root: str, label: str) -> str:
    """The config's compile log file under `root`, or "" when there is none."""
    return resolve(root, JobArtifacts.for_label(label).compile_log) or ""


def trace_files(root: str, label: str) -> dict[str, str]:
    """side → absolute path of the config's Chrome trace ("eager", "compiled"), those that exist."""
    a = JobArtifacts.for_label(label)
    found = {side: resolve(root, a.trace(side)) for side in ("eager", "compiled")}
    return {side: path for side, path in found.items() if path and os.path.isfile(path)}


def traces_folder(root: str) -> str:
    """`root`'s traces/ folder when it exists (what the app opens in the file manager), else ""."""
    if not root:
        return ""
    path = os.path.realpath(os.path.join(root, "traces"))
    return path if os.path.isdir(path) and os.path.dirname(path) == os.path.realpath(root) else ""
