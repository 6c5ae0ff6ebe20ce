"""The correctness check: compiled outputs against eager (core.measure.accuracy), in a job and alone."""

import dataclasses

import pytest
import torch

from core.analysis.results import JobResult
from core.measure import accuracy
from core.measure.job import run_job
from core.vocab.records import AccuracyStatus
from tests.core.helpers import MLP_MODEL, SCALED_WHEN_COMPILED, make_spec

PASS, FAIL = AccuracyStatus.PASS.value, AccuracyStatus.FAIL.value
NONDET, NOT_CHECKED = AccuracyStatus.NONDETERMINISTIC.value, AccuracyStatus.NOT_CHECKED.value


def run(spec):
    result = JobResult(spec)
    outcome = run_job(spec, result.apply)
    assert outcome == "completed", result.failure_detail
    return result


# ------------------------------------------------------------------ compare(): the rules


def test_nested_outputs_equal_pass_and_count_every_leaf():
    x = torch.randn(3, 4)
    out = {"logits": x, "extra": (x.argmax(1), [x.sum(), 3, "name", None])}
    a = accuracy.compare(out, {"logits": x.clone(), "extra": (x.argmax(1), [x.sum(), 3, "name", None])})
    assert a.status == PASS and a.outputs == 6 and a.max_abs_error == 0.0 and a.cosine == pytest.approx(1.0)


def test_structure_dtype_and_shape_differences_fail_naming_the_output():
    x = torch.randn(3, 4)
    assert "keys" in accuracy.compare({"a": x}, {"b": x}).reason
    assert accuracy.compare((x, x), (x,)).status == FAIL
    a = accuracy.compare((x,), (x.half(),))
    assert a.status == FAIL and "[0] is float32 in eager but float16 compiled" in a.reason
    assert "shape" in accuracy.compare(x, x[:2]).reason
    a = accuracy.compare(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4]))
    assert a.status == FAIL and "1 of 3 int64 values differ" in a.reason
    assert accuracy.compare([x, 3], [x, 4]).status == FAIL


def test_small_float_noise_passes_and_a_scaled_output_fails_against_float64():
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 64).double()
    x = torch.randn(32, 64, dtype=torch.float64)
    truth = model(x)
    ref = truth.float()
    fp64 = lambda: (truth, "")  # noqa: E731
    noisy = ref + 1e-6 * torch.randn_like(ref)
    assert accuracy.compare(ref, noisy, fp64).status == PASS
    scaled = accuracy.compare(ref, ref * 1.01, fp64)
    assert scaled.status == FAIL and scaled.method == "fp64" and "float64 reference" in scaled.reason
    assert scaled.max_rel_error == pytest.approx(0.01, rel=0.05) and scaled.cosine > 0.999
    # without a float64 reference cosine alone cannot see the scale: the norm check does
    alone = accuracy.compare(ref, ref * 1.01)
    assert alone.status == FAIL and "norm differs" in alone.reason


def test_low_precision_uses_cosine_similarity_and_its_own_tolerance():
    torch.manual_seed(0)
    ref = torch.randn(256, 256).bfloat16()
    rounded = (ref.float() * (1 + 1e-3 * torch.randn(256, 256))).bfloat16()  # bf16 rounding noise
    a = accuracy.compare(ref, rounded)
    assert a.status == PASS and a.tolerance == 1e-2
    flipped = ref.clone()
    flipped[:128] = -flipped[:128]
    b = accuracy.compare(ref, flipped)
    assert b.status == FAIL and b.method == "cosine" and "cosine similarity" in b.reason


def test_nan_where_eager_has_a_number_fails():
    ref = torch.ones(4)
    res = ref.clone()
    res[2] = float("nan")
    assert accuracy.compare(ref, res).status == FAIL
    assert accuracy.compare(res, res.clone()).status == PASS  # NaN in both at the same place


def test_model_outputs_and_dataclasses_are_walked():
    transformers = pytest.importorskip("transformers")
    x = torch.randn(2, 5)
    ref = transformers.modeling_outputs.SequenceClassifierOutput(logits=x, hidden_states=(x, x))
    same = transformers.modeling_outputs.SequenceClassifierOutput(logits=x.clone(), hidden_states=(x, x))
    bad = transformers.modeling_outputs.SequenceClassifierOutput(logits=x.clone(), hidden_states=(x, x + 1))
    assert accuracy.compare(ref, same).status == PASS
    a = accuracy.compare(ref, bad)
    assert a.status == FAIL and "['hidden_states'][1]" in a.reason

    @dataclasses.dataclass
    class Out:
        boxes: torch.Tensor
        label: str

    assert accuracy.compare(Out(x, "a"), Out(x, "a")).status == PASS
    assert ".boxes" in accuracy.compare(Out(x, "a"), Out(x * 2, "a")).reason


def test_unknown_output_objects_are_not_checked_with_the_type_named():
    a = accuracy.compare(object(), object())
    assert a.status == NOT_CHECKED and "object" in a.reason


@pytest.mark.parametrize("factor", [1.0, 1.0 + 1e-7, 1.001, 1.1])
def test_agrees_with_torch_same_on_float64_judged_outputs(factor):
    from torch._dynamo.utils import same

    torch.manual_seed(1)
    model = torch.nn.Linear(128, 64).double()
    x = torch.randn(16, 128, dtype=torch.float64)
    truth = model(x)
    ref, res = truth.float(), (truth * factor).float()
    ours = accuracy.compare(ref, res, lambda: (truth, "")).status == PASS
    assert ours == same(ref, res, fp64_ref=truth, log_error=lambda *a: None)


