"""`python main.py profile MODEL ...`: the headless front end of the engine.

Every combination of the repeated --backend/--mode/--dynamic values becomes one job; all
settings are validated before any work starts (core.cli.job_specs); progress goes to stderr and
the figures to stdout (core.cli.output); the report goes to --out DIR even when a job fails
or the run is interrupted (Ctrl+C cancels cleanly).
"""

from __future__ import annotations

import argparse
import dataclasses
import sys

from core.analysis.results import JobResult
from core.cli.args import build_parser
from core.cli.job_specs import build_specs, remember_offer
from core.cli.output import CancelOnInterrupt, Progress, print_decision, print_summary, say
from core.cli.prologue import run_command
from core.report.files import OutputFolder, ReportError, write_report
from core.report.tlparse import TLPARSE_MISSING, tlparse_executable, tlparse_into_report
from core.run.runner import JobRunner, RunListener
from core.vocab import records as rec
from core.vocab.limits import ConfigError
from core.vocab.records import JobStatus


def main(argv: list[str]) -> int:
    from core.cli.generate import asks_for_generation

    if asks_for_generation(argv):  # text generation: a run of its own (core.cli.generate)
        from core.cli.generate import main as generate_main

        return generate_main(argv)
    return run_command(
        argv, build_parser(), lambda args, argv: run_and_report(args, argv, lambda: build_specs(args, announce=True))
    )


def run_and_report(
    args: argparse.Namespace,
    argv: list[str],
    make_specs,
    listener: RunListener | None = None,
    sections=None,
    after=None,
) -> int:
    """Validate (`make_specs`), claim the output folder, run the jobs, write the report with
    its recommendation, print it all, and return the exit code. Ctrl+C while jobs run cancels
    them; while the report is written it is deferred until the files are there. `listener`
    replaces the Progress listener (tune wraps it; it gets `attach(runner)` if it has one);
    `sections(results)` adds report.json entries; `after(results)` prints more at the end. A
    job the listener's `expected(result)` accepts (tune's budget cut it) is no error."""
    listener = listener or Progress(quiet=args.quiet)
    runner = JobRunner(listener=listener)
    if hasattr(listener, "attach"):
        listener.attach(runner)
    folder = OutputFolder(args.out, overwrite=args.overwrite)
    try:  # the folder first: a wrong --out is refused at once, not after the settings' checks (seconds)
        folder.reserve()
    except ReportError as exc:
        say(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        runner.prestart()  # the first job's process imports torch while we validate
        specs = make_specs()
        folder.claim()  # what --overwrite replaces is removed only now, the settings all accepted
        if folder.removed:
            say(folder.removed_text(), file=sys.stderr)
        specs = [dataclasses.replace(s, artifacts_dir=folder.path) for s in specs]  # jobs write their files there
    except (ConfigError, ReportError) as exc:
        runner.close()
        folder.abandon()
        say(f"error: {exc}", file=sys.stderr)
        return 2
    except BaseException:
        runner.close()
        folder.abandon()
        raise

    interrupt = CancelOnInterrupt(runner.cancel, "the report will hold everything measured so far")
    results: list[JobResult] = []
    localized: list = []
    with interrupt:  # around the release too: a Ctrl+C there must not leave the folder claimed
        try:
            try:
                results = runner.run_all(specs)
                if hasattr(listener, "annotate"):  # tune: a job its budget cut says so in every file
                    listener.annotate(results)
                if getattr(args, "localize", False) and not interrupt.interrupted:
                    from core.cli.localize import localize_all

                    localized = localize_all(results, runner)
            finally:
                runner.close()
            if getattr(args, "tlparse", False) and not interrupt.interrupted:
                run_tlparse_all(results, folder.path)
            options = {"argv": argv, **{k: v for k, v in vars(args).items() if k != "model"}, "model": args.model}
            extra = dict(sections(results)) if sections else {}
            if localized:
                extra["localization"] = [loc.to_dict() for loc in localized]
            code = _write(results, folder, options, extra or None)
        finally:
            folder.release()
    print_summary(results)
    if not interrupt.interrupted:  # the jobs are done: torch's offer kept for the next command's checks
        remember_offer()
    if after is not None:
        after(results)
    for loc in localized:
        say(f"\nwhere [{loc.config}] diverges: {loc.sentence()}")
        for flag in loc.flags():
            say(f"  apply and re-run: {flag}")
    print_decision(results, args.calls)
    bundle_failed = 0
    if getattr(args, "bundle", None) and results and not interrupt.interrupted:
        from core.cli.bundle import save
        from core.report.bundle import choose_result

        bundle_failed = save(choose_result(results), folder.path, args.bundle)
    expected = getattr(listener, "expected", lambda r: False)
    failed = [r for r in results if r.status != JobStatus.COMPLETED and not expected(r)]
    for r in failed:
        say(f"error: {r.headline()}", file=sys.stderr)
    wrong = [r for r in results if r.accuracy is not None and r.accuracy.status == rec.AccuracyStatus.FAIL.value]
    if wrong and not getattr(args, "localize", True):
        say(
            "accuracy: to find where the outputs diverge (stage, submodule, setting): python3 main.py localize "
            f"{folder.path} (or profile with --localize)",
            file=sys.stderr,
        )
    if "accuracy" in args.fail_on:
        for r in wrong:
            say(f"error: config '{r.config.label}' fails the accuracy check: {r.accuracy.reason}", file=sys.stderr)
    if code:
        return code
    if interrupt.interrupted or bundle_failed == 130:  # Ctrl+C during the jobs, or while the bundle was made
        return 130
    return 1 if failed or ("accuracy" in args.fail_on and wrong) or bundle_failed else 0


def run_tlparse_all(results: list[JobResult], root: str) -> None:
    """tlparse's HTML for each config's structured trace, or why not (one line each)."""
    if tlparse_executable() is None:
        say(f"tlparse: {TLPARSE_MISSING}", file=sys.stderr)
        return
    for r in results:
        index, problem = tlparse_into_report(root, r.config.label)
        say(f"tlparse {r.config.label}: {problem or index}", file=sys.stderr)


def _write(results: list[JobResult], folder: OutputFolder, options: dict, sections: dict | None = None) -> int:
    """Write the report; if the folder fails now, save it elsewhere and say where (exit 1)."""
    try:
        paths = write_report(results, folder.path, options, folder=folder, sections=sections)
        say(f"report written to {folder.path} ({len(paths)} files)", file=sys.stderr)
        return 0
    except ReportError as exc:
        import tempfile

        try:
            fallback = tempfile.mkdtemp(prefix="compile-profiler-report-")
            write_report(results, fallback, options, sections=sections)
        except OSError as again:  # that disk is full too: the figures below are what is left
            say(f"error: {exc}\nerror: nor could it be saved elsewhere: {again}", file=sys.stderr)
            return 1
        say(
            f"error: {exc}\nThe report was saved to {fallback} instead; the jobs' own files (traces, graphs, "
            f"logs) stay in {folder.path}.",
            file=sys.stderr,
        )
        return 1
