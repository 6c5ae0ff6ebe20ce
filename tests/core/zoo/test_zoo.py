"""The zoo's figures and files (core.zoo.results, core.zoo.files), from fake results: rows, the
per-config summary, the warning when machines differ, folder names, zoo.json read back as
untrusted input, and the Zoo view's sort orders."""

import csv
import json
import math

import pytest

from core.report.files import ReportError, load_report
from core.zoo.files import folder_name, folder_names, load_zoo
from core.zoo.results import (
    ConfigSummary,
    ZooRow,
    cell_text,
    environment_warning,
    geometric_mean,
    sort_models,
    summarize_configs,
)
from tests.core.zoo_fakes import FIGURES, write_fake_zoo


def test_rows_and_the_per_config_summary(tmp_path):
    zoo = write_fake_zoo(str(tmp_path))
    row = zoo.row("resnet18", "inductor")
    assert row.status == "completed" and abs(row.speedup - 2.0) < 0.05 and row.compile_time_s == 30.0
    assert row.speedup_ci_low < row.speedup < row.speedup_ci_high and row.accuracy == "pass"
    assert row.node == "node-a" and row.torch == "2.14.1"
    assert zoo.row("timm:vit_tiny", "inductor").graph_break_sites == 2
    inductor, aot = zoo.summaries()
    # inductor: resnet18 and vit pass, mobilenet completes but fails the accuracy check
    assert (inductor.models, inductor.passed, inductor.failed, inductor.accuracy_failed) == (3, 2, 0, 1)
    assert abs(inductor.geomean_speedup - math.sqrt(2.0 * 1.25)) < 0.03  # passed jobs only
    assert inductor.median_compile_time_s == 30.0 and inductor.graph_break_sites_total == 2
    assert inductor.models_with_breaks == 1 and abs(inductor.pass_rate - 2 / 3) < 1e-9
    assert (aot.passed, aot.failed) == (2, 1) and aot.median_compile_time_s == 4.5
    assert inductor.sentence() == (
        "inductor: 2 of 3 models passed (1 failed the accuracy check); geometric-mean "
        "speedup 1.58x, median compile 30.0 s, 2 graph breaks in 1 model"
    )
    assert "1 failed" in aot.sentence() and not inductor.environment_warning


