"""Compile settings and job specifications, validated against the installed torch.

Valid backends, modes and config keys are read from torch itself
(`torch._dynamo.list_backends`, `torch._inductor.list_mode_options`, the config modules'
own keys), never hard-coded, so the lists follow whatever torch is installed.
"""

from __future__ import annotations

import ast
import difflib
import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from core.vocab.limits import LIMITS, ConfigError

DEFAULT_COMPILE_LOG = "graph_breaks,recompiles"  # torch's log artifacts kept per job (core.capture.compile_log)
DYNAMIC_CHOICES = ("auto", "true", "false")
DEVICE_CHOICES = ("cpu", "cuda")
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")  # inductor modes that record CUDA graphs
AUTOTUNE_MODE = "max-autotune-no-cudagraphs"  # inductor's autotuned kernels without CUDA graphs


@dataclass(frozen=True)
class DimMark:
    """`torch._dynamo.mark_dynamic(inputs[input], dim, min=min, max=max)` before the first
    compiled call: that dimension of that input is compiled symbolic from the start (the
    dynamic-shape call core.analysis.dynamic_dims proposes from the sizes a sweep saw)."""

    input: int
    dim: int
    min: int | None = None
    max: int | None = None

    @classmethod
    def from_dict(cls, d: Any) -> "DimMark":
        """A mark as report.json holds it; ConfigError unless it has whole numbers only (a crafted
        report's mark never reaches torch as anything else)."""
        if isinstance(d, DimMark):
            return d
        if not isinstance(d, dict) or set(d) - {"input", "dim", "min", "max"} or not {"input", "dim"} <= set(d):
            raise ConfigError(f"mark_dynamic: expected {{input, dim, min, max}}, not {str(d)[:80]!r}.")
        for key, value in d.items():
            if value is None and key in ("min", "max"):
                continue
            if type(value) is not int or value < 0:
                raise ConfigError(
                    f"mark_dynamic {key}: expected a whole number of at least 0, not {str(value)[:40]!r}."
                )
        return cls(d["input"], d["dim"], d.get("min"), d.get("max"))

    @property
    def label(self) -> str:
        bounds = f"[{'' if self.min is None else self.min}-{'' if self.max is None else self.max}]"
        return f"{self.input}.{self.dim}" + (bounds if self.min is not None or self.max is not None else "")


@dataclass(frozen=True)
class CompileConfig:
    """One way to call torch.compile. `dynamic` is "auto" (None), "true" or "false"."""

    backend: str = "inductor"
    mode: str = "default"
    dynamic: str = "auto"
    fullgraph: bool = False
    dynamo_config: tuple[tuple[str, Any], ...] = ()
    inductor_options: tuple[tuple[str, Any], ...] = ()
    compile_optimizer: bool = False  # training steps: the optimizer step compiled too (core.measure.training)
    # input dimensions marked dynamic before the first compiled call (torch._dynamo.mark_dynamic)
    mark_dynamic: tuple[DimMark, ...] = ()

    @property
    def label(self) -> str:
        """Short unique name used in every table, chart legend and CSV `config` column."""
        parts = [self.backend]
        if self.mode != "default":
            parts.append(self.mode)
        if self.dynamic != "auto":
            parts.append(f"dynamic={self.dynamic}")
        if self.fullgraph:
            parts.append("fullgraph")
        parts += [f"{k}={v}" for k, v in self.dynamo_config]
        parts += [f"{k}={v}" for k, v in self.inductor_options]
        if self.compile_optimizer:
            parts.append("compiled optimizer")
        if self.mark_dynamic:
            parts.append("mark_dynamic=" + ",".join(m.label for m in self.mark_dynamic))
        return "/".join(parts)

    @property
    def records_cudagraphs(self) -> bool:
        """Inductor records CUDA graphs (on a GPU) with this config: a CUDA-graph mode, or
        `triton.cudagraphs` in the options (a config with options takes no mode: "apply and
        re-run" folds a mode into its options, see core.decide.advice.ConfigChange)."""
        if self.backend != "inductor":
            return False
        if self.inductor_options:
            return bool(dict(self.inductor_options).get("triton.cudagraphs", False))
        return self.mode in CUDAGRAPH_MODES

    def compile_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for torch.compile (the dynamo overrides are applied apart)."""
        kwargs: dict[str, Any] = {
            "backend": self.backend,
            "fullgraph": self.fullgraph,
            "dynamic": {"auto": None, "true": True, "false": False}[self.dynamic],
        }
        if self.inductor_options:
            kwargs["options"] = dict(self.inductor_options)
        elif self.mode != "default":
            kwargs["mode"] = self.mode
        return kwargs

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["dynamo_config"] = dict(self.dynamo_config)
        d["inductor_options"] = dict(self.inductor_options)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CompileConfig":
        return cls(
            backend=d.get("backend", "inductor"),
            mode=d.get("mode", "default"),
            dynamic=d.get("dynamic", "auto"),
            fullgraph=bool(d.get("fullgraph", False)),
            dynamo_config=tuple(sorted(dict(d.get("dynamo_config") or {}).items())),
            inductor_options=tuple(sorted(dict(d.get("inductor_options") or {}).items())),
            compile_optimizer=bool(d.get("compile_optimizer", False)),
            mark_dynamic=tuple(DimMark.from_dict(m) for m in (d.get("mark_dynamic") or ())),
        )


@dataclass(frozen=True)
class ModelSpec:
    """What to profile and its input settings. `source`: a torchvision name, `timm:NAME`,
    `hf:TYPE` or `hf:FOLDER` (optionally `#HeadClass`), or a model file path (core.models).
    The hf_ fields and seq_len apply to Hugging Face sources only: `hf_config` holds the
    config overrides as the user wrote them ("num_hidden_layers=2"), checked against the
    model's config by core.models.hf_models."""

    source: str
    batch_size: int = int(LIMITS["batch_size"].default)
    image_size: int = int(LIMITS["image_size"].default)
    weights: str | None = None
    seq_len: int = int(LIMITS["seq_len"].default)
    hf_class: str = ""
    hf_config: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


