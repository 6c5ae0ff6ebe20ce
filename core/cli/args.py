"""The command lines of `profile`, `tune`, `zoo` and the desktop app, defined once
(`build_parser(command)`), and their checks: every value is validated against the installed
torch and the accepted ranges before any work starts (`build_specs`)."""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys

from core.capture.compile_log import CompileLogError
from core.capture.compile_log import parse_settings as parse_compile_log
from core.measure.training import OPTIMIZERS, TASKS
from core.vocab.config import (
    AUTOCASTS,
    DEFAULT_COMPILE_LOG,
    DEVICE_CHOICES,
    DTYPES,
    DYNAMIC_CHOICES,
    TIMINGS,
    JobSpec,
    ModelSpec,
    dynamo_config_defaults,
    expand_configs,
    inductor_config_defaults,
    make_jobs,
    parse_dim_marks,
    parse_key_values,
    validate_config,
)
from core.vocab.limits import AUTO_PROCESSES_CAP, LIMITS, ConfigError, check_limits, iteration_fields

DESCRIPTIONS = {
    "profile": "Profile a model eager against torch.compile'd, for every combination of the given "
    "backends, modes and dynamic settings, and write CSV/JSON reports.",
    "tune": "Find the best torch.compile settings for a model on this machine: run a candidate set suited "
    "to the device, cheapest first, each as a normal profiling job, stop at the time budget, and "
    "recommend one (with the code for it).",
    "app": "compile-profiler desktop app: profile torch.compile against eager for a model.",
    "zoo": "Profile many models under the same configs, on this machine or a Ray cluster: one report folder per "
    "model and zoo.csv / zoo_summary.csv for all of them (see docs/zoo.md).",
}
# The commands `main.py` runs headless, in the order docs/cli.md lists them (the app's --help
# lists them; a mistyped one is named with the closest).
COMMANDS = {
    "profile": "profile one model eager against compiled (MODEL --out DIR)",
    "run": "run your own script: every torch.compile in it timed against its eager run (SCRIPT.py -- ARGS)",
    "tune": "find the best settings within a time budget, then recommend",
    "compare": "compare a report with a saved baseline; exit 1 on a regression (a CI gate)",
    "zoo": "many models x configs, here or on a Ray cluster",
    "localize": "find where a config's outputs diverge from eager (a report's failed accuracy check)",
    "bundle": "a reproducer to hand over: one zip with repro.py",
    "test": "the test suite",
    "bench": "the benchmarks",
}
APP_EPILOG = "\n".join(
    [
        "commands, headless (python3 main.py COMMAND --help for each):",
        *(f"  {name:<10}{what}" for name, what in COMMANDS.items()),
        "without a command, the desktop app opens.",
    ]
)


def close_command(word: str) -> str:
    """The command `word` looks like a typo of ("" when none): `profil` → `profile`."""
    import difflib

    match = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.75)
    return match[0] if match and match[0] != word else ""


SOURCE_HELP = (
    "a torchvision model name (e.g. resnet18), timm:NAME (e.g. timm:resnet50), hf:TYPE (e.g. hf:bert) or "
    "hf:FOLDER (saved with save_pretrained; hf:SOURCE#HeadClass picks a head), or a path to a .py model "
    "file, a .pt2 (torch.export) or a TorchScript file"
)
COMPILE_OPTION_COMMANDS = ("profile", "zoo")  # the commands that take --backend/--mode/--dynamic/...
# What the desktop app's command line takes (its form has these): the same definitions as profile.
APP_OPTIONS = (
    "--backend",
    "--mode",
    "--dynamic",
    "--fullgraph",
    "--dynamo-config",
    "--sweep-shapes",
    "--device",
    "--iters",
    "--processes",
    "--warmup",
    "--batch-size",
    "--image-size",
    "--task",
    "--optimizer",
    "--compile-optimizer",
    "--dtype",
    "--autocast",
    "--timing",
    "--seq-len",
    "--hf-config",
    "--sweep-batch",
)


