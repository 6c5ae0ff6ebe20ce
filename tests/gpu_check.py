"""GPU checks, for a session lent a GPU machine: `python -m tests.gpu_check` (≈ 3–5 min).

Prints one `name: value` line per figure, for docs/BENCHMARKS.md:
  - CUDA timing: the engine's eager/compiled medians for resnet18 on cuda (default mode) against
    torch.utils.benchmark.Timer (which synchronises) in the same process run;
  - reduce-overhead (CUDA graphs): completes, speedup, compile time, steps marked correctly
    (no "overwritten by a subsequent run" error);
  - NVML panel data: GPU utilization and memory samples arrive while a job runs;
  - peak GPU memory per phase (max_memory_allocated / reserved) and the eager/compiled ratio;
  - CUDA-graph skips: a model that changes its input in place, in reduce-overhead: torch's
    reason ("mutated inputs", expected) is captured, and the `cudagraphs_skipped` suggestion
    names it;
  - generation (core.cli.generate): a tiny Llama on cuda with the static cache under
    reduce-overhead (CUDA graphs) against eager: time to first token, decode per token, the
    verdict, recompiles, as `profile hf:llama --task generate` reports them;
  - a script (core.cli.run_script): a compiled function on cuda timed against its eager run
    (calls synchronised);
Exits 0 with "gpu: none" where there is no GPU.
"""

from __future__ import annotations

import statistics
import sys
import uuid


def say(name, value):
    print(f"{name}: {value:.4g}" if isinstance(value, float) else f"{name}: {value}", flush=True)


def run_job(mode: str, iters: int = 100):
    from core.run.runner import JobRunner
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    spec = JobSpec(
        uuid.uuid4().hex[:8],
        ModelSpec("resnet18", batch_size=32),
        CompileConfig(mode=mode),
        warmup=10,
        iters=iters,
        device="cuda",
        timeout_s=900,
    )
    runner = JobRunner(sample_interval_s=0.1)
    result = runner.run(spec)
    return runner, result


SKIP_MODEL = '''\
import torch


class InPlace(torch.nn.Module):
    """Changes its input in place: CUDA graphs replay fixed memory, so torch skips them."""

    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, x):
        x.relu_()                            # line 12
        return self.lin(x)


def get_model():
    return InPlace()


def get_example_inputs():
    return (torch.randn(8, 64),)
'''


def check_cudagraph_skip() -> int:
    """reduce-overhead on a model that mutates its input: torch skips CUDA graphs and says why."""
    from pathlib import Path

    from core.decide.suggestions import suggest
    from core.run.runner import JobRunner
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec
    from tests.scratch import scratch_dir

    path = Path(scratch_dir("cp-gpu-check-")) / "in_place.py"
    path.write_text(SKIP_MODEL)
    spec = JobSpec(
        uuid.uuid4().hex[:8],
        ModelSpec(str(path)),
        CompileConfig(mode="reduce-overhead"),
        warmup=3,
        iters=20,
        device="cuda",
        timeout_s=600,
    )
    r = JobRunner(sample_interval_s=0.5).run(spec)
    say("skip_status", r.status + (f" ({r.failure_reason})" if r.failure_reason else ""))
    say("skip_count", len(r.cudagraph_skips))
    for k in r.cudagraph_skips:
        say("skip_reason", f"{k.reason!r} at {k.file}:{k.line}")
    found = [s for s in suggest([r]) if s.rule == "cudagraphs_skipped"]
    say("skip_suggestion", found[0].title if found else "none")
    coverage = r.summary()["cudagraph_coverage"]  # the skipped graph's kernels ran outside: below 1
    say("skip_cudagraph_coverage", coverage)
    say("skip_cudagraph_state", " | ".join(r.cudagraph_state()))
    return int(r.status != "completed" or not r.cudagraph_skips or not found or coverage is None or coverage >= 0.99)