DTYPES = ("float32", "bfloat16", "float16")
TIMINGS = ("latency", "throughput", "both")
THROUGHPUT_CALLS = 10  # calls back to back in a throughput block (one synchronisation each block)


def timing_method_text(timing: str) -> str:
    """What a timing method measures, in words (reports and tables name it beside each figure)."""
    if timing == "throughput":
        return f"throughput: blocks of {THROUGHPUT_CALLS} calls back to back, one synchronisation a block, time a call = block / {THROUGHPUT_CALLS}"
    return "latency: one call at a time, synchronised before and after"


AUTOCASTS = ("bfloat16", "float16")


def precision_label(dtype: str, autocast: str) -> str:
    """How a job's numbers are computed, in a few words: "float32", "bfloat16", "float32, autocast bfloat16"."""
    return dtype + (f", autocast {autocast}" if autocast else "")


@dataclass(frozen=True)
class JobSpec:
    """One model × one compile config: everything the child process needs."""

    job_id: str
    model: ModelSpec
    config: CompileConfig = field(default_factory=CompileConfig)
    warmup: int = int(LIMITS["warmup"].default)
    iters: int = int(LIMITS["iters"].default)
    device: str = "cpu"
    threads: int | None = None  # None: torch's default for this machine
    inference_mode: bool = True
    timeout_s: float = float(LIMITS["timeout"].default)
    sweep_shapes: bool = False  # run every get_input_variants() entry instead of one benchmark
    # Timed calls alternate eager/compiled in blocks of this many. Measured on CPU (resnet18,
    # `python -m tests.bench alternation`, docs/BENCHMARKS.md): against back-to-back Timer,
    # strict 1:1 alternation made eager 15-19% slower and compiled 10-15% faster, blocks of 5
    # were off by ~4-5%, blocks of 25 by 0-3%; blocks still spread slow drift over both sides.
    block_size: int = int(LIMITS["block"].default)
    # After the benchmark: this many eager and compiled calls under torch.profiler (0: none).
    op_profile_calls: int = int(LIMITS["op_profile"].default)
    # torch's compile log for this job, TORCH_LOGS syntax (core.capture.compile_log).
    compile_log: str = DEFAULT_COMPILE_LOG
    # Where the job writes its files (traces, graphs, compile log, structured trace; see
    # core.vocab.artifacts): the report folder on the command line, a session folder in the app.
    artifacts_dir: str | None = None
    # "inference" or "training" (core.measure.training: forward, loss, backward, optimizer step per call)
    task: str = "inference"
    # The model's parameters and floating inputs in this dtype (DTYPES); `autocast` (AUTOCASTS,
    # "" for none) runs every call, eager and compiled, under torch.autocast with that dtype.
    dtype: str = "float32"
    autocast: str = ""
    # TIMINGS: "latency" (each call alone, synchronised), "throughput" (blocks of calls back to
    # back: the job's samples are the blocks' time a call) or "both" (latency, then a throughput phase)
    timing: str = "latency"
    flush_cache: bool = False  # CUDA: the L2 cache cleared before each timed call, as triton's do_bench
    optimizer: str = "sgd"  # training: sgd or adamw
    # Batch sizes to sweep against one compiled model (core.analysis.variants); empty: no sweep.
    sweep_batch: tuple[int, ...] = ()
    # How many fresh processes time this config (the front ends default to
    # LIMITS["processes"]); the first also compiles cold, checks accuracy and profiles ops,
    # the others only time (core.run.runner starts them one after another).
    processes: int = 1
    # Which of them this child is (set by the runner for the processes after the first).
    repeat: int = 0
    # --iters auto: time blocks until the speedup's 95% interval is within ±precision_pct %
    # (None: exactly `iters` calls a side) or max_time_s of benchmark (over all processes).
    precision_pct: float | None = None
    max_time_s: float = float(LIMITS["max_time"].default)
    # The benchmark seconds this process may take (set by the runner for a process it adds when
    # the processes disagree: what is left of max_time_s); None: an equal share of max_time_s.
    process_budget_s: float | None = None
    # "Apply and re-run": (the suggestion's rule, the config it changed, the change) that made
    # this job's config; empty for a config the user chose.
    applied: tuple[str, ...] = ()
    # When the accuracy check fails: compile the submodules one at a time to name the one whose
    # compiled outputs diverge (core.measure.localize_modules), after everything else.
    localize: bool = False
    # The inductor cache this job compiles in (TORCHINDUCTOR_CACHE_DIR, set in its processes before
    # anything compiles): set by the runner to its config's own folder (core.run.compile_cache), so a
    # config's compile never reuses kernels another config compiled; None: the machine's default.
    compile_cache_dir: str | None = None

    def uses_cudagraphs(self) -> bool:
        """CUDA-graph modes on a GPU: each call needs a step mark, and recording needs warm-up."""
        return self.device == "cuda" and self.config.records_cudagraphs

    @property
    def auto_iters(self) -> bool:
        """--iters auto: run until the precision is reached (see precision_pct)."""
        return self.precision_pct is not None

    def benchmark_budget_s(self) -> float:
        """--iters auto: the seconds of timed blocks this process may take."""
        if self.process_budget_s is not None:
            return self.process_budget_s
        return self.max_time_s / self.timed_processes()

    def fixed_calls(self) -> int:
        """The calls a side where a job times a fixed number (each variant of a sweep, an
        eager-only benchmark): `iters`, or with --iters auto the default number."""
        return int(LIMITS["iters"].default) if self.auto_iters else self.iters

    def planned_calls(self) -> int | None:
        """Timed calls a side per process, when fixed (None for --iters auto: until precise)."""
        return None if self.auto_iters else self.iters

    def timed_processes(self) -> int:
        """The processes that really time this job: sweeps run in one (each process would
        have to sweep every variant again)."""
        return 1 if self.sweep_shapes or self.sweep_batch else max(1, self.processes)

    def warmup_calls(self, side: str) -> int:
        """How many warm-up calls the job makes on `side`: CUDA graphs record on the first
        calls after compiling, so the compiled side warms up at least three times there."""
        if side == "compiled" and self.uses_cudagraphs():
            return max(self.warmup, 3)
        return self.warmup

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["config"] = self.config.to_dict()
        d["model"] = self.model.to_dict()
        return d


