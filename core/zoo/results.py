"""A model zoo's results: one row per model and config, a summary per config, and the files
that hold them (zoo.csv, zoo_summary.csv, zoo.json), computed here once for the command
line and the app alike.

A zoo folder holds one ordinary report folder per model (`DIR/<folder>/`, what `profile`
writes, opened by the app as a session) and, beside them, the zoo's tables (written and read
back by core.zoo.files). The rows are derived from each job's `JobResult.summary()`; the
per-config summary from the rows, so a zoo.json read back gives the same figures.

What counts: a job *passed* when it completed and did not fail the accuracy check; the
geometric-mean speedup is over the passed jobs; `failed` counts jobs that failed or were
cancelled (each row says which and why).
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
from dataclasses import dataclass, field

from core.vocab.formatting import count, fmt_speedup

# What makes two jobs' machines comparable: a difference in any of these is warned about.
ENVIRONMENT_KEYS = ("torch", "torchvision", "python", "device_name", "cuda_version")


@dataclass(frozen=True)
class ZooRow:
    """One model under one config: the figures zoo.csv holds and the Zoo view colours.
    `folder` is the model's report folder inside the zoo folder; `node` the machine the job
    ran on (host name, and the Ray node id on a cluster)."""

    model: str
    folder: str
    config: str
    status: str
    failure_reason: str = ""
    backend: str = ""
    timing_quality: str = ""  # core.analysis.quality's grade of the job's timing
    timing_quality_reason: str = ""
    eager_median_ms: float | None = None
    compiled_median_ms: float | None = None
    speedup: float | None = None
    speedup_ci_low: float | None = None
    speedup_ci_high: float | None = None
    compile_time_s: float | None = None
    graph_break_sites: int | None = None
    graph_break_per_call: int | None = None
    recompile_count: int | None = None
    accuracy: str = ""
    accuracy_reason: str = ""
    eager_peak_mb: float | None = None
    compile_peak_mb: float | None = None
    compiled_peak_mb: float | None = None
    cuda_compiled_max_allocated_mb: float | None = None
    wall_time_s: float | None = None
    node: str = ""
    torch: str = ""
    torchvision: str = ""
    python: str = ""
    device_name: str = ""
    cuda_version: str = ""

    @classmethod
    def from_result(cls, model: str, folder: str, result) -> "ZooRow":
        """The row of a JobResult (core.analysis.results), from its summary."""
        s = result.summary()
        env = result.environment or {}
        return cls(
            model=model,
            folder=folder,
            config=s["config"],
            status=str(s["status"]),
            failure_reason=s["failure_reason"] or "",
            backend=s["backend"] or "",
            timing_quality=s["timing_quality"] or "",
            timing_quality_reason=s["timing_quality_reason"] or "",
            **{
                k: s[k]
                for k in (
                    "eager_median_ms",
                    "compiled_median_ms",
                    "speedup",
                    "speedup_ci_low",
                    "speedup_ci_high",
                    "compile_time_s",
                    "graph_break_sites",
                    "graph_break_per_call",
                    "recompile_count",
                    "eager_peak_mb",
                    "compile_peak_mb",
                    "compiled_peak_mb",
                    "cuda_compiled_max_allocated_mb",
                )
            },
            accuracy=s["accuracy"] or "",
            accuracy_reason=s["accuracy_reason"] or "",
            wall_time_s=result.wall_time_s or None,
            node=str(env.get("node") or ""),
            **{k: "" if env.get(k) is None else str(env.get(k)) for k in ENVIRONMENT_KEYS},
        )

    @property
    def completed(self) -> bool:
        return self.status == "completed"

    @property
    def accuracy_failed(self) -> bool:
        return self.accuracy == "fail"

    @property
    def passed(self) -> bool:
        """Completed and not failing the accuracy check."""
        return self.completed and not self.accuracy_failed

    @property
    def ended(self) -> bool:
        return self.status in ("completed", "failed", "cancelled")

    @property
    def has_breaks(self) -> bool:
        return bool(self.graph_break_sites)

    @property
    def reference(self) -> bool:
        """A debugging backend (eager, aot_eager): a reference for the others, never a speedup."""
        from core.decide.recommend import REFERENCE_BACKENDS

        return self.backend in REFERENCE_BACKENDS

    @property
    def verdict(self) -> str:
        """FASTER or SLOWER (the speedup's 95% interval clear of 1, from a timing that can say
        it), WITHIN_NOISE, CANNOT_TELL (timing unusable), REFERENCE, or "" (not completed)."""
        if not self.completed or self.speedup is None:
            return ""
        if self.reference:
            return REFERENCE
        if self.timing_quality == "unusable":
            return CANNOT_TELL
        low, high = self.speedup_ci_low, self.speedup_ci_high
        if low is None or high is None:
            return WITHIN_NOISE
        return FASTER if low > 1.0 else SLOWER if high < 1.0 else WITHIN_NOISE

    @property
    def counts(self) -> bool:
        """It counts towards its config's geometric mean: passed, not a reference, timing usable."""
        return self.passed and self.verdict in (FASTER, SLOWER, WITHIN_NOISE)

    def environment_key(self) -> tuple[str, ...]:
        return tuple(getattr(self, k) for k in ENVIRONMENT_KEYS)

    def outcome(self) -> str:
        """How the job ended and its main figures, in words."""
        if not self.completed:
            return self.status + (f": {self.failure_reason}" if self.failure_reason else "")
        parts = [f"speedup {fmt_speedup(self.speedup)}"]
        if self.speedup_ci_low is not None and self.speedup_ci_high is not None:
            parts[0] += f" [95% CI {self.speedup_ci_low:.2f}-{self.speedup_ci_high:.2f}]"
        parts[0] += {
            REFERENCE: f" (backend {self.backend} is a debugging reference: not a speedup)",
            CANNOT_TELL: f" (cannot tell: timing unusable, {self.timing_quality_reason.split('; ')[0]})",
            WITHIN_NOISE: " (within the noise of eager)",
        }.get(self.verdict, "")
        if self.timing_quality == "noisy":
            parts.append(f"timing noisy ({self.timing_quality_reason.split('; ')[0]})")
        if self.compile_time_s is not None:
            parts.append(f"compile {self.compile_time_s:.1f} s")
        parts.append(f"{self.graph_break_sites or 0} graph breaks")
        if self.recompile_count:
            parts.append(f"{self.recompile_count} recompiles")
        if self.accuracy:
            parts.append(f"accuracy {self.accuracy}")
        if self.node:
            parts.append(f"on {self.node}")
        return ", ".join(parts)

    def describe(self) -> str:
        """The row in one line (a cell's tooltip in the app)."""
        return f"{self.model} · {self.config}: {self.outcome()}"


