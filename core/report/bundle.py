"""A bug report to hand over: one zip with a standalone `repro.py` that shows a config's finding,
and the evidence behind it.

    repro.py            rebuilds the model, compiles it as the run did, shows the finding
                        (core.report.repro_script); `python repro.py`, exit 1 when it shows
    <model file>        a model file's own code (only that file), or
    inputs.pt           the example inputs the product built (torchvision, timm, Hugging Face,
                        .pt2), loadable with torch.load(weights_only=True)
    hf/config.json      a Hugging Face model's config as built (overrides applied)
    report.json         the run's report
    torch_trace/, compile_log/, graphs/   torch's structured trace (for tlparse), its compile
                        log and the compiled graphs of that config, from the report folder
    env.txt             torch.utils.collect_env's description of the machine
    README.md           what the finding is, what is inside, what was left out and why

What goes in is said before anything is written (`BundlePlan.notice`): the model's code and
its traces may be private. The model file goes in only when it is the file the run loaded: a
.py or .pt2 file whose content has the SHA-256 the run's job recorded (`model_file_sha256`,
core.measure.environment), checked again as it is copied; a report can name any path (an SSH
key), and a path read from the report alone is never taken.
Nothing from outside the report folder and the model file goes in:
artifacts are read through core.vocab.artifacts.resolve (no symbolic link, nothing outside
the folder), the model file must be a regular file, and every file has a size limit. Settings
that name a program, a path or code (core.report.safety.risky_settings) are left out of the
script and listed in the README. No Qt; the model is built (for inputs.pt) in whatever
process calls `write_bundle`.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field

from core.analysis.results import JobResult
from core.report.repro_script import ScriptError, ScriptSpec, script_text
from core.report.safety import risky_settings, terminal_text, without_risky_settings
from core.vocab.artifacts import JobArtifacts, resolve
from core.vocab.records import AccuracyStatus, JobStatus

MAX_FILE_BYTES = 64 * 2**20  # one artifact or model file; larger ones are left out (and said)
MAX_ARCHIVE_BYTES = 512 * 2**20  # a .pt2 model archive (its weights)
MAX_BUNDLE_BYTES = 1024 * 2**20  # everything read from the report folder and the model file
ENV_TIMEOUT_S = 120.0


class BundleError(ValueError):
    """A bundle that cannot be made: the message says why and what to do."""


@dataclass(frozen=True)
class Finding:
    """What a bundle reproduces: `kind` one of repro_script.FINDINGS, `sentence` in words,
    `expected` the run's figures the script prints beside its own."""

    kind: str
    sentence: str
    expected: dict = field(default_factory=dict)


def _error_type(detail: str) -> str:
    """The exception's class name from the last line of a Python traceback ("" if none)."""
    for line in reversed((detail or "").splitlines()):
        m = re.match(r"^([A-Za-z_][\w.]*)(:|$)", line.strip())
        if m and not line.startswith(" "):
            return m.group(1).rsplit(".", 1)[-1]
    return ""


def find(result: JobResult) -> Finding:
    """The first problem the run found in this config, in the order of repro_script.FINDINGS:
    a compile that failed, outputs that differ from eager's, graph breaks, recompiles, a
    compiled model measurably slower than eager (from a timing that can be trusted)."""
    if result.status == JobStatus.FAILED and result.phase == "compile":
        return Finding(
            "compile failure",
            # the reason may say so itself ("compile failed: fullgraph=True refuses ..."): not twice
            result.failure_reason
            if result.failure_reason.lower().startswith("compile failed")
            else f"compiling failed: {result.failure_reason}",
            {"error_type": _error_type(result.failure_detail), "reason": result.failure_reason[:500]},
        )
    acc = result.accuracy
    if acc is not None and acc.status == AccuracyStatus.FAIL.value:
        return Finding(
            "accuracy",
            f"compiled outputs differ from eager's: {acc.reason}",
            {"reason": acc.reason[:500], "tolerance": acc.tolerance, "max_abs_error": acc.max_abs_error},
        )
    breaks = [gb for gb in result.graph_breaks if not gb.compile_failed]
    if breaks:
        places = len({(gb.reason, gb.file, gb.line) for gb in breaks})
        return Finding(
            "graph breaks",
            f"{places} graph-break place(s), first: {breaks[0].reason} at {breaks[0].file}:{breaks[0].line}",
            {"places": places, "first": f"{breaks[0].reason} at {os.path.basename(breaks[0].file)}:{breaks[0].line}"},
        )
    if result.recompiles:
        return Finding(
            "recompiles",
            f"{len(result.recompiles)} recompile(s), first of {result.recompiles[0].function}",
            {"recompiles": len(result.recompiles)},
        )
    speedup = result.summary_speedup()
    if speedup is not None and speedup.ci_high < 1.0 and result.quality().trusted:
        return Finding(
            "slower",
            f"compiled is slower than eager: {speedup.value:.3f}x [{speedup.ci_low:.3f}-{speedup.ci_high:.3f}]",
            {"speedup": round(speedup.value, 4)},
        )
    return Finding("none", "no problem was found in this config")