# ------------------------------------------------------------------ check(): eager against itself first


class _Dropout(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, 0.5, training=True)


class _Rand(torch.nn.Module):
    def forward(self, x):
        return x + torch.rand_like(x)


class _Counter(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x):
        self.calls += 1
        return x * self.calls


@pytest.mark.parametrize(
    "model,words",
    [
        (_Dropout(), "draws random numbers"),
        (_Rand(), "draws random numbers"),
        (_Counter(), "two eager calls with the same inputs and seed differ"),
    ],
)
def test_randomness_or_state_in_forward_is_nondeterministic_never_pass_or_fail(model, words):
    x = (torch.randn(4, 8),)
    a = accuracy.check(model, model, x)
    assert a.status == NONDET and a.reason.startswith("not comparable: ") and words in a.reason


def test_random_numbers_that_do_not_reach_the_output_are_still_comparable():
    class Unused(torch.nn.Module):
        def forward(self, x):
            torch.rand(3)
            return x * 2

    x = (torch.randn(4, 8),)
    assert accuracy.check(Unused(), Unused(), x).status == PASS


# ------------------------------------------------------------------ in a job


DROPOUT_MODEL = """\
import torch


class Noisy(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.dropout(x, 0.5, training=True)   # random even after .eval()


def get_model():
    return Noisy()


def get_example_inputs():
    return (torch.randn(4, 16),)
"""


def test_ordinary_model_passes_in_the_job(write_model):
    result = run(make_spec(write_model(MLP_MODEL), backend="aot_eager"))
    s = result.summary()
    assert s["accuracy"] == PASS and s["max_abs_error"] is not None and s["cosine"] == pytest.approx(1.0)
    assert "matches eager" in s["accuracy_reason"]


def test_model_computing_otherwise_when_compiled_fails_with_its_error(write_model):
    result = run(make_spec(write_model(SCALED_WHEN_COMPILED, "scaled.py")))
    s = result.summary()
    assert s["accuracy"] == FAIL and "['logits']" in s["accuracy_reason"]
    assert s["max_rel_error"] == pytest.approx(0.05, rel=0.05)
    assert result.recompiles == []  # the check reuses the benchmark's inputs: no recompile


def test_custom_backend_that_perturbs_the_graph_fails(write_model):
    from torch._dynamo import register_backend

    @register_backend(name="perturb_for_test")
    def perturb(gm, example_inputs):
        def run_perturbed(*args):
            out = gm(*args)
            return (
                tuple(o + 0.01 if isinstance(o, torch.Tensor) and o.is_floating_point() else o for o in out)
                if isinstance(out, (tuple, list))
                else out + 0.01
            )

        return run_perturbed

    result = run(make_spec(write_model(MLP_MODEL), backend="perturb_for_test"))
    assert result.accuracy.status == FAIL and result.accuracy.max_abs_error == pytest.approx(0.01, rel=1e-3)


def test_dropout_in_forward_is_reported_nondeterministic_in_the_job(write_model):
    result = run(make_spec(write_model(DROPOUT_MODEL, "noisy.py")))
    assert result.summary()["accuracy"] == NONDET


def test_a_job_that_ends_early_is_not_checked_with_why(write_model):
    path = write_model(
        "import torch\ndef get_model():\n    return torch.nn.Linear(4, 4)\n"
        "def get_example_inputs():\n    return (torch.randn(2, 5),)\n",
        "bad.py",
    )
    spec = make_spec(path)
    result = JobResult(spec)
    assert run_job(spec, result.apply) == "failed"
    s = result.summary()
    assert s["accuracy"] == NOT_CHECKED and s["accuracy_reason"].startswith("the job ended before the check")
    assert JobResult(spec).summary()["accuracy"] is None  # still running: nothing to say yet


def test_equal_infinities_agree_and_leave_finite_figures():
    """Masked logits (-inf where masked) in both outputs: the errors are over the other values,
    and every figure stays a number (a NaN figure would be written into report.json)."""
    from core.measure.output_match import compare

    eager = torch.tensor([[0.5, float("-inf"), 2.0]])
    result = compare(eager, eager + torch.tensor([[1e-7, 0.0, 0.0]]))
    assert result.status == AccuracyStatus.PASS.value
    assert all(v == v and abs(v) != float("inf") for v in (result.max_abs_error, result.max_rel_error, result.cosine))
    wrong = compare(eager, torch.tensor([[0.5, 3.0, 2.0]]))
    assert wrong.status == AccuracyStatus.FAIL.value and "an infinity in one output" in wrong.reason


def test_a_nan_figure_in_an_old_report_reads_as_missing(tmp_path):
    import json

    from core.report.files import load_report, write_report
    from tests.core.fakes import fake_result

    write_report([fake_result("inductor")], str(tmp_path / "r"))
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    doc["jobs"][0]["accuracy"]["max_abs_error"] = float("nan")  # as json.dumps writes NaN
    (tmp_path / "old.json").write_text(json.dumps(doc))
    (result,), _ = load_report(str(tmp_path / "old.json"))
    assert result.accuracy.max_abs_error is None
