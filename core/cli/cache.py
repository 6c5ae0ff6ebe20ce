"""`python main.py cache [--clear [LABEL ...]]`: the inductor cache folders each compile config
compiles in (core.run.compile_cache), their size, files and last use, and removing them. A
folder a running job holds is kept and said; nothing outside the product's cache folder is read
or removed (torch's own default cache included)."""

from __future__ import annotations

import argparse
import sys

from core.report.safety import terminal_text
from core.run.compile_cache import (
    AFTER_CLEAR,
    CACHE_COLUMNS,
    caches_root,
    clear_config_caches,
    config_caches,
    unknown_labels,
)
from core.vocab.formatting import count, disk_size


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="main.py cache",
        description="List the inductor cache folder each compile config compiles in (one per config, so that no "
        "config's compile time depends on another having run first), with size, files and last use; --clear "
        f"removes them ({AFTER_CLEAR}).",
    )
    p.add_argument(
        "--clear",
        nargs="*",
        metavar="LABEL",
        help="remove the caches of the configs named by label as listed (e.g. inductor/max-autotune-no-cudagraphs), "
        "or all of them when none is named; a cache a running job compiles into is kept",
    )
    return p


def _listing(caches) -> list[str]:
    if not caches:
        return [f"no compile caches in {caches_root()} (each config's first profile makes one)"]
    rows = [CACHE_COLUMNS] + [tuple(terminal_text(x) for x in c.cells()) for c in caches]
    widths = [max(len(r[i]) for r in rows) for i in range(len(CACHE_COLUMNS) - 1)]
    lines = [f"compile caches in {caches_root()}:"]
    for row in rows:
        label, size, files, when, state = row
        text = f"  {label:<{widths[0]}}  {size:>{widths[1]}}  {files:>{widths[2]}}  {when:<{widths[3]}}  {state}"
        lines.append(text.rstrip())
    total = sum(c.size_bytes for c in caches)
    lines.append(
        f"  {count(len(caches), 'cache')}, {disk_size(total)} in all; `main.py cache --clear` removes them ({AFTER_CLEAR})"
    )
    return lines


def main(argv: list[str]) -> int:
    args = build_parser().parse_args(argv)
    if args.clear is None:
        print("\n".join(_listing(config_caches())))
        return 0
    labels = args.clear or None
    if labels:
        unknown = unknown_labels(labels)
        if unknown:
            known = ", ".join(terminal_text(c.label) for c in config_caches()) or "none"
            print(
                f"error: no compile cache for {', '.join(map(repr, unknown))}; the caches are: {known} "
                "(`main.py cache` lists them). Nothing was removed.",
                file=sys.stderr,
            )
            return 2
    try:
        done = clear_config_caches(labels)
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl+C): the caches removed so far are gone, the rest kept.", file=sys.stderr)
        return 130
    for failed, line in done.lines():
        print(terminal_text(line), file=sys.stderr if failed else sys.stdout)
    if not done.lines():
        print(f"no compile caches in {caches_root()}: nothing to remove")
    return 1 if done.failed else 0