@dataclass
class BundlePlan:
    """What a bundle will hold, known before anything is built or written."""

    result: JobResult
    root: str
    finding: Finding
    script: ScriptSpec
    copies: list[tuple[str, str]]  # (name in the zip, absolute path)
    model_file: str = ""  # the model file that goes in ("" for a library model)
    build_inputs: bool = False  # inputs.pt is made by building the model (library models, .pt2)
    left_out: list[str] = field(default_factory=list)

    def notice(self) -> str:
        """What the bundle holds, to show before saving it."""
        what = []
        if self.model_file:
            what.append(f"the model's code ({self.model_file})")
        else:
            what.append(f"the model's name and settings ({self.result.spec.model.source})")
        if self.build_inputs:
            what.append("its example inputs (inputs.pt)")
        what.append("the run's report (report.json)")
        traces = sorted({name.split("/")[0] for name, _ in self.copies if "/" in name})
        if traces:
            what.append(f"torch's {', '.join(traces)} of {self.result.config.label}")
        what.append("this machine's environment (env.txt: torch, Python, CPU, GPU, packages)")
        return (
            "The bundle holds " + ", ".join(what) + ". Model code, inputs and traces may be private: "
            "review the zip before you share it. Nothing else goes in."
        )


def _regular_file(path: str, limit: int) -> str:
    """Why `path` cannot go in ("" when it can): it must be a regular file, no symbolic
    link, no larger than `limit`."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    import stat

    if stat.S_ISLNK(st.st_mode):
        return "is a symbolic link"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file"
    if st.st_size > limit:
        return f"is {st.st_size / 2**20:,.0f} MB, more than the {limit / 2**20:,.0f} MB a bundle takes"
    return ""


def _artifact_copies(root: str, label: str, left_out: list[str]) -> list[tuple[str, str]]:
    """The structured trace, compile log and graphs of one config, as (name, path): files
    below the report folder only, through resolve() (no link, nothing outside)."""
    art = JobArtifacts.for_label(label)
    copies: list[tuple[str, str]] = []
    for relative in (art.torch_trace_dir, art.compile_log, art.graphs_dir):
        path = resolve(root, relative)
        if path is None:
            continue
        if os.path.isfile(path):
            why = _regular_file(path, MAX_FILE_BYTES)
            if why:
                left_out.append(f"{relative} {why}")
            else:
                copies.append((relative, path))
            continue
        for folder, dirs, files in os.walk(path, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not os.path.islink(os.path.join(folder, d)))
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(folder, name), root).replace(os.sep, "/")
                full = resolve(root, rel)
                why = (
                    "is a symbolic link or outside the report" if full is None else _regular_file(full, MAX_FILE_BYTES)
                )
                if why:
                    left_out.append(f"{rel} {why}")
                else:
                    copies.append((rel, full))
    return copies


def zip_name(path: str) -> str:
    """The model file's name inside the zip: its own name when plain, else with each other
    character made "_" and "model_" in front of a name that starts with neither a letter nor "_"
    (repro.py names it in its code: `my model (1).py` → `my_model__1_.py`)."""
    name = re.sub(r"[^A-Za-z0-9_.\-]", "_", os.path.basename(path))
    return name if re.match(r"[A-Za-z_]", name) else "model_" + name


def _run_model_file(result: JobResult, path: str) -> str:
    """`path` when it is the model file the run loaded (BundleError otherwise): a model file's
    suffix (.py, .pt2), a regular file within the size limit, and its content's SHA-256 the one
    the run's job recorded (core.measure.environment: `model_file_sha256`). A report can come
    from anyone and name any file; only the run's own file goes in, never a path read from the
    report alone (a crafted report cannot know the fingerprint of another file's content)."""
    from core.measure.environment import file_sha256, model_file

    if model_file(path) != path:
        raise BundleError(f"{path} is not a model file (.py or .pt2); a bundle takes only the run's model file.")
    why = _regular_file(path, MAX_ARCHIVE_BYTES if path.endswith(".pt2") else MAX_FILE_BYTES)
    if why:
        raise BundleError(f"the model file {path} {why}; a bundle needs the model file itself.")
    recorded = result.environment.get("model_file_sha256")
    if not isinstance(recorded, str) or not recorded:
        raise BundleError(
            f"the report does not record which model file its run loaded, so {path} is not taken: re-run "
            "profile with the model file to make a new report, and bundle that."
        )
    try:
        current = file_sha256(path)
    except OSError as exc:
        raise BundleError(f"the model file {path} cannot be read ({exc.strerror or exc}).") from None
    if current != recorded:
        raise BundleError(
            f"{path} is not the model file the run loaded (its content changed since, or the report names "
            "another file), so it is not taken: re-run profile with the model file to make a new report."
        )
    return path


def plan_bundle(result: JobResult, root: str) -> BundlePlan:
    """What a bundle of `result` (a job of the report or session folder `root`) will hold.
    Raises BundleError for a model the script cannot rebuild."""
    from core.models import EXPORT_SUFFIXES, TORCHSCRIPT_SUFFIXES, source_kind, split_factory

    spec = result.spec
    left_out: list[str] = []
    config = without_risky_settings(spec.config)
    for r in risky_settings(spec.config):
        left_out.append(f"the setting {r.line()}: left out of repro.py")
    kind = source_kind(spec.model.source)
    model_file, build_inputs, name, factory = "", True, spec.model.source, "get_model"
    copies: list[tuple[str, str]] = []
    if spec.task != "inference":
        left_out.append(f"the {spec.task} step: repro.py runs the forward only")
    if spec.model.weights:
        left_out.append(
            f"the weights file {spec.model.weights}: repro.py builds the model with random weights (seed 0)"
        )
    if kind == "timm":
        name = spec.model.source.split(":", 1)[1]
    elif kind == "hf":
        name = ""  # the class: known once the model is built (write_bundle)
    elif kind == "file":
        factory = split_factory(spec.model.source)[1]
        path = os.path.abspath(os.path.expanduser(split_factory(spec.model.source)[0]))
        if path.endswith(TORCHSCRIPT_SUFFIXES):
            raise BundleError("a TorchScript model is not compiled by torch.compile: there is nothing to reproduce.")
        model_file, name = _run_model_file(result, path), zip_name(path)
        copies.append((name, path))
        build_inputs = path.endswith(EXPORT_SUFFIXES)
        kind = "export" if build_inputs else "file"
    report = os.path.join(root, "report.json")
    if os.path.isfile(report) and not _regular_file(report, MAX_FILE_BYTES):
        copies.append(("report.json", report))
    copies += _artifact_copies(root, spec.config.label, left_out)
    finding = find(result)
    torch_version = str(result.environment.get("torch", ""))
    script = ScriptSpec(
        kind=kind,
        name=name,
        compile_kwargs=config.compile_kwargs(),
        dynamo_config=config.dynamo_config,
        factory=factory,
        build_kwargs={},
        inputs_file="inputs.pt" if build_inputs else "",
        device=spec.device,
        threads=spec.threads,
        inference_mode=spec.inference_mode,
        finding=finding.kind,
        expected=finding.expected,
        summary=f"{spec.model.source}, {config.label}: {finding.sentence}",
        torch_version=torch_version,
        mark_dynamic=tuple((m.input, m.dim, m.min, m.max) for m in config.mark_dynamic),
        sweep=spec.sweep_shapes or bool(spec.sweep_batch),
        sweep_batch=tuple(spec.sweep_batch),
    )
    return BundlePlan(result, root, finding, script, copies, model_file, build_inputs, left_out)


def _built(plan: BundlePlan) -> tuple[ScriptSpec, dict[str, bytes]]:
    """Build the model as the run did, for what only the built model tells: the saved inputs,
    a Hugging Face config and class, the library's builder arguments."""
    import dataclasses

    import torch

    from core.models import load_model, source_kind

    spec = plan.result.spec.model
    extra: dict[str, bytes] = {}
    script = plan.script
    kind = source_kind(spec.source)
    if kind == "torchvision":
        from core.models.torchvision_models import builder_kwargs

        script = dataclasses.replace(script, build_kwargs=builder_kwargs(spec.source))
    elif kind == "timm":
        from core.models.timm_models import builder_kwargs

        script = dataclasses.replace(script, build_kwargs=builder_kwargs(spec))
    loaded = load_model(spec)
    if kind == "hf":
        model = getattr(loaded.model, "wrapped", loaded.model)  # core.models.values.keyword_call
        extra["hf/config.json"] = model.config.to_json_string().encode()
        script = dataclasses.replace(script, name=type(model).__name__)
    if loaded.input_names:
        script = dataclasses.replace(script, input_names=tuple(loaded.input_names))
    buffer = io.BytesIO()
    torch.save(list(loaded.inputs), buffer)
    if buffer.tell() > MAX_FILE_BYTES:
        raise BundleError(
            f"the example inputs take {buffer.tell() / 2**20:,.0f} MB, more than the "
            f"{MAX_FILE_BYTES / 2**20:,.0f} MB a bundle takes; use a smaller --batch-size."
        )
    extra["inputs.pt"] = buffer.getvalue()
    return script, extra


def environment_text() -> str:
    """torch.utils.collect_env's description of this machine, in a child process (it runs pip
    and nvidia-smi), bounded in time."""
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "torch.utils.collect_env"],
            capture_output=True,
            text=True,
            timeout=ENV_TIMEOUT_S,
        )
        return proc.stdout or proc.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"torch.utils.collect_env did not finish: {exc}"


