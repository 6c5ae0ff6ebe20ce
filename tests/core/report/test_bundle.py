"""A reproducer to hand over: each bundle's repro.py, run in a fresh process from the unzipped
bundle alone, shows the same finding as the run; and a crafted report cannot make it run,
read or write anything else."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import zipfile

import pytest

from core.report.bundle import BundleError, find, plan_bundle, write_bundle
from core.report.repro_script import ScriptError, ScriptSpec, script_text
from tests.core.helpers import BREAKS_MODEL, SCALED_WHEN_COMPILED, TINY_GPT2
from tests.core.helpers import profile_command as profile

QUICK = ("--iters", "20", "--warmup", "2", "--op-profile", "0")


def _run_repro(bundle: str, where) -> subprocess.CompletedProcess:
    """Unzip into a fresh folder and run `python repro.py` there, in a fresh process."""
    folder = where / "unzipped"
    with zipfile.ZipFile(bundle) as zf:
        zf.extractall(folder)
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_LOGS", "PYTHONPATH")}
    return subprocess.run(
        [sys.executable, "repro.py"], cwd=folder, capture_output=True, text=True, timeout=300, env=env
    )


def test_a_graph_break_run_bundles_a_repro_that_shows_the_same_breaks(write_model, tmp_path):
    path = write_model(BREAKS_MODEL, "breaks.py")
    out, bundle = tmp_path / "r", str(tmp_path / "bug.zip")
    proc = profile(path, "--backend", "eager", *QUICK, "--out", str(out), "--bundle", bundle)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "bundle: The bundle holds the model's code (" + path + ")" in proc.stderr  # said before writing
    assert f"bundle written to {bundle}" in proc.stderr
    names = zipfile.ZipFile(bundle).namelist()
    assert {"repro.py", "breaks.py", "report.json", "env.txt", "README.md"} <= set(names)
    assert any(n.startswith("torch_trace/eager/") for n in names) and "compile_log/eager.log" in names
    assert not any(n.startswith(("traces/", "tlparse/")) or n.endswith("summary.csv") for n in names)
    run = _run_repro(bundle, tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())["jobs"][0]
    lines = {(gb["file"], gb["line"]) for gb in report["graph_breaks"]}
    shown = [line for line in run.stdout.splitlines() if line.startswith("  Graph break in user code at ")]
    assert {(os.path.basename(f), n) for f, n in lines} == {
        (os.path.basename(s.rsplit(":", 1)[0]), int(s.rsplit(":", 1)[1])) for s in shown
    }
    assert (
        f"REPRODUCED: torch logged {len(shown)} distinct graph break(s) (the run: {len(lines)} place(s))" in run.stdout
    )


def test_a_failing_compile_bundles_a_repro_that_fails_the_same_way(write_model, tmp_path):
    path = write_model(BREAKS_MODEL, "breaks.py")
    bundle = str(tmp_path / "bug.zip")
    proc = profile(path, "--backend", "eager", "--fullgraph", *QUICK, "--out", str(tmp_path / "r"), "--bundle", bundle)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "bundle: reproduces: compile failed: fullgraph=True refuses graph breaks" in proc.stderr  # said once
    assert "compiling failed: compile failed" not in proc.stderr
    run = _run_repro(bundle, tmp_path)
    assert (
        run.returncode == 1 and "REPRODUCED: compiling failed with Unsupported: Data-dependent branching" in run.stdout
    )
    assert "(the run failed with" not in run.stdout  # the same exception class as the run's


def test_an_accuracy_failure_bundles_a_repro_with_the_same_error(write_model, tmp_path):
    """The model's weights are seeded the same in the run and in repro.py: the same error."""
    path = write_model(SCALED_WHEN_COMPILED, "scaled.py")
    out, bundle = tmp_path / "r", str(tmp_path / "bug.zip")
    proc = profile(path, "--backend", "eager", *QUICK, "--out", str(out), "--bundle", bundle)
    assert proc.returncode == 0 and "bundle: reproduces: compiled outputs differ" in proc.stderr, proc.stderr[-3000:]
    run = _run_repro(bundle, tmp_path)
    assert run.returncode == 1 and "REPRODUCED: compiled outputs differ from eager's" in run.stdout, run.stdout
    accuracy = json.loads((out / "report.json").read_text())["jobs"][0]["accuracy"]
    assert f"max abs error {accuracy['max_abs_error']:.3g}," in run.stdout


