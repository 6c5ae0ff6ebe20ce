"""A user's script run under the profiler: what the child process is told, and the events it writes.

`python3 main.py run SCRIPT.py [-- ARGS]` runs the script twice in child processes: once as
written (every torch.compile in it timed call by call) and once under
`torch.compiler.set_stance("force_eager")`, the eager baseline, where the same functions run
uncompiled and are timed the same way. `ScriptJob` is what one of those processes is told;
the child (core.measure.script_child) answers with JSON lines, one event a line, appended to
`events_path` with one write each, so a crash loses at most the calls not yet flushed.

Events (`"t"` names the kind):

- `start`: pid, torch version, the stance, the script's argv;
- `entry`: a compiled entry point seen for the first time: `id`, `name`, `file`, `line` (where
  torch.compile was called), `kind` (function, module, method), `settings` (the compile's
  keyword arguments as they ran, overrides applied);
- `calls`: a batch of an entry point's calls: `id`, `first` (the index of the first call in the
  batch, from 0), `ms` (each call's wall time), `flags` (FLAG_NEW_SHAPE, FLAG_COMPILED), `at`
  (each call's start, ms since the profiler was installed: the time from one call to the next
  is the loop's iteration);
- `compile`: the frames compiled during one call: `id`, `call`, `frames` (torch's compilation
  metrics, slimmed: compile id, function, file, line, seconds per stage, failure);
- `break`: a graph break (core.vocab.records.GraphBreak as a dict) and the entry point it came in;
- `recompile`: a recompile (core.vocab.records.Recompile as a dict) and its entry point;
- `note`: something the runner did for the script (a process group limited to one rank);
- `end`: how the script ended: `exit` (its exit code), `error` (its exception's last lines),
  `wall_s`, `peak_rss_mb`, `cuda_peak_mb`, and `dropped` (events left out past the limits).

No torch, no Qt.
"""

from __future__ import annotations

import ast
import json
import os
import re
from dataclasses import asdict, dataclass, field

STANCE_COMPILED = "default"
STANCE_EAGER = "force_eager"

FLAG_NEW_SHAPE = 1  # the first call with these input shapes (its time may include a compile)
FLAG_COMPILED = 2  # torch compiled a frame during this call

CALLS_KEPT = 200_000
"""Calls of one entry point whose times are kept; past that they are counted and summed only
(a script that calls a compiled function millions of times keeps bounded memory)."""
RECORDS_KEPT = 2_000
"""Graph-break and recompile events one run writes; past that they are counted (a recompile storm)."""
FLUSH_S = 0.5  # the child writes its call batches at least this often
MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
MAX_SCRIPT_BYTES = 16 * 2**20  # a script is read (parsed) before it runs


class ScriptJobError(ValueError):
    """A script that cannot be run: the message names the problem and what to do."""


@dataclass(frozen=True)
class ScriptJob:
    """One run of a user's script. `target` is a .py file's absolute path, or a module name
    when `module` is True (`-m`); `args` its own command-line arguments; `cwd` the folder it
    runs in. `stance` is STANCE_COMPILED (as written) or STANCE_EAGER (the baseline).
    `overrides` are torch.compile keyword arguments that replace the script's own for every
    compile (backend, mode, dynamic, fullgraph, options); `dynamo_config` is set before the
    script starts. `events_path` is where the child appends its events."""

    target: str
    args: tuple[str, ...] = ()
    module: bool = False
    cwd: str = ""
    stance: str = STANCE_COMPILED
    overrides: tuple[tuple[str, object], ...] = ()
    dynamo_config: tuple[tuple[str, object], ...] = ()
    events_path: str = ""
    timeout_s: float = 3600.0

    @property
    def argv(self) -> list[str]:
        """The script's sys.argv, as Python would set it."""
        return [self.target, *self.args]  # runpy sets a module's argv[0] to its file

    @property
    def display(self) -> str:
        return f"-m {self.target}" if self.module else os.path.basename(self.target)

    def to_json(self) -> str:
        d = asdict(self)
        d["args"] = list(self.args)
        d["overrides"] = [list(p) for p in self.overrides]
        d["dynamo_config"] = [list(p) for p in self.dynamo_config]
        return json.dumps(d)

    @classmethod
    def from_json(cls, text: str) -> "ScriptJob":
        d = json.loads(text)
        d["args"] = tuple(d.get("args") or ())
        d["overrides"] = tuple(tuple(p) for p in d.get("overrides") or ())
        d["dynamo_config"] = tuple(tuple(p) for p in d.get("dynamo_config") or ())
        return cls(**d)


