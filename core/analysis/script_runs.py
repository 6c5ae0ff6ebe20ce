"""A script run's events (core.vocab.script_job), folded into a `ScriptRun`: how the run ended,
and each compiled entry point (`EntryCalls`) with its calls, compiles, graph breaks and
recompiles. `LiveFold` folds them as they come (the app's live view), `fold_run` a finished run's;
`entry_to_dict` and `entry_from_dict` are an entry point as a report holds it.
Events of unknown kinds or shapes are counted, never raised. No torch, no Qt.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass, field

import numpy as np

from core.analysis.graph_break_rows import fold_graph_break
from core.vocab.records import GraphBreak, Recompile
from core.vocab.script_job import FLAG_COMPILED, FLAG_NEW_SHAPE, ScriptEvents


@dataclass
class EntryCalls:
    """One compiled entry point in one run."""

    index: int
    name: str
    file: str
    line: int
    kind: str = "function"
    settings: dict = field(default_factory=dict)
    ms: list[float] = field(default_factory=list)
    flags: list[int] = field(default_factory=list)
    # each call's start (ms since the run's profiler was installed); empty in a report from
    # before it was recorded, when no iteration is measured
    at: list[float] = field(default_factory=list)
    calls: int = 0  # every call, those past core.vocab.script_job.CALLS_KEPT included
    total_ms: float = 0.0
    frames: list[dict] = field(default_factory=list)  # compiled frames, each with the call it came in
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompiles: list[Recompile] = field(default_factory=list)
    _by_compile: dict = field(default_factory=dict, repr=False)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.name, self.file, self.line)

    @property
    def where(self) -> str:
        import os

        return f"{os.path.basename(self.file)}:{self.line}" if self.file else "?"

    def steady(self) -> np.ndarray:
        ms = np.asarray(self.ms, dtype=float)
        flags = np.asarray(self.flags, dtype=int)
        if ms.size == 0:
            return ms
        return ms[(flags & (FLAG_NEW_SHAPE | FLAG_COMPILED)) == 0]

    def _gaps(self) -> tuple[np.ndarray, np.ndarray]:
        """(each call's start to the next call's, whether that call was a first call: it
        compiled or met new input shapes), for the calls but the last, the gaps that cannot
        be times (not finite, not positive: a damaged report) left out; empty where the calls'
        starts were not recorded."""
        if len(self.at) != len(self.ms) or len(self.at) < 2:
            return np.asarray([], dtype=float), np.asarray([], dtype=bool)
        gaps = np.diff(np.asarray(self.at, dtype=float))
        first = (np.asarray(self.flags[:-1], dtype=int) & (FLAG_NEW_SHAPE | FLAG_COMPILED)) != 0
        ok = np.isfinite(gaps) & (gaps > 0)
        return gaps[ok], first[ok]

    def steady_iterations(self) -> np.ndarray:
        """The loop's iterations around the steady calls: from a steady call's start to the next
        call's (whatever the script does between them, its backward pass and optimizer step
        included); none where the calls' starts were not recorded."""
        gaps, first = self._gaps()
        return gaps[~first]

    def first_iterations(self) -> np.ndarray:
        """The iterations that began with a first call (it compiled or met new input shapes):
        from its start to the next call's (what compiled between them included)."""
        gaps, first = self._gaps()
        return gaps[first]

    def first_iteration_spans(self) -> list[tuple[float, float]]:
        """(start, end) of each first iteration, in the run's clock (ms)."""
        if len(self.at) != len(self.ms) or len(self.at) < 2:
            return []
        spans = []
        for i, flags in enumerate(self.flags[:-1]):
            if flags & (FLAG_NEW_SHAPE | FLAG_COMPILED):
                start, end = float(self.at[i]), float(self.at[i + 1])
                if math.isfinite(start) and math.isfinite(end) and end > start:
                    spans.append((start, end))
        return spans

    def first_call_ms_within(self, start: float, end: float) -> float:
        """The time this entry point's first calls (those that compiled or met new shapes) that
        began within [start, end) took: another function's compile inside an iteration."""
        if len(self.at) != len(self.ms):
            return 0.0
        total = 0.0
        for at, ms, flags in zip(self.at, self.ms, self.flags):
            if flags & (FLAG_NEW_SHAPE | FLAG_COMPILED) and start <= at < end and math.isfinite(ms):
                total += ms
        return total

    def first_calls(self) -> np.ndarray:
        ms = np.asarray(self.ms, dtype=float)
        flags = np.asarray(self.flags, dtype=int)
        if ms.size == 0:
            return ms
        return ms[(flags & (FLAG_NEW_SHAPE | FLAG_COMPILED)) != 0]

    @property
    def compile_s(self) -> float:
        """torch's figure: the frames compiled during this entry point's calls."""
        return sum(float(f.get("compile_s") or 0.0) for f in self.frames)

    @property
    def shapes(self) -> int:
        return int(sum(1 for f in self.flags if f & FLAG_NEW_SHAPE))