def test_a_hugging_face_model_is_rebuilt_from_its_config_and_saved_inputs(tmp_path):
    out, bundle = tmp_path / "r", str(tmp_path / "bug.zip")
    config = [a for item in TINY_GPT2 for a in ("--hf-config", item)]
    proc = profile(
        "hf:gpt2", *config, "--seq-len", "8", "--backend", "eager", *QUICK, "--out", str(out), "--bundle", bundle
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    names = zipfile.ZipFile(bundle).namelist()
    assert {"hf/config.json", "inputs.pt"} <= set(names)
    config_json = json.loads(zipfile.ZipFile(bundle).read("hf/config.json"))
    assert config_json["n_layer"] == 1 and config_json["n_embd"] == 32  # the overrides as built
    script = zipfile.ZipFile(bundle).read("repro.py").decode()
    assert "cls = transformers.GPT2" in script and "INPUT_NAMES = ('input_ids'" in script
    run = _run_repro(bundle, tmp_path)
    assert run.returncode == 0 and "the compiled model ran" in run.stdout, run.stdout + run.stderr[-2000:]


# ------------------------------------------------------------------ crafted reports


def _result(tmp_path, source: str, recorded: str | None = None, **config):
    """A job of `source` as its run records it: the SHA-256 of the model file it loaded
    (core.measure.environment), or `recorded` in its place."""
    from core.analysis.results import JobResult
    from core.measure.environment import file_sha256, model_file
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    result = JobResult(JobSpec("j", ModelSpec(source), CompileConfig(**config)))
    path = model_file(source)
    if recorded is None and path and os.path.isfile(path):
        recorded = file_sha256(path)
    result.environment = {"model_file_sha256": recorded or ""}
    return result


@pytest.mark.parametrize(
    "source",
    [
        'resnet18", **{}); import os; os.system("echo pwned") #',
        "timm:resnet18'); __import__('os').system('x')#",
    ],
)
def test_a_model_name_that_is_not_a_plain_name_never_becomes_code(tmp_path, source):
    plan = plan_bundle(_result(tmp_path, source), str(tmp_path))
    with pytest.raises(ScriptError):
        script_text(plan.script)


def test_strings_from_a_report_enter_the_script_as_data_only():
    """A label, a reason, a setting's value: repr() of plain data or refused."""
    hostile = '"""\nimport os; os.system("x")\n"""'
    spec = ScriptSpec(
        "file",
        "model.py",
        {"backend": "eager", "fullgraph": False, "dynamic": None},
        dynamo_config=(("recompile_limit", 4),),
        finding="graph breaks",
        expected={"first": hostile},
        summary=hostile,
    )
    text = script_text(spec)
    compile(text, "repro.py", "exec")  # still valid Python
    assert "\nimport os; os.system" not in text and 'os.system(\\"x\\")' not in text.split('"""', 2)[1]
    with pytest.raises(ScriptError):
        script_text(dataclasses.replace(spec, dynamo_config=(("a; import os", 1),)))
    with pytest.raises(ScriptError):
        script_text(dataclasses.replace(spec, factory="get_model(); import os"))
    with pytest.raises(ScriptError):
        script_text(dataclasses.replace(spec, expected={"x": object()}))


def test_risky_settings_stay_out_of_the_script_and_are_listed(write_model, tmp_path):
    path = write_model("import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n", "m.py")
    result = _result(
        tmp_path, path, backend="inductor", inductor_options=(("cpp.cxx", "sh -c 'rm -rf ~'"), ("max_autotune", True))
    )
    plan = plan_bundle(result, str(tmp_path))
    text = script_text(plan.script)
    assert "cpp.cxx" not in text and "rm -rf" not in text and "'max_autotune': True" in text
    assert any("cpp.cxx" in line and "left out of repro.py" in line for line in plan.left_out)


def test_what_goes_in_stays_inside_the_report_folder(write_model, tmp_path):
    """A linked compile_log folder, a linked trace file, a linked model file: never read."""
    from core.vocab.artifacts import JobArtifacts

    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "eager.log").write_text("private")
    root = tmp_path / "report"
    root.mkdir()
    os.symlink(secret, root / "compile_log")
    trace = root / "torch_trace" / JobArtifacts.for_label("eager").name
    trace.mkdir(parents=True)
    os.symlink(secret / "eager.log", trace / "dedicated_log.log")
    path = write_model("import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n", "m.py")
    plan = plan_bundle(_result(tmp_path, path, backend="eager"), str(root))
    assert all(not p.startswith(str(secret)) and "secret" not in os.path.realpath(p) for _, p in plan.copies)
    assert any("torch_trace/eager/dedicated_log.log" in line for line in plan.left_out)
    link = tmp_path / "link.py"
    os.symlink(path, link)
    with pytest.raises(BundleError, match="is a symbolic link"):
        plan_bundle(_result(tmp_path, str(link), backend="eager"), str(root))