def parse_dim_marks(items: list[str] | tuple[str, ...]) -> tuple[DimMark, ...]:
    """--mark-dynamic values, "INPUT:DIM" or "INPUT:DIM:MIN:MAX" (whole numbers; INPUT counts the
    model's inputs from 0, as get_example_inputs() returns them), as DimMarks. ConfigError
    names a value that is not one."""
    marks = []
    for item in items:
        parts = str(item).split(":")
        try:
            if len(parts) not in (2, 4):
                raise ValueError
            numbers = [int(p) for p in parts]
        except ValueError:
            raise ConfigError(
                f"--mark-dynamic {item!r}: expected INPUT:DIM or INPUT:DIM:MIN:MAX (whole numbers), e.g. 0:1 or 0:1:2:512."
            ) from None
        if numbers[0] < 0 or numbers[1] < 0:
            raise ConfigError(f"--mark-dynamic {item!r}: the input and the dimension count from 0.")
        low, high = (numbers[2], numbers[3]) if len(numbers) == 4 else (None, None)
        if low is not None and (low < 0 or high < low):
            raise ConfigError(f"--mark-dynamic {item!r}: MIN must be at least 0 and at most MAX.")
        marks.append(DimMark(numbers[0], numbers[1], low, high))
    return tuple(marks)