def test_files_hold_a_row_per_model_and_config_and_read_back(tmp_path):
    write_fake_zoo(str(tmp_path))
    with open(tmp_path / "zoo.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["model"], r["config"]) for r in rows] == [(m, c) for m, cs in FIGURES.items() for c in cs]
    assert rows[0]["folder"] == "resnet18" and rows[2]["folder"] == "timm_vit_tiny"
    failed = next(r for r in rows if r["status"] == "failed")
    assert failed["failure_reason"] == "compile failed (fake)" and failed["speedup"] != ""
    with open(tmp_path / "zoo_summary.csv", newline="") as fh:
        summary = list(csv.DictReader(fh))
    assert [s["config"] for s in summary] == ["inductor", "aot_eager"] and summary[0]["passed"] == "2"
    zoo = load_zoo(str(tmp_path))
    assert zoo.configs == ["inductor", "aot_eager"] and len(zoo.rows) == 6
    assert zoo.summaries() == summarize_configs(zoo.rows, zoo.configs)
    results, _ = load_report(zoo.report_folder("timm:vit_tiny"))  # every model's folder is a normal report
    assert [r.config.label for r in results] == ["inductor", "aot_eager"]


def test_a_crafted_zoo_json_is_refused_naming_the_field(tmp_path):
    write_fake_zoo(str(tmp_path))
    doc = json.loads((tmp_path / "zoo.json").read_text())
    for change, expected in (
        (lambda d: d["models"][0].update(folder="../../etc"), "models[0].folder must be a plain folder name"),
        (lambda d: d["rows"][0].update(speedup="fast"), "rows[0].speedup must be a number or null"),
        (lambda d: d["rows"][0].update(model="other"), "rows[0].model 'other' is not one of the zoo's models"),
        (lambda d: d.update(zoo_version="1"), "zoo_version must be a whole number"),
    ):
        bad = json.loads(json.dumps(doc))
        change(bad)
        (tmp_path / "zoo.json").write_text(json.dumps(bad))
        with pytest.raises(
            ReportError,
            match=expected.replace("(", r"\(")
            .replace(")", r"\)")
            .replace("[", r"\[")
            .replace("]", r"\]")
            .replace(".", r"\."),
        ):
            load_zoo(str(tmp_path))
    (tmp_path / "zoo.json").write_text("{not json")
    with pytest.raises(ReportError, match="not a valid zoo.json"):
        load_zoo(str(tmp_path))


def test_machines_that_differ_are_warned_about_per_config(tmp_path):
    zoo = write_fake_zoo(str(tmp_path), environment={"resnet18": {"torch": "2.13.0", "node": "node-b"}})
    warning = zoo.summaries()[0].environment_warning
    assert warning.startswith(
        "the jobs ran on machines that differ: torch 2.13.0 (1 jobs on node-b); torch 2.14.1 (2 jobs on node-a)"
    )
    assert zoo.overall_warning() and "not directly comparable" in warning
    assert environment_warning([ZooRow("m", "m", "c", "pending")]) == ""


def test_folder_names_are_plain_and_distinct():
    assert folder_name("resnet18") == "resnet18" and folder_name("timm:resnet50") == "timm_resnet50"
    assert folder_name("hf:bert#BertForMaskedLM") == "hf_bert_BertForMaskedLM"
    assert folder_name("/a/b/net.py") == "net.py" and folder_name("/a/b/net.py:make") == "net.py_make"
    assert folder_name("hf:./saved/model") == "model" and folder_name("..") == "model"
    names = folder_names(["/a/net.py", "/b/net.py", "resnet18"])
    assert names == {"/a/net.py": "net.py", "/b/net.py": "net.py-2", "resnet18": "resnet18"}
    assert folder_names(["/b/net.py", "/a/net.py"], taken={"/a/net.py": "net.py"})["/b/net.py"] == "net.py-2"


def test_sort_orders_and_cells(tmp_path):
    zoo = write_fake_zoo(str(tmp_path))
    assert sort_models(zoo, "worst speedup") == ["mobilenet_v3_small", "timm:vit_tiny", "resnet18"]
    assert sort_models(zoo, "most breaks")[0] == "timm:vit_tiny"
    assert sort_models(zoo, "longest compile") == ["timm:vit_tiny", "resnet18", "mobilenet_v3_small"]
    assert sort_models(zoo, "model") == list(FIGURES)
    with pytest.raises(ValueError):
        sort_models(zoo, "fastest")
    assert cell_text(zoo.row("mobilenet_v3_small", "aot_eager")) == "FAILED"
    assert cell_text(zoo.row("mobilenet_v3_small", "inductor")) == "0.91x acc!"
    assert cell_text(zoo.row("timm:vit_tiny", "inductor")) == "1.25x 2 br"
    assert cell_text(None) == "-" and geometric_mean([]) is None and geometric_mean([2.0, 8.0]) == 4.0
    assert ConfigSummary("c", 0, 0, 0, 0, 0, None, None, 0, 0).pass_rate is None


def test_debugging_backends_are_references_and_unusable_timings_cannot_tell():
    """The reported case: the zoo coloured a 1.23x "speedup" of the eager backend as faster."""
    from core.zoo.results import CANNOT_TELL, FASTER, REFERENCE, WITHIN_NOISE
    from tests.core.fakes import fake_result

    eager = ZooRow.from_result("m1", "m1", fake_result("eager", eager_ms=12.3, compiled_ms=10.0))
    assert eager.verdict == REFERENCE and cell_text(eager) == "1.23x ref" and "debugging reference" in eager.outcome()
    busy = ZooRow.from_result("m1", "m1", fake_result("inductor", eager_ms=10.0, compiled_ms=5.0, others_cores=1.5))
    assert busy.verdict == CANNOT_TELL and cell_text(busy) == "2.00x ?" and "cannot tell" in busy.outcome()
    tied = ZooRow.from_result("m2", "m2", fake_result("inductor", eager_ms=10.0, compiled_ms=10.0, seed=4))
    fast = ZooRow.from_result("m3", "m3", fake_result("inductor", eager_ms=10.0, compiled_ms=4.0, seed=5))
    assert tied.verdict == WITHIN_NOISE and cell_text(tied) == "1.00x ~" and fast.verdict == FASTER
    reference, inductor = summarize_configs([eager, busy, tied, fast])
    assert reference.reference and "a debugging reference" in reference.sentence()
    assert inductor.unusable == 1 and abs(inductor.geomean_speedup - math.sqrt(1.0 * 2.5)) < 0.02
    assert "(1 model left out: timing unusable)" in inductor.sentence()
