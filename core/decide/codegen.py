"""The ready-to-paste code for a compile config: the `torch.compile(...)` call with backend,
mode, dynamic, fullgraph and options, the `torch._dynamo.config` lines the config ran with,
and the conditions it was measured under (thread count, inference mode) as code or comment.

Pasting the code into a script with a `model` variable compiles that model exactly as the
profiled config did (tests/core/test_recommend.py executes it and checks). No torch import
here; any thread.
"""

from __future__ import annotations

from core.vocab.config import CompileConfig


def _literal(value) -> str:
    """Python source for a value; strings in double quotes (json's escaping is valid Python)."""
    if isinstance(value, str):
        import json

        return json.dumps(value)
    return repr(value)


def compile_call(config: CompileConfig, target: str = "model") -> str:
    """`model = torch.compile(model, backend=..., ...)`, every argument spelled out.

    torch.compile refuses a mode together with options (even mode="default"), so a config
    with inductor options passes options and no mode, as CompileConfig.compile_kwargs does."""
    kwargs = config.compile_kwargs()
    args = [f"backend={_literal(kwargs['backend'])}"]
    if "mode" in kwargs:
        args.append(f"mode={_literal(kwargs['mode'])}")
    elif not config.inductor_options:
        args.append(f"mode={_literal(None if config.mode == 'default' else config.mode)}")
    args += [f"dynamic={_literal(kwargs['dynamic'])}", f"fullgraph={_literal(kwargs['fullgraph'])}"]
    if "options" in kwargs:
        args.append(
            "options={" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in kwargs["options"].items()) + "}"
        )
    inner = ",\n    ".join([target, *args])
    return f"{target} = torch.compile(\n    {inner},\n)"


def dynamo_lines(config: CompileConfig) -> list[str]:
    """`torch._dynamo.config.KEY = VALUE` for every dynamo override of the config."""
    return [f"torch._dynamo.config.{key} = {_literal(value)}" for key, value in config.dynamo_config]


def compile_code(config: CompileConfig, spec=None, environment: dict | None = None) -> str:
    """The whole snippet for `config`; `spec` (a JobSpec) and `environment` (a job's) add the
    measured conditions: the fixed thread count as code, device, torch and inference mode as
    comments."""
    environment = environment or {}
    where = []
    if spec is not None:
        where.append(f"on {spec.device}")
    if environment.get("torch"):
        where.append(f"torch {environment['torch']}")
    if environment.get("threads"):
        where.append(f"{environment['threads']} threads")
    lines = [
        f"# compile-profiler: config {config.label}" + (f", measured {', '.join(where)}" if where else ""),
        "import torch",
        "",
    ]
    if spec is not None and spec.threads:
        lines.append(f"torch.set_num_threads({spec.threads})  # before compiling: inductor bakes the count in")
    extra = dynamo_lines(config)
    if extra:
        lines += ["# dynamo settings this config ran with (before the first call)", *extra]
    if lines[-1] != "":
        lines.append("")
    lines.append(compile_call(config))
    if spec is not None and spec.inference_mode:
        note = "measured under torch.inference_mode(): call the model inside it"
        if dict(config.inductor_options).get("freezing"):
            note += " (freezing applies only without autograd)"
        lines += ["", f"# {note}", "# with torch.inference_mode():", "#     out = model(*inputs)"]
    return "\n".join(lines) + "\n"


def eager_code() -> str:
    return (
        "# compile-profiler: not compiling is best for this workload at the expected calls;\n"
        "# call the model as it is (no torch.compile).\n"
    )