def test_an_existing_file_is_never_overwritten(write_model, tmp_path):
    path = write_model("import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n", "m.py")
    target = tmp_path / "keep.zip"
    target.write_text("mine")
    plan = plan_bundle(_result(tmp_path, path, backend="eager"), str(tmp_path))
    with pytest.raises(BundleError, match="exists already"):
        write_bundle(plan, str(target), environment="")
    assert target.read_text() == "mine"


def test_the_finding_order_compile_failure_first_then_accuracy_breaks_recompiles():
    from core.vocab import records as rec
    from core.vocab.records import JobStatus

    r = _result(None, "m.py", backend="eager")
    assert find(r).kind == "none"
    r.recompiles.append(rec.Recompile("forward", "m.py:3", ("size mismatch",)))
    assert find(r).kind == "recompiles"
    r.graph_breaks.append(rec.GraphBreak("Data-dependent branching", file="m.py", line=4))
    assert find(r).kind == "graph breaks" and find(r).expected["places"] == 1
    r.accuracy = rec.AccuracyResult("fail", "['logits'] differs")
    assert find(r).kind == "accuracy"
    r.status, r.phase, r.failure_detail = JobStatus.FAILED, "compile", "Traceback...\ntorch._dynamo.exc.Unsupported: x"
    assert find(r).kind == "compile failure" and find(r).expected["error_type"] == "Unsupported"


LINEAR = "import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\ndef get_example_inputs():\n    return (torch.randn(1, 2),)\n"


