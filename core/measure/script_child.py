"""A user's script, run in a child process with every torch.compile in it timed.

`python -m core.measure.script_child JOB.json` (started by core.run.script_process): reads the
ScriptJob, puts `torch.compile` behind a wrapper, and runs the script as Python would
(`runpy`, `__name__ == "__main__"`, its own sys.argv, its folder first on sys.path).

Every way a script compiles goes through `torch.compile`: the call, the decorator (with or
without arguments), `nn.Module.compile()` (which calls torch.compile on the module's
`_call_impl`), a method or a lambda. Each compiled object is one entry point, named by its
function (or module class) and the line of the script that compiled it; the same line
compiling again (a loop, a rebuilt model) is the same entry point. What torch.compile returns
is kept as torch made it (an OptimizedModule keeps `_orig_mod`, its parameters and its
state dict): only its call is timed, wall clock around the call, synchronised on a GPU.

Inside a call, torch's own records say what the compiler did (core.capture.live: graph
breaks and recompiles from its log records, compile times from its compilation metrics);
they are charged to the entry point whose call was running. A compiled function called from
inside another compiled function is traced into it by dynamo: it is not timed there.

In the eager baseline (ScriptJob.stance == "force_eager") the script runs under
`torch.compiler.set_stance("force_eager")`: the same wrappers, nothing compiled.

Events are JSON lines (core.vocab.script_job); calls go out in batches every FLUSH_S and
at the end, so a crash loses at most the last half second of calls.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import runpy
import sys
import threading
import time
import traceback

from core import CORE_DIR, PROJECT_ROOT
from core.vocab.script_job import (
    CALLS_KEPT,
    FLAG_COMPILED,
    FLAG_NEW_SHAPE,
    FLUSH_S,
    RECORDS_KEPT,
    STANCE_EAGER,
    ScriptJob,
)

SHAPES_KEPT = 1_000  # distinct input shapes remembered per entry point
ERROR_LINES = 12  # the last lines of the script's traceback kept in the `end` event
MAX_ARGS_SEEN = 16  # positional and keyword arguments read for an input's shapes


class EventWriter:
    """Appends one JSON line per event with one write (a crash leaves whole lines). Any thread."""

    def __init__(self, path: str):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        self.lock = threading.Lock()

    def write(self, event: dict) -> None:
        data = (json.dumps(event, default=str) + "\n").encode("utf-8", "replace")
        with self.lock:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view) :]


class Entry:
    """One compiled entry point and its calls not yet written."""

    def __init__(self, index: int, name: str, file: str, line: int, kind: str):
        self.index, self.name, self.file, self.line, self.kind = index, name, file, line, kind
        self.calls = 0
        self.total_ms = 0.0
        self.written = 0  # calls already sent in `calls` events
        self.ms: list[float] = []
        self.flags: list[int] = []
        self.at: list[float] = []  # each call's start, ms since the profiler was installed
        self.shapes: set = set()


def _shapes(args, kwargs, tensor_type) -> tuple:
    """The shapes, dtypes and devices of a call's tensor arguments (the first MAX_ARGS_SEEN),
    a cheap key for "a call with new input shapes"."""
    key = []
    for value in list(args[:MAX_ARGS_SEEN]) + list(kwargs.values())[:MAX_ARGS_SEEN]:
        if isinstance(value, tensor_type):
            key.append((value.shape, value.dtype, value.device))  # all hashable as they are
        elif isinstance(value, (list, tuple)) and value and isinstance(value[0], tensor_type):
            key.append(tuple(tuple(v.shape) for v in value[:MAX_ARGS_SEEN] if isinstance(v, tensor_type)))
    return tuple(key)


def _frame(m) -> dict:
    """A compilation metric, slimmed to what the report shows."""

    def us(attr):
        return round((getattr(m, attr, None) or 0) / 1e6, 6)

    return {
        "compile_id": str(getattr(m, "compile_id", "") or ""),
        "function": getattr(m, "co_name", "") or "",
        "file": getattr(m, "co_filename", "") or "",
        "line": getattr(m, "co_firstlineno", 0) or 0,
        "compile_s": round(getattr(m, "entire_frame_compile_time_s", None) or 0.0, 6),
        "dynamo_s": us("dynamo_cumulative_compile_time_us"),
        "aot_autograd_s": us("aot_autograd_cumulative_compile_time_us"),
        "inductor_s": us("inductor_cumulative_compile_time_us"),
        "codegen_s": us("inductor_code_gen_cumulative_compile_time_us"),
        "ops": getattr(m, "graph_op_count", None),
        "guards": getattr(m, "guard_count", None),
        "fail_type": getattr(m, "fail_type", None) or "",
        "fail_reason": str(getattr(m, "fail_reason", None) or "")[:500],
        "recompile_reason": str(getattr(m, "recompile_reason", None) or "")[:500],
        "cache_hits": getattr(m, "inductor_fx_local_cache_hit_count", 0) or 0,
        "cache_misses": getattr(m, "inductor_fx_local_cache_miss_count", 0) or 0,
    }


class ScriptProfiler:
    """torch.compile wrapped for one run of a script; its entry points and their calls."""

    def __init__(self, job: ScriptJob, writer: EventWriter):
        self.job, self.writer = job, writer
        self.entries: dict[tuple, Entry] = {}
        self.stack: list[Entry] = []
        self.lock = threading.Lock()
        self.records = 0
        self.dropped = 0
        self._done = threading.Event()
        self.t_start = time.perf_counter()  # the calls' `at` count from here
        self.torch = None
        self.capture = None
        self.watch = None  # the compiler at work (core.capture.compile_watch), once installed
        self.original_compile = None

    # ---- set-up
    def install(self) -> None:
        import torch

        from core.capture import live

        self.torch = torch
        for key, value in self.job.dynamo_config:
            setattr(torch._dynamo.config, key, value)
        self.capture = live.install(self._on_break, self._on_recompile)
        self._watch_compiles()
        if not os.environ.get("TORCH_LOGS"):
            self._quiet_torch_logs()
        self.original_compile = torch.compile
        torch.compile = self.compile
        if self.job.stance == STANCE_EAGER:
            torch.compiler.set_stance(STANCE_EAGER)
        self._one_rank()
        threading.Thread(target=self._flush_loop, name="script-events", daemon=True).start()

    def _watch_compiles(self) -> None:
        """The compiler at work, live (core.capture.compile_watch on torch's trace records): a
        `stage` event each time the frame being compiled enters another stage, so a front end
        says what a minutes-long first call is doing."""
        import logging

        from torch._logging._internal import trace_log

        from core.capture.compile_watch import CompileWatch

        self.watch = CompileWatch(self._on_stage)
        trace_log.setLevel(logging.DEBUG)
        trace_log.addHandler(self.watch)

    def _on_stage(self, _text: str) -> None:
        watch = self.watch
        self.writer.write(
            {
                "t": "stage",
                "id": self._current(),
                "frame": watch.frame,
                "compile_id": watch.compile_id,
                "stage": watch.stage,
            }
        )

    @staticmethod
    def _quiet_torch_logs() -> None:
        """torch's graph-break and recompile records reach our handlers only: the script's
        console stays its own (TORCH_LOGS set by the user keeps torch's printing)."""
        import logging

        for name in list(logging.root.manager.loggerDict):
            if name.endswith((".__graph_breaks", ".__recompiles")):
                logging.getLogger(name).propagate = False

    def _one_rank(self) -> None:
        """A process group the script starts is one rank on this machine (world size 1)."""
        try:
            import torch.distributed as dist
        except ImportError:
            return
        if not dist.is_available():
            return
        original = dist.init_process_group
        writer = self.writer

        @functools.wraps(original)
        def init_process_group(*args, **kwargs):
            asked = kwargs.get("world_size", os.environ.get("WORLD_SIZE", "1"))
            kwargs.update(world_size=1, rank=0)
            kwargs.setdefault("backend", "gloo")
            if not kwargs.get("init_method") and not kwargs.get("store"):
                kwargs["init_method"] = "tcp://127.0.0.1:0"
            writer.write(
                {
                    "t": "note",
                    "text": f"the script started a process group (world size {asked}): it ran as one rank, "
                    "rank 0 of world size 1, on this machine",
                }
            )
            return original(**kwargs)

        dist.init_process_group = init_process_group

    # ---- torch.compile, as the script calls it
    def _site(self) -> tuple[str, int]:
        """The script's line that called torch.compile: the first frame outside torch and us."""
        torch_dir = os.path.dirname(self.torch.__file__)
        frame = sys._getframe(2)
        while frame is not None:
            file = frame.f_code.co_filename
            if not file.startswith((torch_dir + os.sep, CORE_DIR + os.sep)) and file != __file__:
                return os.path.abspath(file) if not file.startswith("<") else file, frame.f_lineno
            frame = frame.f_back
        return "", 0

    def compile(self, model=None, *args, **kwargs):
        """torch.compile, with the run's overrides, timing what it returns."""
        site = self._site()
        overrides = dict(self.job.overrides)
        if overrides.get("mode") is not None:
            kwargs.pop("options", None)  # torch takes a mode or options: the override's mode wins
        kwargs.update(overrides)
        if model is None:  # @torch.compile(...): the decorator is applied next

            def decorate(fn):
                return self._compiled(fn, args, kwargs, site)

            return decorate
        return self._compiled(model, args, kwargs, site)

    def _compiled(self, fn, args, kwargs, site):
        compiled = self.original_compile(fn, *args, **kwargs)
        if kwargs.get("disable"):
            return compiled
        torch = self.torch
        name, kind = _describe(fn, torch)
        entry = self._entry(name, kind, site, kwargs)
        if isinstance(compiled, torch.nn.Module) and hasattr(compiled, "_orig_mod"):
            compiled.forward = self._timed(entry, compiled.forward)
            return compiled
        return functools.wraps(compiled)(self._timed(entry, compiled))

    def _entry(self, name: str, kind: str, site: tuple[str, int], kwargs: dict) -> Entry:
        key = (name, *site)
        with self.lock:
            entry = self.entries.get(key)
            if entry is not None:
                return entry
            entry = self.entries[key] = Entry(len(self.entries), name, site[0], site[1], kind)
        settings = {
            k: (v if isinstance(v, (bool, int, float, str, type(None))) else repr(v)) for k, v in kwargs.items()
        }
        if isinstance(kwargs.get("options"), dict):
            settings["options"] = {k: repr(v) for k, v in kwargs["options"].items()}
        self.writer.write(
            {
                "t": "entry",
                "id": entry.index,
                "name": name,
                "file": site[0],
                "line": site[1],
                "kind": kind,
                "settings": settings,
            }
        )
        return entry

    def _timed(self, entry: Entry, fn):
        is_compiling = self.torch.compiler.is_compiling
        call = self._call

        def timed(*args, **kwargs):
            if is_compiling():  # traced into an enclosing compiled function: not a call of its own
                return fn(*args, **kwargs)
            return call(entry, fn, args, kwargs)

        return timed

    def _call(self, entry: Entry, fn, args, kwargs):
        torch = self.torch
        shapes = _shapes(args, kwargs, torch.Tensor)
        new = shapes not in entry.shapes
        if new and len(entry.shapes) < SHAPES_KEPT:
            entry.shapes.add(shapes)
        mark = self.capture.mark()
        self.stack.append(entry)
        sync = torch.cuda.synchronize if torch.cuda.is_initialized() else None
        if sync is not None:
            sync()
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        except Exception as exc:
            self.capture.compile_raised(exc)
            raise
        finally:
            if sync is not None:
                sync()
            ms = (time.perf_counter() - t0) * 1000.0
            try:
                metrics = self.capture.metrics_since(mark)
            finally:
                self.stack.pop()
            self._record(entry, ms, new, metrics, (t0 - self.t_start) * 1000.0)

    def _record(self, entry: Entry, ms: float, new: bool, metrics: list, at: float = 0.0) -> None:
        flags = (FLAG_NEW_SHAPE if new else 0) | (FLAG_COMPILED if metrics else 0)
        with self.lock:
            index = entry.calls
            entry.calls += 1
            entry.total_ms += ms
            if index < CALLS_KEPT:
                entry.ms.append(round(ms, 6))
                entry.flags.append(flags)
                entry.at.append(round(at, 3))
        if metrics:
            self.writer.write(
                {"t": "compile", "id": entry.index, "call": index, "frames": [_frame(m) for m in metrics]}
            )

    # ---- torch's records
    def _current(self) -> int:
        return self.stack[-1].index if self.stack else -1

    def _limited(self) -> bool:
        self.records += 1
        if self.records > RECORDS_KEPT:
            self.dropped += 1
            return True
        return False

    def _on_break(self, gb) -> None:
        if not self._limited():
            self.writer.write({"t": "break", "id": self._current(), "gb": dataclasses.asdict(gb)})

    def _on_recompile(self, rc) -> None:
        if not self._limited():
            self.writer.write({"t": "recompile", "id": self._current(), "rc": dataclasses.asdict(rc)})

    # ---- writing the calls
    def flush(self) -> None:
        with self.lock:
            batches = []
            for entry in self.entries.values():
                if entry.ms:
                    batches.append((entry, entry.written, entry.ms, entry.flags, entry.at))
                    entry.written += len(entry.ms)
                    entry.ms, entry.flags, entry.at = [], [], []
        for entry, first, ms, flags, at in batches:
            self.writer.write({"t": "calls", "id": entry.index, "first": first, "ms": ms, "flags": flags, "at": at})

    def _flush_loop(self) -> None:
        while not self._done.wait(FLUSH_S):
            try:
                self.flush()
            except Exception:  # noqa: BLE001 - a full disk: the end's flush says more
                pass

    def finish(self, exit_code: int, error: str, wall_s: float) -> None:
        self._done.set()
        if self.capture is not None:
            try:
                self.capture.poll()
            except Exception:  # noqa: BLE001 - torch in a broken state after the script's error
                pass
        self.flush()
        totals = {e.index: [e.calls, round(e.total_ms, 3)] for e in self.entries.values()}
        self.writer.write(
            {
                "t": "end",
                "exit": exit_code,
                "error": error,
                "wall_s": round(wall_s, 4),
                "peak_rss_mb": _peak_rss_mb(),
                "cuda_peak_mb": self._cuda_peak_mb(),
                "totals": totals,
                "dropped": self.dropped,
            }
        )

    def _cuda_peak_mb(self):
        torch = self.torch
        try:
            if torch is not None and torch.cuda.is_initialized():
                return round(torch.cuda.max_memory_allocated() / 2**20, 2)
        except Exception:  # noqa: BLE001
            pass
        return None


def _describe(fn, torch) -> tuple[str, str]:
    """An entry point's name and kind: a module's class, a function's qualified name;
    `Module.compile()` (torch.compile of the module's _call_impl) is named by the module."""
    if isinstance(fn, torch.nn.Module):
        return type(fn).__name__, "module"
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(fn, "__name__", "") == "_call_impl":
        return type(owner).__name__, "module (Module.compile)"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return str(name), "method" if owner is not None else "function"


def _peak_rss_mb() -> float | None:
    try:
        import resource

        return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 2)
    except (ImportError, OSError):
        return None


def _error_lines(exc: BaseException) -> str:
    lines = "".join(traceback.format_exception(exc)).splitlines()
    return "\n".join(lines[-ERROR_LINES:])


def _forget_ourselves() -> None:
    """The script sees its own modules: a package of the script's named `core` is its own, not
    ours (our modules are loaded already and keep working)."""
    for name in [n for n in sys.modules if n == "core" or n.startswith("core.")]:
        del sys.modules[name]
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != PROJECT_ROOT]


