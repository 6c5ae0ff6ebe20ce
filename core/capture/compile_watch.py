"""The compiler at work, live: which frame torch compiles now, in which stage, for how long.

torch times its compile with `dynamo_timed`, and each timed region is a chromium event in the
structured trace: a begin ("B") and an end ("E") record, as they happen (`dynamo`,
`bytecode_tracing`, `create_aot_dispatcher_function`, `GraphLowering.run`, `compile_file`, ...).
`dynamo_start` names the frame (its stack's last entry; file names come interned in `str`
records). CompileWatch, a handler on torch's trace logger in the job's child, keeps the open
regions, maps the innermost one it knows to a stage (STAGE_OF), adds up each stage's time per
frame compile, and calls `on_change(text)` when the stage changes. No timer thread: during one
long region (a C++ compile) nothing is logged; the parent shows the time since the last change
(`stalled_text`) and says when no stage has changed for STALL_S.
"""

from __future__ import annotations

import json
import logging
import os
import time
from typing import Callable

# torch's timed regions → the stage a user reads; the innermost open one that is listed wins
STAGE_OF = {
    "bytecode_tracing": "dynamo tracing",
    "build_guards": "building guards",
    "backend_compile": "backend compile",
    "create_aot_dispatcher_function": "AOT autograd",
    "aot_trace_joint_graph": "AOT autograd",
    "min_cut_rematerialization_partition": "AOT autograd partitioning",
    "inductor_compile": "inductor",
    "_recursive_post_grad_passes": "inductor post-grad passes",
    "GraphLowering.run": "inductor lowering",
    "GraphLowering.codegen": "code generation",
    "compile_file": "C++/Triton kernel compile",
    "async_compile.wait": "C++/Triton kernel compile",
    "PyCodeCache.load_by_key_path": "loading the compiled code",
}
AUTOTUNE_WORD = "autotun"  # any region whose name holds it: "autotuning"
STALL_S = 60.0  # no stage changed for this long: the front ends say so, naming stage and frame


def stage_of(name: str) -> str:
    if AUTOTUNE_WORD in name.lower():
        return "autotuning"
    return STAGE_OF.get(name, "")


class CompileWatch(logging.Handler):
    """See the module docstring. `counts()` gives (graphs, breaks) found so far."""

    def __init__(self, on_change: Callable[[str], None], counts: Callable[[], tuple[int, int]] = lambda: (0, 0)):
        super().__init__(logging.DEBUG)
        self._on_change, self._counts = on_change, counts
        self._strings: dict[int, str] = {}
        self._open: list[tuple[str, float]] = []  # (region name, start in seconds)
        self._frame: dict = {}  # dynamo_start's last stack entry: name, line, filename (an interned index)
        self.compile_id = ""
        self.stage = ""
        self._stage_since = 0.0
        self.totals: dict[str, float] = {}  # this frame compile's seconds per stage, so far

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._read(getattr(record, "metadata", None) or {}, getattr(record, "payload", None))
        except Exception:  # a format change in torch must not kill the job
            logging.getLogger(__name__).debug("chromium event not understood", exc_info=True)

    def _read(self, metadata: dict, payload) -> None:
        if "str" in metadata and isinstance(metadata["str"], (list, tuple)) and len(metadata["str"]) == 2:
            text, index = metadata["str"]
            self._strings[int(index)] = str(text)
        elif "dynamo_start" in metadata:
            stack = (metadata["dynamo_start"] or {}).get("stack") or []
            if stack:
                self._frame = stack[-1]  # its file name may be interned after this record: read at text()
            self.compile_id = _compile_id(metadata)
            self.totals = {}
        elif "chromium_event" in metadata:
            event = json.loads(payload) if isinstance(payload, str) else (payload or {})
            self._event(str(event.get("name", "")), str(event.get("ph", "")), metadata)

    def _event(self, name: str, phase: str, metadata: dict) -> None:
        now = time.monotonic()
        if phase == "B":
            self._open.append((name, now))
            if name == "dynamo" and _compile_id(metadata):
                self.compile_id = _compile_id(metadata)
                self.totals = {}
        elif phase == "E":
            for i in range(len(self._open) - 1, -1, -1):
                if self._open[i][0] == name:
                    del self._open[i:]
                    break
        else:
            return
        stage = next((stage_of(n) for n, _ in reversed(self._open) if stage_of(n)), "")
        if stage != self.stage:
            if self.stage:
                self.totals[self.stage] = self.totals.get(self.stage, 0.0) + now - self._stage_since
            self.stage, self._stage_since = stage, now
            if stage:
                self._on_change(self.text())

    def stages_of(self, compile_id: str) -> tuple:
        """The finished stages of that frame compile, exclusive, as StageTimes (() for another)."""
        from core.vocab.records import StageTime

        if compile_id != self.compile_id:
            return ()
        return tuple(StageTime(s, round(t, 6)) for s, t in self.totals.items())

    @property
    def frame(self) -> str:
        """The frame being compiled, "forward (m.py:10)"; "" before the first."""
        top = self._frame
        if not top:
            return ""
        file = top.get("filename", "")
        file = self._strings.get(file, str(file)) if isinstance(file, int) else str(file)
        return f"{top.get('name', '?')} ({os.path.basename(file)}:{top.get('line', '?')})"

    def text(self) -> str:
        """What the compiler does now, in words (the job's progress detail)."""
        graphs, breaks = self._counts()
        where = f"{self.frame} [{self.compile_id}]" if self.frame else f"[{self.compile_id}]"
        done = ", ".join(f"{s} {t:.1f} s" for s, t in self.totals.items() if t >= 0.05)
        return (
            f"compiling {where}: {self.stage}" + (f" (so far: {done})" if done else "") + f"; {graphs} graph"
            f"{'s' if graphs != 1 else ''}, {breaks} graph break{'s' if breaks != 1 else ''} found so far"
        )


def _compile_id(metadata: dict) -> str:
    if metadata.get("frame_id") is None:
        return ""
    return f"{metadata['frame_id']}/{metadata.get('frame_compile_id', 0)}"


def stage_in(detail: str) -> str:
    """The stage a compile-phase detail (CompileWatch.text) names, "" for another detail: for
    a place too small for the whole sentence (a zoo's running cell)."""
    head = detail.split("; ", 1)[0]
    if not head.startswith("compiling ") or ": " not in head:
        return ""
    return head.split(" (so far", 1)[0].rsplit(": ", 1)[1]


def stalled_text(detail: str, seconds: float, log_path: str = "") -> str:
    """The warning when no compile stage changed for `seconds` (at least STALL_S)."""
    log = f"; torch's compile log: {log_path}" if log_path else ""
    return f"no compile stage has changed for {seconds:.0f} s, still {detail}{log}"
