"""`python main.py tune MODEL [--budget MINUTES] [--calls N] --out DIR`: find the best settings
within a time budget (the candidates, the estimator and the budget are core.decide.tune), as
ordinary `profile` jobs, then recommend."""

from __future__ import annotations

import dataclasses
import sys
import time

from core.cli.prologue import run_command
from core.decide.tune import MAX_BUDGET_MIN, BudgetListener, Estimator, TuneRun, candidates
from core.vocab.config import JobSpec


def main(argv: list[str]) -> int:
    from core.cli.args import build_parser

    return run_command(argv, build_parser("tune"), _tune)


def _tune(args, argv: list[str]) -> int:
    from core.cli.job_specs import build_specs
    from core.cli.output import Progress, say
    from core.cli.profile import run_and_report

    if not 0 < args.budget <= MAX_BUDGET_MIN:  # NaN and infinity too (a timer cannot wait forever)
        say(
            f"error: --budget must be more than 0 and at most {MAX_BUDGET_MIN:,.0f} minutes (a week), not "
            f"{args.budget:g}.",
            file=sys.stderr,
        )
        return 2
    run = TuneRun(args.budget * 60.0, {}, None)

    def make_specs() -> list[JobSpec]:
        from core.models import defines_variants

        has_variants = defines_variants(args.model)
        cands = candidates(args.device, has_variants)
        specs = build_specs(args, [c.config for c in cands])
        specs = [dataclasses.replace(s, sweep_shapes=has_variants) for s in specs]
        by_config = {s.config: c for s, c in zip(specs, cands)}
        run.candidates.update({s.job_id: c for s, c in zip(specs, cands)})
        run.listener.estimator.by_config.update(by_config)
        run.started = time.monotonic()
        return specs

    run.listener = BudgetListener(Progress(quiet=args.quiet), run.budget_s, Estimator({}), quiet=args.quiet)
    try:
        code = run_and_report(
            args,
            argv,
            make_specs,
            listener=run.listener,
            sections=lambda results: {"tune": run.section(results)},
            after=run.print_candidates,
        )
    finally:
        run.listener.close()
    if code == 0 and run.unanswered:
        # The question tune was asked went unanswered: a script must not read this as a result.
        say("error: tune measured no candidate that could be recommended (see the budget above).", file=sys.stderr)
        return 1
    return code
