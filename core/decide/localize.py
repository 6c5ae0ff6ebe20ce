"""Where do compiled outputs diverge? The plan and the verdict of `profile --localize`.

Two directions, each step a normal job (its own process, cancellable, its accuracy checked by
core.measure.accuracy):

- **by compiler stage**, as torch's accuracy minifier bisects: the same model through `eager`
  (dynamo's graph, run by eager PyTorch), `aot_eager` (AOT autograd's graphs), then
  `aot_eager_decomp_partition` (inductor's decompositions and partitioning), then `inductor`
  (inductor's code), up to the config's own backend; the first stage whose outputs diverge
  names the part of the compiler. Stages run one after another and stop at the first that
  diverges.
- **by module**: that job also compiles the submodules one at a time (core.measure.localize_modules)
  and names the deepest that diverges alone, with its error.
- **for inductor's code**: the config re-run with each numerics setting this torch has
  (NUMERICS) turned on alone; those that make the check pass are named, each as a config to
  apply and re-run.

No torch, no Qt: the front ends run the jobs (core.cli.profile) and hand the results here.
"""

from __future__ import annotations

import dataclasses
import uuid
from dataclasses import dataclass, field

from core.decide.advice import ConfigChange
from core.vocab.config import CompileConfig, JobSpec
from core.vocab.records import AccuracyStatus, JobStatus

# (backend, the part of the compiler it adds), in the order the minifier bisects
STAGES = (
    ("eager", "dynamo's graph capture"),
    ("aot_eager", "AOT autograd"),
    ("aot_eager_decomp_partition", "inductor's decompositions and partitioning"),
    ("inductor", "inductor's code"),
)
# inductor settings known to matter for numerics, each tried alone (when this torch has it)
NUMERICS = (
    ("emulate_precision_casts", True),  # round to the low precision where eager would
    ("fallback_random", True),  # random numbers as eager draws them
    ("eager_numerics.division_rounding", True),  # division rounded as eager rounds it
    ("split_reductions", False),  # reductions in one pass, as eager sums
    ("pattern_matcher", False),  # no fused rewrites of patterns
)
# how the localization jobs time: only their accuracy counts
LOCALIZE_ITERS = 3
LOCALIZE_WARMUP = 1


def stage_configs(config: CompileConfig) -> list[CompileConfig]:
    """The stages to run for a config, up to and including its own backend (only its dynamo
    settings and marks carry over; mode and inductor options belong to inductor). [] for a
    backend outside the stages (a custom backend): nothing to bisect."""
    names = [b for b, _ in STAGES]
    if config.backend not in names:
        return []
    out = []
    for backend in names[: names.index(config.backend) + 1]:
        if backend == config.backend:
            out.append(config)
        else:
            out.append(
                dataclasses.replace(
                    config, backend=backend, mode="default", inductor_options=(), compile_optimizer=False
                )
            )
    return out


def numerics_configs(config: CompileConfig, available: dict) -> list[CompileConfig]:
    """The config with each NUMERICS setting that this torch has (`available`: inductor's
    config) and the config does not already set, turned to its value alone."""
    if config.backend != "inductor":
        return []
    have = dict(config.inductor_options)
    out = []
    for key, value in NUMERICS:
        if key not in available or have.get(key, available[key]) == value:
            continue
        out.append(dataclasses.replace(config, inductor_options=tuple(sorted({**have, key: value}.items()))))
    return out


def localization_spec(spec: JobSpec, config: CompileConfig, modules: bool) -> JobSpec:
    """A job that checks one config's accuracy only: few calls, one process, no op profile, no
    files (its label may be a config of the run's own); `modules`: localize by module too."""
    return dataclasses.replace(
        spec,
        job_id=uuid.uuid4().hex[:12],
        config=config,
        iters=LOCALIZE_ITERS,
        warmup=LOCALIZE_WARMUP,
        precision_pct=None,
        processes=1,
        repeat=0,
        process_budget_s=None,
        op_profile_calls=0,
        sweep_shapes=False,
        sweep_batch=(),
        artifacts_dir=None,
        applied=(),
        localize=modules,
    )


def outcome(result) -> str:
    """A localization job's outcome in one word: its accuracy status, else why there is none."""
    if result is None or result.status == JobStatus.CANCELLED:
        return "cancelled"
    if result.status != JobStatus.COMPLETED:
        return "failed"
    return result.accuracy.status if result.accuracy is not None else AccuracyStatus.NOT_CHECKED.value


