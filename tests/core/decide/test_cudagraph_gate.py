"""`compare --require-cudagraphs`: a config recording CUDA graphs fails the gate when its coverage
fell beyond 5 points or torch skipped more graphs than in the baseline; a report with no measured
coverage (a CPU run) cannot pass; without the flag nothing of it is judged."""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys

from core import PROJECT_ROOT
from core.decide.compare import compare_reports
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from core.vocab.op_records import CudagraphCoverage, OpProfile
from tests.core.fakes import fake_result

RO = CompileConfig("inductor", mode="reduce-overhead")


def on_gpu(coverage: float | None, skips: int = 0, seed: int = 0):
    skip = rec.CudagraphSkip("mutated inputs (1 instances)", "/w/m.py", 12, "0/0")
    r = fake_result(RO, device="cuda", seed=seed, cudagraph_skips=(skip,) * skips)
    profile = OpProfile(calls=5, cudagraphs=CudagraphCoverage(coverage, 1.0, 1.0)) if coverage is not None else None
    return dataclasses.replace(r, op_profile=profile)


def judged(base, new, **kw):
    (c,) = compare_reports([base], {}, [new], {}, require_cudagraphs=True, **kw).configs
    return c


def test_a_coverage_drop_beyond_five_points_is_a_regression():
    c = judged(on_gpu(0.98), on_gpu(0.61, seed=1))
    assert c.regression and "CUDA-graph coverage fell from 98% to 61% of the compiled call's GPU time" in c.verdict
    c = judged(on_gpu(0.98), on_gpu(0.95, seed=1))
    assert not c.regression and "CUDA-graph coverage 98% → 95%" in c.verdict
    (plain,) = compare_reports([on_gpu(0.98)], {}, [on_gpu(0.61, seed=1)], {}).configs
    assert not plain.regression and "CUDA-graph" not in plain.verdict  # only with the flag


def test_more_skips_than_the_baseline_is_a_regression_naming_torchs_reason_and_the_line():
    c = judged(on_gpu(0.98), on_gpu(0.97, skips=1, seed=1))
    assert c.regression
    assert (
        "torch skipped CUDA graphs 1 time now (0 in the baseline): mutated inputs (1 instances) at /w/m.py:12"
        in c.verdict
    )


def test_no_measured_coverage_cannot_pass_and_other_configs_are_said():
    c = judged(on_gpu(0.98), on_gpu(None, seed=1))
    assert c.cannot_tell and "measured no CUDA-graph coverage (no op profile)" in c.verdict
    cpu = fake_result(RO)  # a CPU run: no graphs to cover
    c = judged(cpu, fake_result(RO, seed=1))
    assert c.cannot_tell and "(a CPU run)" in c.verdict
    c = judged(fake_result("inductor"), fake_result("inductor", seed=1))
    assert not c.cannot_tell and "records no CUDA graphs" in c.verdict


def test_the_command_line_takes_the_flag_and_exits_three_on_cpu_reports(tmp_path):
    from tests.core.decide.test_compare import saved

    folders = [saved(tmp_path, name, [fake_result(RO, seed=seed)]) for name, seed in (("base", 0), ("new", 1))]
    proc = subprocess.run(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "compare", *folders, "--require-cudagraphs"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "measured no CUDA-graph coverage (a CPU run)" in proc.stdout
