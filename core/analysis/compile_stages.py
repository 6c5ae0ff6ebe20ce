"""Where the compile time went: torch's nested compile times turned into stages that add up.

torch's compilation metrics are cumulative and nested: dynamo's time includes the backend's
(AOTAutograd), which includes inductor's, which includes its code generation, which includes
waiting for the C++/Triton kernels to compile. Read as phases they mislead: resnet18 showed
dynamo 18.5 s, AOTAutograd 17.8 s, inductor 16.4 s, codegen 15.6 s for a 19.2 s compile. Each
stage here is one nesting level minus the next (its exclusive time), so the stages add up to
the first compiled call:

- **tracing** (dynamo): dynamo's time minus the backend's;
- **AOTAutograd**: the backend's time (forward, and a training step's backward compiled at the
  first backward) minus inductor's: the joint graph, its partition, graph passes (for the
  eager and aot_eager backends this is the whole backend);
- **inductor lowering**: inductor's time minus code generation and autotuning (post-grad
  passes, lowering, scheduling);
- **code generation**: code generation minus the kernel compile;
- **kernel compile**: waiting for the C++/Triton kernels (torch's `triton_compile_time_us`,
  which counts C++ kernels too; it adds up every kernel's compile, and kernels compile in
  parallel worker processes, so it is capped at code generation's time: the longest the wait
  inside it can be; measured: 4.72 s of stages for a 2.95 s cold compile without the cap).
  Every level is capped at the one around it, and a level torch timed as 0 (on an FX graph
  cache hit inductor and code generation read 0 while kernels may still compile) hands what is
  inside it to the next level up;
- **autotuning**, where it ran (max-autotune's template benchmarks, benchmark fusion): torch
  times it inside inductor, while lowering or generating code without saying which; it is
  taken out of lowering first, then of code generation;
- **outside the compiler**: the rest of the first compiled call's wall time (running the
  compiled code once, building guards, Python between graphs).

A stage torch did not time (an older report, a backend without it) is 0 and left out. Small
negative differences (torch rounds each level to the microsecond; a level it timed only
partly) are shown as 0. No Qt; any thread.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.vocab.formatting import duration
from core.vocab.records import CompileResult


def seconds_text(seconds: float) -> str:
    """A stage's time: hundredths of a second below 10 s (stages are often a fraction of one)."""
    return f"{seconds:.2f} s" if seconds < 10 else duration(seconds)


STAGES = (
    ("tracing", "Tracing (dynamo)", "dynamo tracing the Python code into graphs, guards included"),
    (
        "aot",
        "AOTAutograd",
        "the backend before inductor: AOTAutograd's joint graph, its partition and graph passes "
        "(for the eager and aot_eager backends, the whole backend)",
    ),
    ("lowering", "Inductor lowering", "inductor's post-grad passes, lowering and scheduling"),
    ("codegen", "Code generation", "inductor writing the C++/Triton kernels and the wrapper code"),
    ("kernel_compile", "Kernel compile", "waiting for the C++/Triton kernels to compile (the C++ or Triton compiler)"),
    ("autotune", "Autotuning", "benchmarking kernel choices at compile time (max-autotune, benchmark fusion)"),
    ("outside", "Outside the compiler", "the rest of the first compiled call: running it once, Python between graphs"),
)
STAGE_KEYS = tuple(key for key, _, _ in STAGES)
STAGE_LABELS = {key: label for key, label, _ in STAGES}
STAGE_MEANINGS = {key: meaning for key, _, meaning in STAGES}


@dataclass(frozen=True)
class CompileStage:
    """One stage's exclusive seconds and its share of the first compiled call."""

    key: str
    seconds: float
    share: float

    @property
    def label(self) -> str:
        return STAGE_LABELS[self.key]

    def sentence(self) -> str:
        """ "Kernel compile: 1.52 s (34%): waiting for the C++/Triton kernels to compile …" """
        return f"{self.label}: {seconds_text(self.seconds)} ({self.share:.0%}): {STAGE_MEANINGS[self.key]}"


