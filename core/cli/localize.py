"""`python main.py localize REPORT_DIR [--config LABEL]`, and `profile --localize`: where the
compiled outputs of a config that failed the accuracy check diverge (core.decide.localize),
each step a job of its own; the finding goes into the report's report.json (`localization`),
which the app shows in its Summary (the app runs this command for "Find where outputs diverge").

A report can come from anyone, and every step runs its model and settings: through the one gate,
core.report.safety.ReportGate, nothing runs (exit 2) while the configs to localize hold settings
that could run a program or code, or the model is a Python file, unless `--trust-report` (run them
as written) or, for the settings, `--without-risky-settings` (left out, said on stderr and in the
finding) says how.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from core.analysis.results import JobResult
from core.cli.output import CancelOnInterrupt, Progress
from core.cli.prologue import run_command
from core.report.files import OutputFolder, ReportError, atomic_write, load_report, read_json_file
from core.report.safety import TRUST_REPORT_FLAG, WITHOUT_RISKY_FLAG, report_gate, terminal_text
from core.run.runner import JobRunner


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py localize",
        description="Find where the compiled outputs of a report's config that failed the accuracy check "
        "diverge: the first compiler stage, the submodule, and for inductor the numerics setting that makes "
        "it pass (each step a job of its own); the finding is added to the report's report.json.",
    )
    p.add_argument("report", help="a report folder (or its report.json)")
    p.add_argument("--config", metavar="LABEL", help="the config to localize (default: every one that failed)")
    p.add_argument(
        TRUST_REPORT_FLAG,
        action="store_true",
        help="run the report's model file and settings as written: needed when its model is a Python file (every "
        "job runs it) or its config holds settings that could run a program or code (inductor's cpp.cxx, a path); "
        "only for a report you trust",
    )
    p.add_argument(
        WITHOUT_RISKY_FLAG,
        action="store_true",
        help="leave out the report's settings that could run a program or code (said in the output and in the finding)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    return p


def localize_all(results: list[JobResult], runner: JobRunner, without_risky: bool = False) -> list:
    """Each config whose accuracy check failed, localized (core.decide.localize), its jobs run
    one after another on `runner`, each step named on stderr; stops at a cancel, naming the
    configs left. `without_risky`: each config without its risky settings
    (core.report.safety.ReportGate; the caller has passed the gate already)."""
    from core.decide.localize import localize, needs_localizing
    from core.vocab.config import inductor_config_defaults

    failed = [r for r in results if needs_localizing(r)]
    if not failed:
        print("localize: no config failed the accuracy check; nothing to localize.", file=sys.stderr)
        return []
    gate = report_gate([r.spec for r in failed])
    available = inductor_config_defaults()
    found = []
    for n, r in enumerate(failed):
        label = terminal_text(r.config.label)  # a report's: printed as text, escapes and all
        print(f"localize: finding where [{label}] diverges (a job per step)", file=sys.stderr)
        config, left_out = gate.config_to_run(r.config, without_risky), gate.left_out(r.config, without_risky)
        if left_out:
            print(
                f"localize: [{label}] runs without the report's settings {terminal_text(', '.join(left_out))}",
                file=sys.stderr,
            )
        steps = iter(range(1, 1000))

        def step(spec, config=config, label=label):
            what = "stage" if not spec.config.inductor_options or spec.config == config else "numerics setting"
            shown = terminal_text(spec.config.label)
            print(f"--localize [{label}] step {next(steps)}: {what} {shown}", file=sys.stderr)
            return runner.run(spec)

        found.append(localize(r, step, available, config))
        found[-1].left_out = left_out
        if found[-1].note.startswith("cancelled"):
            left = [f"[{x.config.label}]" for x in failed[n + 1 :]]
            if left:
                print(f"localize: cancelled; not localized: {terminal_text(', '.join(left))}", file=sys.stderr)
            break
    return found


def merged(section, found: list) -> list:
    """report.json's `localization` list with `found` in it (a config's newer finding replaces
    its older one; entries of another shape are dropped)."""
    new = {loc.config: loc.to_dict() for loc in found}
    kept = [e for e in (section if isinstance(section, list) else []) if isinstance(e, dict)]
    return [e for e in kept if e.get("config") not in new] + list(new.values())


def main(argv: list[str]) -> int:
    return run_command(argv, build_parser(), _localize)


def _localize(args: argparse.Namespace, argv: list[str]) -> int:
    root = args.report[: -len("report.json")] if args.report.endswith("report.json") else args.report
    root = os.path.abspath(root or ".")
    try:
        results, _ = load_report(root)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    labels = [r.config.label for r in results]
    if args.config and args.config not in labels:
        print(f"error: {root} has no config {args.config!r}; its configs: {', '.join(labels)}.", file=sys.stderr)
        return 2
    chosen = [r for r in results if not args.config or r.config.label == args.config]
    from core.decide.localize import needs_localizing

    refusal = report_gate([r.spec for r in chosen if needs_localizing(r)]).refusal(
        args.trust_report, args.without_risky_settings
    )
    if refusal:
        print(f"error: nothing was run: {refusal}", file=sys.stderr)
        return 2
    runner = JobRunner(listener=Progress(quiet=args.quiet))
    interrupt = CancelOnInterrupt(runner.cancel, "what was found so far is written")
    with interrupt:
        try:
            found = localize_all(chosen, runner, args.without_risky_settings)
        finally:
            runner.close()
    if not found:
        return 0
    try:
        folder = OutputFolder(root, extend=True).claim()  # locked while written; nothing removed
        try:
            doc, path = read_json_file(root, "report.json")
            doc["localization"] = merged(doc.get("localization"), found)
            atomic_write(path, json.dumps(doc, indent=1, default=str))
        finally:
            folder.release()
    except (ReportError, OSError, ValueError) as exc:
        print(f"error: the finding could not be written into {root}: {exc}", file=sys.stderr)
        for loc in found:
            print(f"where [{terminal_text(loc.config)}] diverges: {terminal_text(loc.sentence())}")
        return 1
    for loc in found:
        print(f"where [{terminal_text(loc.config)}] diverges: {terminal_text(loc.sentence())}")
        for flag in loc.flags():
            print(f"  apply and re-run: {flag}")
    print(f"written into {path} (localization)", file=sys.stderr)
    return 130 if interrupt.interrupted else 0