def run(job: ScriptJob) -> int:
    """Run the script of `job`; its exit code (0, its sys.exit code, 1 for an exception, 130
    for Ctrl+C)."""
    writer = EventWriter(job.events_path)
    profiler = ScriptProfiler(job, writer)
    import torch

    writer.write(
        {"t": "start", "pid": os.getpid(), "torch": str(torch.__version__), "stance": job.stance, "argv": job.argv}
    )
    profiler.install()
    sys.argv = list(job.argv)
    sys.path.insert(0, os.getcwd() if job.module else os.path.dirname(job.target))  # as `python SCRIPT` puts it
    _forget_ourselves()
    code, error = 0, ""
    t0 = time.perf_counter()
    try:
        if job.module:
            runpy.run_module(job.target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(job.target, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except KeyboardInterrupt:
        code, error = 130, "stopped by Ctrl+C (KeyboardInterrupt)"
    except BaseException as exc:  # noqa: BLE001 - the script's own error, shown as Python would
        traceback.print_exc()
        code, error = 1, _error_lines(exc)
    wall = time.perf_counter() - t0
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    profiler.finish(code, error, wall)
    return code


def main(argv: list[str]) -> None:
    with open(argv[0], encoding="utf-8") as fh:
        job = ScriptJob.from_json(fh.read())
    sys.exit(run(job))  # a normal exit: the script's atexit handlers and open files are closed as usual


if __name__ == "__main__":
    main(sys.argv[1:])