def make_jobs(model: ModelSpec, configs: list[CompileConfig], **settings: Any) -> list[JobSpec]:
    """One JobSpec per config, each with a fresh job id; `settings` are the JobSpec fields all
    share (warmup, iters, device, ...). The one place a front end turns its options into jobs."""
    import uuid

    return [JobSpec(job_id=uuid.uuid4().hex[:8], model=model, config=config, **settings) for config in configs]


# ------------------------------------------------------------------ what torch offers


def available_backends() -> list[str]:
    """Every backend torch.compile accepts here, including eager and aot_eager."""
    import torch._dynamo

    return sorted(torch._dynamo.list_backends(None))


def recommended_backends() -> list[str]:
    """The backends torch lists by default, plus eager and aot_eager for debugging."""
    import torch._dynamo

    return sorted(set(torch._dynamo.list_backends()) | {"eager", "aot_eager"})


def available_modes() -> list[str]:
    import torch._inductor

    return list(torch._inductor.list_mode_options())


def dynamo_config_defaults() -> dict[str, Any]:
    import torch._dynamo.config

    return torch._dynamo.config.get_config_copy()


def inductor_config_defaults() -> dict[str, Any]:
    import torch._inductor.config

    return torch._inductor.config.get_config_copy()


def parse_key_values(
    items: list[str], defaults: dict[str, Any], what: str, keys_of: str = "the installed torch"
) -> tuple[tuple[str, Any], ...]:
    """Parse KEY=VALUE strings; each KEY must exist in `defaults` and VALUE match its type.
    `keys_of` names where the valid keys come from, in the refusal."""
    parsed: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"{what} override {item!r} is not KEY=VALUE (e.g. capture_scalar_outputs=True).")
        if key not in defaults:
            close = difflib.get_close_matches(key, list(defaults), n=5, cutoff=0.6)
            close += [k for k in defaults if key.lower() in k.lower() and k not in close][:5]
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise ConfigError(f"{what} has no setting {key!r}.{hint} See the {len(defaults)} keys of {keys_of}.")
        parsed[key] = _coerce(raw.strip(), defaults[key], key, what)
    return tuple(sorted(parsed.items()))


def _coerce(raw: str, default: Any, key: str, what: str) -> Any:
    if isinstance(default, bool):
        low = raw.lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise ConfigError(f"{what} setting {key} takes True or False, not {raw!r}.")
    try:
        value = ast.literal_eval(raw)
    except (ValueError, SyntaxError):
        value = raw
    if isinstance(default, (int, float)) and not isinstance(value, (int, float)):
        raise ConfigError(f"{what} setting {key} takes a number, not {raw!r}.")
    if isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float):
        raise ConfigError(f"{what} setting {key} takes a whole number, not {raw!r}.")
    return value


def validate_config(
    config: CompileConfig,
    device: str = "cpu",
    *,
    backends: Sequence[str] | None = None,
    modes: Sequence[str] | None = None,
    cuda_available: bool | None = None,
) -> None:
    """Raise ConfigError, with the valid values, for anything torch.compile would refuse.
    `backends`, `modes` and `cuda_available` are what torch offers here when the caller has
    them already (the app reads them in a helper process: core.run.torch_info), else torch
    is asked (imported)."""
    backends = list(backends) if backends is not None else available_backends()
    if config.backend not in backends:
        import difflib

        shown = [b for b in backends if "TESTING_ONLY" not in b]  # torch's own test backends: no choice for a user
        close = difflib.get_close_matches(config.backend, shown, n=1, cutoff=0.7)
        hint = f" Did you mean {close[0]!r}?" if close else ""
        raise ConfigError(f"Unknown backend {config.backend!r}.{hint} Valid backends here: {', '.join(shown)}.")
    modes = list(modes) if modes is not None else available_modes()
    if config.mode not in modes:
        raise ConfigError(
            f"Unknown mode {config.mode!r}. Valid modes here: {', '.join(modes)}. "
            "(Modes such as 'max', 'min', 'high-speed' or 'keypoint' do not exist in any torch release. To see what "
            "the compiler does, use --compile-log LEVEL, e.g. +dynamo,inductor,output_code.)"
        )
    if config.mode != "default" and config.backend != "inductor":
        raise ConfigError(
            f"mode={config.mode!r} only applies to the inductor backend, not {config.backend!r}; "
            "use mode 'default' with other backends."
        )
    if config.mode != "default" and config.inductor_options:
        raise ConfigError("torch.compile takes either a mode or inductor options, not both; drop one of them.")
    if config.inductor_options and config.backend != "inductor":
        raise ConfigError(f"Inductor options need backend 'inductor', not {config.backend!r}.")
    if config.dynamic not in DYNAMIC_CHOICES:
        raise ConfigError(f"dynamic must be one of {', '.join(DYNAMIC_CHOICES)}, not {config.dynamic!r}.")
    if device not in DEVICE_CHOICES:
        raise ConfigError(f"device must be one of {', '.join(DEVICE_CHOICES)}, not {device!r}.")
    if device == "cuda":
        if cuda_available is None:
            import torch

            cuda_available = torch.cuda.is_available()
        if not cuda_available:
            raise ConfigError("device 'cuda' was asked for but no CUDA GPU is available here; use --device cpu.")