def check_generation() -> int:
    """A tiny Llama generating on cuda, static cache, reduce-overhead: the CUDA-graph decode step."""
    import csv
    import os
    import subprocess
    import tempfile

    from core import PROJECT_ROOT

    out = tempfile.mkdtemp(prefix="gpu-generate-")
    command = [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "profile", "hf:llama", "--task", "generate"]
    for o in (
        "hidden_size=256",
        "intermediate_size=512",
        "num_hidden_layers=4",
        "num_attention_heads=8",
        "num_key_value_heads=4",
        "vocab_size=4096",
    ):
        command += ["--hf-config", o]
    command += ["--cache", "static", "--backend", "inductor", "--mode", "reduce-overhead", "--device", "cuda"]
    command += [
        "--new-tokens",
        "64",
        "--seq-len",
        "32",
        "--generations",
        "5",
        "--quiet",
        "--out",
        os.path.join(out, "r"),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    say("generate_exit", proc.returncode)
    if proc.returncode != 0:
        say("generate_error", proc.stderr[-300:].replace("\n", " "))
        return 1
    with open(os.path.join(out, "r", "summary.csv")) as fh:
        for row in csv.DictReader(fh):
            for key in (
                "ttft_ms_eager",
                "ttft_ms_compiled",
                "decode_ms_per_token_eager",
                "decode_ms_per_token_compiled",
                "decode_speedup",
                "decode_speedup_ci_low",
                "decode_speedup_ci_high",
                "verdict",
                "recompiles",
                "first_generation_s_compiled",
            ):
                say(f"generate_{key}", row[key])
    return 0


def check_script() -> int:
    """`main.py run` on a script whose compiled function runs on cuda."""
    import csv
    import os
    import subprocess
    import tempfile

    from core import PROJECT_ROOT

    folder = tempfile.mkdtemp(prefix="gpu-script-")
    script = os.path.join(folder, "loop.py")
    with open(script, "w") as fh:
        fh.write(
            "import torch\n"
            "model = torch.nn.Sequential(*[torch.nn.Linear(1024, 1024) for _ in range(8)]).cuda().eval()\n"
            "f = torch.compile(model)\n"
            "x = torch.randn(64, 1024, device='cuda')\n"
            "with torch.no_grad():\n"
            "    for _ in range(300):\n"
            "        f(x)\n"
        )
    command = [
        sys.executable,
        os.path.join(PROJECT_ROOT, "main.py"),
        "run",
        script,
        "--quiet",
        "--out",
        os.path.join(folder, "r"),
    ]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=900)
    say("script_exit", proc.returncode)
    if proc.returncode != 0:
        say("script_error", proc.stderr[-300:].replace("\n", " "))
        return 1
    with open(os.path.join(folder, "r", "functions.csv")) as fh:
        for row in csv.DictReader(fh):
            for key in (
                "compiled_median_ms",
                "eager_median_ms",
                "speedup",
                "speedup_ci_low",
                "speedup_ci_high",
                "verdict",
            ):
                say(f"script_{key}", row[key])
    return 0


def main() -> int:
    import torch

    if not torch.cuda.is_available():
        say("gpu", "none")
        return 0
    say("gpu", torch.cuda.get_device_name(0))
    say("torch", torch.__version__)
    failures = 0
    for mode in ("default", "reduce-overhead"):
        runner, r = run_job(mode)
        s = r.summary()
        tag = mode.replace("-", "_")
        say(f"{tag}_status", r.status + (f" ({r.failure_reason})" if r.failure_reason else ""))
        failures += r.status != "completed"
        for key in (
            "eager_median_ms",
            "compiled_median_ms",
            "speedup",
            "speedup_ci_low",
            "speedup_ci_high",
            "compile_time_s",
            "cache_state",
            "graph_count",
            "graph_break_sites",
            "graph_break_per_call",
            "memory_ratio",
            "cuda_eager_max_allocated_mb",
            "cuda_compiled_max_allocated_mb",
            "cudagraph_coverage",
        ):
            say(f"{tag}_{key}", s[key])
        for phase, peak in r.memory.items():
            say(f"{tag}_{phase}_cuda_max_reserved_mb", peak.cuda_max_reserved_mb)
        utils = [x.gpu_util_percent for x in r.resources if x.gpu_util_percent is not None]
        mems = [x.gpu_mem_mb for x in r.resources if x.gpu_mem_mb is not None]
        say(f"{tag}_nvml_available", runner.gpu.available)
        say(f"{tag}_nvml_samples", len(utils))
        if utils:
            say(f"{tag}_nvml_util_max_percent", max(utils))
            say(f"{tag}_nvml_mem_max_mb", max(mems) if mems else -1.0)
        failures += not utils
        if mode == "reduce-overhead" and r.status == "completed":  # every graph replays: near all of it
            say(f"{tag}_cudagraph_state", " | ".join(r.cudagraph_state()))
            failures += not (s["cudagraph_coverage"] or 0) > 0.9
        if mode == "default" and r.status == "completed":
            import torchvision
            from torch.utils.benchmark import Timer

            model = torchvision.models.resnet18(weights=None).eval().cuda()
            x = torch.randn(32, 3, 224, 224, device="cuda")
            with torch.inference_mode():
                compiled = torch.compile(model)
                for fn, name in ((model, "eager"), (compiled, "compiled")):
                    for _ in range(10):
                        fn(x)
                    t = Timer("fn(x)", globals={"fn": fn, "x": x}).blocked_autorange(min_run_time=3)
                    timer_ms = t.median * 1000
                    say(f"cuda_{name}_timer_median_ms", timer_ms)
                    say(f"cuda_{name}_ratio_engine_over_timer", s[f"{name}_median_ms"] / timer_ms)
            # time per source line on the GPU: Triton kernels charged through provenance
            p = r.op_profile
            lines = p.lines if p is not None else ()
            triton = [t for t in lines if any(k.startswith("triton_") for k in t.kernels)]
            say("cuda_lines", len(lines))
            say("cuda_lines_with_triton_kernels", len(triton))
            if p is not None and p.compiled is not None:
                say("cuda_lines_compiled_ms_of_call", f"{p.lines_compiled_ms:.3f} of {p.compiled.ms_per_call:.3f}")
            failures += not triton
            samples = r.latencies("compiled")
            say("cuda_compiled_cv", statistics.pstdev(samples) / statistics.mean(samples))
    failures += check_cudagraph_skip()
    failures += check_generation()
    failures += check_script()
    say("gpu_check_failures", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
