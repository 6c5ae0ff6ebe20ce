"""The accepted range of every numeric run setting, defined once for the command lines, the
app's form and the report reader: a value outside it is refused, never clamped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.vocab.formatting import number


class ConfigError(ValueError):
    """A setting torch would refuse. The message names the value and lists valid ones."""


@dataclass(frozen=True)
class Limit:
    """The accepted range of one numeric run setting, defined once for the CLI and the app."""

    name: str  # the command-line flag
    low: float
    high: float
    default: float | None
    why_high: str = ""


# The largest report.json or zoo.json read (parsing takes about five times the file's size in
# memory; core.report.files lowers it to an eighth of the memory available): about 50 million
# timed samples. A larger file is refused by its size before a byte of it is parsed.
MAX_JSON_BYTES = 1 << 30


# Upper bounds keep a run's memory and time bounded: a million timed calls per side is ~16 MB
# of samples and minutes of statistics at most; beyond that the user most likely mistyped.
LIMITS: dict[str, Limit] = {
    "warmup": Limit("--warmup", 0, 100_000, 5),
    "iters": Limit(
        "--iters",
        1,
        1_000_000,
        50,
        "more timed calls than this add nothing to a median and take hours; profile longer runs in several reports",
    ),
    "block": Limit("--block", 1, 1_000_000, 25),
    "batch_size": Limit("--batch-size", 1, 65_536, 1),
    "image_size": Limit("--image-size", 16, 8192, 224),
    "seq_len": Limit("--seq-len", 1, 1_048_576, 128),
    "threads": Limit("--threads", 1, 4096, None),
    "timeout": Limit("--timeout", 1, 7 * 24 * 3600, 900.0, "a week"),
    "script_timeout": Limit("--timeout", 1, 7 * 24 * 3600, 3600.0, "a week"),  # `run`: each run of a script
    "script_repeat": Limit("--repeat", 1, 20, 1, "each pair runs the whole script twice"),
    "op_profile": Limit(
        "--op-profile", 0, 10_000, 10, "each profiled call is recorded op by op; a few dozen calls give stable figures"
    ),
    # One process is one draw: a process's memory layout and placement can shift its speed for
    # its whole life (docs/BENCHMARKS.md "One process is one draw"), so each config is timed in
    # several fresh processes, as pyperf does (20 by default there; 3 here keeps a run short).
    "processes": Limit("--processes", 1, 50, 3, "each process imports torch and compiles again"),
    # --iters auto: timed blocks until the speedup's 95% interval is within ±precision % ...
    "precision": Limit("--precision", 0.1, 50, 2),
    # ... or the benchmark has run this long (seconds per config, over all its processes).
    "max_time": Limit("--max-time", 1, 24 * 3600, 60, "a day"),
    # The calls the recommendation is for (core.decide.recommend.DEFAULT_CALLS by default).
    "calls": Limit(
        "--calls",
        1,
        1_000_000_000_000,
        None,
        "past a trillion calls the compile time is nothing beside them: the answer stays the same",
    ),
}

AUTO_ITERS_CAP = int(LIMITS["iters"].high)  # --iters auto: the most calls a side may get
# --iters auto with several processes: when the processes disagree more than the precision asked,
# the runner adds processes (as pyperf runs more workers) while max_time is not spent, up to this many.
AUTO_PROCESSES_CAP = 10


def iteration_fields(
    iters: int | None, precision_pct: float | None = None, max_time_s: float | None = None, processes: int | None = None
) -> dict[str, Any]:
    """The JobSpec fields of how a job times calls: `iters` a number of calls a side, or None
    for auto (until the speedup is known within ±precision_pct %, or max_time_s has run out),
    in `processes` fresh processes; None takes LIMITS' default. Checked against LIMITS (the
    command lines and the app's form alike)."""
    precision = LIMITS["precision"].default if precision_pct is None else precision_pct
    max_time = LIMITS["max_time"].default if max_time_s is None else max_time_s
    processes = int(LIMITS["processes"].default) if processes is None else processes
    check_limits(iters=iters, precision=precision, max_time=max_time, processes=processes)
    return {
        "iters": AUTO_ITERS_CAP if iters is None else int(iters),
        "precision_pct": float(precision) if iters is None else None,
        "max_time_s": float(max_time),
        "processes": int(processes),
    }


def check_limits(**values: float | None) -> None:
    """Raise ConfigError naming the setting, the value and the accepted range for any value
    outside LIMITS (None means "not given"). Used by `profile`, the app's command line and
    the app's form alike, so none of them silently clamps or replaces a value."""
    for key, value in values.items():
        if value is None:
            continue
        lim = LIMITS[key]
        if value < lim.low or value > lim.high:
            why = f" ({lim.why_high})" if value > lim.high and lim.why_high else ""
            raise ConfigError(
                f"{lim.name} must be between {number(lim.low)} and {number(lim.high)}, not {number(value)}{why}."
            )
