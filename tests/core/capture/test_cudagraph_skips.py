"""CUDA-graph skips: torch's reason captured as it is logged, carried into the report, and
the `cudagraphs_skipped` suggestion built from it.

No GPU here: torch logs a skip's reason only for graphs on a GPU, so the end-to-end test makes
torch's inductor take the CPU for one (`output_code.is_gpu`); everything else there is the real
compile, torch's own skip check and message, and the real capture."""

import dataclasses
import logging

import pytest
import torch

from core.analysis.result_json import result_from_dict, result_to_dict
from core.analysis.results import JobResult
from core.capture import live as capture
from core.decide.suggestions import suggest
from core.measure.job import run_job
from core.vocab import records as rec
from core.vocab.config import CompileConfig
from tests.core.fakes import fake_result
from tests.core.helpers import MLP_MODEL, make_spec

BUFFER_MODEL = """\
import torch


class Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)
        self.register_buffer("seen", torch.zeros(()))

    def forward(self, x):
        self.seen.add_(1)                    # line 11
        return self.lin(x).relu()


def get_model():
    return Counter()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


def suggestions(results, rule):
    return [s for s in suggest(results) if s.rule == rule]


# ------------------------------------------------------------------ reading torch's message


def test_reads_torch_skip_messages_made_by_torch():
    from torch._inductor import cudagraph_utils as cu

    stack = '  File "/work/me/model.py", line 7, in forward\n    self.buf.add_(1)\n'
    placeholder = cu.PlaceholderInfo("buf", None, [], stack)
    skip = capture.read_cudagraph_skip(cu.get_mutation_stack_trace([placeholder], [0]), "0/1")
    assert skip == rec.CudagraphSkip(
        "skipping cudagraphs due to mutated inputs (1 instances)", "/work/me/model.py", 7, "0/1"
    )
    # torch wraps a reason that has its prefix already (output_code.py): said once
    twice = cu.format_default_skip_message(cu.format_default_skip_message("cpu device (arg0_1)"))
    assert capture.read_cudagraph_skip(twice).reason == "skipping cudagraphs due to cpu device (arg0_1)"
    # the innermost frame in the user's code, not torch's
    msg = (
        "index_put_ fallback with boolean indexing is not compatible with CUDA graphs Found from : \n"
        f' File "{torch.__file__}", line 3\n File "/u/m.py", line 9\n File "{torch.__file__}", line 4\n'
    )
    skip = capture.read_cudagraph_skip(msg)
    assert (skip.reason, skip.file, skip.line) == (
        "index_put_ fallback with boolean indexing is not compatible with CUDA graphs",
        "/u/m.py",
        9,
    )


def test_capture_takes_only_torchs_skip_records_and_its_unlogged_count():
    from torch._dynamo.utils import counters
    from torch._inductor import cudagraph_utils as cu

    counters.clear()
    got = []
    cap = capture.install(lambda gb: None, lambda rc: None, on_cudagraph_skip=got.append)
    try:
        cu.log_cudagraph_skip_and_bump_counter("skipping cudagraphs due to mutated inputs (2 instances)")
        cu.cudagraphs_log.warning("CUDAGraph supports dynamic shapes by recording a new graph")  # not a skip
        assert [k.reason for k in got] == ["skipping cudagraphs due to mutated inputs (2 instances)"]
        cap.poll()
        assert len(got) == 1  # the logged skip's count is not counted twice
        counters["inductor"]["cudagraph_skips"] += 1  # what torch does for a graph with no GPU device
        cap.poll()
        cap.poll()
        assert [k.reason for k in got] == ["skipping cudagraphs due to mutated inputs (2 instances)", ""]
    finally:
        capture.install(lambda gb: None, lambda rc: None)  # our handlers off torch's loggers
        counters.clear()
    assert not any(
        isinstance(h, capture._Handler)
        for h in logging.getLogger("torch._inductor.cudagraph_utils.__cudagraphs").handlers
    )


# ------------------------------------------------------------------ a real compile


@pytest.fixture(scope="module")
def skipped_on_a_gpu(tmp_path_factory):
    """A real inductor compile with CUDA graphs on, of a model that updates a buffer in
    forward, where torch takes the CPU for a GPU (see the module docstring): torch's check
    finds a CPU tensor in the graph and logs why it skips CUDA graphs. The FX-graph cache is
    off: a cached graph keeps the reason, stack included, of the process that compiled it."""
    from torch._inductor import output_code

    path = tmp_path_factory.mktemp("m") / "counter.py"
    path.write_text(BUFFER_MODEL)
    config = CompileConfig(
        "inductor",
        inductor_options=(("fx_graph_cache", False), ("graph_partition", False), ("triton.cudagraphs", True)),
    )
    spec = make_spec(str(path), config=config, iters=4)
    result = JobResult(spec)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(output_code, "is_gpu", lambda device: device in ("cuda", "cpu"))
        assert run_job(spec, result.apply) == "completed", result.failure_detail
    return result, str(path)


def test_torchs_reason_reaches_the_report(skipped_on_a_gpu):
    r, path = skipped_on_a_gpu
    (skip,) = r.cudagraph_skips
    assert skip.reason.startswith("skipping cudagraphs due to cpu device (") and (skip.file, skip.line) == (path, 11)
    assert skip.compile_id == "0/0"
    assert r.summary()["cudagraph_skips"] == 1
    again = result_from_dict(result_to_dict(r))
    assert again.cudagraph_skips == r.cudagraph_skips


def test_skips_on_a_gpu_are_suggested_with_torchs_reason(skipped_on_a_gpu):
    r, path = skipped_on_a_gpu
    on_gpu = dataclasses.replace(r, spec=dataclasses.replace(r.spec, device="cuda"))
    (s,) = suggestions([on_gpu], "cudagraphs_skipped")
    assert s.title.startswith("CUDA graphs were skipped 1 time (cpu device (")
    assert s.title.endswith(": move the CPU tensors to the GPU")
    assert "counter.py:11" in s.evidence and "measures what the CUDA graphs that were recorded" in s.evidence
    (change,) = s.changes  # the same options without CUDA graphs
    assert dict(change.apply(r.config).inductor_options)["triton.cudagraphs"] is False
    assert suggestions([r], "cudagraphs_skipped") == []  # the CPU has its own rule


def test_reduce_overhead_on_the_cpu_is_confirmed_by_torchs_count(tmp_path, capsys):
    path = tmp_path / "mlp.py"
    path.write_text(MLP_MODEL)
    spec = make_spec(str(path), config=CompileConfig("inductor", mode="reduce-overhead"), iters=4)
    r = JobResult(spec)
    assert run_job(spec, r.apply) == "completed", r.failure_detail
    assert [k.reason for k in r.cudagraph_skips] == [""]  # counted by torch, no reason logged on the CPU
    (s,) = suggestions([r], "cudagraphs_on_cpu")
    assert "torch confirms it: it counted 1 CUDA-graph skip" in s.evidence
    assert suggestions([r], "cudagraphs_skipped") == []
    from core.cli.output import print_summary

    print_summary([r])
    assert (
        "  CUDA graphs: none (CPU): CUDA graphs exist on a GPU only; this ran on the CPU (torch counted 1 skip)."
        in capsys.readouterr().out
    )


# ------------------------------------------------------------------ the rule on its own


MUTATION = rec.CudagraphSkip("skipping cudagraphs due to mutated inputs (1 instances)", "/m/model.py", 12, "1/0")


def test_a_mutated_input_is_named_with_its_line_and_the_fix():
    r = fake_result(
        CompileConfig("inductor", mode="reduce-overhead"), device="cuda", graph_count=3, cudagraph_skips=[MUTATION]
    )
    (s,) = suggestions([r], "cudagraphs_skipped")
    assert s.title == ("CUDA graphs were skipped 1 time (mutated inputs (1 instances)): update inputs out of place")
    assert "model.py:12" in s.evidence and "make that update out of place" in s.evidence
    assert s.changes[0].mode == "default" and "re-running with mode 'default' measures" in s.evidence


def test_torchs_other_skip_wordings_are_read():
    from torch._inductor import cudagraph_utils as cu

    # the stack on the reason's own line (compile_fx.py: incompatible ops, dynamic graphs)
    skip = capture.read_cudagraph_skip(
        "disabling cudagraphs due to incompatible op aten.nonzero.default Found from "
        '  File "/u/net.py", line 21, in forward\n    i = x.nonzero()\n'
    )
    assert (skip.reason, skip.file, skip.line) == (
        "disabling cudagraphs due to incompatible op aten.nonzero.default",
        "/u/net.py",
        21,
    )
    # "cudagraph", singular (cudagraph_trees.py)
    rerecord = rec.CudagraphSkip(
        "skipping cudagraph due to function 3 exceeding max re-recording limit (=50) on "
        "cudagraph node None due to static input data pointer changed."
    )
    r = fake_result(CompileConfig("inductor", mode="reduce-overhead"), device="cuda", cudagraph_skips=[rerecord])
    (s,) = suggestions([r], "cudagraphs_skipped")
    assert s.title.startswith("CUDA graphs were skipped 1 time (function 3 exceeding max re-recording limit")
    assert s.title.endswith(": give the graph stable inputs between calls")
    assert suggestions(
        [
            fake_result(
                CompileConfig("inductor", mode="reduce-overhead"),
                device="cuda",
                cudagraph_skips=[rec.CudagraphSkip(cu.format_default_skip_message("['non-Tensor inputs']"))],
            )
        ],
        "cudagraphs_skipped",
    )[0].title.endswith(": pass tensors, not Python values, into the compiled region")


def test_max_autotune_all_skipped_offers_its_no_cudagraphs_twin():
    unknown = rec.CudagraphSkip("skipping cudagraphs due to something new in torch")
    r = fake_result(
        CompileConfig("inductor", mode="max-autotune"), device="cuda", graph_count=2, cudagraph_skips=[unknown, unknown]
    )
    (s,) = suggestions([r], "cudagraphs_skipped")
    assert s.title == "CUDA graphs were skipped 2 times (something new in torch)"  # no advice invented
    assert "(2 times)" in s.evidence and s.changes[0].mode == "max-autotune-no-cudagraphs"
    twin = fake_result(CompileConfig("inductor", mode="max-autotune-no-cudagraphs"), device="cuda")
    (s,) = suggestions([r, twin], "cudagraphs_skipped")
    assert s.changes == () and "max-autotune-no-cudagraphs" in s.evidence  # already measured: compare rows


def test_rule_stays_quiet_where_it_does_not_apply():
    cuda_default = fake_result(CompileConfig("inductor"), device="cuda", cudagraph_skips=[MUTATION])
    recorded = fake_result(CompileConfig("inductor", mode="reduce-overhead"), device="cuda")
    assert suggestions([cuda_default, recorded], "cudagraphs_skipped") == []
    assert recorded.summary()["cudagraph_skips"] == 0 and cuda_default.summary()["cudagraph_skips"] is None


def test_coverage_measured_on_a_gpu_is_in_the_summary_the_state_and_the_report(skipped_on_a_gpu):
    """The op profile's CUDA-graph coverage (core.analysis.cudagraph_coverage) beside torch's
    skips: a share in summary.csv, the table's word and the whole story, kept through report.json;
    none on the CPU, where there are no graphs to cover."""
    from core.vocab.op_records import CudagraphCoverage, OpProfile

    r, _ = skipped_on_a_gpu
    assert r.summary()["cudagraph_coverage"] is None  # a CPU run: no GPU time, no share
    profile = OpProfile(calls=5, cudagraphs=CudagraphCoverage(0.8, 1.0, 2.0))
    on_gpu = dataclasses.replace(r, spec=dataclasses.replace(r.spec, device="cuda"), op_profile=profile)
    assert on_gpu.summary()["cudagraph_coverage"] == 0.8
    word, story = on_gpu.cudagraph_state()
    assert word == "80% in graphs, 1 skipped"
    assert story.startswith("80% of the compiled call's GPU time ran in CUDA-graph replays (0.800 of 1.000 ms a call")
    assert "torch skipped CUDA graphs 1 time:" in story
    again = result_from_dict(result_to_dict(on_gpu))
    assert again.op_profile.cudagraphs == CudagraphCoverage(0.8, 1.0, 2.0)
