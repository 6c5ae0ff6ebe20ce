"""The suggestion rules on what dynamo traces (core.decide.suggestions runs them):

- `dynamic_shapes`: recompiles from size mismatches → `dynamic=True` or `mark_dynamic`;
- `dynamo_config`: torch's graph-break hints that name a `torch._dynamo.config` setting
  (allow_rnn, capture_scalar_outputs, ...) not yet set;
- `fullgraph_failed`: a fullgraph=True compile failed on a graph break.

None of them needs a usable timing."""

from __future__ import annotations

import re

from core.decide.advice import (
    ConfigChange,
    Suggestion,
    measured_change,
)
from core.decide.recommend import REFERENCE_BACKENDS
from core.vocab.records import JobStatus
from core.vocab.source_paths import display_path

# torch's hints spell a setting as "torch._dynamo.config.capture_scalar_outputs = True"
# (sometimes in backquotes); the value is a bool or a whole number.
HINTED_SETTING = re.compile(r"torch\._dynamo\.config\.(\w+)`?\s*=\s*`?(True|False|-?\d+)\b")


def dynamic_shapes(result, results, calls: int) -> list[Suggestion]:
    """Recompiles for new input sizes: exactly the dimensions to mark (core.analysis.dynamic_dims,
    min/max from the sizes seen), with the code, applied and re-run as a config that marks them;
    dynamic=True second (it reaches tensors made inside the model too); or, when every guard
    that failed is on something else than a size, that dynamic shapes cannot help."""
    from core.analysis.dynamic_dims import analyse, cannot_help

    cfg = result.config
    if cfg.dynamic == "true":
        return []
    a = analyse(result)
    if not a.recompiles or not (a.to_mark or a.internal or a.not_sizes or a.specialized):
        return []
    limit = any(v.recompile_limit_hit for v in result.variants)
    count = a.recompiles
    premise = f"this run recompiled {count} time{'s' if count != 1 else ''}" + (
        "; the recompile limit was hit, after which torch ran new shapes eagerly" if limit else ""
    )
    cost = f"; they cost {a.compile_s:.1f} s of compiling" if a.compile_s else ""
    why_not = cannot_help(a)
    if why_not:
        return [
            Suggestion(
                "dynamic_shapes",
                cfg.label,
                "Dynamic shapes cannot help these recompiles",
                f"{count} recompile{'s' if count != 1 else ''}{cost}: {why_not}. "
                + (
                    "Change the code there so it does not need the exact size (a tensor operation instead of a "
                    "Python loop or int() over it), or keep the size fixed (pad the inputs to a few sizes)."
                    if a.specialized
                    else "Find what changes between calls in those guards and keep it fixed."
                ),
                premise=premise,
                blocking=limit,
            )
        ]
    parts = []
    for r in a.to_mark:
        failed = f", torch's guard failed {r.guard_failures}x" if r.guard_failures else ""
        parts.append(f"{r.where}: sizes {', '.join(map(str, r.values))} ({r.recompiles} recompile(s){failed})")
    evidence = "; ".join(parts) or "no input's size changed"
    if a.internal:
        evidence += (
            f'; a tensor made inside the model changed size ("{a.internal[0]}"): mark_dynamic cannot reach it, '
            "dynamic=True can"
        )
    changes: tuple = ()
    note = ""
    if a.to_mark:
        marks = ", ".join(r.where for r in a.to_mark)
        marked, note = measured_change(
            results,
            ConfigChange(
                f"mark {marks} dynamic before the first call (mark_dynamic={','.join(m.label for m in a.marks())})",
                mark_dynamic=a.marks(),
            ),
            cfg,
        )
        changes += marked
    everything, note2 = measured_change(
        results, ConfigChange("compile with dynamic=True (every size symbolic from the start)", dynamic="true"), cfg
    )
    changes += everything
    return [
        Suggestion(
            "dynamic_shapes",
            cfg.label,
            "Mark the dimensions that change dynamic"
            if a.to_mark
            else "Compile for changing sizes: dynamic=True (the changing tensor is made inside the model)",
            f"{count} recompile{'s' if count != 1 else ''} for new sizes{cost}: {evidence}." + note + note2,
            code=a.code(),
            changes=changes,
            premise=premise,
            blocking=limit,
            explains_ms=1000.0 * a.compile_s / max(1, calls),
        )
    ]


