"""What the compiler made, per graph, from torch's structured trace.

Source: the structured trace torch writes for `TORCH_TRACE` (what tlparse reads). A job
attaches two handlers to torch's trace logger ("torch.__trace"): torch's own
`LazyTraceHandler`, so `torch_trace/<config>/` holds exactly the file TORCH_TRACE would write
(tlparse opens it), and `GraphCapture`, which reads the same records as objects (metadata
and payload, no text parsing of logs) while torch compiles:

- `dynamo_output_graph`: the FX graph's readable code (input shapes and dtypes in its
  signature);
- `dynamo_cpp_guards_str`: the guards torch checks before reusing the graph;
- `inductor_output_code`: the module inductor generated (C++ kernels on the CPU, Triton
  on the GPU) and, from its `async_compile` lines, the kernel names;
- `compilation_metrics`: the end of one frame's compile: op and guard counts, compile
  time, the recompile reason (the guard failure that made a graph like 0/1).

At each compile's end, the graph's files go to `graphs/<config>/` and a small
`CompiledGraph` event is sent, so a job that later fails or is cancelled keeps them.
"""

from __future__ import annotations

import logging
import os
import re
from typing import Callable

from core.capture.provenance import NODE_MAPPINGS_ARTIFACT, kernel_lines, read_node_mappings
from core.vocab.artifacts import JobArtifacts, write_text
from core.vocab.records import CompiledGraph, Specialization

_RESERVED = {
    "rank",
    "compiled_autograd_id",
    "frame_id",
    "frame_compile_id",
    "attempt",
    "severity",
    "timestamp",
    "pathname",
    "thread",
    "subgraph_name",
    "has_payload",
    "stack",
}
_KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
_ARG = re.compile(r'(\w+): "([^"]*)"')


def kernel_names(output_code: str) -> tuple[str, ...]:
    """The kernels an inductor output module defines (`name = async_compile.cpp_pybinding(`,
    `.triton(`), in order."""
    return tuple(dict.fromkeys(m.group(1) for m in _KERNEL_DEF.finditer(output_code)))


def cpu_kernel_names(output_code: str) -> tuple[str, ...]:
    """The C++ kernels of an output module: the ones the profiler cannot see by itself."""
    return tuple(dict.fromkeys(m.group(1) for m in _KERNEL_DEF.finditer(output_code) if m.group(2).startswith("cpp")))


def graph_inputs(code: str) -> tuple[str, ...]:
    """The inputs of a readable FX graph, from its forward signature, as "name: f32[8, 64]"
    (strides dropped, device kept when not the CPU)."""
    start = code.find("def forward(")
    if start < 0:
        return ()
    end = code.find("):", start)
    signature = code[start : end if end > 0 else None]
    out = []
    for name, annotation in _ARG.findall(signature):
        m = re.match(r"^(\w+\[[^\]]*\])(?:\[[^\]]*\])?(\w*)$", annotation)
        if m:
            device = m.group(2)
            annotation = m.group(1) + (f" {device}" if device and device != "cpu" else "")
        out.append(f"{name}: {annotation}")
    return tuple(out)


GRAPH_TEXTS = ("code.py", "guards.txt", "output_code.py")


def read_graph_texts(root: str, label: str, graph: str) -> dict[str, str]:
    """A graph's files as a Graphs view shows them: "code.py" (the FX graph), "guards.txt"
    and "output_code.py" (inductor) → text, "" where there is none. Paths come from the
    config label and graph id (core.vocab.artifacts), never from a report's fields."""
    from core.vocab.artifacts import read_text

    artifacts = JobArtifacts.for_label(label)
    return {kind: read_text(root, artifacts.graph_file(graph, kind)) for kind in GRAPH_TEXTS}


def _compile_id(metadata: dict) -> str:
    if metadata.get("frame_id") is None:
        return ""
    return f"{metadata['frame_id']}/{metadata.get('frame_compile_id', 0)}"


