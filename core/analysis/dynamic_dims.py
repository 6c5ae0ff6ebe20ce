"""From recompiles to the right dynamic-shape call: per input and dimension, the sizes a run
saw, the guards torch said failed on it, and what recompiling for it cost; then exactly the
dimensions to mark (`torch._dynamo.mark_dynamic(x, dim, min=..., max=...)`), not
`dynamic=True` for everything, or why dynamic shapes cannot help.

Sources: the sweep's variants (`VariantResult.input_shapes`, the shapes the job described,
e.g. "float32[2×8×16]" or "input_ids=int64[1×128]") and torch's own guard-failure reasons
("tensor 'x' size mismatch at index 1. expected 8, actual 12", as torch's recompiles log and
its compilation metrics give them). A failure that is not an input's size (a Python value, a
tensor made inside the model, a dtype, an object's identity) is kept apart: marking cannot
reach it. No torch, no Qt; any thread.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from core.vocab.config import DimMark

SIZE_MISMATCH = re.compile(r"tensor '([^']+)' size mismatch at index (\d+)\. expected (\d+), actual (\d+)")
_SHAPE = re.compile(r"^(?:(\w+)=)?\w+\[([\d×]*)\]$")
_SIZE_SOURCE = re.compile(r"^L\['(\w+)'\](\[\d+\])?\.size\(\)\[(\d+)\]$")  # L['x'].size()[0]


@dataclass
class DimRow:
    """One dimension of one input: `values` the sizes the run saw there (in order of first
    sight), `guard` torch's name for the tensor when a guard failed on this dimension
    ("x", "L['x']"), `guard_failures` how many of torch's reasons named it, `recompiles` the
    variants that compiled again when this size was new, `compile_s` what they cost."""

    input: int
    name: str  # the keyword name (Hugging Face inputs), else ""
    dim: int
    values: list[int] = field(default_factory=list)
    guard: str = ""
    guard_failures: int = 0
    recompiles: int = 0
    compile_s: float = 0.0
    specialized: str = ""  # torch fixed this size to a value (its structured record), in words

    @property
    def changes(self) -> bool:
        return len(self.values) > 1

    @property
    def where(self) -> str:
        who = self.name or self.guard or f"input {self.input}"
        return f"{who} dim {self.dim}"

    def mark(self) -> DimMark:
        """min/max from the sizes seen; sizes 0 and 1 are left to their own graph (torch
        specializes them), so the range starts at 2 at the least."""
        return DimMark(self.input, self.dim, max(2, min(self.values)), max(self.values))

    def columns(self) -> dict:
        return {
            "input": self.input,
            "name": self.name or self.guard,
            "dim": self.dim,
            "values": " ".join(str(v) for v in self.values),
            "guard_failures": self.guard_failures,
            "recompiles": self.recompiles,
            "compile_s": round(self.compile_s, 3),
            "specialized": self.specialized,
        }


@dataclass
class DynamicShapes:
    """The whole table of a job and what it says: `rows` every dimension that changed (and any
    a guard named); torch's guard failures that no mark on an input reaches, in its words:
    `internal` sizes of tensors made inside the model (passed across a graph break: only
    dynamic=True reaches them), `not_sizes` guards on something else (a Python value, a dtype,
    an object's identity: dynamic shapes cannot help)."""

    rows: list[DimRow]
    internal: list[str]
    not_sizes: list[str]
    recompiles: int
    compile_s: float

    @property
    def to_mark(self) -> list[DimRow]:
        """The dimensions to mark: those whose size changed (a guard failing on one of them is
        what recompiled; marking the ones torch did not name yet avoids the next recompile),
        less those torch specialized (the code needs their exact value: marking cannot help)."""
        return [r for r in self.rows if r.changes and not r.specialized]

    @property
    def specialized(self) -> list[DimRow]:
        return [r for r in self.rows if r.changes and r.specialized]

    def marks(self) -> tuple[DimMark, ...]:
        return tuple(r.mark() for r in self.to_mark)

    def code(self, names: dict[int, str] | None = None) -> str:
        """The lines to paste before the first compiled call."""
        lines = []
        for r in self.to_mark:
            m = r.mark()
            var = (names or {}).get(r.input) or r.name or _argument(r.guard) or f"inputs[{r.input}]"
            note = "" if min(r.values) >= 2 else "  # sizes 0 and 1 keep their own graph: torch specializes them"
            lines.append(f"torch._dynamo.mark_dynamic({var}, {r.dim}, min={m.min}, max={m.max}){note}")
        return "\n".join(lines)

    def table(self) -> list[dict]:
        return [r.columns() for r in self.rows]


def _argument(guard: str) -> str:
    """The forward's argument behind a guard's tensor name ("x", "L['x']"), else ""."""
    m = re.fullmatch(r"L\['(\w+)'\]", guard)
    if m:
        return m.group(1)
    return guard if re.fullmatch(r"[A-Za-z]\w*", guard) else ""


def parse_shape(text: str) -> tuple[str, tuple[int, ...]] | None:
    """("input_ids", (1, 128)) from "input_ids=int64[1×128]"; None for what is not one tensor."""
    m = _SHAPE.match(text.strip())
    if not m:
        return None
    dims = tuple(int(d) for d in m.group(2).split("×")) if m.group(2) else ()
    return m.group(1) or "", dims


def analyse(result) -> DynamicShapes:
    """The table of a JobResult: from its sweep's variants and its recompiles' reasons."""
    shapes_by_variant = [[parse_shape(s) for s in v.input_shapes] for v in result.variants]
    rows: dict[tuple[int, int], DimRow] = {}
    for shapes in shapes_by_variant:
        for i, parsed in enumerate(shapes):
            if parsed is None:
                continue
            name, dims = parsed
            for d, size in enumerate(dims):
                row = rows.setdefault((i, d), DimRow(i, name, d))
                if size not in row.values:
                    row.values.append(size)
    reasons = [r for rc in result.recompiles for r in rc.reasons]
    reasons += [r for v in result.variants for r in v.recompile_reasons]
    internal: list[str] = []
    not_sizes: list[str] = []
    for reason in dict.fromkeys(reasons):
        m = SIZE_MISMATCH.search(reason)
        if not m:
            not_sizes.append(reason)
            continue
        guard, dim, expected, actual = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4))
        row = _row_for(rows, guard, dim, expected, actual)
        if row is None:  # a tensor made inside the model (passed across a graph break)
            internal.append(reason)
            continue
        row.guard = row.guard or guard
        row.guard_failures += sum(1 for r in reasons if r == reason)
    # which variant's new size each recompile is owed to
    seen: dict[tuple[int, int], set[int]] = {}
    for v, shapes in zip(result.variants, shapes_by_variant):
        new = []
        for i, parsed in enumerate(shapes):
            if parsed is None:
                continue
            for d, size in enumerate(parsed[1]):
                if size not in seen.setdefault((i, d), set()):
                    if seen[(i, d)]:
                        new.append((i, d))
                    seen[(i, d)].add(size)
        if v.recompiled:
            for key in new:
                rows[key].recompiles += 1
                rows[key].compile_s += v.compile_time_s
    for sp in getattr(result, "specializations", ()):
        for source in sp.sources:
            m = _SIZE_SOURCE.match(source)
            if not m:
                continue
            name, dim = m.group(1) + (m.group(2) or ""), int(m.group(3))
            for row in rows.values():
                if row.dim == dim and name in (row.guard, row.name, _argument(row.guard)) and not row.specialized:
                    where = f" at {os.path.basename(sp.file)}:{sp.line}" if sp.file else ""
                    row.specialized = f"torch fixed it to {sp.value} ({sp.reason}){where}"
    kept = [r for r in rows.values() if r.changes or r.guard_failures]
    kept.sort(key=lambda r: (r.input, r.dim))
    recompiled = [v for v in result.variants if v.recompiled]
    count = max(len(result.recompiles), len(recompiled))
    return DynamicShapes(kept, internal, not_sizes, count, sum(v.compile_time_s for v in recompiled))


