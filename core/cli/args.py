"""The command lines of `profile`, `tune`, `zoo` and the desktop app, defined once
(`build_parser(command)`); the jobs they ask for are checked and built by
core.cli.job_specs.build_specs."""

from __future__ import annotations

import argparse

from core.measure.training import OPTIMIZERS, TASKS
from core.vocab.config import (
    AUTOCASTS,
    DEFAULT_COMPILE_LOG,
    DEVICE_CHOICES,
    DTYPES,
    DYNAMIC_CHOICES,
    TIMINGS,
)
from core.vocab.limits import AUTO_PROCESSES_CAP, LIMITS, ConfigError, check_limits

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
    "cache": "the compile caches each config compiles in: their size, and --clear",
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
    p = _new_parser(command)
    add = _option_adder(p, command)
    if command == "zoo":
        p.add_argument("models", metavar="MODEL", nargs="*", help=f"models to profile, each {SOURCE_HELP}")
    elif command == "app":
        p.add_argument("model", metavar="MODEL", nargs="?", help=f"the model to preselect: {SOURCE_HELP}")
    else:
        p.add_argument("model", metavar="MODEL", help=SOURCE_HELP)
    _add_compile_options(add, command)
    _add_timing_options(add, command)
    _add_model_options(add)
    _add_run_options(add, command)
    _add_report_options(add, command)
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


def _new_parser(command: str) -> argparse.ArgumentParser:
    if command == "app":  # the desktop app's command line: the options its form has, nothing preset
        p = argparse.ArgumentParser(
            prog="main.py",
            description=DESCRIPTIONS[command],
            epilog=APP_EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    else:
        p = argparse.ArgumentParser(prog=f"main.py {command}", description=DESCRIPTIONS[command])
    return p


def _option_adder(parser: argparse.ArgumentParser, command: str):
    """`add(*flags, **kwargs)` for `command`'s parser."""

    def add(*flags, **kwargs):
        """Define an option once for every command; the app takes only APP_OPTIONS, with no
        defaults (unnamed values keep what its form remembers)."""
        if command == "app":
            if flags[0] not in APP_OPTIONS:
                return
            kwargs.pop("required", None)
            if kwargs.get("action") not in ("store_true", "append"):
                kwargs["default"] = None
        parser.add_argument(*flags, **kwargs)

    return add


def _add_compile_options(add, command: str) -> None:
    """What torch.compile is given: backend, mode, dynamic shapes, fullgraph, config overrides, marks."""
    if command in COMPILE_OPTION_COMMANDS + ("app",):
        add(
            "--backend",
            action="append",
            help="torch.compile backend (repeatable; default inductor, with neither --backend nor --mode given on "
            "the CPU for inference also inductor max-autotune-no-cudagraphs)",
        )
        add("--mode", action="append", help="inductor mode (repeatable; default 'default', see --backend)")
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


def _add_timing_options(add, command: str) -> None:
    """How many calls are timed, and how: warm-up, --iters, precision, time limit, processes, blocks."""
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


def _add_model_options(add) -> None:
    """The model's inputs and weights: batch and image size, sequence length, Hugging Face class and config."""
    d = {key: lim.default for key, lim in LIMITS.items()}
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


def _add_run_options(add, command: str) -> None:
    """How each job runs: device, threads, timeout, sweeps, task, dtype, timing method, cache flush, autocast."""
    d = {key: lim.default for key, lim in LIMITS.items()}
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


def _add_report_options(add, command: str) -> None:
    """Where the report goes and what it records beside the timings: op profile, compile log, tlparse."""
    d = {key: lim.default for key, lim in LIMITS.items()}
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


AUTO = "auto"


def parse_iters(text: str) -> int | str:
    """--iters: a whole number, or "auto"."""
    if str(text).strip().lower() == AUTO:
        return AUTO
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--iters takes a whole number or auto, not {text!r}") from None


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