def _dynamo_keys() -> set[str] | None:
    """The installed torch's dynamo settings, when torch is loaded already (the CLI and the
    app have it; a process that only writes a report must not pay seconds to import it);
    None means unknown, and a hint's setting is then not checked against them."""
    import sys

    if "torch" not in sys.modules:
        return None
    try:
        from core.vocab.config import dynamo_config_defaults

        return set(dynamo_config_defaults())
    except Exception:
        return None


def _hinted_settings(result) -> dict[str, tuple[str, list]]:
    """The dynamo settings torch's hints name for this job's breaks and skipped frames, not
    already set in its config: key → (value, [(break, hint), ...])."""
    applied = {k: str(v) for k, v in result.config.dynamo_config}
    found: dict[str, tuple[str, list]] = {}
    for gb in result.graph_breaks:
        for hint in gb.hints:
            for key, value in HINTED_SETTING.findall(hint):
                if applied.get(key) != value:
                    found.setdefault(key, (value, []))[1].append((gb, hint))
    return found


def dynamo_config(result, results, calls: int) -> list[Suggestion]:
    """Once a run per setting (a tune listed the same hint for five configs): for the first
    config it applies to, a compiling one before a reference, naming the others."""
    cfg = result.config
    found = _hinted_settings(result)
    known = _dynamo_keys()
    out = []
    for key, (value, breaks) in found.items():
        if known is not None and key not in known:
            continue
        sharing = sorted(
            (r for r in results if (h := _hinted_settings(r).get(key)) is not None and h[0] == value),
            key=lambda r: r.config.backend in REFERENCE_BACKENDS,
        )
        if sharing and sharing[0] is not result:
            continue
        others = [r.config.label for r in sharing if r is not result]
        also = f"; the same hint came for {', '.join(others)}" if others else ""
        gb, hint = breaks[0]
        file, line = (gb.user_file, gb.user_line) if gb.user_file else (gb.file, gb.line)
        where = f"{display_path(file)}:{line}" if file else "?"
        what = (
            f"frame skipped ({gb.eager_function or 'a function'} ran eagerly)"
            if gb.frame_skipped
            else f"graph break ({gb.per_call} per call)"
        )
        literal = {"True": True, "False": False}.get(value, None)
        typed = literal if literal is not None else int(value)
        change = ConfigChange(f"set torch._dynamo.config.{key} = {value}", dynamo_config=((key, typed),))
        more = f" and {len(breaks) - 1} more" if len(breaks) > 1 else ""
        changes, note = measured_change(results, change, cfg)
        skipped = any(b.frame_skipped for b, _ in breaks)
        cost = sum(c.cost_ms_per_call for b, _ in breaks if (c := result.break_cost(b)) is not None)
        out.append(
            Suggestion(
                "dynamo_config",
                cfg.label,
                f"Set torch._dynamo.config.{key} = {value}, as torch's hint says",
                f"{what} {gb.gb_code or ''} at {where}{more}: {gb.reason}; torch's hint: {hint.rstrip('. ')}".replace(
                    "  ", " "
                )
                + also
                + note,
                code=f"torch._dynamo.config.{key} = {value}",
                changes=changes,
                premise=f"torch logged this hint for a {'frame it skipped' if skipped else 'graph break'} in this run",
                blocking=skipped,
                explains_ms=cost,
            )
        )
    return out


def fullgraph_failed(result, results, calls: int) -> list[Suggestion]:
    """fullgraph=True refused a graph break: nothing compiled; the same config without
    fullgraph shows where and why it breaks."""
    cfg = result.config
    if not cfg.fullgraph or result.status != JobStatus.FAILED or "fullgraph" not in result.failure_reason:
        return []
    changes, note = measured_change(
        results, ConfigChange("compile with fullgraph=False (breaks allowed, each one reported)", fullgraph=False), cfg
    )
    return [
        Suggestion(
            "fullgraph_failed",
            cfg.label,
            "fullgraph=True failed on a graph break: re-run without it to see every break",
            f"{result.failure_reason}.{note}",
            changes=changes,
            premise="this run's fullgraph compile failed",
            blocking=True,
        )
    ]