def _row_for(rows, guard: str, dim: int, expected: int, actual: int) -> DimRow | None:
    """The input dimension a size guard failed on: the one whose sizes include both the
    expected and the actual value (a guard names the forward's argument, not its position)."""
    candidates = [r for (i, d), r in rows.items() if d == dim and expected in r.values and actual in r.values]
    named = [r for r in candidates if r.name and r.name == _argument(guard)]
    if named:
        return named[0]
    if candidates:
        return min(candidates, key=lambda r: r.input)
    return None


def cannot_help(analysis: DynamicShapes) -> str:
    """Why dynamic shapes cannot help these recompiles ("" when they can): every size that
    changed is one torch specialized (the code needs its exact value: torch's structured
    record says where), or every guard that failed is on something other than a size."""
    if analysis.specialized and not analysis.to_mark and not analysis.internal:
        return "the sizes that changed are ones the code needs exactly, so torch compiles each apart: " + "; ".join(
            f"{r.where}: {r.specialized}" for r in analysis.specialized[:3]
        )
    if analysis.to_mark or analysis.internal or not analysis.not_sizes:
        return ""
    return "the guards that failed are not on a tensor's size, so no dynamic-shape setting reaches them: " + "; ".join(
        f'"{r}"' for r in analysis.not_sizes[:3]
    )
