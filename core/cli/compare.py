"""`python main.py compare BASELINE NEW [--threshold PCT] [--relative] [--out DIR]`: a report
against a saved baseline (the comparison itself is core.decide.compare). Exit code 0 when no
config regressed, 1 when one did or one that completed in the baseline is missing from the new
report (MISSING: not measured, so no slowdown, but no pass either), 3 when no config is in both
reports or none regressed or went missing but some config's speed could not be judged,
2 for a refused command line, an unreadable report or reports of different models."""

from __future__ import annotations

import argparse
import os
import sys

from core.decide.compare import (
    CANNOT_TELL_EXIT,
    COMPARE_COLUMNS,
    DEFAULT_THRESHOLD_PCT,
    compare_reports,
)
from core.decide.report_match import model_mismatch
from core.vocab.terminal import terminal_text


def main(argv: list[str]) -> int:
    from core.report.csv_cells import csv_text
    from core.report.files import ReportError, atomic_write, load_report

    p = argparse.ArgumentParser(
        prog="main.py compare",
        description="Compare a report with a saved baseline, "
        "config by config; exit 1 when a config regressed beyond the threshold and the noise, or went missing.",
        epilog="Exit codes: 0 no config regressed; 1 a config regressed, or one that completed in the baseline "
        "is missing from the new report (MISSING: not measured, so no slowdown, but no pass either); 3 no "
        "config is in both reports (configs are matched by their label), or none regressed or went missing "
        "but some config's speed could not be "
        "judged (a timing graded unusable or giving the direction only, or no timed calls) (cannot tell: a "
        "CI gate should not pass it); 2 a refused command line, an unreadable report, or reports of "
        "different models.",
    )
    p.add_argument("baseline", metavar="BASELINE", help="report folder or report.json of the baseline")
    p.add_argument("new", metavar="NEW", help="report folder or report.json to check against it")
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD_PCT,
        metavar="PCT",
        help=f"a compiled median this many percent slower (and outside the noise) is a regression "
        f"(default {DEFAULT_THRESHOLD_PCT:g})",
    )
    p.add_argument(
        "--relative",
        action="store_true",
        help="judge the compiled side against the eager side of its own run (the speedup), so a slower "
        "or busier machine as a whole is not a regression (for shared CI runners)",
    )
    p.add_argument(
        "--require-cudagraphs",
        action="store_true",
        help="also fail a config that records CUDA graphs (reduce-overhead, max-autotune) when the share of its "
        "GPU time in graph replays dropped, or torch skipped more graphs than in the baseline; a report without "
        "a measured coverage (a CPU run) cannot pass",
    )
    p.add_argument("--out", metavar="DIR", help="write compare.csv into DIR (created if needed)")
    args = p.parse_args(argv)
    if not 0 <= args.threshold <= 1000:
        print(f"error: --threshold must be from 0 to 1000 percent, not {args.threshold:,.10g}.", file=sys.stderr)
        return 2
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):  # said before any work
        print(f"error: --out {args.out} is a file; name a folder for compare.csv.", file=sys.stderr)
        return 2
    for other_kind in (_generation_reports, _script_reports):
        code = other_kind(args)
        if code is not None:
            return code
    try:
        base, base_header = load_report(args.baseline)
        new, new_header = load_report(args.new)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    mismatch = model_mismatch(base, new)
    if mismatch:
        print(terminal_text(f"error: {mismatch}"), file=sys.stderr)
        return 2
    result = compare_reports(
        base, base_header, new, new_header, args.threshold, args.relative, require_cudagraphs=args.require_cudagraphs
    )
    # reports come from anyone: what they hold is printed with its control characters escaped
    for w in result.warnings:
        print(f"warning: {terminal_text(w)}", file=sys.stderr)
    for c in result.configs:
        print(terminal_text(f"{c.config}: {c.verdict}"))
        for line in c.breaks_added:
            print(f"  + {terminal_text(line)}")
        for line in c.breaks_removed:
            print(f"  - {terminal_text(line)}")
    if args.out:
        try:
            os.makedirs(args.out, exist_ok=True)
            atomic_write(
                os.path.join(args.out, "compare.csv"), csv_text(COMPARE_COLUMNS, [c.row() for c in result.configs])
            )
        except OSError as exc:
            print(f"error: cannot write compare.csv into {args.out}: {exc}", file=sys.stderr)
            return 2
        print(f"compare.csv written to {os.path.abspath(args.out)}", file=sys.stderr)
    if result.nothing_compared:  # an empty report (or one of other configs) passes no gate
        labels = [", ".join(r.config.label for r in rs) or "none" for rs in (base, new)]
        print(
            terminal_text(
                f"cannot tell: no config is in both reports (the baseline has {labels[0]}; the new report "
                f"{labels[1]}), so nothing was compared; configs are matched by their label, and a changed "
                f"setting changes it; exit code {CANNOT_TELL_EXIT}"
            ),
            file=sys.stderr,
        )
        return CANNOT_TELL_EXIT
    # one line for each kind of outcome (cannot tell, regressed, missing), the exit code after the
    # last, which decided it
    regressed = [c.config for c in result.configs if c.regression]
    said = []
    if result.undecided:  # a gate must not pass what it could not judge
        said.append(f"cannot tell whether these regressed (see above): {', '.join(result.undecided)}")
    if regressed:
        # not "beyond 5%" for all: a config failing now or failing its accuracy check regressed
        # without a percentage
        said.append(
            f"regression in {', '.join(regressed)} (each config's line above says why; a slowdown "
            f"counts beyond {args.threshold:g}%)"
        )
    if result.missing:  # not measured, so no slowdown: said apart from the regressions, and failed alike
        said.append(
            f"missing from the new report: {', '.join(result.missing)} (in the baseline, not in the new report: "
            "not measured, so no slowdown, but a gate does not pass a config that went missing)"
        )
    code = 1 if regressed or result.missing else CANNOT_TELL_EXIT if result.undecided else 0
    if said:
        said[-1] += f"; exit code {code}"
    for line in said:
        print(terminal_text(line), file=sys.stderr)
    return code


