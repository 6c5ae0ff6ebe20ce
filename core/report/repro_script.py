"""The text of a bundle's `repro.py`: a standalone script (torch and the model's own library
only, never this product) that rebuilds the model, compiles it exactly as the run did, and
shows the finding.

Every value that comes from a report (a config label, a model name, a setting, an error
message) enters the script through `repr()` of plain data, or is refused: a report can come
from anyone, and the script is meant to be run by someone else. Names that become code
(a torchvision or timm model name, a Hugging Face class, a factory function, a setting's key)
must match a strict pattern first (`ScriptError` otherwise). No torch here; any thread.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

FINDINGS = ("compile failure", "accuracy", "graph breaks", "recompiles", "slower", "none")
"""What a bundle reproduces, in the order a bundle picks the first that the run found."""

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,199}$")  # a model name (torchvision, timm)
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,199}$")
_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_PLAIN = (bool, int, float, str, type(None))


class ScriptError(ValueError):
    """A value that cannot become part of a script (a name that is not a plain name)."""


@dataclass(frozen=True)
class ScriptSpec:
    """What the script rebuilds and checks. `kind` is "torchvision", "timm", "hf" or "file";
    `name` the model name (torchvision, timm), the Hugging Face class, or the model file's
    name inside the bundle; `factory` the file's model function; `build_kwargs` the keyword
    arguments the product built the model with; `inputs_file` the saved inputs ("" for a
    model file: its get_example_inputs() makes them); `input_names` the keyword names of the
    inputs (Hugging Face), `finding` one of FINDINGS with `expected` what the run saw;
    `mark_dynamic` the (input, dim, min, max) marked dynamic before the first compiled call
    (CompileConfig.mark_dynamic), `sweep` whether the run compiled for its first input variant
    (a shape or batch sweep), `sweep_batch` the batch sizes it swept."""

    kind: str
    name: str
    compile_kwargs: dict[str, Any]
    dynamo_config: tuple[tuple[str, Any], ...] = ()
    factory: str = "get_model"
    build_kwargs: dict[str, Any] = field(default_factory=dict)
    inputs_file: str = ""
    input_names: tuple[str, ...] = ()
    device: str = "cpu"
    threads: int | None = None
    inference_mode: bool = True
    finding: str = "none"
    expected: dict[str, Any] = field(default_factory=dict)
    summary: str = ""  # one line for the docstring (made safe here)
    torch_version: str = ""
    mark_dynamic: tuple[tuple[int, int, int | None, int | None], ...] = ()
    sweep: bool = False
    sweep_batch: tuple[int, ...] = ()


def _plain(value, where: str):
    """`value` if it is plain data (nested lists, tuples and dicts of plain scalars)."""
    if isinstance(value, _PLAIN):
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(v, where) for v in value)
    if isinstance(value, dict):
        return {_plain(k, where): _plain(v, where) for k, v in value.items()}
    raise ScriptError(f"{where} holds a {type(value).__name__}, which is not plain data")


def _docstring_text(text: str) -> str:
    """Text safe inside a triple-quoted docstring: one line, printable, no quotes or backslashes."""
    text = "".join(ch if ch.isprintable() else " " for ch in str(text))
    return re.sub(r"[\"'\\]", "", text)[:300]


def _check(spec: ScriptSpec) -> None:
    if spec.kind not in ("torchvision", "timm", "hf", "file", "export"):
        raise ScriptError(f"unknown model kind {spec.kind!r}")
    pattern = _IDENT if spec.kind == "hf" else _NAME
    if not pattern.match(spec.name or ""):
        raise ScriptError(f"the model name {spec.name!r} is not a plain name")
    if spec.kind == "file" and not _IDENT.match(spec.factory):
        raise ScriptError(f"the model function {spec.factory!r} is not a plain name")
    for key, _ in spec.dynamo_config:
        if not _KEY.match(key):
            raise ScriptError(f"the setting {key!r} is not a plain name")
    for key in spec.build_kwargs:
        if not _IDENT.match(key):
            raise ScriptError(f"the argument {key!r} is not a plain name")
    for key in spec.input_names:
        if not _IDENT.match(key):
            raise ScriptError(f"the input name {key!r} is not a plain name")
    if spec.finding not in FINDINGS:
        raise ScriptError(f"unknown finding {spec.finding!r}")
    if spec.device not in ("cpu", "cuda"):
        raise ScriptError(f"unknown device {spec.device!r}")
    for mark in spec.mark_dynamic:
        if len(mark) != 4 or not all(type(v) is int or (v is None and i >= 2) for i, v in enumerate(mark)):
            raise ScriptError(f"the dynamic mark {mark!r} is not (input, dim, min, max) of whole numbers")
    if not all(type(b) is int and b > 0 for b in spec.sweep_batch):
        raise ScriptError(f"the batch sizes {spec.sweep_batch!r} are not whole numbers")


def _build_code(spec: ScriptSpec) -> str:
    kwargs = _plain(spec.build_kwargs, "the model's arguments")
    if spec.kind == "torchvision":
        return (
            "    import torchvision\n\n"
            f"    model = torchvision.models.get_model({spec.name!r}, **{kwargs!r})\n"
            "    return model, load_inputs(), []\n"
        )
    if spec.kind == "timm":
        return f"    import timm\n\n    model = timm.create_model({spec.name!r}, **{kwargs!r})\n    return model, load_inputs(), []\n"
    if spec.kind == "hf":
        return (
            "    import transformers\n\n"
            '    config = transformers.AutoConfig.from_pretrained(os.path.join(HERE, "hf"))  # the config the run built\n'
            f"    cls = transformers.{spec.name}\n"
            '    model = cls._from_config(config) if hasattr(cls, "_from_config") else cls(config)\n'
            "    return model, load_inputs(), []\n"
        )
    if spec.kind == "export":
        return (
            f"    program = torch.export.load(os.path.join(HERE, {spec.name!r}))  # the run's .pt2 archive\n"
            "    return program.module(), load_inputs(), []\n"
        )
    # the module's name need not be the file's: `my-model.py` is imported as my_model
    module = re.sub(r"[^A-Za-z0-9_]", "_", spec.name[:-3] if spec.name.endswith(".py") else spec.name)
    return (
        "    import importlib.util\n\n"
        f"    path = os.path.join(HERE, {spec.name!r})\n"
        f"    found = importlib.util.spec_from_file_location({module!r}, path)\n"
        "    module = importlib.util.module_from_spec(found)\n"
        "    sys.path.insert(0, HERE)\n"
        "    found.loader.exec_module(module)\n"
        f"    model = module.{spec.factory}()\n"
        '    variants = list(module.get_input_variants()) if hasattr(module, "get_input_variants") else []\n'
        "    return model, tuple(module.get_example_inputs()), variants\n"
    )


def script_text(spec: ScriptSpec) -> str:
    """The whole repro.py. Raises ScriptError for a value that cannot safely become code."""
    _check(spec)
    compile_kwargs = _plain(spec.compile_kwargs, "the torch.compile arguments")
    dynamo = _plain(dict(spec.dynamo_config), "the dynamo settings")
    expected = _plain(spec.expected, "the finding")
    lines = [
        "#!/usr/bin/env python3",
        '"""A reproducer made by compile-profiler: rebuilds the model, compiles it as the run did, and',
        "shows what the run found.",
        "",
        f"    {_docstring_text(spec.summary)}",
        "",
        f"The run used torch {_docstring_text(spec.torch_version)}; run this with the same torch:",
        "",
        "    python repro.py",
        "",
        "Exit status 1 when the problem shows, 0 when it does not. env.txt holds the run's machine.",
        '"""',
        "",
        "import copy",
        "import logging",
        "import os",
        "import sys",
        "import traceback",
        "",
        "import torch",
        "",
        "HERE = os.path.dirname(os.path.abspath(__file__))",
        'inf, nan = float("inf"), float("nan")  # as repr() writes them in the values below',
        f"FINDING = {spec.finding!r}",
        f"EXPECTED = {expected!r}  # what the run saw",
        f"COMPILE_KWARGS = {compile_kwargs!r}",
        f"DYNAMO_CONFIG = {dynamo!r}",
        f"DEVICE = {spec.device!r}",
        f"THREADS = {spec.threads!r}",
        f"INFERENCE_MODE = {bool(spec.inference_mode)!r}",
        f"INPUT_NAMES = {tuple(spec.input_names)!r}  # keyword inputs (Hugging Face), else positional",
        f"INPUTS_FILE = {spec.inputs_file!r}",
        f"MARK_DYNAMIC = {tuple(tuple(m) for m in spec.mark_dynamic)!r}  # (input, dim, min, max), as the run marked",
        f"SWEEP = {bool(spec.sweep)!r}  # the run compiled for its first input variant (a sweep)",
        f"SWEEP_BATCH = {tuple(spec.sweep_batch)!r}  # the batch sizes the run swept",
        "SEED = 0  # compile-profiler seeds torch with 0 before it builds a model",
        "",
        "",
        "def load_inputs():",
        "    return tuple(torch.load(os.path.join(HERE, INPUTS_FILE), weights_only=True))",
        "",
        "",
        "def build():",
        '    """The model, its example inputs and its input variants (shape sweeps), as the run built them."""',
        "    torch.manual_seed(SEED)",
        _build_code(spec).rstrip("\n"),
        "",
        "",
        _BODY,
    ]
    return "\n".join(lines)