class GraphCapture(logging.Handler):
    """Reads torch's structured-trace records of one job; see the module docstring.
    `on_graph(graph)` is called once per compiled graph, when its compile ends."""

    def __init__(self, root: str | None, artifacts: JobArtifacts, on_graph: Callable[[CompiledGraph], None]):
        super().__init__(logging.DEBUG)
        self.root, self.artifacts, self._on_graph = root, artifacts, on_graph
        self._pending: dict[str, dict] = {}
        self.graphs: list[CompiledGraph] = []
        # compile id → kernel → the source lines of the FX nodes it computes (inductor's
        # provenance artifact; core.measure.line_profile)
        self.provenance: dict[str, dict[str, list[tuple[str, int]]]] = {}
        # compile id → its stages (core.capture.compile_watch), when a watch reads along
        self.stages_of: Callable[[str], tuple] = lambda cid: ()
        # a size torch made symbolic and then fixed (symbolic_shape_specialization), when asked
        self.on_specialization: Callable[[Specialization], None] = lambda s: None
        self._strings: dict[int, str] = {}  # torch interns file names in `str` records

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self._read(getattr(record, "metadata", None) or {}, getattr(record, "payload", None))
        except Exception:  # a format change in torch must not kill the job
            logging.getLogger(__name__).debug("structured trace record not understood", exc_info=True)

    def _read(self, metadata: dict, payload: str | None) -> None:
        kind = next((k for k in metadata if k not in _RESERVED), "")
        if kind == "str" and isinstance(metadata[kind], (list, tuple)) and len(metadata[kind]) == 2:
            self._strings[int(metadata[kind][1])] = str(metadata[kind][0])
            return
        if kind == "symbolic_shape_specialization" and isinstance(metadata[kind], dict):
            self.on_specialization(self._specialization(metadata[kind], _compile_id(metadata)))
            return
        cid = _compile_id(metadata)
        if not kind or not cid:
            return
        state = self._pending.setdefault(cid, {})
        if kind == "dynamo_output_graph":
            state["code"] = payload or ""
        elif kind == "dynamo_cpp_guards_str":
            state["guards"] = payload or ""
        elif kind == "inductor_output_code":
            state.setdefault("output_code", []).append(payload or "")
        elif kind == "artifact" and isinstance(metadata[kind], dict):
            if metadata[kind].get("name") == NODE_MAPPINGS_ARTIFACT:
                kernels, post_to_pre = read_node_mappings(payload)
                mapped = state.setdefault("provenance", ({}, {}))
                mapped[0].update(kernels)
                mapped[1].update(post_to_pre)
        elif kind == "compilation_metrics":
            self._finish(cid, metadata[kind] if isinstance(metadata[kind], dict) else {})

    def _specialization(self, d: dict, cid: str) -> Specialization:
        """torch's record as a Specialization: the user line is the innermost frame of the user's
        code on its user stack (core.vocab.source_paths.line_site)."""
        from core.vocab.source_paths import line_site

        frames = []
        for f in d.get("user_stack") or []:
            if isinstance(f, dict):
                name = f.get("filename", "")
                file = self._strings.get(name, str(name)) if isinstance(name, int) else str(name)
                frames.append((file, int(f.get("line") or 0)))
        file, line = line_site(frames) or ("", 0)
        return Specialization(
            tuple(str(x) for x in d.get("sources") or ()),
            str(d.get("value", "")),
            str(d.get("reason", "")),
            file,
            line,
            cid,
        )

    def _finish(self, cid: str, metrics: dict) -> None:
        state = self._pending.pop(cid, {})
        code = state.get("code")
        if code is None:  # the frame made no graph (skipped, failed or empty)
            return
        if "provenance" in state:
            self.provenance[cid] = kernel_lines(*state["provenance"], code)
        output = state.get("output_code", [])
        output_code = "\n\n".join(output)
        files = {"code.py": code, "guards.txt": state.get("guards", ""), "output_code.py": output_code}
        paths = {}
        for kind, text in files.items():
            if not text:
                paths[kind] = ""
                continue
            rel = self.artifacts.graph_file(cid, kind)
            if self.root:
                try:
                    write_text(self.root, rel, text if text.endswith("\n") else text + "\n")
                except OSError:
                    rel = ""
            paths[kind] = rel
        graph = CompiledGraph(
            graph=cid,
            function=str(metrics.get("co_name") or ""),
            file=str(metrics.get("co_filename") or ""),
            line=int(metrics.get("co_firstlineno") or 0),
            ops=int(metrics.get("graph_op_count") or 0),
            guards=int(metrics.get("guard_count") or 0),
            compile_s=float(metrics.get("entire_frame_compile_time_s") or 0.0),
            inputs=graph_inputs(code),
            kernels=kernel_names(output_code),
            recompile_reason=str(metrics.get("recompile_reason") or ""),
            code_file=paths["code.py"],
            guards_file=paths["guards.txt"],
            output_code_file=paths["output_code.py"],
            stages=self.stages_of(cid),
        )
        self.graphs.append(graph)
        self._on_graph(graph)