@pytest.mark.parametrize("secret", ["/etc/passwd", "~/.ssh/id_rsa", "aws/credentials", "secret.py", "secret.pt2"])
def test_a_file_the_report_names_is_never_taken_unless_the_run_loaded_it(tmp_path, secret):
    """A crafted report names a private file as the model's code: not a model file, or a model
    file whose content is not the one the run recorded (the attacker cannot know it), or none
    recorded: BundleError, nothing copied."""
    path = tmp_path / secret.lstrip("~/") if not secret.startswith("/etc") else secret
    if not str(path).startswith("/etc"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("PRIVATE KEY")
    for recorded in ("", "0" * 64):
        result = _result(tmp_path, str(path), recorded=recorded, backend="eager")
        with pytest.raises(BundleError, match="re-run profile|not a model file"):
            plan_bundle(result, str(tmp_path))


def test_a_report_without_the_fingerprint_or_a_changed_file_is_refused_with_what_to_do(write_model, tmp_path):
    path = write_model(LINEAR, "m.py")
    plan = plan_bundle(_result(tmp_path, path, backend="eager"), str(tmp_path))  # the run's own file: taken
    assert plan.model_file == path and ("m.py", path) in plan.copies
    with pytest.raises(BundleError, match="does not record which model file its run loaded.*re-run profile"):
        plan_bundle(_result(tmp_path, path, recorded="", backend="eager"), str(tmp_path))
    with open(path, "a") as fh:
        fh.write("# changed\n")
    with pytest.raises(BundleError, match="is not the model file the run loaded"):
        plan_bundle(plan.result, str(tmp_path))
    with pytest.raises(BundleError, match="changed while the bundle was written"):  # after the plan: checked again
        write_bundle(plan, str(tmp_path / "b.zip"), environment="")
    assert not os.path.exists(tmp_path / "b.zip") and not os.path.exists(tmp_path / "b.zip.part")


def test_a_job_records_the_fingerprint_of_the_model_file_it_loads(write_model, tmp_path):
    from core.measure.environment import environment, file_sha256
    from core.vocab.config import JobSpec, ModelSpec

    path = write_model(LINEAR, "m.py")
    assert environment(JobSpec("j", ModelSpec(path + ":get_model")))["model_file_sha256"] == file_sha256(path)
    assert environment(JobSpec("j", ModelSpec("resnet18")))["model_file_sha256"] == ""


SPECIALIZING = """\
import torch


class M(torch.nn.Module):
    def forward(self, x):
        if x.shape[0] == 4:
            return x * 2
        return x.sin()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 3),)
"""


def test_a_mark_dynamic_failure_of_a_file_named_with_a_dash_is_reproduced(write_model, tmp_path):
    """repro.py marks the dimensions the run marked (without them it said "Not reproduced"), and
    a model file named my-model.py is imported under a plain module name."""
    path = write_model(SPECIALIZING, "my-model.py")
    out, bundle = tmp_path / "r", str(tmp_path / "bug.zip")
    proc = profile(
        path, "--backend", "eager", "--mark-dynamic", "0:0:2:6", *QUICK, "--out", str(out), "--bundle", bundle
    )
    assert "bundle written to" in proc.stderr, proc.stderr[-3000:]
    assert "my-model.py" in zipfile.ZipFile(bundle).namelist()
    script = zipfile.ZipFile(bundle).read("repro.py").decode()
    assert "MARK_DYNAMIC = ((0, 0, 2, 6),)" in script
    run = _run_repro(bundle, tmp_path)
    assert run.returncode == 1 and "REPRODUCED: compiling failed" in run.stdout, run.stdout + run.stderr[-3000:]


def test_odd_file_names_infinite_tolerances_and_nan_outputs_make_a_working_script(tmp_path):
    """A tolerance of Infinity wrote `inf` (NameError); a NaN output printed "max abs error 0"."""
    from core.report.bundle import zip_name

    assert zip_name("/x/my model (1).py") == "my_model__1_.py" and zip_name("/x/2.py") == "model_2.py"
    text = script_text(
        ScriptSpec(
            "file",
            "my-model.py",
            {"backend": "eager", "options": {"x": float("-inf")}},
            finding="accuracy",
            expected={"tolerance": float("inf"), "max_abs_error": float("nan")},
        )
    )
    namespace = {"__file__": str(tmp_path / "repro.py"), "__name__": "repro"}
    exec(compile(text, "repro.py", "exec"), namespace)
    assert namespace["EXPECTED"]["tolerance"] == float("inf") and "'my_model'" in text
    import math

    import torch

    errors = namespace["max_errors"]
    assert all(math.isnan(e) for e in errors(torch.tensor([1.0, 2.0]), torch.tensor([1.0, float("nan")])))
    assert errors(torch.tensor([float("nan"), float("inf")]), torch.tensor([float("nan"), float("inf")])) == (0.0, 0.0)
    assert errors(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.5])) == (0.5, 0.25)
