"""How numbers read in every sentence, table cell and message the product writes, defined once."""

from __future__ import annotations

import math

MB = 1024 * 1024  # bytes in a mebibyte: every memory figure the product writes is in these


def fmt_ms(ms: float) -> str:
    """A duration for a sentence: µs below 0.1 ms, else ms."""
    if ms < 0.1:
        return f"{ms * 1000:.0f} µs"
    return f"{ms:.2f} ms" if ms < 100 else f"{ms:.0f} ms"


def ms_cell(v: float | None) -> str:
    """A duration in ms for a table cell, no unit: three significant places for small figures, "–" when missing."""
    return "–" if v is None else (f"{v:.3f}" if v < 1 else f"{v:.2f}" if v < 100 else f"{v:.1f}")


def ms_fixed(v: float | None) -> str:
    """A duration in ms to three decimals for the app's op-profile tables, "–" when missing."""
    return cell(v, ".3f", missing="–")


def ms_or_missing(v: float | None) -> str:
    """A duration for a sentence on the command line (fmt_ms), "-" when missing."""
    return "-" if v is None else fmt_ms(v)


def count(n: float, what: str) -> str:
    """A count with its noun: "1 graph", "3 kernels", "2.5 operators" (per-call averages need not
    be whole)."""
    return f"{n:g} {what}{'' if n == 1 else 's'}"


def duration(seconds: float) -> str:
    """A total time: seconds below 2 minutes, minutes below 2 hours, else hours; "?" if unknown."""
    if not math.isfinite(seconds):
        return "?"
    if seconds < 120:
        return f"{seconds:.1f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


def disk_size(n_bytes: int) -> str:
    """Space on disk: KiB below a MiB, MiB below a GiB, else GiB ("0 B" for nothing)."""
    if n_bytes <= 0:
        return "0 B"
    if n_bytes < MB:
        return f"{n_bytes / 1024:.0f} KiB" if n_bytes >= 1024 else f"{n_bytes} B"
    if n_bytes < 1024 * MB:
        return f"{n_bytes / MB:.1f} MiB"
    return f"{n_bytes / (1024 * MB):.2f} GiB"


def number(value: float) -> str:
    """A setting's value in a message: whole numbers with thousands separators ("1,000,000"),
    others as short as they are exact ("0.5")."""
    if isinstance(value, int):  # exact, however large (as float, 10**23 read 99,999,999,999,999,991,611,392)
        return f"{value:,}"
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,g}"


def cell(value, spec: str = ".2f", unit: str = "", missing: str = "-") -> str:
    """A value in a table: `missing` when there is none ("-" on the command line, "–" in the
    app), text as it is, a number in `spec` with `unit`."""
    if value is None or value == "":
        return missing
    if isinstance(value, str):
        return value
    return f"{value:{spec}}{unit}"


def fmt_speedup(value: float | None) -> str:
    """A speedup for a table cell: two decimals and "x", "-" when missing."""
    return "-" if value is None else f"{value:.2f}x"


def speedup_interval(sp) -> str:
    """A speedup with its 95% interval (core.analysis.stats.Speedup): "1.82x [95% CI 1.75-1.90]"."""
    if sp is None:
        return "-"
    if not (math.isfinite(sp.ci_low) and math.isfinite(sp.ci_high)):
        return f"{sp.value:.2f}x"
    return f"{sp.value:.2f}x [95% CI {sp.ci_low:.2f}-{sp.ci_high:.2f}]"


def seconds(value: float | None) -> str:
    """A time in seconds for a sentence: ms below a second ("850 ms"), else as `duration`."""
    if value is None:
        return "-"
    return fmt_ms(value * 1000.0) if abs(value) < 1 else duration(value)
