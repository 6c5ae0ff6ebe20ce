"""What every command that runs jobs does first and last, written once: refuse `--verbose`
(torch.compile has none; the compile log is the real switch), parse the command line, and
turn a Ctrl+C before the first job into exit code 130 with nothing measured."""

from __future__ import annotations

import argparse
import sys
from typing import Callable

from core.vocab.config import VERBOSE_REFUSAL, asks_for_verbose

INTERRUPTED_BEFORE_JOBS = "interrupted before any job started; nothing was measured."


def run_command(
    argv: list[str], parser: argparse.ArgumentParser, body: Callable[[argparse.Namespace, list[str]], int]
) -> int:
    """Parse `argv` with `parser` and run `body(args, argv)`; the exit code. `--verbose` is
    refused (2) before anything else; Ctrl+C before any job started gives 130 (body handles
    Ctrl+C once jobs run: the runner cancels them and the report is written)."""
    if asks_for_verbose(argv):
        print(f"error: {VERBOSE_REFUSAL}", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    try:
        return body(args, argv)
    except KeyboardInterrupt:
        print(f"\n{INTERRUPTED_BEFORE_JOBS}", file=sys.stderr)
        return 130