@dataclass
class ScriptEvents:
    """A run's events as the parent read them back, and how its process ended."""

    events: list[dict] = field(default_factory=list)
    exit_code: int | None = None
    ended: str = ""  # "", or why the runner ended it: "timeout", "cancelled"
    wall_s: float = 0.0
    stdout_tail: str = ""
    stderr_tail: str = ""
    others_cores: list[float] = field(default_factory=list)  # CPU the rest of the machine used, 2 Hz
    unreadable: int = 0  # event lines that could not be read (a crash mid-write, or garbage)


def check_script(path: str) -> str:
    """The script's absolute path, or ScriptJobError naming what is wrong (nothing runs):
    missing, a folder, not a Python file, unreadable, or a syntax error (read, never run)."""
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.lexists(full):
        raise ScriptJobError(f"{path}: no such file; check the path.")
    if os.path.isdir(full):
        raise ScriptJobError(f"{path} is a folder; name the script (a .py file) in it, or use -m MODULE for a package.")
    if not os.path.isfile(full):
        raise ScriptJobError(f"{path} is not a regular file; name a Python script (.py).")
    if not full.endswith(".py"):
        raise ScriptJobError(f"{path} is not a Python script (.py); `run` runs Python scripts (or -m MODULE).")
    try:
        size = os.path.getsize(full)
        if size > MAX_SCRIPT_BYTES:
            raise ScriptJobError(
                f"{path} is {size / 2**20:,.0f} MB; a script over {MAX_SCRIPT_BYTES // 2**20} MB is not run."
            )
        with open(full, "rb") as fh:
            source = fh.read()
    except OSError as exc:
        raise ScriptJobError(f"{path} cannot be read: {exc.strerror or exc}.") from None
    try:
        ast.parse(source, filename=full)
    except SyntaxError as exc:
        raise ScriptJobError(
            f"{path}:{exc.lineno}: a syntax error ({exc.msg}); fix it first. Nothing was run."
        ) from None
    except ValueError as exc:  # null bytes
        raise ScriptJobError(f"{path} is not Python source ({exc}).") from None
    return full


def make_script_job(
    script: str,
    module: str,
    args,
    cwd: str = "",
    overrides=(),
    dynamo_config=(),
    timeout_s: float | None = None,
) -> ScriptJob:
    """The job for a script file (`script`) or a module (`module`), checked before anything runs
    (ScriptJobError names the problem; core.vocab.limits.ConfigError an absurd timeout): the
    command line and the app build it here. `cwd` "" is the script's folder (for a module, the
    current one)."""
    from core.vocab.limits import LIMITS, check_limits

    if bool(script) == bool(module):
        raise ScriptJobError("name one script (SCRIPT.py) or one module (-m MODULE).")
    timeout = LIMITS["script_timeout"].default if timeout_s is None else float(timeout_s)
    check_limits(script_timeout=timeout)
    if module:
        if not MODULE_NAME.match(module):
            raise ScriptJobError(f"{module!r} is not a module name (e.g. -m mypackage.train).")
        target, default_cwd = module, os.getcwd()
    else:
        target = check_script(script)
        default_cwd = os.path.dirname(target)
    folder = os.path.abspath(os.path.expanduser(cwd)) if cwd else default_cwd
    if not os.path.isdir(folder):
        raise ScriptJobError(f"the working folder {cwd} does not exist.")
    return ScriptJob(
        target=target,
        args=tuple(str(a) for a in args),
        module=bool(module),
        cwd=folder,
        overrides=tuple(overrides),
        dynamo_config=tuple(dynamo_config),
        timeout_s=timeout,
    )