def _readme(plan: BundlePlan, names: list[str]) -> str:
    spec = plan.result.spec
    lines = [
        "# A reproducer made by compile-profiler",
        "",
        f"Model: `{terminal_text(spec.model.source)}`; config: `{terminal_text(spec.config.label)}`.",
        "",
        f"Finding: {terminal_text(plan.finding.sentence)}",
        "",
        "Run it with the same torch as the run (env.txt):",
        "",
        "    python repro.py",
        "",
        "It exits with 1 when the problem shows, 0 when it does not. torch prints its own",
        "graph_breaks and recompiles log as it goes. `tlparse torch_trace/...` turns the",
        "structured trace into torch's compile report.",
        "",
        "## Inside",
        "",
        *[f"- {n}" for n in names],
    ]
    if plan.left_out:
        lines += ["", "## Left out", "", *[f"- {terminal_text(n)}" for n in plan.left_out]]
    return "\n".join(lines) + "\n"


def write_bundle(plan: BundlePlan, out_path: str, environment: str | None = None) -> list[str]:
    """Write the zip at `out_path` (a new file: an existing one is refused); returns the names
    inside. Builds the model for inputs.pt when the plan says so. `environment` replaces
    env.txt's text (tests); BundleError for what cannot be done."""
    if os.path.lexists(out_path):
        raise BundleError(f"{out_path} exists already; choose a new file name.")
    try:
        script_spec, extra = _built(plan) if plan.build_inputs or plan.script.kind == "hf" else (plan.script, {})
        script = script_text(script_spec)
    except ScriptError as exc:
        raise BundleError(f"repro.py cannot be written: {exc}.") from None
    total = sum(os.path.getsize(p) for _, p in plan.copies)
    if total > MAX_BUNDLE_BYTES:
        raise BundleError(f"the files take {total / 2**20:,.0f} MB, more than {MAX_BUNDLE_BYTES / 2**20:,.0f} MB.")
    names = ["repro.py", *extra, *(n for n, _ in plan.copies), "env.txt", "README.md"]
    tmp = out_path + ".part"
    try:
        with zipfile.ZipFile(tmp, "x", compression=zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("repro.py", script)
            for name, data in extra.items():
                zf.writestr(name, data)
            for name, path in plan.copies:
                digest = hashlib.sha256()
                with open(path, "rb") as src, zf.open(name, "w") as dst:
                    while chunk := src.read(1 << 20):
                        digest.update(chunk)
                        dst.write(chunk)
                if path == plan.model_file and digest.hexdigest() != plan.result.environment.get("model_file_sha256"):
                    raise BundleError(f"{path} changed while the bundle was written; nothing was written.")
            zf.writestr("env.txt", environment if environment is not None else environment_text())
            zf.writestr("README.md", _readme(plan, names))
        os.replace(tmp, out_path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return names


def choose_result(results: list[JobResult], label: str | None = None) -> JobResult:
    """The job a bundle is made of: the one labelled `label`, else the first with a finding
    (in the order of repro_script.FINDINGS), else the first. BundleError when `label` is unknown."""
    if not results:
        raise BundleError("the report holds no job.")
    if label is not None:
        for r in results:
            if r.config.label == label:
                return r
        labels = ", ".join(r.config.label for r in results)
        raise BundleError(f"no config {label!r} in the report (it has: {labels}).")
    from core.report.repro_script import FINDINGS

    return min(results, key=lambda r: FINDINGS.index(find(r).kind))


def bundle_report(report_dir: str, out_path: str, label: str | None = None) -> tuple[BundlePlan, list[str]]:
    """A bundle of a report folder's job (see choose_result)."""
    from core.report.files import load_report

    results, _ = load_report(report_dir)
    plan = plan_bundle(choose_result(results, label), report_dir)
    return plan, write_bundle(plan, out_path)
