"""The suggestions about CUDA graphs: a CUDA-graph mode run on the CPU (where it does nothing),
and, on a GPU, the graphs torch did not record, with torch's reason and what to change
(CUDAGRAPH_ADVICE: torch's words → the advice). No Qt; any thread."""

from __future__ import annotations

from core.analysis.results import UNLOGGED_CUDAGRAPH_SKIP
from core.capture.live import SKIP_PREFIX
from core.decide.advice import ConfigChange, Suggestion, measured_change
from core.vocab.config import CompileConfig
from core.vocab.source_paths import display_path


def _without_cudagraphs(cfg: CompileConfig) -> tuple[ConfigChange, str, str]:
    """(the change that stops recording CUDA graphs, what it is called, the code for it)."""
    if cfg.inductor_options:  # options, no mode (torch.compile takes one or the other)
        options = {**dict(cfg.inductor_options), "triton.cudagraphs": False}
        return (
            ConfigChange(
                "set the inductor option triton.cudagraphs=False", inductor_options=(("triton.cudagraphs", False),)
            ),
            "options with triton.cudagraphs=False",
            f"torch.compile(model, options={options!r})",
        )
    instead = "default" if cfg.mode == "reduce-overhead" else "max-autotune-no-cudagraphs"
    return (
        ConfigChange(f"use mode={instead!r}", mode=instead),
        f"mode {instead!r}",
        f"torch.compile(model, mode={instead!r})",
    )


def _mode_name(cfg: CompileConfig) -> str:
    return f"mode={cfg.mode!r}" if not cfg.inductor_options else "triton.cudagraphs=True"


def cudagraphs_on_cpu(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if result.spec.device != "cpu" or not cfg.records_cudagraphs:
        return []
    change, instead, code = _without_cudagraphs(cfg)
    changes, note = measured_change(results, change, cfg)
    skips = len(result.cudagraph_skips)
    confirmed = (
        f" torch confirms it: it counted {skips} CUDA-graph skip{'s' if skips != 1 else ''} (graphs "
        "with no GPU device)."
        if skips
        else ""
    )
    return [
        Suggestion(
            "cudagraphs_on_cpu",
            cfg.label,
            f"{_mode_name(cfg)} has no effect on the CPU: use {instead}",
            f"{_mode_name(cfg)} records CUDA graphs to cut launch overhead on a GPU; this ran on the CPU, where there "
            f"are none, so it measured {instead} under another name.{confirmed}{note}",
            code=code,
            changes=changes,
            premise=f"this run used {_mode_name(cfg)} on the CPU",
        )
    ]


# torch's skip reasons (words of torch/_inductor/cudagraph_utils.py, lowering.py, compile_fx.py)
# → (what to do, in a line; why and how); the first match wins, an unknown reason stands alone.
CUDAGRAPH_ADVICE = (
    (
        "mutat",
        "update inputs out of place",
        "the graph changes an input in place (a buffer updated in forward(), an in-place op on an argument); CUDA "
        "graphs replay fixed memory, so torch will not record it: make that update out of place, or do it outside "
        "the compiled model",
    ),
    (
        "cpu device",
        "move the CPU tensors to the GPU",
        "part of the graph runs on the CPU (a CPU tensor or buffer, or an op that returns one): move it to the GPU, "
        "e.g. register it as a buffer so .to(device) moves it",
    ),
    ("multiple devices", "keep the compiled model on one GPU", "the graph uses more than one device"),
    (
        "incompatible op",
        "move the op out of the compiled region",
        "an op CUDA graphs cannot capture (its output size depends on data, or it syncs with the CPU): move it out "
        "of the compiled region or replace it",
    ),
    (
        "symbolic shapes",
        "compile for fixed shapes",
        "the graph has dynamic shapes and cudagraph_skip_dynamic_graphs is set: compile for fixed shapes "
        "(dynamic=False, inputs padded to a few sizes) to get CUDA graphs",
    ),
    (
        "control flow operator",
        "keep torch.cond / while_loop out of CUDA-graph modes",
        "graphs with torch.cond / torch.while_loop on the GPU are not recorded",
    ),
    (
        "index_put_",
        "use torch.where instead of a masked assignment",
        "an in-place assignment through a boolean mask (x[mask] = v) cannot be recorded: use torch.where(mask, v, x)",
    ),
    (
        "caching allocator",
        "turn the CUDA caching allocator back on",
        "the CUDA caching allocator is off (PYTORCH_NO_CUDA_MEMORY_CACHING set?) and CUDA graphs need it",
    ),
    (
        "re-recording limit",
        "give the graph stable inputs between calls",
        "torch re-recorded this graph more often than cudagraph_unexpected_rerecord_limit allows (inputs at new "
        "addresses or of new shapes on each call, e.g. tensors made fresh per call or dynamic shapes) and now "
        "runs it without CUDA graphs: keep inputs in the same tensors, or pad shapes to a few sizes",
    ),
    (
        "non-tensor inputs",
        "pass tensors, not Python values, into the compiled region",
        "the graph takes inputs that are not tensors (Python numbers or objects torch could not make symbolic)",
    ),
    (
        "cpp-wrapper",
        "drop cpp_wrapper, or graph partitioning, for CUDA graphs",
        "inductor's cpp_wrapper does not support graph partitioning with CUDA graphs yet",
    ),
    (
        "mempool",
        "keep user CUDA MemPool contexts out of the compiled region",
        "allocations inside a user CUDA MemPool context cannot be captured",
    ),
)


def cudagraph_advice(reason: str) -> tuple[str, str]:
    """(what to do in a line, why and how) for torch's skip reason; ("", "") when unknown."""
    low = reason.lower()
    return next(((fix, why) for key, fix, why in CUDAGRAPH_ADVICE if key in low), ("", ""))


def cudagraphs_skipped(result, results, calls: int) -> list[Suggestion]:
    cfg = result.config
    if result.spec.device == "cpu" or not cfg.records_cudagraphs or not result.cudagraph_skips:
        return []
    groups: dict[str, list] = {}  # reason → its skips, first seen first
    for skip in result.cudagraph_skips:
        groups.setdefault(skip.reason, []).append(skip)
    parts = []
    for reason, skips in groups.items():
        where = next((f" at {display_path(k.file)}:{k.line}" for k in skips if k.file), "")
        said = f"torch: {reason!r}" if reason else UNLOGGED_CUDAGRAPH_SKIP
        parts.append(f"{said}{where}{f' ({len(skips)} times)' if len(skips) > 1 else ''}")
    first = next((r for r in groups if r), "")
    fix, advice = cudagraph_advice(first)
    n = len(result.cudagraph_skips)
    # torch counts a skip per graph, partition and recompile (forward and backward apart) and
    # does not say how many it recorded: whether any graph still runs as a CUDA graph is what
    # the re-run without them measures.
    change, instead, code = _without_cudagraphs(cfg)
    changes, note = measured_change(results, change, cfg)
    tail = (
        f" Graphs torch skipped run without CUDA graphs; re-running with {instead} measures what the "
        f"CUDA graphs that were recorded, if any, bring."
    )
    short = SKIP_PREFIX.sub("", first, count=1)
    return [
        Suggestion(
            "cudagraphs_skipped",
            cfg.label,
            f"CUDA graphs were skipped {n} time{'s' if n != 1 else ''}"
            + (f" ({short})" if short else "")
            + (f": {fix}" if fix else ""),
            "; ".join(parts) + "." + (f" What to change: {advice}." if advice else "") + tail + note,
            changes=changes,
            premise=f"torch reported {n} CUDA-graph skip{'s' if n != 1 else ''} in this run",
        )
    ]
