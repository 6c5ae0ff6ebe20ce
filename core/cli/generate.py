"""`python3 main.py profile hf:TYPE --task generate [--cache static --cache dynamic] [--backend B ...]
--out DIR`: text generation profiled (core.vocab.generation): time to first token, per-token
decode latency, tokens/s, eager against compiled, and when the compile and the recompiles came.

Every combination of --cache and --backend (with --mode, --dynamic, --fullgraph) is one config:
its generation script (core.models.generation) runs as written and under
set_stance("force_eager") (core.run.generation), in fresh processes, one config after another.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time

from core.cli.output import CancelOnInterrupt
from core.cli.prologue import run_command
from core.report.safety import terminal_text
from core.vocab.generation import (
    CACHES,
    DEFAULT_GENERATIONS,
    DEFAULT_NEW_TOKENS,
    DEFAULT_WARMUP,
    GenerationSpec,
    make_specs,
)
from core.vocab.limits import LIMITS, ConfigError, check_limits


def asks_for_generation(argv: list[str]) -> bool:
    """`profile ... --task generate` (or --task=generate) is this command's."""
    for i, a in enumerate(argv):
        if a == "--":
            return False
        if a == "--task=generate" or (a == "--task" and i + 1 < len(argv) and argv[i + 1] == "generate"):
            return True
    return False


