"""From recompiles to the right dynamic-shape call: the table per input and dimension, exactly
the dimensions to mark with min/max from the sizes seen, and when dynamic shapes cannot help."""

from __future__ import annotations

import csv
import json

from core.analysis.dynamic_dims import analyse, cannot_help, parse_shape
from core.vocab import records as rec
from core.vocab.config import CompileConfig, DimMark
from tests.core.fakes import fake_result
from tests.core.helpers import profile_command as profile

# A sweep where both inputs change in two dimensions: torch's guards name only x (the first
# guard that fails), yet mask changes alike and would recompile next.
SWEEP_MODEL = """\
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)

    def forward(self, x, mask):
        return self.lin(x).relu() * mask


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(2, 8, 16), torch.ones(2, 8, 1))


def get_input_variants():
    return [(torch.randn(b, s, 16), torch.ones(b, s, 1)) for b, s in [(2, 8), (2, 12), (2, 16), (4, 16), (2, 24)]]
"""

# Code that needs the exact size: marking dimension 0 cannot help.
SPECIALIZING_MODEL = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == 4:  # line 6
            return x * 2
        return x.sin()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 3),)


def get_input_variants():
    return [(torch.randn(n, 3),) for n in (4, 5, 6)]
"""


def variant(i, shapes, recompiled=False, reasons=(), seconds=0.0):
    return rec.VariantResult(i, shapes, int(recompiled or i == 0), recompiled, reasons, compile_time_s=seconds)


def test_shapes_are_read_as_the_job_describes_them():
    assert parse_shape("float32[2×8×16]") == ("", (2, 8, 16))
    assert parse_shape("input_ids=int64[1×128]") == ("input_ids", (1, 128))
    assert parse_shape("float32[]") == ("", ())
    assert parse_shape("list of 2 float32[3×224×224]") is None


def test_every_dimension_that_changed_is_marked_not_only_the_one_torch_named():
    variants = [
        variant(0, ("float32[2×8×16]", "float32[2×8×1]")),
        variant(
            1,
            ("float32[2×12×16]", "float32[2×12×1]"),
            True,
            ("0/0: tensor 'x' size mismatch at index 1. expected 8, actual 12",),
            0.5,
        ),
        variant(2, ("float32[2×16×16]", "float32[2×16×1]")),
        variant(
            3,
            ("float32[4×16×16]", "float32[4×16×1]"),
            True,
            ("0/1: tensor 'x' size mismatch at index 0. expected 2, actual 4",),
            0.6,
        ),
    ]
    a = analyse(fake_result(CompileConfig("eager"), variants=variants))
    by = {(r.input, r.dim): r for r in a.rows}
    assert set(by) == {(0, 0), (0, 1), (1, 0), (1, 1)}  # dim 2 of x and of mask never changed
    assert by[(0, 1)].values == [8, 12, 16] and by[(0, 1)].guard == "x" and by[(0, 1)].guard_failures == 1
    assert by[(0, 1)].recompiles == 1 and by[(0, 1)].compile_s == 0.5
    assert by[(1, 1)].guard == "" and by[(1, 1)].recompiles == 1  # mask changed with x; torch named x
    assert a.marks() == (DimMark(0, 0, 2, 4), DimMark(0, 1, 8, 16), DimMark(1, 0, 2, 4), DimMark(1, 1, 8, 16))
    assert a.code().splitlines()[0] == "torch._dynamo.mark_dynamic(x, 0, min=2, max=4)"
    assert "mark_dynamic(inputs[1], 1, min=8, max=16)" in a.code() and cannot_help(a) == ""
    assert a.recompiles == 2 and abs(a.compile_s - 1.1) < 1e-9


def test_sizes_0_and_1_keep_their_own_graph():
    variants = [
        variant(0, ("float32[1×8]",)),
        variant(1, ("float32[3×8]",), True, ("tensor 'x' size mismatch at index 0. expected 1, actual 3",)),
    ]
    a = analyse(fake_result(CompileConfig("eager"), variants=variants))
    assert a.marks() == (DimMark(0, 0, 2, 3),) and "torch specializes them" in a.code()


def test_guards_on_anything_but_a_size_cannot_be_helped_by_dynamic_shapes():
    r = fake_result(
        CompileConfig("eager"),
        recompiles=(rec.Recompile("forward", "m.py:3", ("L['self'].mode == 'train'",)),),
    )
    a = analyse(r)
    assert a.rows == [] and "not on a tensor's size" in cannot_help(a) and "L['self'].mode" in cannot_help(a)


def test_a_sweep_marked_as_suggested_stops_recompiling_and_a_specialized_size_says_why(write_model, tmp_path):
    """Real torch: the sweep recompiles; the config with the suggested marks does not; code
    that needs the exact size makes torch refuse the mark, and the job says so with the line."""
    from core.analysis.results import JobResult
    from core.decide.suggestions import suggest
    from core.report.files import load_report

    path = write_model(SWEEP_MODEL, "sweep.py")
    args = ("--backend", "eager", "--sweep-shapes", "--iters", "5", "--op-profile", "0")
    proc = profile(path, *args, "--dynamic", "false", "--out", str(tmp_path / "before"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    (before,), _ = load_report(str(tmp_path / "before"))
    assert isinstance(before, JobResult) and len(before.recompiles) >= 2
    (s,) = [s for s in suggest([before]) if s.rule == "dynamic_shapes"]
    marks = s.changes[0].apply(before.config).mark_dynamic
    assert [(m.input, m.dim) for m in marks] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    flags = [a for m in marks for a in ("--mark-dynamic", f"{m.input}:{m.dim}:{m.min}:{m.max}")]
    proc = profile(path, *args, *flags, "--out", str(tmp_path / "after"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    job = json.loads((tmp_path / "after" / "report.json").read_text())["jobs"][0]
    assert job["recompiles"] == [] and job["spec"]["config"]["mark_dynamic"][0] == {
        "input": 0,
        "dim": 0,
        "min": 2,
        "max": 4,
    }
    with open(tmp_path / "after" / "summary.csv", newline="") as fh:
        (row,) = csv.DictReader(fh)
    assert (
        row["config"].endswith("mark_dynamic=0.0[2-4],0.1[8-24],1.0[2-4],1.1[8-24]") and row["recompile_count"] == "0"
    )

    path = write_model(SPECIALIZING_MODEL, "special.py")
    proc = profile(path, *args, "--mark-dynamic", "0:0:2:6", "--out", str(tmp_path / "special"))
    assert proc.returncode == 1
    job = json.loads((tmp_path / "special" / "report.json").read_text())["jobs"][0]
    reason = job["failure_reason"]
    assert reason.startswith("dynamic shapes cannot help as marked (mark_dynamic=0.0[2-6]): torch says: You marked")
    assert "specialized it to be a constant (4)" in reason and 'special.py", line 6' in reason


def test_mark_flags_and_report_marks_are_whole_numbers_or_refused():
    import pytest

    from core.vocab.config import parse_dim_marks
    from core.vocab.limits import ConfigError

    assert parse_dim_marks(["0:1", "1:0:2:512"]) == (DimMark(0, 1), DimMark(1, 0, 2, 512))
    for bad in ("0", "0:x", "0:1:2", "-1:0", "0:1:9:3"):
        with pytest.raises(ConfigError, match="--mark-dynamic"):
            parse_dim_marks([bad])
    assert DimMark.from_dict({"input": 0, "dim": 1, "min": None, "max": 8}) == DimMark(0, 1, None, 8)
    for bad in ({"input": "0", "dim": 1}, {"input": True, "dim": 1}, {"input": 0}, {"input": 0, "dim": 1, "cmd": 1}):
        with pytest.raises(ConfigError, match="mark_dynamic"):
            DimMark.from_dict(bad)


def test_a_run_that_measured_the_marks_already_says_the_recompiles_before_and_after():
    from core.decide.suggestions import suggest

    variants = [
        variant(0, ("float32[2×8]",)),
        variant(1, ("float32[2×12]",), True, ("tensor 'x' size mismatch at index 1. expected 8, actual 12",), 0.4),
    ]
    before = fake_result(
        CompileConfig("eager"),
        variants=variants,
        recompiles=(
            rec.Recompile("forward", "m.py:3", ("tensor 'x' size mismatch at index 1. expected 8, actual 12",)),
        ),
    )
    after = fake_result(CompileConfig("eager", mark_dynamic=(DimMark(0, 1, 8, 12),)), variants=variants[:1])
    (s,) = [s for s in suggest([before, after]) if s.rule == "dynamic_shapes"]
    assert (
        "measured it already: config eager/mark_dynamic=0.1[8-12] (recompiles 1 without it, 0 with it)." in s.evidence
    )


# A Python loop over a size: torch fixes it (symbolic_shape_specialization in its structured trace).
LOOP_MODEL = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        out = x
        for _ in range(x.shape[0]):  # line 7
            out = out * 1.1
        return out


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 3),)


def get_input_variants():
    return [(torch.randn(n, 3),) for n in (4, 5, 6)]
"""


