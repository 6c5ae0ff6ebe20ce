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
  - precision (issue 43): bfloat16, float16 and float32 under autocast bfloat16 complete and pass
    the accuracy check with the dtype said; a dtype the device cannot run fails naming it;
  - the two timing methods (--timing both, CUDA events): the engine's latency medians against
    triton's do_bench (an event pair a call, L2 flushed between) and its throughput medians
    against torch.utils.benchmark.Timer (blocks of calls), in the same process; --flush-cache
    completes and reads no faster than without it.
Exits 0 with "gpu: none" where there is no GPU. `--only NAME,...` runs some checks (CHECKS), so a
session short of device time can split them over calls. The precision and timing checks also run
on the CPU with a tiny model (tests/core/test_gpu_check.py), so a typo never spends a lent GPU.
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


def profile_job(source: str, device: str, backend: str, batch: int, iters: int, **fields):
    """One job of `source` on `device` (JobSpec `fields`: dtype, autocast, timing, flush_cache,
    threads)."""
    from core.run.runner import JobRunner
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    spec = JobSpec(
        uuid.uuid4().hex[:8],
        ModelSpec(source, batch_size=batch),
        CompileConfig(backend=backend),
        warmup=5,
        iters=iters,
        device=device,
        timeout_s=900,
        op_profile_calls=0,
        **fields,
    )
    return JobRunner(sample_interval_s=0.5).run(spec)


# (tag, dtype, autocast, whether the device must run it)
PRECISIONS = (
    ("bf16", "bfloat16", "", True),
    ("fp16", "float16", "", True),
    ("autocast_bf16", "float32", "bfloat16", True),
)


def check_precision(
    source="resnet18", device="cuda", backend="inductor", batch=32, iters=50, precisions=PRECISIONS
) -> int:
    """Each low precision completes and passes the accuracy check with its dtype said; one the
    device cannot run (float16 on some CPUs) fails naming the dtype, never a float32 run."""
    failures = 0
    for tag, dtype, autocast, must_run in precisions:
        r = profile_job(source, device, backend, batch, iters, dtype=dtype, autocast=autocast)
        say(f"{tag}_status", r.status + (f" ({r.failure_reason})" if r.failure_reason else ""))
        if r.status != "completed":
            named = dtype in r.failure_reason or bool(autocast) and autocast in r.failure_reason
            failures += must_run or not named
            continue
        s = r.summary()
        for key in ("dtype", "autocast", "speedup", "speedup_ci_low", "speedup_ci_high", "accuracy", "max_abs_error"):
            say(f"{tag}_{key}", s[key])
        failures += s["dtype"] != dtype or s["autocast"] != autocast or s["accuracy"] != "pass"
    return failures


def reference_medians(source: str, device: str, backend: str, batch: int, threads: int | None = None) -> dict:
    """Eager and compiled medians (ms) of the same model in this process by torch.utils.benchmark
    Timer (blocks of calls, one synchronisation a block: throughput) and, on cuda, by triton's
    do_bench (an event pair a call, L2 flushed between: latency). `threads`: torch's for them
    (restored after), as the job's."""
    import torch

    before = torch.get_num_threads()
    if threads:
        torch.set_num_threads(threads)
    try:
        return _reference_medians(torch, source, device, backend, batch)
    finally:
        torch.set_num_threads(before)


def _reference_medians(torch, source: str, device: str, backend: str, batch: int) -> dict:
    from torch.utils.benchmark import Timer

    from core.models import load_model
    from core.vocab.config import ModelSpec

    loaded = load_model(ModelSpec(source, batch_size=batch))
    model = loaded.model.to(device).eval()
    inputs = tuple(x.to(device) if isinstance(x, torch.Tensor) else x for x in loaded.inputs)
    found = {}
    with torch.inference_mode():
        compiled = torch.compile(model, backend=backend)
        for fn, name in ((model, "eager"), (compiled, "compiled")):
            for _ in range(10):
                fn(*inputs)
            t = Timer("fn(*x)", globals={"fn": fn, "x": inputs}).blocked_autorange(min_run_time=2)
            found[f"timer_{name}"] = t.median * 1000
            if device == "cuda":
                from triton.testing import do_bench

                # do_bench's median, its L2 flush between repetitions as --flush-cache's
                found[f"do_bench_{name}"] = do_bench(lambda fn=fn: fn(*inputs), return_mode="median")
    return found


