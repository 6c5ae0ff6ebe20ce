"""`python main.py zoo MODELS... [--models-file FILE] [profile options] [--executor local|ray]
[--ray-address ADDRESS] [--parallel N] [--resume] --out DIR`.

The options are profile's (core.cli.args.build_parser("zoo"): one definition for profile, tune
and zoo) and are checked for every model as profile checks them (core.cli.job_specs.build_specs)
before any work. The sweep itself is core.zoo.sweep; the Ray executor (core.zoo.ray_executor) is
imported only when asked for.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading

from core.analysis.results import JobResult
from core.cli.output import CancelOnInterrupt, say
from core.cli.prologue import INTERRUPTED_BEFORE_JOBS, run_command
from core.report.files import ReportError
from core.vocab.config import JobSpec
from core.vocab.limits import ConfigError
from core.zoo.results import CELL_MARKS, ZooRow, cell_text
from core.zoo.sweep import LocalExecutor, ZooJob, ZooListener, ZooSweep, reserve_zoo_folder

EXECUTORS = ("local", "ray")


def build_zoo_parser() -> argparse.ArgumentParser:
    from core.cli.args import build_parser

    p = build_parser("zoo")
    p.set_defaults(sweep_shapes=False)
    g = p.add_argument_group("zoo")
    g.add_argument(
        "--models-file",
        metavar="FILE",
        help="a text file of models, one a line (blank lines and lines starting with # are skipped), "
        "added to the MODELs given",
    )
    g.add_argument(
        "--executor",
        choices=EXECUTORS,
        default="local",
        help="local: jobs run on this machine (default); ray: jobs run as Ray tasks, each claiming one "
        "GPU (--device cuda) or the CPUs a job needs, on a local Ray instance or --ray-address",
    )
    g.add_argument(
        "--ray-address",
        metavar="ADDRESS",
        help="join this Ray cluster (e.g. ray://head:10001, or head:6379 from inside it) instead of "
        "starting a local Ray instance; implies --executor ray",
    )
    g.add_argument(
        "--ray-timeout",
        type=float,
        default=None,
        metavar="S",
        help="how long to wait for the Ray cluster to answer (default 60 s) or a local instance to "
        "start (default 300 s: on a loaded machine Ray's own processes take minutes) before giving up "
        "with what to check",
    )
    g.add_argument(
        "--parallel",
        type=int,
        default=1,
        metavar="N",
        help="local executor: run N jobs at a time (default 1; jobs side by side skew each other's "
        "timings, see the README)",
    )
    g.add_argument(
        "--resume",
        action="store_true",
        help="complete the zoo in --out: keep every job an earlier run completed, run the rest",
    )
    return p


def read_models(args: argparse.Namespace) -> list[str]:
    """MODELs and the --models-file's, in order, each once."""
    models = list(args.models)
    if args.models_file:
        try:
            with open(args.models_file, encoding="utf-8") as fh:
                models += [line.strip() for line in fh if line.strip() and not line.lstrip().startswith("#")]
        except OSError as exc:
            raise ConfigError(f"cannot read --models-file {args.models_file}: {exc.strerror or exc}.") from None
    models = list(dict.fromkeys(models))
    if not models:
        raise ConfigError("no models given: name them (zoo resnet18 timm:resnet50 ...) or give --models-file FILE.")
    return models


def build_zoo_specs(args: argparse.Namespace, models: list[str], device_here: bool = True) -> dict[str, list[JobSpec]]:
    """Every model's jobs, checked as `profile` checks one model's; a refusal names the model."""
    from core.cli.job_specs import build_specs

    specs = {}
    for model in models:
        try:
            specs[model] = build_specs(argparse.Namespace(**{**vars(args), "model": model}), device_here=device_here)
        except ConfigError as exc:
            raise ConfigError(f"{model}: {exc}") from None
    return specs


def check_executor_options(args: argparse.Namespace) -> None:
    if args.ray_address:
        args.executor = "ray"
    if args.parallel < 1:
        raise ConfigError(f"--parallel must be at least 1, not {args.parallel}.")
    if args.ray_timeout is not None and not 0 < args.ray_timeout < float("inf"):  # NaN too
        raise ConfigError(f"--ray-timeout must be a number of seconds above 0, not {args.ray_timeout:g}.")
    if args.parallel != 1 and args.executor == "ray":
        raise ConfigError(
            "--parallel applies to the local executor; on Ray every job claims its GPU or CPUs and "
            "Ray runs as many at once as the cluster has room for."
        )


class ZooProgress(ZooListener):
    """One line on stderr as each job starts and ends (jobs may run side by side)."""

    def __init__(self, quiet: bool = False):
        self.quiet = quiet
        self._lock = threading.Lock()

    def _say(self, text: str) -> None:
        if not self.quiet:
            with self._lock:
                say(text, file=sys.stderr, flush=True)

    def on_job_started(self, job: ZooJob, node: str = "") -> None:
        self._say(f"{job.label}: started" + (f" on {node}" if node else ""))

    def on_job_ended(self, job: ZooJob, result: JobResult) -> None:
        row = ZooRow.from_result(job.model, job.folder, result)
        took = f" ({result.wall_time_s:.0f} s)" if result.wall_time_s else ""
        self._say(f"{job.label}: {row.outcome()}{took}")