@dataclass(frozen=True)
class CompilingNow:
    """What torch compiles now in a script run: the compiled function whose call compiles (""
    when the frame belongs to none of them), the frame, its compile id and the stage."""

    function: str
    frame: str
    compile_id: str
    stage: str
    since: float = field(default_factory=time.monotonic)

    def text(self) -> str:
        where = f"{self.frame} [{self.compile_id}]" if self.frame else f"[{self.compile_id}]"
        owner = f" (a call of {self.function})" if self.function and not self.frame.startswith(self.function) else ""
        return f"compiling {where}{owner}: {self.stage}"


@dataclass
class ScriptRun:
    """One run of the script folded: how it ended and its entry points."""

    stance: str
    entries: dict[tuple, EntryCalls] = field(default_factory=dict)
    exit_code: int | None = None
    error: str = ""
    ended: str = ""  # "", "timeout" or "cancelled" (the runner ended it)
    wall_s: float | None = None  # the script's own time (from its first line to its end)
    process_s: float = 0.0  # the process's, interpreter and imports included
    peak_rss_mb: float | None = None
    cuda_peak_mb: float | None = None
    notes: list[str] = field(default_factory=list)
    others_cores: list[float] = field(default_factory=list)
    dropped: int = 0
    unreadable: int = 0
    stdout_tail: str = ""
    stderr_tail: str = ""
    torch_version: str = ""
    pid: int = 0  # the script's process (its start event)
    finished: bool = False  # the child wrote its end event
    compiling: CompilingNow | None = None  # what the compiler does now (None: no compile going on)

    @property
    def compile_s(self) -> float:
        return sum(e.compile_s for e in self.entries.values())

    @property
    def others_median(self) -> float | None:
        return float(np.median(self.others_cores)) if self.others_cores else None

    def how_it_ended(self) -> str:
        """One sentence: the script's ending, as a user reads it."""
        if self.ended == "timeout":
            return "stopped at the timeout (--timeout); what it had done until then is kept"
        if self.ended == "cancelled":
            return "stopped (Ctrl+C or Cancel); what it had done until then is kept"
        if not self.finished:
            return f"the process ended without a word (exit code {self.exit_code}): it crashed or was killed; calls of its last half second may be missing"
        if self.exit_code == 0:
            return "ran to its end (exit code 0)"
        if self.error:
            return f"raised an error (exit code {self.exit_code}): {self.error.strip().splitlines()[-1]}"
        return f"exited with code {self.exit_code}"


class LiveFold:
    """A run folded as its events come: the app's live view, and fold_run."""

    def __init__(self, stance: str):
        self.run = ScriptRun(stance=stance)
        self._by_index: dict[int, EntryCalls] = {}

    def add(self, event: dict) -> None:
        """Fold one event; one of an unknown kind or shape is counted in `unreadable`."""
        try:
            _fold_event(self.run, self._by_index, event)
        except (KeyError, TypeError, ValueError, AttributeError):
            self.run.unreadable += 1


def fold_run(raw: ScriptEvents, stance: str) -> ScriptRun:
    """A run's events, folded. Events of unknown kinds or shapes are skipped (a report from
    another version, or a damaged line), counted in `unreadable`."""
    fold = LiveFold(stance)
    run = fold.run
    run.ended, run.exit_code, run.process_s = raw.ended, raw.exit_code, raw.wall_s
    run.others_cores = list(raw.others_cores)
    run.unreadable = raw.unreadable
    run.stdout_tail, run.stderr_tail = raw.stdout_tail, raw.stderr_tail
    for e in raw.events:
        fold.add(e)
    return run