def check_timing_methods(
    source="resnet18", device="cuda", backend="inductor", batch=32, iters=100, threads: int | None = None
) -> int:
    """--timing both against the references, in the same process: the throughput method within
    3% of Timer is the target (said, not failed: one run is one reading); latency against
    do_bench, and --flush-cache, on cuda. `threads`: torch's in the job and the references."""
    r = profile_job(source, device, backend, batch, iters, timing="both", threads=threads)
    s = r.summary()
    say("timing_status", r.status + (f" ({r.failure_reason})" if r.failure_reason else ""))
    if r.status != "completed":
        return 1
    for key in ("timing_method", "speedup", "throughput_speedup", "eager_median_ms", "compiled_median_ms"):
        say(f"timing_{key}", s[key])
    say("timing_throughput_eager_ms", s["throughput_eager_ms"])
    say("timing_throughput_compiled_ms", s["throughput_compiled_ms"])
    refs = reference_medians(source, device, backend, batch, threads)
    for name in ("eager", "compiled"):
        timer = refs[f"timer_{name}"]
        say(f"timing_{name}_timer_ms", timer)
        say(f"timing_{name}_throughput_over_timer", s[f"throughput_{name}_ms"] / timer)
        say(f"timing_{name}_latency_over_timer", s[f"{name}_median_ms"] / timer)
    failures = int(s["throughput_speedup"] is None or s["timing_method"] != "both")
    if device != "cuda":
        return failures
    flushed = profile_job(source, device, backend, batch, iters, flush_cache=True)
    f = flushed.summary()
    say("flush_status", flushed.status + (f" ({flushed.failure_reason})" if flushed.failure_reason else ""))
    for name in ("eager", "compiled"):
        bench = refs[f"do_bench_{name}"]
        say(f"timing_{name}_do_bench_ms", bench)
        if flushed.status == "completed":
            say(f"flush_{name}_median_ms", f[f"{name}_median_ms"])
            say(f"flush_{name}_latency_over_do_bench", f[f"{name}_median_ms"] / bench)
            # a flushed L2 never makes a call faster: two processes apart, 10% for their noise
            failures += f[f"{name}_median_ms"] < 0.9 * s[f"{name}_median_ms"]
    return failures + (flushed.status != "completed")


CHECKS = ("jobs", "skip", "generation", "script", "precision", "timing")


def main(argv: list[str] | None = None) -> int:
    import argparse

    import torch

    parser = argparse.ArgumentParser(prog="python -m tests.gpu_check")
    parser.add_argument("--only", default=",".join(CHECKS), help=f"checks to run, of {', '.join(CHECKS)}")
    only = set(parser.parse_args(argv).only.split(","))
    unknown = only - set(CHECKS)
    if unknown:
        parser.error(f"no check named {', '.join(sorted(unknown))}; the checks: {', '.join(CHECKS)}")
    if not torch.cuda.is_available():
        say("gpu", "none")
        return 0
    say("gpu", torch.cuda.get_device_name(0))
    say("torch", torch.__version__)
    failures = 0
    if "precision" in only:
        failures += check_precision()
    if "timing" in only:
        failures += check_timing_methods()
    if "jobs" in only:
        failures += check_jobs()
    failures += check_cudagraph_skip() if "skip" in only else 0
    failures += check_generation() if "generation" in only else 0
    failures += check_script() if "script" in only else 0
    say("gpu_check_failures", failures)
    return 1 if failures else 0


def check_jobs() -> int:
    """resnet18 batch 32 in default and reduce-overhead: the timing, NVML, memory, CUDA-graph
    coverage, the engine against Timer, time per line."""
    import torch

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
    return failures


if __name__ == "__main__":
    sys.exit(main())