class TraceRecording:
    """The structured trace of one job: torch's trace file under `torch_trace/<config>/`
    (when a folder is given) and a GraphCapture, attached to torch's trace logger until
    `close()`. torch only builds trace records while that logger has handlers, so nothing
    is spent on them outside a job that asks."""

    def __init__(self, root: str | None, artifacts: JobArtifacts, on_graph: Callable[[CompiledGraph], None]):
        from torch._logging._internal import trace_log

        self._log = trace_log
        self.capture = GraphCapture(root, artifacts, on_graph)
        self._handlers: list[logging.Handler] = [self.capture]
        if root:
            try:
                from torch._logging._internal import LazyTraceHandler, TorchLogsFormatter

                from core.vocab.artifacts import make_dirs

                folder = make_dirs(root, artifacts.torch_trace_dir + "/x")[:-2]
                file_handler = LazyTraceHandler(folder)
                file_handler.setFormatter(TorchLogsFormatter(trace=True))
                self._handlers.insert(0, file_handler)
            except (ImportError, OSError):
                pass  # another torch: graphs are still captured, only the file is missing
        trace_log.setLevel(logging.DEBUG)
        for h in self._handlers:
            trace_log.addHandler(h)

    @property
    def graphs(self) -> list[CompiledGraph]:
        return self.capture.graphs

    def add_handler(self, handler: logging.Handler) -> None:
        """Another reader of torch's trace records for this job (removed at `close()`)."""
        self._handlers.append(handler)
        self._log.addHandler(handler)

    def close(self) -> None:
        for h in self._handlers:
            self._log.removeHandler(h)
            path = getattr(h, "_stream_path", None)
            try:
                h.close()
            except Exception:
                pass
            if path:  # torch creates it 0600 (mkstemp); report files follow the umask
                mask = os.umask(0)
                os.umask(mask)
                try:
                    os.chmod(path, 0o666 & ~mask)
                except OSError:
                    pass
        self._handlers = []


class JobRecording:
    """Everything a job records about its compile besides the figures: torch's compile log
    at the job's `compile_log` level (compile_log/<config>.log) and the structured trace
    (torch_trace/<config>/, graphs/<config>/). Files go under the job's `artifacts_dir`;
    without one, graphs are still reported (no files) and torch logs to stderr only."""

    def __init__(
        self,
        spec,
        on_graph: Callable[[CompiledGraph], None],
        on_stage: Callable[[str], None] | None = None,
        on_specialization: Callable[[Specialization], None] | None = None,
    ):
        from core.capture.compile_log import CompileLog
        from core.vocab.artifacts import make_dirs

        root = spec.artifacts_dir
        self.artifacts = JobArtifacts.for_label(spec.config.label)
        try:
            log_path = make_dirs(root, self.artifacts.compile_log) if root else None
        except OSError:
            log_path = None  # compile_log/ not ours to write into (a symbolic link): stderr only
        self.log = CompileLog(spec.compile_log, log_path)
        self.trace = TraceRecording(root, self.artifacts, on_graph)
        if on_specialization is not None:
            self.trace.capture.on_specialization = on_specialization
        self.watch = None  # what the compiler does now (core.capture.compile_watch), when asked
        if on_stage is not None:
            from core.capture.compile_watch import CompileWatch

            self.watch = CompileWatch(on_stage, lambda: (len(self.trace.graphs), self.breaks))
            self.trace.add_handler(self.watch)
            self.trace.capture.stages_of = self.watch.stages_of
        self.breaks = 0  # graph breaks found so far (the job counts them)

    def close(self) -> None:
        self.trace.close()
        self.log.close()