ROW_COLUMNS = [f.name for f in dataclasses.fields(ZooRow)]
FASTER, SLOWER, WITHIN_NOISE, CANNOT_TELL, REFERENCE = "faster", "slower", "within noise", "cannot tell", "reference"


def geometric_mean(values) -> float | None:
    values = [v for v in values if v is not None and v > 0]
    if not values:
        return None
    return math.exp(sum(math.log(v) for v in values) / len(values))


@dataclass(frozen=True)
class ConfigSummary:
    """One config over every model of the zoo (zoo_summary.csv, the Zoo view's summary row)."""

    config: str
    models: int
    passed: int
    failed: int
    accuracy_failed: int
    pending: int
    geomean_speedup: float | None
    median_compile_time_s: float | None
    graph_break_sites_total: int
    models_with_breaks: int
    environment_warning: str = ""
    reference: bool = False  # a debugging backend: its figures are references, not speedups
    unusable: int = 0  # passed jobs whose timing was unusable (not in the geometric mean)

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.models if self.models else None

    def sentence(self) -> str:
        """The summary in words, as the command line prints it and the app shows it."""
        text = f"{self.config}: {self.passed} of {self.models} models passed"
        extra = [
            f"{n} {what}"
            for n, what in (
                (self.failed, "failed"),
                (self.accuracy_failed, "failed the accuracy check"),
                (self.pending, "not run yet"),
            )
            if n
        ]
        if extra:
            text += f" ({', '.join(extra)})"
        if self.reference:
            text += (
                f"; a debugging reference (geometric mean {fmt_speedup(self.geomean_speedup)} of what it measured, "
                "not a speedup)"
            )
        elif self.unusable and self.geomean_speedup is None:
            text += "; cannot tell the speedup (every timing unusable)"
        else:
            text += f"; geometric-mean speedup {fmt_speedup(self.geomean_speedup)}"
        if self.unusable:
            text += f" ({count(self.unusable, 'model')} left out: timing unusable)"
        if self.median_compile_time_s is not None:
            text += f", median compile {self.median_compile_time_s:.1f} s"
        text += f", {count(self.graph_break_sites_total, 'graph break')} in {count(self.models_with_breaks, 'model')}"
        return text


SUMMARY_COLUMNS = [f.name for f in dataclasses.fields(ConfigSummary)] + ["pass_rate"]


def environment_warning(rows: list[ZooRow]) -> str:
    """A sentence when the jobs ran on machines that differ (torch, Python, GPU or CPU, CUDA),
    naming each variant with its nodes and job count; "" when they all match."""
    groups: dict[tuple, list[ZooRow]] = {}
    for r in rows:
        if r.torch or r.device_name:  # a job that never started says nothing of its machine
            groups.setdefault(r.environment_key(), []).append(r)
    if len(groups) < 2:
        return ""
    differing = [k for i, k in enumerate(ENVIRONMENT_KEYS) if len({key[i] for key in groups}) > 1]
    parts = []
    for key, members in groups.items():
        what = ", ".join(f"{k} {key[ENVIRONMENT_KEYS.index(k)] or '?'}" for k in differing)
        nodes = sorted({m.node for m in members if m.node})
        parts.append(f"{what} ({len(members)} jobs" + (f" on {', '.join(nodes)}" if nodes else "") + ")")
    return (
        "the jobs ran on machines that differ: "
        + "; ".join(parts)
        + ". Speedups of jobs on different machines are not directly comparable."
    )