def test_a_size_torch_specialized_is_not_marked_and_the_line_is_named(write_model, tmp_path):
    """Real torch, default dynamic: after the first recompile torch makes the size symbolic,
    then the loop fixes it; its structured record names the line, and the suggestion says
    dynamic shapes cannot help instead of proposing marks torch would refuse."""
    from core.decide.suggestions import suggest
    from core.report.files import load_report

    path = write_model(LOOP_MODEL, "loop.py")
    proc = profile(
        path, "--backend", "eager", "--sweep-shapes", "--iters", "5", "--op-profile", "0", "--out", str(tmp_path / "r")
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    (result,), _ = load_report(str(tmp_path / "r"))
    assert result.specializations and result.specializations[0].sources == ("L['x'].size()[0]",)
    assert result.specializations[0].line == 7 and result.specializations[0].file.endswith("loop.py")
    a = analyse(result)
    assert a.to_mark == [] and "loop.py:7" in a.specialized[0].specialized
    (s,) = [s for s in suggest([result]) if s.rule == "dynamic_shapes"]
    assert s.title == "Dynamic shapes cannot help these recompiles" and s.changes == ()
    assert "the code needs exactly" in s.evidence and "loop.py:7" in s.evidence
    assert "dynamic shapes cannot help:" in proc.stdout and "--mark-dynamic" not in proc.stdout
