"""`python main.py profile MODEL ...`: the headless front end of the engine.

Every combination of the repeated --backend/--mode/--dynamic values becomes one job; all
settings are validated before any work starts; progress goes to stderr; the report goes to
--out DIR even when a job fails or the run is interrupted (Ctrl+C cancels cleanly).
"""
from __future__ import annotations

import argparse
import os
import signal
import sys
import uuid

from core import events as ev
from core.paths import display_path
from core.config import (DEVICE_CHOICES, DYNAMIC_CHOICES, LIMITS, VERBOSE_REFUSAL, ConfigError, JobSpec, ModelSpec,
                         asks_for_verbose, check_limits,
                         dynamo_config_defaults, expand_configs, inductor_config_defaults, parse_key_values,
                         validate_config)
from core.report import OutputFolder, ReportError, write_report
from core.runner import JobRunner, RunListener
from core.results import JobResult, JobStatus
from core.stats import median_or_none
from core.sweep import variant_outcome


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py profile",
        description="Profile a model eager against torch.compile'd, for every combination of the given "
                    "backends, modes and dynamic settings, and write CSV/JSON reports.")
    p.add_argument("model", metavar="MODEL", help="a torchvision model name (e.g. resnet18) or a path to a "
                   ".py model file, a .pt2 (torch.export) or a TorchScript file")
    p.add_argument("--backend", action="append", help="torch.compile backend (repeatable; default inductor)")
    p.add_argument("--mode", action="append", help="inductor mode (repeatable; default 'default')")
    p.add_argument("--dynamic", action="append", choices=DYNAMIC_CHOICES,
                   help="dynamic shapes: auto (torch decides), true or false (repeatable; default auto)")
    p.add_argument("--fullgraph", action="store_true", help="fail instead of breaking the graph")
    p.add_argument("--dynamo-config", action="append", default=[], metavar="KEY=VALUE",
                   help="torch._dynamo.config override, e.g. capture_scalar_outputs=True (repeatable)")
    p.add_argument("--inductor-option", action="append", default=[], metavar="KEY=VALUE",
                   help="torch._inductor.config option passed as torch.compile(options=...) (repeatable)")
    d = {key: lim.default for key, lim in LIMITS.items()}
    p.add_argument("--warmup", type=int, default=d["warmup"], help=f"warm-up calls per side (default {d['warmup']})")
    p.add_argument("--iters", type=int, default=d["iters"],
                   help=f"timed iterations per side (default {d['iters']}, at most {LIMITS['iters'].high:,.0f})")
    p.add_argument("--block", type=int, default=d["block"], metavar="N",
                   help=f"alternate eager and compiled timed calls in blocks of N (default {d['block']}, shortened "
                        "so the sides alternate at least 4 times; 1 = strict "
                        "alternation as in PyTorch's runner, which biases CPU results by 10-20%%, "
                        "see docs/BENCHMARKS.md)")
    p.add_argument("--batch-size", type=int, default=d["batch_size"],
                   help=f"batch size of torchvision inputs (default {d['batch_size']})")
    p.add_argument("--image-size", type=int, default=d["image_size"],
                   help=f"image size of torchvision inputs (default {d['image_size']})")
    p.add_argument("--weights", help="local state_dict for a torchvision model (torch.load weights_only=True)")
    p.add_argument("--device", choices=DEVICE_CHOICES, default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--threads", type=int, help="torch thread count (default: torch's choice, recorded)")
    p.add_argument("--timeout", type=float, default=d["timeout"],
                   help=f"seconds before a job is ended as hung (default {d['timeout']:g})")
    p.add_argument("--sweep-shapes", action="store_true",
                   help="run every input of the model file's get_input_variants() against one compiled model "
                        "per config, recording recompiles and their reasons (writes variants.csv)")
    p.add_argument("--no-inference-mode", action="store_true", help="run under no_grad instead of inference_mode")
    p.add_argument("--out", required=True, metavar="DIR", help="folder for summary.csv, latency.csv, "
                   "graph_breaks.csv, resources.csv, recompiles.csv and report.json")
    p.add_argument("--overwrite", action="store_true",
                   help="replace a report already in --out (by default a folder holding a report is refused)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def build_specs(args: argparse.Namespace) -> list[JobSpec]:
    """Validate everything and build the jobs; raises ConfigError before any work."""
    from core.models import defines_variants, is_file_source, split_factory, torchvision_model_names

    check_limits(warmup=args.warmup, iters=args.iters, block=args.block, batch_size=args.batch_size,
                 image_size=args.image_size, threads=args.threads, timeout=args.timeout)
    if is_file_source(args.model):
        if not os.path.exists(split_factory(args.model)[0]):
            raise ConfigError(f"model file {split_factory(args.model)[0]} not found; check the path.")
    elif args.model not in torchvision_model_names():
        close = [n for n in torchvision_model_names() if args.model.lower() in n][:10]
        raise ConfigError(f"{args.model!r} is neither a file nor a torchvision model."
                          + (f" Close matches: {', '.join(close)}." if close else ""))
    if args.sweep_shapes and not defines_variants(args.model):
        raise ConfigError(f"--sweep-shapes needs a Python model file that defines get_input_variants(); "
                          f"{args.model} does not.")
    if args.weights and not os.path.exists(args.weights):
        raise ConfigError(f"weights file {args.weights} not found.")
    dynamo = parse_key_values(args.dynamo_config, dynamo_config_defaults(), "torch._dynamo.config")
    inductor = parse_key_values(args.inductor_option, inductor_config_defaults(), "torch._inductor.config")
    configs = expand_configs(args.backend or ["inductor"], args.mode or ["default"], args.dynamic or ["auto"],
                             args.fullgraph, dynamo, inductor)
    for cfg in configs:
        validate_config(cfg, args.device)
    model = ModelSpec(os.path.abspath(args.model) if is_file_source(args.model) else args.model,
                      args.batch_size, args.image_size, args.weights)
    return [JobSpec(job_id=uuid.uuid4().hex[:8], model=model, config=cfg, warmup=args.warmup, iters=args.iters,
                    device=args.device, threads=args.threads, inference_mode=not args.no_inference_mode,
                    timeout_s=args.timeout, sweep_shapes=args.sweep_shapes, block_size=args.block)
            for cfg in configs]


class Progress(RunListener):
    """Progress on stderr: a tqdm bar per job on a terminal (phase in the description,
    calls as the count), one line per phase otherwise (logs, CI), nothing with --quiet."""

    def __init__(self, quiet: bool = False, bar: bool | None = None):
        self.quiet = quiet
        self.use_bar = (sys.stderr.isatty() if bar is None else bar) and not quiet
        self.bar = None
        self._label = ""

    def on_job_started(self, index: int, total: int, spec: JobSpec) -> None:
        self._label = f"[{index}/{total}] {spec.config.label}"
        if self.use_bar:
            from tqdm import tqdm

            self.bar = tqdm(total=spec.warmup_calls("eager") + spec.warmup_calls("compiled") + 2 * spec.iters,
                            desc=self._label, unit="call", file=sys.stderr, dynamic_ncols=True, leave=True)
        elif not self.quiet:
            print(f"{self._label}: starting", file=sys.stderr, flush=True)

    def on_event(self, event: ev.Event) -> None:
        if isinstance(event, ev.PhaseChanged):
            if self.bar is not None:
                self.bar.set_description(f"{self._label}: {event.phase}")
            elif not self.quiet:
                print(f"{self._label}: {event.detail or event.phase}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.LatencyMeasured) and self.bar is not None:
            self.bar.update(len(event.samples))

    def on_job_ended(self, index: int, total: int, spec: JobSpec, terminal: ev.Event) -> None:
        status = {ev.JobCompleted: JobStatus.COMPLETED, ev.JobFailed: JobStatus.FAILED,
                  ev.JobCancelled: JobStatus.CANCELLED}[type(terminal)]
        if self.bar is not None:
            self.bar.set_description(f"{self._label}: {status}")
            self.bar.close()
            self.bar = None
        elif not self.quiet:
            print(f"{self._label}: {status}", file=sys.stderr, flush=True)


def _fmt(value, spec: str = ".2f", unit: str = "") -> str:
    if value is None or value == "":
        return "-"
    if isinstance(value, str):
        return value
    return f"{value:{spec}}{unit}"


def print_summary(results: list[JobResult]) -> None:
    for r in results:
        s = r.summary()
        print(f"{s['config']}: {s['status']}")
        if r.failure_reason:
            print(f"  reason: {r.failure_reason}")
        if not r.spec.sweep_shapes:
            print(f"  eager median {_fmt(s['eager_median_ms'], '.3f', ' ms')}, compiled median "
                  f"{_fmt(s['compiled_median_ms'], '.3f', ' ms')}, speedup {_fmt(s['speedup'], '.2f', 'x')} "
                  f"[95% CI {_fmt(s['speedup_ci_low'])}-{_fmt(s['speedup_ci_high'])}]")
        print(f"  compile {_fmt(s['compile_time_s'], '.2f', ' s')} (cache {s['cache_state'] or '-'}), "
              f"break-even {_fmt(s['break_even_iters'], '.0f', ' calls')}, graphs {_fmt(s['graph_count'], 'd')}, "
              f"graph breaks {_fmt(s['graph_break_sites'], 'd')} places "
              f"({_fmt(s['graph_break_per_call'], 'd')} per call), "
              f"recompiles {s['recompile_count']}")
        print(f"  peak RSS eager {_fmt(s['eager_peak_mb'], '.0f', ' MB')}, compile "
              f"{_fmt(s['compile_peak_mb'], '.0f', ' MB')}, compiled {_fmt(s['compiled_peak_mb'], '.0f', ' MB')}")
        if s["coverage"]:
            print(f"  {s['coverage']}")
        for v in r.variants:
            what = variant_outcome(v, with_time=True)
            eager_ms, compiled_ms = median_or_none(v.eager_ms), median_or_none(v.compiled_ms)
            print(f"  variant {v.index} {', '.join(v.input_shapes)}: {what}; eager "
                  f"{_fmt(eager_ms, '.3f', ' ms')}, compiled {_fmt(compiled_ms, '.3f', ' ms')}")
        for g in r.graph_breaks:
            where = f"{display_path(g.file)}:{g.line}" if g.file else "?"
            if g.frame_skipped:
                print(f"  frame skipped {g.gb_code or '-'} at {where}, ran eagerly: {g.eager_function}: {g.reason}")
            else:
                print(f"  graph break {g.gb_code or '-'} at {where} (x{g.per_call} per call, logged "
                      f"{g.logged}x): {g.reason}")


def main(argv: list[str]) -> int:
    if asks_for_verbose(argv):
        print(f"error: {VERBOSE_REFUSAL}", file=sys.stderr)
        return 2
    args = build_parser().parse_args(argv)
    try:
        return _profile(args, argv)
    except KeyboardInterrupt:  # Ctrl+C before the first job: nothing was measured yet
        print("\ninterrupted before any job started; nothing was measured.", file=sys.stderr)
        return 130


def _profile(args: argparse.Namespace, argv: list[str]) -> int:
    """Validate, claim the output folder, run the jobs, write the report. Ctrl+C while jobs
    run cancels them; while the report is written it is deferred until the files are there."""


    runner = JobRunner(listener=Progress(quiet=args.quiet))
    runner.prestart()  # the first job's process imports torch while we validate
    folder = None
    try:
        specs = build_specs(args)
        folder = OutputFolder(args.out, overwrite=args.overwrite).claim()
    except (ConfigError, ReportError) as exc:
        runner.close()
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BaseException:
        runner.close()
        raise

    interrupted = []

    def on_sigint(*_):
        if not interrupted:
            print("\ninterrupted: cancelling; the report will hold everything measured so far.",
                  file=sys.stderr, flush=True)
        interrupted.append(True)
        runner.cancel()

    previous = signal.signal(signal.SIGINT, on_sigint)
    results: list[JobResult] = []
    try:
        try:
            results = runner.run_all(specs)
        finally:
            runner.close()
        options = {"argv": argv, **{k: v for k, v in vars(args).items() if k != "model"}, "model": args.model}
        code = _write(results, folder, options)
    finally:
        folder.release()
        signal.signal(signal.SIGINT, previous)
    print_summary(results)
    failed = [r for r in results if r.status != JobStatus.COMPLETED]
    for r in failed:
        print(f"error: {r.headline()}", file=sys.stderr)
    if code:
        return code
    if interrupted:
        return 130
    return 1 if failed else 0


def _write(results: list[JobResult], folder: OutputFolder, options: dict) -> int:
    """Write the report; if the folder fails now, save it elsewhere and say where (exit 1)."""
    try:
        paths = write_report(results, folder.path, options, folder=folder)
        print(f"report written to {folder.path} ({len(paths)} files)", file=sys.stderr)
        return 0
    except ReportError as exc:
        import tempfile

        fallback = tempfile.mkdtemp(prefix="compile-profiler-report-")
        write_report(results, fallback, options)
        print(f"error: {exc}\nThe report was saved to {fallback} instead.", file=sys.stderr)
        return 1