COMPILE_ARGUMENTS = ("backend", "mode", "dynamic", "fullgraph", "options")
VERBOSE_REFUSAL = (
    "torch.compile has no verbose argument (outdated guides teach verbose=True: a TypeError in every "
    f"release). Valid arguments: {', '.join(COMPILE_ARGUMENTS)} (--backend, --mode, --dynamic, --fullgraph, "
    "--inductor-option). Graph breaks and recompiles are always captured in the report; for torch's own "
    "detailed log of the compile, use --compile-log LEVEL (e.g. --compile-log +dynamo,inductor,guards,output_code; "
    "kept as compile_log/<config>.log in the report folder)."
)


def asks_for_verbose(argv: list[str]) -> bool:
    """Whether a command line carries the `--verbose` that torch.compile never had."""
    return any(a == "--verbose" or a.startswith("--verbose=") for a in argv)


def default_configs(configs: list[CompileConfig], device: str, task: str, sweep: bool) -> list[CompileConfig]:
    """What a run profiles when the user chose no backend and no mode (`profile` without
    --backend and --mode; the app's form left at inductor's default with an empty queue): on
    the CPU, for inference without a sweep, each config of inductor's default mode is followed
    by the same with autotuned kernels (AUTOTUNE_MODE). A single plain-inductor run could not
    recommend what it never measured: on the verdicts bench (docs/BENCHMARKS.md) autotuning
    beat plain inductor beyond the noise on 5 of 13 CPU models, and once turned a "do not
    compile" into 1.6x. Elsewhere (CUDA, training, sweeps), `configs` as they are."""
    if device != "cpu" or task != "inference" or sweep:
        return list(configs)
    out: list[CompileConfig] = []
    for cfg in configs:
        out.append(cfg)
        if cfg.backend == "inductor" and cfg.mode == "default" and not cfg.inductor_options:
            tuned = replace(cfg, mode=AUTOTUNE_MODE)  # (with options a mode is not passed: compile_kwargs)
            if tuned not in configs:
                out.append(tuned)
    return out


def default_configs_note(added: Sequence[CompileConfig], app: bool) -> str:
    """What `profile` prints and the app's form shows when the default profiles `added` beside
    the config the user left as it was (default_configs)."""
    labels = ", ".join(c.label for c in added)
    alone = "add the config to the queue" if app else "give --backend or --mode"
    return (
        f"The run also profiles {labels}: on the CPU autotuned kernels are often faster than "
        f"inductor's default, and only a run here tells (to profile one config alone, {alone})."
    )


def expand_configs(
    backends: list[str],
    modes: list[str],
    dynamics: list[str],
    fullgraph: bool = False,
    dynamo_config: tuple[tuple[str, Any], ...] = (),
    inductor_options: tuple[tuple[str, Any], ...] = (),
) -> list[CompileConfig]:
    """Every combination of the given values, skipping mode variants on non-inductor
    backends (where only 'default' applies) rather than failing the whole sweep."""
    configs: list[CompileConfig] = []
    for backend, mode, dynamic in itertools.product(backends, modes, dynamics):
        if backend != "inductor" and mode != "default":
            if len(modes) > 1:
                continue  # a sweep over modes only means something for inductor
        cfg = CompileConfig(backend, mode, dynamic, fullgraph, dynamo_config, inductor_options)
        if cfg not in configs:
            configs.append(cfg)
    return configs