def _read_pair(args: argparse.Namespace, read, kind: str, advice: str):
    """Both reports read by `read` (a report of one kind; None for a report of another kind):
    (baseline, new); None when neither is of this kind (another comparison goes on); the exit
    code 2 when one cannot be read or only one is of this kind (`kind` and `advice` say so)."""
    from core.report.files import ReportError

    try:
        base, new = read(args.baseline), read(args.new)
    except ReportError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if base is None and new is None:
        return None
    if base is None or new is None:
        print(
            f"error: {args.new if base is None else args.baseline} is the report of {kind} and the other "
            f"one is not; {advice}",
            file=sys.stderr,
        )
        return 2
    return base, new


def _generation_reports(args: argparse.Namespace) -> int | None:
    """Two reports of `profile --task generate` compared config by config and prompt length
    (core.decide.generation_compare): the exit code; None when neither is a generation report."""
    from core.decide.generation_compare import compare_generations
    from core.report.generation_report import generation_rows_or_none

    pair = _read_pair(
        args,
        generation_rows_or_none,
        "a generation profile (--task generate)",
        "compare it with another generation report.",
    )
    if not isinstance(pair, tuple):
        return pair
    result = compare_generations(*pair, args.threshold)
    for line in result.lines():
        print(terminal_text(line))
    return result.exit_code


def _script_reports(args: argparse.Namespace) -> int | None:
    """Two reports of `main.py run` compared function by function (core.decide.script_compare):
    the exit code; None when neither is a script report (the model comparison goes on)."""
    from core.decide.script_compare import compare_scripts
    from core.report.script_report import script_report_or_none

    pair = _read_pair(
        args,
        script_report_or_none,
        "a script (main.py run)",
        "compare a script's report with another report of the same script.",
    )
    if not isinstance(pair, tuple):
        return pair
    base, new = pair
    if os.path.basename(base.target) != os.path.basename(new.target):
        print(
            terminal_text(
                f"error: the reports are of different scripts ({os.path.basename(base.target)}, "
                f"{os.path.basename(new.target)}); compare two reports of the same script."
            ),
            file=sys.stderr,
        )
        return 2
    result = compare_scripts(base, new, args.threshold, relative=args.relative)
    for w in result.warnings:
        print(f"warning: {terminal_text(w)}", file=sys.stderr)
    for line in result.lines():
        print(terminal_text(line))
    if args.require_cudagraphs:
        print(
            "warning: --require-cudagraphs applies to model reports; a script's report holds no CUDA-graph coverage",
            file=sys.stderr,
        )
    if args.out:
        from core.decide.script_compare import comparison_rows
        from core.report.csv_cells import csv_text
        from core.report.files import atomic_write

        try:
            os.makedirs(args.out, exist_ok=True)
            atomic_write(
                os.path.join(args.out, "compare.csv"),
                csv_text(["function", "status", "detail"], comparison_rows(result)),
            )
        except OSError as exc:
            print(f"error: cannot write compare.csv into {args.out}: {exc}", file=sys.stderr)
            return 2
        print(f"compare.csv written to {os.path.abspath(args.out)}", file=sys.stderr)
    return result.exit_code
