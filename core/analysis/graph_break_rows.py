"""The graph-break table's rows: which breaks the compiled code passes (`is_ordinary`) and how
each graph-break event is folded into a table of rows (`fold_graph_break`), for a job's
JobResult (core.analysis.results) and a script entry point's (core.analysis.script_runs)."""

from __future__ import annotations

import dataclasses

from core.vocab import records as rec


def is_ordinary(gb: rec.GraphBreak) -> bool:
    """A graph break the compiled code passes: not a skipped frame (ran eagerly), not a compile
    that made torch raise."""
    return not gb.frame_skipped and not gb.compile_failed


def fold_graph_break(rows: list[rec.GraphBreak], by_compile: dict, gb: rec.GraphBreak) -> None:
    """Fold one graph-break event into `rows` (a job's table, or a script entry point's), counting
    nothing twice.

    An ordinary break is one row per place (reason, file, line): `logged` and `per_call`
    are summed. A skipped frame is one row per place and function that ran eagerly, a
    compile that made torch raise (compile_failed) one row per place.
    A skipped frame with a compile id is torch saying the frame it compiled under that id
    was given up (the job reports it once the compilation metrics show it): the ordinary
    breaks received with that compile id belonged to it, so their counts are taken out of
    their rows (a row left with nothing is removed) before the skipped row is added; so
    for a failed compile. Which breaks came with which compile id is kept for that while
    events arrive (a report holds folded rows, and no follow-up comes after it). Once the
    op profile has counted the passes, per_call is its figure (see _count_passes)."""
    if (gb.frame_skipped or gb.compile_failed) and gb.compile_id:
        for key, logged, per_call in by_compile.pop(gb.compile_id, ()):
            for i, known in enumerate(rows):
                if not is_ordinary(known) or known.key != key:
                    continue
                if known.logged - logged <= 0:
                    del rows[i]
                else:
                    others = [cid for cid, entries in by_compile.items() if any(r[0] == key for r in entries)]
                    rows[i] = dataclasses.replace(
                        known,
                        logged=known.logged - logged,
                        per_call=max(0, known.per_call - per_call),
                        compile_id=others[0] if others else known.compile_id,
                    )
                break
    elif gb.compile_id:
        by_compile.setdefault(gb.compile_id, []).append((gb.key, gb.logged, gb.per_call))
    for i, known in enumerate(rows):
        if (
            known.key == gb.key
            and known.frame_skipped == gb.frame_skipped
            and known.compile_failed == gb.compile_failed
            and (not gb.frame_skipped or known.eager_function == gb.eager_function)
        ):
            rows[i] = dataclasses.replace(known, logged=known.logged + gb.logged, per_call=known.per_call + gb.per_call)
            break
    else:
        rows.append(gb)