def stage_seconds(c: CompileResult) -> dict[str, float]:
    """Each stage's exclusive seconds (STAGE_KEYS order; the module docstring says how)."""
    backward = c.backward_compile_s or 0.0
    # the nesting, outermost first, each level capped at the one around it; a level torch did not
    # time (0) is skipped, and what is inside it comes out of the next level up: on an FX graph
    # cache hit inductor and code generation read 0 while the kernels it loads may still compile
    # (CI measured 1.59 s of kernel compile beside 0 s code generation: without the nesting the
    # stages added up to 4.93 s for a 3.34 s first call)
    levels = [
        ("tracing", c.dynamo_s + backward),
        ("aot", c.aot_autograd_s + backward),  # AOTAutograd compiles a training step's backward at the first backward
        ("lowering", c.inductor_s),
        ("codegen", c.codegen_s),
        # torch's kernel compile figure adds up each kernel's compile, and they compile in parallel
        # worker processes: the wait is at most the time of the level around it
        ("kernel_compile", c.kernel_compile_s),
    ]
    nested: list[tuple[str, float]] = []
    for key, value in levels:
        value = max(0.0, value)
        if value <= 0:
            continue
        if nested:
            value = min(value, nested[-1][1])
        nested.append((key, value))
    seconds = dict.fromkeys(STAGE_KEYS, 0.0)
    for i, (key, value) in enumerate(nested):
        inner = nested[i + 1][1] if i + 1 < len(nested) else 0.0
        seconds[key] = value - inner
    autotune = max(0.0, c.autotune_s)
    from_lowering = min(autotune, seconds["lowering"])
    from_codegen = min(autotune - from_lowering, seconds["codegen"])
    seconds["lowering"] -= from_lowering
    seconds["codegen"] -= from_codegen
    seconds["autotune"] = from_lowering + from_codegen
    timed = sum(seconds.values())
    seconds["outside"] = max(0.0, c.compile_time_s - timed) if timed else 0.0
    return seconds


def compile_stages(c: CompileResult | None) -> list[CompileStage]:
    """The stages torch timed for this compile, in order (those of 0 s left out); [] when
    there is no compile or torch timed none of it (then only the wall time is known)."""
    if c is None:
        return []
    seconds = stage_seconds(c)
    if not any(v for k, v in seconds.items() if k != "outside"):
        return []
    total = max(c.compile_time_s, sum(seconds.values()))
    return [CompileStage(k, seconds[k], seconds[k] / total if total else 0.0) for k in STAGE_KEYS if seconds[k] > 0]


def nested_figures(c: CompileResult) -> str:
    """torch's own figures as it reports them, nested and cumulative (for the hover)."""
    levels = [
        ("dynamo", c.dynamo_s),
        ("AOTAutograd", c.aot_autograd_s),
        ("inductor", c.inductor_s),
        ("code generation", c.codegen_s),
        ("kernel compile", c.kernel_compile_s),
    ]
    shown = [f"{name} {seconds:.3f} s" for name, seconds in levels if seconds]
    lines = [
        f"First compiled call: {c.compile_time_s:.3f} s wall.",
        "torch's compilation metrics, each including the next: " + " ⊃ ".join(shown) + "." if shown else "",
    ]
    if c.backward_compile_s is not None:
        lines.append(
            f"Training step: forward compile {c.forward_compile_s or 0:.3f} s, backward compile "
            f"{c.backward_compile_s:.3f} s (AOTAutograd compiles it at the first backward; its inductor "
            "and code generation times are in the figures above)."
        )
    if c.autotune_s:
        lines.append(f"Autotuning {c.autotune_s:.3f} s, timed by torch inside inductor.")
    return "\n".join(line for line in lines if line)


def stages_summary(c: CompileResult | None) -> str:
    """One line for a table or the command line: "tracing 0.53 s, AOTAutograd 1.62 s, …" ('' without stages)."""
    return ", ".join(f"{s.label.split(' (')[0].lower()} {seconds_text(s.seconds)}" for s in compile_stages(c))