def _prompt_lens(text: str) -> tuple[int, ...]:
    try:
        values = tuple(int(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of whole numbers (e.g. 16,64,256)") from None
    if not values:
        raise argparse.ArgumentTypeError("give at least one prompt length")
    return values


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py profile MODEL --task generate",
        description="Profile text generation of a Hugging Face causal language model: time to first token, "
        "per-token decode latency, tokens/s, eager against compiled, and the compiles and recompiles during "
        "decoding; the model's forward compiled as Hugging Face's guide does, with the static or the dynamic "
        "key/value cache (each a config).",
    )
    p.add_argument("model", metavar="MODEL", help="hf:TYPE (from its config, e.g. hf:gpt2, hf:llama) or hf:FOLDER")
    p.add_argument("--task", choices=("generate",), required=True, help="generate")
    p.add_argument("--cache", action="append", choices=CACHES, help="static (default) or dynamic (repeatable)")
    p.add_argument("--backend", action="append", help="torch.compile backend (repeatable; default inductor)")
    p.add_argument("--mode", help="inductor mode (default 'default')")
    p.add_argument("--dynamic", choices=("auto", "true", "false"), default="auto", help="dynamic= (default auto)")
    p.add_argument("--fullgraph", action="store_true", help="fullgraph=True")
    p.add_argument("--dynamo-config", action="append", default=[], metavar="KEY=VALUE", help="torch._dynamo.config")
    p.add_argument("--hf-config", action="append", default=[], metavar="KEY=VALUE", help="config overrides")
    d = LIMITS["seq_len"].default
    p.add_argument(
        "--seq-len",
        type=int,
        help=f"the prompt's length in tokens (default 16; --prompt-lens for several; profile's default {d:g} is not used)",
    )
    p.add_argument(
        "--prompt-lens", type=_prompt_lens, metavar="L1,L2,...", help="several prompt lengths, e.g. 16,64,256"
    )
    p.add_argument(
        "--new-tokens",
        type=int,
        default=DEFAULT_NEW_TOKENS,
        help=f"tokens to generate (default {DEFAULT_NEW_TOKENS}; no early stop)",
    )
    p.add_argument("--batch-size", type=int, default=1, help="sequences generated at once (default 1)")
    p.add_argument(
        "--generations",
        type=int,
        default=DEFAULT_GENERATIONS,
        help=f"timed generations per prompt length (default {DEFAULT_GENERATIONS})",
    )
    p.add_argument(
        "--warmup",
        type=int,
        default=DEFAULT_WARMUP,
        help=f"warm-up generations first (default {DEFAULT_WARMUP}; the first compiles)",
    )
    p.add_argument("--repeat", type=int, default=1, help="run pairs (as written, then eager) per config (default 1)")
    p.add_argument("--no-baseline", action="store_true", help="no eager run")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu")
    p.add_argument("--timeout", type=float, default=LIMITS["script_timeout"].default, help="seconds a run may take")
    p.add_argument("--out", required=True, metavar="DIR", help="the report folder")
    p.add_argument("--overwrite", action="store_true", help="replace a report this tool wrote in --out")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p


def _configs(args: argparse.Namespace) -> list:
    from core.vocab.config import (
        CompileConfig,
        available_backends,
        available_modes,
        dynamo_config_defaults,
        parse_key_values,
    )

    backends = args.backend or ["inductor"]
    offered = available_backends()
    for b in backends:
        if b not in offered:
            raise ConfigError(f"unknown backend {b!r}; this torch has: {', '.join(offered)}.")
    mode = args.mode or "default"
    if mode != "default" and mode not in available_modes():
        raise ConfigError(f"unknown mode {mode!r}; this torch has: {', '.join(available_modes())}.")
    dynamo = (
        parse_key_values(args.dynamo_config, dynamo_config_defaults(), "torch._dynamo.config")
        if args.dynamo_config
        else ()
    )
    return [
        CompileConfig(
            b,
            mode=mode if b == "inductor" else "default",
            dynamic=args.dynamic,
            fullgraph=args.fullgraph,
            dynamo_config=dynamo,
        )
        for b in dict.fromkeys(backends)
    ]


def make_specs_of(args: argparse.Namespace) -> list[GenerationSpec]:
    """The generation specs the command line asks for (one per --cache), checked."""
    if args.seq_len is not None and args.prompt_lens:
        raise ConfigError("give --seq-len or --prompt-lens, not both.")
    check_limits(script_repeat=args.repeat, script_timeout=args.timeout)
    prompts = args.prompt_lens or ((args.seq_len,) if args.seq_len is not None else (16,))
    return make_specs(
        args.model,
        tuple(args.hf_config),
        args.batch_size,
        tuple(prompts),
        args.new_tokens,
        tuple(args.cache or ["static"]),
        args.generations,
        args.warmup,
        args.device,
    )


def main(argv: list[str]) -> int:
    return run_command(argv, build_parser(), lambda args, _: _generate(args, argv))


def _generate(args: argparse.Namespace, argv: list[str]) -> int:
    from core.analysis.generation_results import result_lines
    from core.models import ModelLoadError
    from core.report.files import OutputFolder, ReportError
    from core.report.generation_report import write_generation_report
    from core.run.generation import GenerationSeries

    folder = OutputFolder(args.out, overwrite=args.overwrite)
    try:
        folder.reserve()
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        specs = make_specs_of(args)
        configs = _configs(args)
        checked = __import__("core.models.generation", fromlist=["check"]).check(specs[0])
        folder.claim()
    except (ConfigError, ModelLoadError, ReportError) as exc:
        folder.abandon()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BaseException:
        folder.abandon()
        raise
    pairs = list(itertools.product(specs, configs))

    def say(text: str) -> None:
        if not args.quiet:
            print(f"generate: {terminal_text(text)}", file=sys.stderr, flush=True)

    started = [time.monotonic()]

    def on_config(index: int, label: str) -> None:
        started[0] = time.monotonic()
        say(f"[{index + 1}/{len(pairs)}] {label}: generating (as written, then eager)")

    series = GenerationSeries(
        pairs,
        checked,
        baseline=not args.no_baseline,
        repeat=args.repeat,
        timeout_s=args.timeout,
        on_config=on_config,
        on_event=lambda key, e: _live(say, key[1], e),
        on_result=lambda r: say(f"{r.label}: done in {time.monotonic() - started[0]:.0f} s"),
    )
    interrupt = CancelOnInterrupt(series.cancel, "what was measured is kept")
    results: list = []
    try:
        with interrupt:
            results = series.run()
        write_generation_report(folder, results, {"argv": argv})
    finally:
        folder.release()
    for r in results:
        print()
        for line in result_lines(r):
            print(terminal_text(line))
    print(f"\nreport written to {folder.path}", file=sys.stderr)
    if interrupt.interrupted:
        return 130
    failed = [r for r in results if r.script.compiled is None or r.script.compiled.exit_code != 0]
    for r in failed:
        run = r.script.compiled
        print(
            f"error: {r.label}: the generation script {run.how_it_ended() if run else 'did not run'}", file=sys.stderr
        )
    return 1 if failed else 0


def _live(say, side: str, e: dict) -> None:
    if side != "compiled":
        return
    if e.get("t") == "compile":
        secs = sum(float(f.get("compile_s") or 0) for f in e.get("frames") or ())
        say(f"forward call {int(e.get('call', 0)) + 1}: compiled {len(e.get('frames') or ())} frame(s) in {secs:.2f} s")
    elif e.get("t") == "recompile":
        rc = e.get("rc") or {}
        say(f"recompile: {'; '.join(rc.get('reasons') or ())[:200]}")