def make_executor(args: argparse.Namespace):
    if args.executor == "ray":
        try:
            from core.zoo.ray_executor import RayExecutor
        except ImportError as exc:
            raise ConfigError(
                f"--executor ray needs the Python package ray ({exc}); install it with "
                f"{os.path.join(os.path.dirname(sys.executable), 'pip')} install ray"
            ) from None
        return RayExecutor(args.ray_address, args.ray_timeout)
    return LocalExecutor(args.parallel)


def main(argv: list[str]) -> int:
    return run_command(argv, build_zoo_parser(), _zoo)


def _zoo(args: argparse.Namespace, argv: list[str]) -> int:
    sweep = executor = root = None
    try:
        check_executor_options(args)
        # the folder first: a wrong --out is refused at once, not after the models' checks (seconds)
        root = reserve_zoo_folder(args.out, resume=args.resume, overwrite=args.overwrite)
        models = read_models(args)
        specs = build_zoo_specs(args, models, device_here=args.executor == "local")
        options = {"argv": argv, **{k: v for k, v in vars(args).items() if k != "models"}, "models": models}
        sweep = ZooSweep(
            args.out,
            specs,
            options,
            overwrite=args.overwrite,
            resume=args.resume,
            inner=ZooProgress(args.quiet),
            root=root,
        )
        jobs = sweep.prepare()
        if jobs:
            executor = make_executor(args)
            if hasattr(executor, "connect"):
                if not args.quiet:
                    where = f"joining the Ray cluster at {args.ray_address}" if args.ray_address else "starting Ray"
                    say(f"{where} (up to {executor.connect_timeout:g} s; Ctrl+C stops)", file=sys.stderr, flush=True)
                executor.connect([j.spec for j in jobs])
    except (ConfigError, ReportError) as exc:
        if sweep is not None:
            sweep.release()
        elif root is not None:
            root.abandon()
        if executor is not None and hasattr(executor, "close"):
            executor.close()
        say(f"error: {exc}", file=sys.stderr)
        _end_now_if_ray_still_connecting(executor, 2)
        return 2
    except KeyboardInterrupt:
        if sweep is not None:
            sweep.release()
        elif root is not None:
            root.abandon()
        if getattr(executor, "connect_abandoned", False):
            say(f"\n{INTERRUPTED_BEFORE_JOBS}", file=sys.stderr)
            _end_now_if_ray_still_connecting(executor, 130)
        raise
    except BaseException:
        if sweep is not None:
            sweep.release()
        elif root is not None:
            root.abandon()
        raise
    for text in sweep.removed_texts():
        say(text, file=sys.stderr)
    if sweep.kept and not args.quiet:
        say(f"--resume: {sweep.kept} jobs completed earlier are kept; {len(jobs)} to run.", file=sys.stderr)

    # --resume of a zoo with nothing left to run has no executor: Ctrl+C then only stops the writing
    cancel = executor.cancel if executor is not None else (lambda: None)
    interrupt = CancelOnInterrupt(cancel, "every report will hold what was measured so far")
    with interrupt:
        if jobs:
            try:
                executor.run(jobs, sweep)
            finally:
                if hasattr(executor, "close"):
                    executor.close()
        if getattr(args, "tlparse", False) and not interrupt.interrupted:
            from core.cli.profile import run_tlparse_all

            for model, mine in sweep.results.items():
                run_tlparse_all(list(mine.values()), os.path.join(sweep.zoo_dir, sweep.folders[model]))
        zoo = sweep.finish()
    print_zoo(zoo)
    for message in sweep.write_errors:
        say(f"error: {message}", file=sys.stderr)
    say(
        f"zoo written to {sweep.zoo_dir} (zoo.csv, zoo_summary.csv, zoo.json; a report folder per model)",
        file=sys.stderr,
    )
    failed = [r for r in zoo.rows if r.ended and not r.completed]
    for r in failed:
        say(f"error: {r.model} · {r.config}: {r.status}: {r.failure_reason}", file=sys.stderr)
    wrong = [r for r in zoo.rows if r.accuracy_failed]
    if "accuracy" in args.fail_on:
        for r in wrong:
            say(f"error: {r.model} · {r.config} fails the accuracy check: {r.accuracy_reason}", file=sys.stderr)
    if sweep.write_errors:
        return 1
    if interrupt.interrupted:
        return 130
    return 1 if failed or ("accuracy" in args.fail_on and wrong) else 0


def _end_now_if_ray_still_connecting(executor, code: int) -> None:
    """End the process now with `code` when Ray's connect was given up while it still runs on
    its thread (core.zoo.ray_executor: `connect_abandoned`): Python's teardown under that
    thread's native code aborted the process now and then (std::bad_alloc, exit -6 instead of
    2). What was to be said is said; nothing was measured or written."""
    if getattr(executor, "connect_abandoned", False):
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def print_zoo(zoo) -> None:
    """The grid (models × configs) and the per-config summary on stdout."""
    width = max([len(m) for m in zoo.models] + [5])
    cols = [max(len(c), 14) for c in zoo.configs]
    say(f"{'model':<{width}}  " + "  ".join(f"{c:<{w}}" for c, w in zip(zoo.configs, cols)))
    for model in zoo.models:
        cells = [cell_text(zoo.row(model, c)) for c in zoo.configs]
        say(f"{model:<{width}}  " + "  ".join(f"{t:<{w}}" for t, w in zip(cells, cols)))
    say(f"({CELL_MARKS})")
    say()
    for s in zoo.summaries():
        say(s.sentence())
        if s.environment_warning:
            say(f"  warning: {s.environment_warning}")
