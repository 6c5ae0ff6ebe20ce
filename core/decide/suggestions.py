"""Suggestions from measurements: what to try next, the evidence, and the change as data.

Each rule reads a run's JobResults and returns `Suggestion`s; each carries its evidence in
words and, where a config change can test it, `ConfigChange`s the app offers as "apply and
re-run" (`change.apply(config)` gives the CompileConfig to queue). Rules:

- `freezing`: inductor on the CPU for inference without `freezing=True`;
- `autotune`: plain inductor on the CPU for inference → mode max-autotune-no-cudagraphs;
- `dynamic_shapes`: recompiles from size mismatches → `dynamic=True` or `mark_dynamic`;
- `dynamo_config`: torch's graph-break hints that name a `torch._dynamo.config` setting
  (allow_rnn, capture_scalar_outputs, ...) not yet set;
- `cudagraphs_on_cpu`: a CUDA-graph mode (reduce-overhead, max-autotune) run on the CPU,
  where CUDA graphs do nothing;
- `cudagraphs_skipped`: on a GPU, torch skipped CUDA graphs for some graphs of a CUDA-graph
  mode, with torch's reason (core.capture.live records it) and what to change in the model;
- `compile_cache`: compile time dominates the total at the expected calls → the FX-graph and
  AOTAutograd caches, `torch.compiler.save_cache_artifacts`;
- `time_outside_graphs`: compiled is measurably slower and the op profile (core.measure.op_profile)
  shows most of a call outside compiled graphs, or a large share in guard checks;
- `fullgraph_failed`: a fullgraph=True compile failed on a graph break.

The rules live by family: core.decide.dynamo_rules (what dynamo traces), core.decide.speed_rules
(where the compiled calls' time goes), core.decide.cudagraph_rules (CUDA graphs); this module
runs them all and ranks what they say.

Advice comes only from evidence of this run: each suggestion states its `premise` (what
this run measured that makes it apply), and a rule that needs the timing stays silent when
the job's timing was unusable (core.analysis.quality) or its speedup is within the noise. No figure
measured elsewhere is ever cited. `suggest` ranks what blocks compilation first (a skipped
frame's hint such as allow_rnn, a fullgraph failure, the recompile limit), then the rest by
the time each explains per call (`explains_ms`), and last what only names a setting the run did
not try (`untried`: freezing with nothing measured for it).

No Qt; any thread (the `dynamo_config` rule reads the installed torch's config keys when
torch is importable).
"""

from __future__ import annotations

from core.decide.advice import (
    Suggestion,
    UnknownModeError,
    completed,
    timing_trusted,
)
from core.decide.cudagraph_rules import cudagraphs_on_cpu, cudagraphs_skipped
from core.decide.dynamo_rules import dynamic_shapes, dynamo_config, fullgraph_failed
from core.decide.recommend import CANNOT_TELL, DEFAULT_CALLS, NOT_COMPILED, REFERENCE_BACKENDS
from core.decide.speed_rules import autotune, compile_cache, freezing, page_faults, time_outside_graphs

RULES = (
    fullgraph_failed,
    page_faults,
    autotune,  # before freezing among equals: it beat plain inductor on 5 of 13 models of the verdicts bench, freezing on 1
    freezing,
    dynamic_shapes,
    dynamo_config,
    cudagraphs_on_cpu,
    cudagraphs_skipped,
    compile_cache,
    time_outside_graphs,
)


SUGGESTIONS_HEADING = "Suggestions from the measurements"


def suggestions_heading(rec) -> str:
    """The suggestions' heading under a recommendation (core.decide.recommend): under "not
    compiled" it says so, since a suggestion that speeds up compiling reads as a contradiction
    of it otherwise ("Compile time dominates: reuse compiled artifacts" under "do not compile")."""
    if (
        rec is not None
        and rec.config is None
        and rec.choice == NOT_COMPILED
        and rec.confidence
        not in (
            CANNOT_TELL,
            "none",
        )
    ):
        return (
            f"Not compiling is the choice at {rec.calls:,} calls. What the measurements suggest, "
            "should you compile anyway"
        )
    return SUGGESTIONS_HEADING


UNTRIED_HEADING = "Settings this run did not try (nothing it measured points to them; only a re-run measures them)"


def suggestion_sections(rec, suggestions) -> list[tuple[str, list[Suggestion]]]:
    """The suggestions under their headings, as every front end shows them: those from the
    measurements (suggestions_heading), then the settings not tried (UNTRIED_HEADING); an empty
    section is left out. "Suggestions from the measurements" over "Not tried: freezing ...;
    nothing this run measured points to it" contradicted itself."""
    said = [s for s in suggestions if not s.untried]
    untried = [s for s in suggestions if s.untried]
    return [(h, group) for h, group in ((suggestions_heading(rec), said), (UNTRIED_HEADING, untried)) if group]


TIMED_RULES = (
    "freezing, autotuning, compile caches, time outside compiled graphs"  # the rules that need a usable timing
)


def held_back_note(results) -> str:
    """What the suggestions leave out for lack of a usable timing: the rules that rest on it
    (TIMED_RULES) say nothing of a completed config whose timing was unusable or too short to
    grade, and "Suggestions: none" on a busy machine read as "nothing to try". "" when every
    completed config's timing could carry advice."""
    # a reference backend (eager, aot_eager) is not what those rules advise on
    held = [r for r in results if completed(r) and r.config.backend not in REFERENCE_BACKENDS and not timing_trusted(r)]
    if not held:
        return ""
    shown = []
    for r in held:
        q = r.quality()
        shown.append(f"{r.config.label} ({q.grade}: {q.reasons[0]})" if q.reasons else f"{r.config.label} ({q.grade})")
    whose = "its timing" if len(held) == 1 else "their timings"
    return (
        f"Held back: the suggestions that rest on the timing ({TIMED_RULES}) for {'; '.join(shown)}, "
        f"as {whose} can carry no advice; a re-run with a usable timing can make them."
    )


def suggest(results, calls: int = DEFAULT_CALLS) -> list[Suggestion]:
    """Every rule over every config of a run (results: JobResults): what blocks compilation
    first, then by the time each explains per call (rule order among equals)."""
    out: list[Suggestion] = []
    for rule in RULES:
        for result in results:
            try:
                out += rule(result, results, calls)
            except UnknownModeError:  # a report's mode this torch does not know costs that suggestion,
                continue  # never the report
    order = {rule.__name__: i for i, rule in enumerate(RULES)}
    return sorted(out, key=lambda s: (not s.blocking, s.untried, -s.explains_ms, order.get(s.rule, 99)))