def summarize_configs(rows: list[ZooRow], configs: list[str] | None = None) -> list[ConfigSummary]:
    """A ConfigSummary per config, in `configs` order (default: first appearance)."""
    order = configs or list(dict.fromkeys(r.config for r in rows))
    found = []
    for config in order:
        mine = [r for r in rows if r.config == config]
        passed = [r for r in mine if r.passed]
        # a reference once its backend is known to be one: a job not ended yet may name no
        # backend, and a config with no backend known is no reference (inductor is none)
        named = [r for r in mine if r.backend]
        reference = bool(named) and all(r.reference for r in named)
        counted = passed if reference else [r for r in passed if r.counts]
        compiles = [r.compile_time_s for r in mine if r.completed and r.compile_time_s is not None]
        found.append(
            ConfigSummary(
                config=config,
                models=len(mine),
                passed=len(passed),
                failed=sum(r.ended and not r.completed for r in mine),
                accuracy_failed=sum(r.completed and r.accuracy_failed for r in mine),
                pending=sum(not r.ended for r in mine),
                geomean_speedup=geometric_mean(r.speedup for r in counted),
                reference=reference,
                unusable=sum(r.verdict == CANNOT_TELL for r in passed),
                median_compile_time_s=statistics.median(compiles) if compiles else None,
                graph_break_sites_total=sum(r.graph_break_sites or 0 for r in mine),
                models_with_breaks=sum(r.has_breaks for r in mine),
                environment_warning=environment_warning(mine),
            )
        )
    return found


@dataclass
class Zoo:
    """A zoo's contents: its models (source → folder), configs, rows and options; what
    zoo.json holds and the app shows. `path` is the zoo folder (set when read back)."""

    models: dict[str, str]
    configs: list[str]
    rows: list[ZooRow]
    options: dict = field(default_factory=dict)
    finished: bool = True
    path: str = ""
    warnings: list[str] = field(default_factory=list)

    def summaries(self) -> list[ConfigSummary]:
        return summarize_configs(self.rows, self.configs)

    def row(self, model: str, config: str) -> ZooRow | None:
        return next((r for r in self.rows if r.model == model and r.config == config), None)

    def report_folder(self, model: str) -> str:
        return os.path.join(self.path, self.models[model])

    def overall_warning(self) -> str:
        return environment_warning(self.rows)


# ------------------------------------------------------------------ orders


SORT_ORDERS = {
    "worst speedup": "models whose lowest speedup over the configs is lowest first (a failure counts as lowest)",
    "most breaks": "models with the most graph-break places (in any config) first",
    "longest compile": "models with the longest compile time (in any config) first",
    "model": "models in the zoo's order",
}


def sort_models(zoo: Zoo, order: str) -> list[str]:
    """The zoo's models in one of SORT_ORDERS; ties keep the zoo's order."""
    models = list(zoo.models)
    by_model: dict[str, list[ZooRow]] = {m: [] for m in models}
    for r in zoo.rows:
        by_model.setdefault(r.model, []).append(r)

    def worst(m):
        rows = by_model[m]
        if any(r.ended and not r.completed for r in rows):
            return -1.0
        values = [r.speedup for r in rows if r.speedup is not None]
        return min(values) if values else math.inf

    def breaks(m):
        return -max((r.graph_break_sites or 0 for r in by_model[m]), default=0)

    def compile_time(m):
        return -max((r.compile_time_s or 0.0 for r in by_model[m]), default=0.0)

    key = {"worst speedup": worst, "most breaks": breaks, "longest compile": compile_time}.get(order)
    if order not in SORT_ORDERS:
        raise ValueError(f"unknown order {order!r}; one of {', '.join(SORT_ORDERS)}")
    return models if key is None else sorted(models, key=key)


CELL_MARKS = (
    "ref: a debugging backend, a reference and not a speedup; ?: cannot tell, the timing was unusable; "
    "~: within the noise of eager; acc!: failed the accuracy check; N br: graph-break places"
)


def cell_text(row: ZooRow | None) -> str:
    """A row as a grid cell, for the command line's table and the Zoo view: the speedup with
    its mark (CELL_MARKS), "acc!" for a failed accuracy check, "N br" for graph-break places;
    or how it ended."""
    if row is None or row.status == "pending":
        return "-"
    if not row.completed:
        return row.status.upper() if row.status == "failed" else row.status
    text = fmt_speedup(row.speedup)
    text += {REFERENCE: " ref", CANNOT_TELL: " ?", WITHIN_NOISE: " ~"}.get(row.verdict, "")
    if row.accuracy_failed:
        text += " acc!"
    if row.graph_break_sites:
        text += f" {row.graph_break_sites} br"
    return text
