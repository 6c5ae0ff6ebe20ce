"""compile_stages.csv and report.json's compile_stages: each config's compile split into
exclusive stages that add up to the first compiled call (core.analysis.compile_stages)."""

from __future__ import annotations

import csv
import json

from core.report.explain_tables import STAGE_COLUMNS, explain_tables, stage_rows
from core.report.files import write_report
from core.vocab import events as ev
from core.vocab import records as rec
from tests.core.fakes import fake_result
from tests.core.helpers import profile_command

TINY_BREAK_MODEL = """\
import torch


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a = torch.nn.Linear(32, 32)

    def forward(self, x):
        h = self.a(x).relu()
        if h.sum() > 0:
            h = h - 1
        return h.softmax(-1)


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(8, 32),)
"""


def test_stage_rows_are_exclusive_and_add_up_to_the_compile(tmp_path):
    r = fake_result("inductor")
    compile_ = rec.CompileResult(
        4.0, dynamo_s=3.5, aot_autograd_s=3.0, inductor_s=2.5, codegen_s=1.5, kernel_compile_s=1.0
    )
    assert r.apply(ev.CompileFinished(r.job_id, result=compile_))
    rows = stage_rows([r])
    assert [row["stage"] for row in rows] == ["tracing", "aot", "lowering", "codegen", "kernel_compile", "outside"]
    assert [round(row["seconds"], 6) for row in rows] == [0.5, 0.5, 1.0, 0.5, 1.0, 0.5]
    assert abs(sum(row["seconds"] for row in rows) - 4.0) < 1e-9 and abs(sum(row["share"] for row in rows) - 1) < 1e-9
    assert all(row["compile_time_s"] == 4.0 and row["meaning"] for row in rows)
    # an eager-only job (no compile) writes no rows, and no file when no job has stages
    assert "compile_stages.csv" not in explain_tables([fake_result("eager", compile_s=0.0)])
    out = tmp_path / "r"
    write_report([r], str(out))
    with open(out / "compile_stages.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == STAGE_COLUMNS and len(list(reader)) == 6
    stages = json.loads((out / "report.json").read_text())["jobs"][0]["compile_stages"]
    assert [s["stage"] for s in stages] == [row["stage"] for row in rows]


def test_a_real_inductor_run_writes_stages_that_add_up_to_its_compile(write_model, tmp_path):
    path = write_model(TINY_BREAK_MODEL, "tiny_break.py")
    out = tmp_path / "r"
    proc = profile_command(path, "--backend", "inductor", "--iters", "10", "--op-profile", "0", "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(out / "compile_stages.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    job = json.loads((out / "report.json").read_text())["jobs"][0]
    compile_s = job["compile"]["compile_time_s"]
    assert {r["config"] for r in rows} == {"inductor"} and "tracing" in {r["stage"] for r in rows}
    assert all(float(r["seconds"]) > 0 and float(r["compile_time_s"]) == compile_s for r in rows)
    # exclusive stages: they add up to the first compiled call (the CSV rounds nothing away)
    assert abs(sum(float(r["seconds"]) for r in rows) - compile_s) < 1e-3 * max(1.0, compile_s)
    assert [s["stage"] for s in job["compile_stages"]] == [r["stage"] for r in rows]