_BODY = '''\
def to_device(value):
    if isinstance(value, torch.Tensor):
        return value.to(DEVICE)
    if isinstance(value, (list, tuple)):
        return type(value)(to_device(v) for v in value)
    if isinstance(value, dict):
        return {k: to_device(v) for k, v in value.items()}
    return value


def caller(fn):
    """fn called as the run called the model: keyword inputs by name, the others in order."""
    if not any(INPUT_NAMES):
        return fn

    def call(*args):
        named = list(zip(INPUT_NAMES, args))
        return fn(*[a for n, a in named if not n], **{n: a for n, a in named if n})

    return call


def compile_model(model):
    import torch._dynamo

    for key, value in DYNAMO_CONFIG.items():  # torch._dynamo.config overrides of the run
        setattr(torch._dynamo.config, key, value)
    return torch.compile(model, **COMPILE_KWARGS)


class TorchLog(logging.Handler):
    """torch's own graph_breaks and recompiles log records, counted (and printed by torch)."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = {"graph_breaks": [], "recompiles": []}

    def emit(self, record):
        for artifact in self.records:
            if record.name.endswith("__" + artifact):
                self.records[artifact].append(record.getMessage())


def listen():
    import torch._dynamo  # registers torch's log artifacts

    torch._logging.set_logs(graph_breaks=True, recompiles=True)
    handler = TorchLog()
    for name in list(logging.root.manager.loggerDict):
        if name.endswith(("__graph_breaks", "__recompiles")):
            logging.getLogger(name).addHandler(handler)
    return handler


def first_lines(messages):
    return sorted({m.splitlines()[0] for m in messages if m})


def check_compile_failure(model, compiled, inputs):
    try:
        caller(compiled)(*inputs)
    except Exception as exc:
        traceback.print_exc()
        seen = type(exc).__name__
        print(f"REPRODUCED: compiling failed with {seen}: {str(exc).splitlines()[0] if str(exc) else ''}")
        if EXPECTED.get("error_type") and EXPECTED["error_type"] != seen:
            print(f"(the run failed with {EXPECTED['error_type']})")
        return 1
    print("Not reproduced: the compiled model ran.")
    return 0


def check_graph_breaks(model, compiled, inputs, log):
    caller(compiled)(*inputs)
    breaks = first_lines(log.records["graph_breaks"])
    for line in breaks:
        print("  " + line)
    if breaks:
        print(f"REPRODUCED: torch logged {len(breaks)} distinct graph break(s) (the run: {EXPECTED.get('places')} place(s)).")
        return 1
    print("Not reproduced: no graph break.")
    return 0


def check_recompiles(model, compiled, inputs, log, variants):
    for variant in [inputs, *variants]:
        caller(compiled)(*to_device(tuple(variant)))
    recompiles = log.records["recompiles"]
    for message in recompiles:
        print("  " + " | ".join(message.splitlines()[:3]))
    if recompiles:
        print(f"REPRODUCED: {len(recompiles)} recompile(s) (the run: {EXPECTED.get('recompiles')}).")
        return 1
    print("Not reproduced: no recompile.")
    return 0


def check_accuracy(model, compiled, inputs):
    """Compiled against eager by torch's own rule (torch._dynamo.utils.same), with a float64
    reference when the model can be copied to float64."""
    from torch._dynamo.utils import same

    torch.manual_seed(1337)
    ref = caller(model)(*inputs)
    torch.manual_seed(1337)
    res = caller(compiled)(*inputs)
    fp64 = None
    try:
        model64 = copy.deepcopy(model).to(torch.float64)
        as64 = [x.double() if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs]
        torch.manual_seed(1337)
        fp64 = caller(model64)(*as64)
    except Exception as exc:
        print(f"(no float64 reference: {type(exc).__name__})")
    worst = max_errors(ref, res)
    print(f"max abs error {worst[0]:.3g}, max rel error {worst[1]:.3g} (the run: {EXPECTED.get('reason', '')})")
    if not same(ref, res, fp64, tol=EXPECTED.get("tolerance") or 1e-4, equal_nan=True):
        print("REPRODUCED: compiled outputs differ from eager's beyond torch's tolerance.")
        return 1
    print("Not reproduced: compiled outputs match eager's.")
    return 0


def leaves(value):
    if isinstance(value, torch.Tensor):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from leaves(v)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            yield from leaves(getattr(value, name))


def max_errors(ref, res):
    """The largest absolute and relative errors; nan when one side has a NaN where the other
    has none (equal values, infinities and NaNs in the same places are no error)."""
    worst_abs = worst_rel = 0.0
    for a, b in zip(leaves(ref), leaves(res)):
        if a.is_floating_point() and a.shape == b.shape and a.numel():
            a, b = a.double(), b.double()
            same_value = (a == b) | (a.isnan() & b.isnan())
            diff = torch.where(same_value, torch.zeros_like(a), (a - b).abs())
            if diff.isnan().any():
                return float("nan"), float("nan")
            err = diff.max().item()
            scale = a.abs().masked_fill(a.isnan() | a.isinf(), 0).max().item() or 1.0
            worst_abs, worst_rel = max(worst_abs, err), max(worst_rel, err / scale)
    return worst_abs, worst_rel


def mark_dynamic(inputs):
    """The run's torch._dynamo.mark_dynamic calls, before the first compiled call."""
    for index, dim, low, high in MARK_DYNAMIC:
        bounds = {k: v for k, v in (("min", low), ("max", high)) if v is not None}
        torch._dynamo.mark_dynamic(inputs[index], dim, **bounds)


def with_batch(inputs, batch):
    """The inputs at another batch size: each tensor's rows repeated and cut (as the run swept)."""
    return tuple(x.repeat(-(-batch // x.shape[0]), *([1] * (x.dim() - 1)))[:batch].contiguous() for x in inputs)


def check_slower(model, compiled, inputs):
    """Eager and compiled timed alternately (torch.utils.benchmark); timing depends on the machine."""
    from torch.utils.benchmark import Timer

    eager_fn, compiled_fn = caller(model), caller(compiled)
    for _ in range(3):
        compiled_fn(*inputs)
    medians = {"eager": [], "compiled": []}
    for _ in range(5):
        for side, fn in (("eager", eager_fn), ("compiled", compiled_fn)):
            t = Timer("fn(*inputs)", globals={"fn": fn, "inputs": inputs}).blocked_autorange(min_run_time=0.5)
            medians[side].append(t.median * 1e3)
    e, c = sorted(medians["eager"])[2], sorted(medians["compiled"])[2]
    print(f"eager {e:.3f} ms, compiled {c:.3f} ms a call: speedup {e / c:.3f}x (the run: {EXPECTED.get('speedup')})")
    if c > max(medians["eager"]):
        print("REPRODUCED: compiled is slower than eager here.")
        return 1
    print("Not reproduced here: compiled is not clearly slower (timing depends on the machine).")
    return 0


def main():
    if THREADS:
        torch.set_num_threads(THREADS)
    log = listen()
    model, inputs, variants = build()
    if isinstance(model, torch.nn.Module):
        model = model.eval().to(DEVICE)
    if SWEEP_BATCH:
        variants = [with_batch(inputs, b) for b in SWEEP_BATCH]
    if SWEEP and variants:  # the run compiled for its first variant and called the others after it
        inputs, variants = tuple(variants[0]), variants[1:]
    inputs = to_device(inputs)
    compiled = compile_model(model)
    mark_dynamic(inputs)
    context = torch.inference_mode() if INFERENCE_MODE else torch.no_grad()
    with context:
        if FINDING == "compile failure":
            return check_compile_failure(model, compiled, inputs)
        if FINDING == "graph breaks":
            return check_graph_breaks(model, compiled, inputs, log)
        if FINDING == "recompiles":
            return check_recompiles(model, compiled, inputs, log, variants)
        if FINDING == "accuracy":
            return check_accuracy(model, compiled, inputs)
        if FINDING == "slower":
            return check_slower(model, compiled, inputs)
        caller(compiled)(*inputs)
        print("The run found no problem in this config; the compiled model ran.")
        return 0


if __name__ == "__main__":
    sys.exit(main())
'''