@dataclass
class Localization:
    """What the localization of one config found. `stages`: (backend, outcome) in the order run;
    `stage` the first backend whose outputs diverge ("" when none did, or the stages could not
    tell); `module`/`module_kind`/`module_reason`/`max_rel_error` from that job's module search;
    `fixes`: (inductor option, value) that made the check pass; `tried`: those tried;
    `untried`: the stages and numerics settings a cancel left unrun ("stage inductor",
    "fallback_random=True"); `left_out`: the report's settings left out of every job
    ("cpp.cxx = 'g++'", core.report.safety.ReportGate: run without its risky settings)."""

    config: str
    stages: list[tuple[str, str]] = field(default_factory=list)
    stage: str = ""
    module: str = ""
    module_kind: str = ""
    module_reason: str = ""
    max_rel_error: float | None = None
    fixes: list[tuple[str, object]] = field(default_factory=list)
    tried: list[tuple[str, object]] = field(default_factory=list)
    untried: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    note: str = ""

    @property
    def part(self) -> str:
        return dict(STAGES).get(self.stage, "")

    def sentence(self) -> str:
        """The verdict in one sentence (the CLI, report.json and the app say this)."""
        return self._verdict() + self._caveats() + "."

    def _caveats(self) -> str:
        """What this localization did not run: what a cancel left untried, the settings left out."""
        out = ""
        if self.untried:
            out += "; left untried by the cancel: " + ", ".join(self.untried)
        if self.left_out:
            out += "; run without the report's settings " + ", ".join(self.left_out)
        return out

    def _verdict(self) -> str:
        if not self.stage:
            ran = ", ".join(f"{b} {o}" for b, o in self.stages) or "no stage ran"
            why = self.note or "no stage's outputs diverged from eager's this time"
            return f"cannot tell where the outputs diverge: {why} ({ran})"
        where = f"outputs diverge in {self.part} (first seen with backend {self.stage})"
        if self.module:
            err = f", max rel error {self.max_rel_error:.1e}" if self.max_rel_error is not None else ""
            where += f", in `{self.module}` ({self.module_kind}{err})"
        elif self.module_reason:
            where += f"; {self.module_reason}"
        if self.fixes:
            where += "; with " + " or ".join(f"{k}={v}" for k, v in self.fixes) + " the check passes"
        elif self.tried:
            where += "; no numerics setting tried makes it pass (" + ", ".join(f"{k}={v}" for k, v in self.tried) + ")"
        return where

    def flags(self) -> list[str]:
        """The command-line options that apply a fix."""
        return [f"--inductor-option {k}={v}" for k, v in self.fixes]

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["stages"] = [list(s) for s in self.stages]
        d["fixes"] = [list(f) for f in self.fixes]
        d["tried"] = [list(t) for t in self.tried]
        d["part"] = self.part
        d["sentence"] = self.sentence()
        return d


def needs_localizing(result) -> bool:
    """A completed config whose accuracy check failed."""
    return (
        result is not None
        and result.status == JobStatus.COMPLETED
        and result.accuracy is not None
        and result.accuracy.status == AccuracyStatus.FAIL.value
    )


def localize(result, run_one, available: dict, config: CompileConfig | None = None) -> Localization:
    """Localize one failed config: `run_one(spec)` runs a job and returns its JobResult (None
    when cancelled); `available` is inductor's config (for NUMERICS); `config` the config the
    jobs start from (default: the result's own; core.report.safety.ReportGate may have left
    settings out), the finding named by the result's label. Stops at the first stage that
    diverges and at a cancelled job, naming what went untried."""
    loc = Localization(result.config.label)
    config = result.config if config is None else config
    configs = stage_configs(config)
    if not configs:
        loc.note = f"backend {config.backend} is not one of the stages ({', '.join(b for b, _ in STAGES)})"
        return loc
    diverged = None
    for i, cfg in enumerate(configs):
        r = run_one(localization_spec(result.spec, cfg, modules=True))
        word = outcome(r)
        loc.stages.append((cfg.backend, word))
        if word == "cancelled":
            loc.note = f"cancelled at stage {cfg.backend}"
            loc.untried = [f"stage {c.backend}" for c in configs[i:]]
            if config.backend == "inductor":
                loc.untried.append("the numerics settings")
            return loc
        if word == AccuracyStatus.FAIL.value:
            diverged = r
            break
        if word != AccuracyStatus.PASS.value:
            loc.note = f"backend {cfg.backend} gave no verdict ({word})"
            return loc
    if diverged is None:
        loc.note = "every stage passed in its own run, while the profiled run failed: the divergence does not reproduce"
        return loc
    loc.stage = diverged.config.backend
    a = diverged.accuracy
    loc.module, loc.module_kind, loc.module_reason = a.module, a.module_kind, a.module_reason
    loc.max_rel_error = a.module_rel_error
    if loc.stage == "inductor":
        settings = [
            (cfg, next((k, v) for k, v in cfg.inductor_options if dict(diverged.config.inductor_options).get(k) != v))
            for cfg in numerics_configs(diverged.config, available)
        ]
        for i, (cfg, (key, value)) in enumerate(settings):
            r = run_one(localization_spec(result.spec, cfg, modules=False))
            word = outcome(r)
            if word == "cancelled":
                loc.note = "cancelled while trying numerics settings"
                loc.untried = [f"{k}={v}" for _, (k, v) in settings[i:]]
                break
            loc.tried.append((key, value))
            if word == AccuracyStatus.PASS.value:
                loc.fixes.append((key, value))
    return loc


def fix_changes(entry) -> list[ConfigChange]:
    """The numerics settings a localization (report.json's `localization` entry) found to make
    the accuracy check pass, as apply-and-re-run changes. An entry is untrusted data: only the
    exact (setting, value) pairs of NUMERICS are taken, nothing else a report may name."""
    known = set(NUMERICS)
    fixes = entry.get("fixes") if isinstance(entry, dict) else None
    out = []
    for item in fixes if isinstance(fixes, list) else []:
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            continue
        key, value = item
        if isinstance(key, str) and type(value) is bool and (key, value) in known:
            out.append(
                ConfigChange(
                    f"set {key}={value} (with it the accuracy check passed when localized)",
                    inductor_options=((key, value),),
                )
            )
    return out