def _fold_event(run: ScriptRun, by_index: dict[int, EntryCalls], e: dict) -> None:
    kind = e["t"]
    if kind == "start":
        run.torch_version = str(e.get("torch", ""))
        run.pid = int(e.get("pid") or 0)
    elif kind == "entry":
        entry = EntryCalls(
            int(e["id"]), str(e["name"]), str(e.get("file", "")), int(e.get("line", 0)), str(e.get("kind", ""))
        )
        entry.settings = dict(e.get("settings") or {})
        by_index[entry.index] = entry
        run.entries.setdefault(entry.key, entry)
    elif kind == "calls":
        entry = by_index[int(e["id"])]
        ms = [float(x) for x in e["ms"]]
        flags = [int(x) for x in e["flags"]]
        if len(ms) != len(flags):
            raise ValueError("calls and flags differ in length")
        at = [float(x) for x in e.get("at") or ()]
        if at and len(at) != len(ms):
            raise ValueError("calls and their starts differ in length")
        if at and len(entry.at) == len(entry.ms):  # every batch so far had its starts
            entry.at += at
        else:  # a batch without them (another version, a damaged line): none are used
            entry.at = []
        entry.ms += ms
        entry.flags += flags
    elif kind == "compile":
        entry = by_index[int(e["id"])]
        for frame in e["frames"]:
            entry.frames.append({**dict(frame), "call": int(e["call"])})
        run.compiling = None  # the call that compiled has returned
    elif kind == "stage":
        entry = by_index.get(int(e["id"]))
        stage = str(e.get("stage") or "")
        run.compiling = (
            CompilingNow(entry.name if entry else "", str(e.get("frame") or ""), str(e.get("compile_id") or ""), stage)
            if stage
            else None
        )
    elif kind == "break":
        entry = by_index.get(int(e["id"]))
        gb = GraphBreak.from_dict(e["gb"])
        if entry is not None:
            fold_graph_break(entry.graph_breaks, entry._by_compile, gb)
    elif kind == "recompile":
        entry = by_index.get(int(e["id"]))
        d = dict(e["rc"])
        rc = Recompile(
            str(d["function"]), str(d["location"]), tuple(d.get("reasons") or ()), str(d.get("compile_id", ""))
        )
        if entry is not None:
            entry.recompiles.append(rc)
    elif kind == "note":
        run.notes.append(str(e["text"]))
    elif kind == "end":
        run.finished = True
        run.compiling = None
        run.exit_code = int(e["exit"]) if run.ended == "" else run.exit_code
        run.error = str(e.get("error") or "")
        run.wall_s = float(e["wall_s"])
        run.peak_rss_mb = e.get("peak_rss_mb")
        run.cuda_peak_mb = e.get("cuda_peak_mb")
        run.dropped = int(e.get("dropped") or 0)
        for index, (calls, total) in (e.get("totals") or {}).items():
            entry = by_index.get(int(index))
            if entry is not None:
                entry.calls, entry.total_ms = int(calls), float(total)
    else:
        raise ValueError(f"unknown event {kind!r}")


def entry_to_dict(e: EntryCalls) -> dict:
    d = dataclasses.asdict(e)
    d.pop("_by_compile", None)
    return d


def entry_from_dict(d: dict) -> EntryCalls:
    """An entry point as a report holds it, every field checked for its type (a report can come
    from anyone: a wrong one raises TypeError or ValueError here, never later in a sentence)."""
    ms = [float(x) for x in d.get("ms") or ()]
    flags = [int(x) for x in d.get("flags") or ()]
    if len(ms) != len(flags):
        raise ValueError("an entry point's calls and flags differ in length")
    at = [float(x) for x in d.get("at") or ()]
    if len(at) != len(ms):  # starts missing or damaged: the calls stand, no iteration is timed
        at = []
    frames = [dict(f) for f in d.get("frames") or ()]
    for f in frames:
        f["call"] = int(f.get("call", 0))
        f["compile_s"] = float(f.get("compile_s") or 0.0)
    settings = d.get("settings") or {}
    if not isinstance(settings, dict):
        raise TypeError("an entry point's settings are not a table")
    return EntryCalls(
        index=int(d.get("index", 0)),
        name=str(d["name"]),
        file=str(d.get("file", "")),
        line=int(d.get("line", 0)),
        kind=str(d.get("kind", "")),
        settings={
            str(k): v if isinstance(v, (bool, int, float, str, type(None))) else str(v) for k, v in settings.items()
        },
        ms=ms,
        flags=flags,
        at=at,
        calls=int(d.get("calls", len(ms))),
        total_ms=float(d.get("total_ms", 0.0)),
        frames=frames,
        graph_breaks=[GraphBreak.from_dict(g) for g in d.get("graph_breaks") or ()],
        recompiles=[
            Recompile(
                str(r["function"]),
                str(r["location"]),
                tuple(str(x) for x in (r.get("reasons") or ())),
                str(r.get("compile_id", "")),
            )
            for r in d.get("recompiles") or ()
        ],
    )
