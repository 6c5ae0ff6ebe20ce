"""`python main.py bundle REPORT_DIR [--config LABEL] [--out FILE.zip]`, and `profile --bundle`:
a bug report to hand over (core.report.bundle), what goes in said before it is written."""

from __future__ import annotations

import argparse
import os
import sys

from core.analysis.results import JobResult
from core.report.bundle import BundleError, choose_result, plan_bundle, write_bundle
from core.report.files import ReportError, load_report
from core.report.safety import terminal_text


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py bundle",
        description="Save a bug report of a report's config: repro.py (rebuilds the model, compiles it as the run "
        "did, shows the problem), the model file or its inputs, report.json, torch's traces and the environment.",
    )
    p.add_argument("report", help="a report folder (or its report.json)")
    p.add_argument("--config", metavar="LABEL", help="the config to reproduce (default: the first with a problem)")
    p.add_argument("--out", metavar="FILE.zip", help="where to write the zip (default: REPORT/bundle-<config>.zip)")
    return p


def save(result: JobResult, root: str, out: str) -> int:
    """Plan, say what goes in, write; one line per outcome on stderr. The exit code (130 after
    Ctrl+C, said as what it stopped)."""
    try:
        plan = plan_bundle(result, root)
        print(f"bundle: {plan.notice()}", file=sys.stderr)
        print(f"bundle: reproduces: {terminal_text(plan.finding.sentence)}", file=sys.stderr)
        for line in plan.left_out:
            print(f"bundle: left out: {terminal_text(line)}", file=sys.stderr)
        names = write_bundle(plan, out)
    except (BundleError, OSError) as exc:
        print(f"error: no bundle: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # building the inputs or collect_env: write_bundle removed its .part file
        print(f"\ninterrupted (Ctrl+C) while the bundle was being made: nothing was written at {out}.", file=sys.stderr)
        return 130
    print(f"bundle written to {out} ({len(names)} files); run it with: python repro.py", file=sys.stderr)
    return 0


def default_path(root: str, label: str) -> str:
    from core.vocab.artifacts import artifact_name

    return os.path.join(root, f"bundle-{artifact_name(label)}.zip")


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    root = args.report[: -len("report.json")] if args.report.endswith("report.json") else args.report
    root = os.path.abspath(root or ".")
    try:
        results, _ = load_report(root)
        result = choose_result(results, args.config)
    except (ReportError, BundleError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl+C) while the report was read: no bundle was made.", file=sys.stderr)
        return 130
    return save(result, root, args.out or default_path(root, result.config.label))