def build_parser(command: str = "profile") -> argparse.ArgumentParser:
    """The command line of `profile` (or of `tune`, which shares every run, model, output and
    decision option and chooses the compile settings itself: no --backend/--mode/--dynamic/
    --fullgraph/--inductor-option/--sweep-shapes, and a --budget; or of `zoo`, which takes
    many models and the compile options but no --sweep-shapes, and adds its own in core.zoo.results)."""
    if command == "app":  # the desktop app's command line: the options its form has, nothing preset
        p = argparse.ArgumentParser(
            prog="main.py",
            description=DESCRIPTIONS[command],
            epilog=APP_EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    else:
        p = argparse.ArgumentParser(prog=f"main.py {command}", description=DESCRIPTIONS[command])
    full = p

    def add(*flags, **kwargs):
        """Define an option once for every command; the app takes only APP_OPTIONS, with no
        defaults (unnamed values keep what its form remembers)."""
        if command == "app":
            if flags[0] not in APP_OPTIONS:
                return
            kwargs.pop("required", None)
            if kwargs.get("action") not in ("store_true", "append"):
                kwargs["default"] = None
        full.add_argument(*flags, **kwargs)

    if command == "zoo":
        p.add_argument("models", metavar="MODEL", nargs="*", help=f"models to profile, each {SOURCE_HELP}")
    elif command == "app":
        p.add_argument("model", metavar="MODEL", nargs="?", help=f"the model to preselect: {SOURCE_HELP}")
    else:
        p.add_argument("model", metavar="MODEL", help=SOURCE_HELP)
    if command in COMPILE_OPTION_COMMANDS + ("app",):
        add("--backend", action="append", help="torch.compile backend (repeatable; default inductor)")
        add("--mode", action="append", help="inductor mode (repeatable; default 'default')")
        add(
            "--dynamic",
            action="append",
            choices=DYNAMIC_CHOICES,
            help="dynamic shapes: auto (torch decides), true or false (repeatable; default auto)",
        )
        add("--fullgraph", action="store_true", help="fail instead of breaking the graph")
    add(
        "--dynamo-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="torch._dynamo.config override, e.g. capture_scalar_outputs=True (repeatable)",
    )
    if command == "profile":
        add(
            "--localize",
            action="store_true",
            help="when a config fails the accuracy check, find where its outputs diverge: the first "
            "compiler stage (eager, aot_eager, aot_eager_decomp_partition, inductor), the submodule, and "
            "for inductor the numerics setting that makes it pass (each a job of its own)",
        )
    if command in COMPILE_OPTION_COMMANDS:
        add(
            "--mark-dynamic",
            action="append",
            default=[],
            metavar="INPUT:DIM[:MIN:MAX]",
            help="torch._dynamo.mark_dynamic on dimension DIM of input INPUT (both from 0) before the first "
            "compiled call, optionally bounded, e.g. 0:1:8:512 (repeatable; the suggestion after a "
            "recompiling --sweep-shapes run names them)",
        )
    if command in COMPILE_OPTION_COMMANDS + ("app",):
        add(
            "--inductor-option",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="torch._inductor.config option passed as torch.compile(options=...) (repeatable)",
        )
    d = {key: lim.default for key, lim in LIMITS.items()}
    add("--warmup", type=int, default=d["warmup"], help=f"warm-up calls per side (default {d['warmup']})")
    add(
        "--iters",
        type=parse_iters,
        default=AUTO,
        help=f"timed calls per side: a number (at most {LIMITS['iters'].high:,.0f}), or auto (the default): "
        + (
            f"blocks of calls until the speedup's 95%% interval is within ±{d['precision']:g}%%, or "
            f"{d['max_time']:g} s of timed calls per config have run"
            if command == "app"
            else "blocks of calls until the speedup's 95%% interval is within --precision, or --max-time runs out"
        ),
    )
    add(
        "--precision",
        type=float,
        default=d["precision"],
        metavar="PCT",
        help=f"--iters auto: stop when the speedup is known within ±PCT %% (default {d['precision']:g})",
    )
    add(
        "--max-time",
        type=float,
        default=d["max_time"],
        metavar="S",
        help=f"--iters auto: at most S seconds of timed calls per config, over all its processes "
        f"(default {d['max_time']:g})",
    )
    add(
        "--processes",
        type=int,
        default=int(d["processes"]),
        metavar="N",
        help=f"time each config in N fresh processes (default {d['processes']:g}): one process is one draw, its "
        "memory layout and placement can shift its speed for its whole life; the speedup's interval "
        "includes the spread between them (shape and batch sweeps run in one); with --iters auto, while "
        + (
            f"they disagree beyond the precision, more are added, up to {AUTO_PROCESSES_CAP} in all, within the "
            "time limit"
            if command == "app"
            else f"they disagree beyond --precision, more are added, up to {AUTO_PROCESSES_CAP} in all, within --max-time"
        ),
    )
    add(
        "--block",
        type=int,
        default=d["block"],
        metavar="N",
        help=f"alternate eager and compiled timed calls in blocks of N (default {d['block']}, shortened "
        "so the sides alternate at least 4 times; 1 = strict "
        "alternation as in PyTorch's runner, which biases CPU results by 10-20%%, "
        "see docs/BENCHMARKS.md)",
    )
    add(
        "--batch-size",
        type=int,
        default=d["batch_size"],
        help=f"batch size of torchvision inputs (default {d['batch_size']})",
    )
    add(
        "--image-size",
        type=int,
        default=d["image_size"],
        help=f"image size of torchvision inputs (default {d['image_size']})",
    )
    add("--weights", help="local state_dict for a torchvision or timm model (torch.load weights_only=True)")
    add(
        "--seq-len",
        type=int,
        default=d["seq_len"],
        metavar="N",
        help=f"tokens per sequence of hf: text models, frames of speech_to_text-style audio models "
        f"(default {d['seq_len']})",
    )
    add(
        "--hf-class",
        default="",
        metavar="CLASS",
        help="the transformers class that builds an hf: model, e.g. AutoModelForCausalLM or "
        "BertForMaskedLM (default: AutoModel for a type, the saved class for a folder)",
    )
    add(
        "--hf-config",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a field of an hf: model's config, typed like it, e.g. num_hidden_layers=2 (repeatable)",
    )
    add("--device", choices=DEVICE_CHOICES, default="cpu", help="cpu or cuda (default cpu)")
    add("--threads", type=int, help="torch thread count (default: torch's choice, recorded)")
    add(
        "--timeout",
        type=float,
        default=d["timeout"],
        help=f"seconds before a job is ended as hung (default {d['timeout']:g})",
    )
    if command in ("profile", "app"):
        add(
            "--sweep-shapes",
            action="store_true",
            help="run every input of the model file's get_input_variants() against one compiled model "
            "per config, recording recompiles and their reasons (writes variants.csv)",
        )
    add("--no-inference-mode", action="store_true", help="run under no_grad instead of inference_mode")
    if command in ("profile", "app"):
        add(
            "--sweep-batch",
            metavar="B1,B2,...",
            type=parse_batch_sizes,
            help="profile each config at each of these batch sizes against one compiled model (e.g. 1,8,32): "
            "items per second eager and compiled, latency per batch, peak memory, recompiles; a batch size "
            "that runs out of memory ends that size, not the run (variants.csv: one row per batch size)",
        )
    add(
        "--task",
        choices=TASKS,
        default="inference",
        help="inference (default): one call is a forward; training: forward, loss (the model's own, else the mean "
        "of the outputs), backward and an optimizer step, the model and optimizer reset to the same state "
        "for eager and compiled (see docs/cli.md); generate: text generation of a Hugging Face causal LM, "
        "with options of its own (main.py profile hf:gpt2 --task generate --help; docs/generation.md)",
    )
    add("--optimizer", choices=OPTIMIZERS, default="sgd", help="training: the optimizer (default sgd)")
    add(
        "--dtype",
        choices=DTYPES,
        default="float32",
        help="the model's parameters and floating inputs in this dtype, eager and compiled alike (default float32); "
        "a dtype the device or the model cannot run fails the job with the reason",
    )
    add(
        "--timing",
        choices=TIMINGS,
        default="latency",
        help="latency (default): each call alone, synchronised before and after (what one request waits); "
        "throughput: blocks of calls back to back, one synchronisation a block, the time a call = block / calls "
        "(as torch.utils.benchmark.Timer and triton's do_bench; back-to-back calls overlap the CPU's launch "
        "work); both: latency, then a throughput phase, the two speedups side by side",
    )
    add(
        "--flush-cache",
        action="store_true",
        help="CUDA: clear the GPU's L2 cache before each timed call, as triton's do_bench does (--device cuda only)",
    )
    add(
        "--autocast",
        choices=AUTOCASTS,
        help="run every call, eager and compiled, under torch.autocast with this dtype (mixed precision)",
    )
    if command in COMPILE_OPTION_COMMANDS + ("app",):
        add(
            "--compile-optimizer",
            action="store_true",
            help="training: compile the optimizer step too (torch.compile(optimizer.step))",
        )
    add(
        "--out",
        required=True,
        metavar="DIR",
        help="folder for the report: summary.csv (a row per config), recommendation.txt, report.json (all of it; "
        "the app opens it), the other tables (latency, graph breaks, recompiles, resources, ops, time breakdown, "
        "graphs, source lines, compile stages) and graphs/, traces/, compile_log/, torch_trace/ "
        "(docs/report-format.md lists them)"
        if command != "zoo"
        else "folder for zoo.csv, zoo_summary.csv, zoo.json and one report folder per model (DIR/MODEL/)",
    )
    add(
        "--overwrite",
        action="store_true",
        help="replace a report already in --out (by default a folder holding a report is refused)",
    )
    add("--quiet", action="store_true", help="no progress bar")
    add(
        "--op-profile",
        type=int,
        default=d["op_profile"],
        metavar="N",
        help=f"after the timed benchmark, profile N eager and N compiled calls op by op with "
        f"torch.profiler: time by category, operators and kernels, the cost of each graph break "
        f"(ops.csv, time_breakdown.csv, traces/; default {d['op_profile']}, 0 = off)",
    )
    add(
        "--compile-log",
        default=DEFAULT_COMPILE_LOG,
        metavar="LEVEL",
        help=f"torch's compile log kept per config as compile_log/<config>.log, in TORCH_LOGS syntax "
        f"(default {DEFAULT_COMPILE_LOG}; e.g. +dynamo,inductor,guards,output_code for everything "
        f"the compiler does). Replaces a TORCH_LOGS set in the environment",
    )
    add(
        "--tlparse",
        action="store_true",
        help="run tlparse (pip package tlparse) on each config's structured trace (torch_trace/) "
        "into tlparse/<config>/index.html",
    )
    if command != "app":
        add_decision_arguments(p)
    if command == "profile":
        add(
            "--bundle",
            metavar="FILE.zip",
            help="after the run, save a bug report: a zip with repro.py (rebuilds the model, compiles it "
            "as the run did, shows the first problem found), the model file or its inputs, report.json, "
            "torch's structured trace and compile log of that config, and the environment "
            "(see docs/cli.md, 'A reproducer to hand over')",
        )
    if command == "tune":
        from core.decide.tune import DEFAULT_BUDGET_MIN

        add(
            "--budget",
            type=float,
            default=DEFAULT_BUDGET_MIN,
            metavar="MINUTES",
            help=f"wall-clock budget for all candidates (default {DEFAULT_BUDGET_MIN:g} min): a candidate "
            "whose estimated time no longer fits is not started, one still running when the "
            "budget ends is cancelled; the report says which the budget cut",
        )
        p.set_defaults(backend=None, mode=None, dynamic=None, fullgraph=False, inductor_option=[], sweep_shapes=False)
    return p


AUTO = "auto"


def parse_iters(text: str) -> int | str:
    """--iters: a whole number, or "auto"."""
    if str(text).strip().lower() == AUTO:
        return AUTO
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--iters takes a whole number or auto, not {text!r}") from None


def iteration_settings(args: argparse.Namespace) -> dict:
    """The JobSpec fields of --iters/--precision/--max-time/--processes, checked."""
    return iteration_fields(None if args.iters == AUTO else args.iters, args.precision, args.max_time, args.processes)


def parse_batch_sizes(text: str) -> tuple[int, ...]:
    """ "1,8,32" → (1, 8, 32): whole numbers within --batch-size's range, each once."""
    try:
        sizes = tuple(int(t) for t in text.replace(" ", "").split(",") if t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"batch sizes are whole numbers separated by commas (1,8,32), not {text!r}")
    if not sizes or len(set(sizes)) != len(sizes):
        raise argparse.ArgumentTypeError(f"give each batch size once, e.g. 1,8,32, not {text!r}")
    try:
        for size in sizes:
            check_limits(batch_size=size)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return sizes


def add_decision_arguments(p: argparse.ArgumentParser) -> None:
    """--calls and --fail-on: what the recommendation is for and what makes the run fail."""
    from core.decide.recommend import DEFAULT_CALLS

    p.add_argument(
        "--calls",
        type=int,
        default=DEFAULT_CALLS,
        metavar="N",
        help=f"how many calls the compiled model will serve, for the recommendation: total time = "
        f"compile time + N x time per call (default {DEFAULT_CALLS:,}; yours to choose)",
    )
    p.add_argument(
        "--fail-on",
        action="append",
        default=[],
        choices=["accuracy"],
        help="exit non-zero when a config fails the accuracy check (compiled outputs differ from eager's)",
    )


def build_specs(args: argparse.Namespace, configs: list | None = None, device_here: bool = True) -> list[JobSpec]:
    """Validate everything and build the jobs (one per config: `configs`, or every
    combination of the command line's); raises ConfigError before any work. `device_here`
    False: the jobs run on other machines (zoo on a Ray cluster), so --device cuda and a
    model's memory fit are not checked against this one."""
    device = args.device if device_here else "cpu"
    from core.models import ModelLoadError, check_source, defines_variants, normalize_source, source_kind

    check_limits(
        warmup=args.warmup,
        block=args.block,
        batch_size=args.batch_size,
        image_size=args.image_size,
        threads=args.threads,
        timeout=args.timeout,
        seq_len=args.seq_len,
    )
    iterations = iteration_settings(args)
    _check_source_options(args, source_kind(args.model))
    if args.sweep_shapes and not defines_variants(args.model):
        raise ConfigError(
            f"--sweep-shapes needs a Python model file that defines get_input_variants(); {args.model} does not."
        )
    task = getattr(args, "task", "inference")
    sweep_batch = tuple(getattr(args, "sweep_batch", None) or ())
    if sweep_batch and args.sweep_shapes:
        raise ConfigError("--sweep-batch and --sweep-shapes are two different sweeps; give one.")
    if task == "training" and args.sweep_shapes:
        raise ConfigError("--sweep-shapes measures inference; it does not combine with --task training.")
    if task != "training" and (getattr(args, "compile_optimizer", False) or getattr(args, "optimizer", "sgd") != "sgd"):
        raise ConfigError("--optimizer and --compile-optimizer apply only to --task training.")
    if getattr(args, "flush_cache", False) and device != "cuda":
        raise ConfigError("--flush-cache clears a GPU's L2 cache between calls; it applies to --device cuda only.")
    if getattr(args, "timing", "latency") != "latency" and (args.sweep_shapes or sweep_batch):
        raise ConfigError("--timing throughput/both times the example inputs; a sweep times each shape by latency.")
    if args.weights and not os.path.exists(args.weights):
        raise ConfigError(f"weights file {args.weights} not found.")
    check_limits(op_profile=args.op_profile)
    check_limits(calls=args.calls)
    # The compile settings before the model, against torch's offer as the app keeps it
    # (core.run.torch_info's cache for this install) when there is one: a wrong --mode or
    # --backend is then refused without importing torch and torchvision first (seconds).
    offer = cached_offer()
    dynamo = parse_key_values(
        args.dynamo_config, _dynamo_defaults(offer) if args.dynamo_config else {}, "torch._dynamo.config"
    )
    inductor = parse_key_values(
        args.inductor_option, inductor_config_defaults() if args.inductor_option else {}, "torch._inductor.config"
    )
    if configs is None:
        configs = expand_configs(
            args.backend or ["inductor"],
            args.mode or ["default"],
            args.dynamic or ["auto"],
            args.fullgraph,
            dynamo,
            inductor,
        )
        if getattr(args, "compile_optimizer", False):
            configs = [dataclasses.replace(c, compile_optimizer=True) for c in configs]
    else:
        configs = [
            dataclasses.replace(c, dynamo_config=tuple(sorted({**dict(c.dynamo_config), **dict(dynamo)}.items())))
            for c in configs
        ]
    marks = parse_dim_marks(getattr(args, "mark_dynamic", None) or [])
    if marks:
        configs = [dataclasses.replace(c, mark_dynamic=marks) for c in configs]
    # what the cache holds answers; the rest is asked of torch (None), a GPU the cache found
    # missing too (one may have come back since)
    known = {}
    if offer is not None:
        known = {"backends": offer.all_backends, "modes": offer.modes, "cuda_available": offer.cuda_available or None}
    for cfg in configs:
        validate_config(cfg, device, **known)
    try:
        model = ModelSpec(
            normalize_source(args.model),
            args.batch_size,
            args.image_size,
            args.weights,
            seq_len=args.seq_len,
            hf_class=args.hf_class,
            hf_config=tuple(args.hf_config),
        )
        # unknown names, missing packages, configs too big: before any work
        check_source(model, device, torchvision_names=offer.models if offer is not None else None)
    except ModelLoadError as exc:
        raise ConfigError(str(exc)) from None
    try:  # imports torch (its log registry)
        parse_compile_log(args.compile_log)
    except CompileLogError as exc:
        raise ConfigError(str(exc)) from None
    return make_jobs(
        model,
        configs,
        warmup=args.warmup,
        **iterations,
        device=args.device,
        threads=args.threads,
        inference_mode=not args.no_inference_mode,
        timeout_s=args.timeout,
        sweep_shapes=args.sweep_shapes,
        block_size=args.block,
        op_profile_calls=args.op_profile,
        compile_log=args.compile_log,
        task=task,
        optimizer=getattr(args, "optimizer", "sgd"),
        sweep_batch=sweep_batch,
        dtype=getattr(args, "dtype", None) or "float32",
        autocast=getattr(args, "autocast", None) or "",
        timing=getattr(args, "timing", None) or "latency",
        flush_cache=bool(getattr(args, "flush_cache", False)),
    )


def cached_offer():
    """torch's offer (core.run.torch_info.TorchInfo) from the cache the app and earlier commands
    keep for this install, or None: no cache yet, or one that says loading failed or lacks a list
    the checks need. Reads a small file; imports neither torch nor torchvision."""
    from core.run.torch_info import cached_torch_info

    offer = cached_torch_info()
    if offer is None or offer.error or not (offer.all_backends and offer.modes and offer.models):
        return None
    return offer


def remember_offer() -> None:
    """Keep torch's offer in the cache `cached_offer` reads when there is none and this command
    imported torch and torchvision anyway (a torchvision model's checks): the next refusal then
    needs neither. Called once a command's jobs are done (`core.cli.profile.run_and_report`):
    reading the offer asks torch about the GPU, which no measurement should share. A Hugging
    Face or file model leaves it to the app (no torchvision import for it). Never raises."""
    if "torchvision" not in sys.modules:
        return
    from core.run.torch_info import cached_torch_info, load_and_cache_torch_info

    if cached_torch_info() is None:
        load_and_cache_torch_info()  # never raises: a failed load is not kept


def _dynamo_defaults(offer) -> dict:
    """torch._dynamo.config's settings with their defaults: the cached offer's (each value's type
    kept where JSON holds it, as the checks of an override need), else torch's own."""
    if offer is not None and offer.dynamo_defaults:
        return dict(offer.dynamo_defaults)
    return dynamo_config_defaults()


def _check_source_options(args: argparse.Namespace, kind: str) -> None:
    """Refuse options the model source would ignore, rather than ignore them silently."""
    image_default = LIMITS["image_size"].default
    if kind != "hf":
        given = [
            flag
            for flag, value in (
                ("--hf-class", args.hf_class),
                ("--hf-config", args.hf_config),
                ("--seq-len", args.seq_len != LIMITS["seq_len"].default),
            )
            if value
        ]
        if given:
            raise ConfigError(
                f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to Hugging Face "
                f"models (hf:TYPE or hf:FOLDER), not {args.model}."
            )
    else:
        if args.image_size != image_default:
            raise ConfigError(
                "--image-size does not apply to hf: models: their image size comes from the config; "
                "set it with --hf-config image_size=N."
            )
        if args.weights:
            raise ConfigError(
                "--weights does not apply to hf: models; give a folder saved with save_pretrained "
                "(hf:./folder) to profile trained weights."
            )
