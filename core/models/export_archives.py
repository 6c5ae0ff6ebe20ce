"""torch.export `.pt2` archives, inspected before torch.export.load (which would unpickle, and
so run, what a crafted archive holds): one that would unpickle anything is refused."""

from __future__ import annotations

import os
import sys
import traceback
import zipfile
from typing import Callable

from core.models.base import LoadedModel, ModelLoadError, short_error
from core.models.values import keyword_call
from core.vocab.config import ModelSpec


def load(path: str, spec: ModelSpec) -> LoadedModel:
    import torch

    check_export_archive(path)  # before torch.export.load, which would unpickle what it finds
    try:
        program = torch.export.load(path)
    except Exception as exc:
        raise ModelLoadError(
            f"not a loadable torch.export archive: {short_error(exc)}", file=path, detail=traceback.format_exc()
        ) from None
    _check_operator_arguments(program, path)
    inputs, keywords = _export_inputs(program, path)
    try:
        module = program.module()
    except Exception as exc:
        raise ModelLoadError(
            f"the exported program cannot be turned into a module: {short_error(exc)}",
            file=path,
            detail=traceback.format_exc(),
        ) from None
    if keywords:
        module = keyword_call(module, keywords)
    names = ("",) * (len(inputs) - len(keywords)) + tuple(keywords)
    return LoadedModel(
        module,
        inputs,
        "export",
        f"{os.path.basename(path)} (torch.export program)",
        input_names=names if keywords else (),
    )


def _check_operator_arguments(program, path: str) -> None:
    """Refuse a loaded program that passes a Python callable other than an operator to a graph node.

    torch.export.save only writes operators (OpOverload, HigherOrderOperator) as arguments, but the
    loader resolves an "as_operator" argument by attribute lookup from the torch module, so a
    crafted program can hand e.g. torch.os.system to a higher-order operator that calls its function
    argument. (torch's verifier checks node targets, not arguments; today only the code generator
    failing on such a callable's repr stops it, so this does not rely on that.)"""
    import torch
    from torch.fx.node import map_aggregate

    allowed = (torch.fx.Node, torch._ops.OpOverload, torch._ops.OpOverloadPacket, torch._ops.HigherOrderOperator)
    for module in program.graph_module.modules():
        if not isinstance(module, torch.fx.GraphModule):
            continue
        for node in module.graph.nodes:
            found: list = []
            map_aggregate(
                (node.args, node.kwargs),
                lambda a: found.append(a) if callable(a) and not isinstance(a, allowed) else None,
            )
            if found:
                raise ModelLoadError(
                    f"refused to run: graph node {node.name} passes {found[0]!r}, a Python callable that is not an "
                    f"operator, to {node.target}; torch.export.save never writes that, and running it could run "
                    f"arbitrary code. {_PT2_REFUSE_HINT}",
                    file=path,
                )


def _export_inputs(program, path: str) -> tuple[tuple, tuple[str, ...]]:
    """Example inputs for an exported program, built from its recorded user inputs: a tensor of
    the recorded shape and dtype for each tensor input (random for floating point and complex
    dtypes; zeros otherwise, which are valid indices, masks and counts), the recorded value for
    each constant, the hint for each symbolic int. A symbolic (dynamic) dimension takes the size
    it was exported with, or else the smallest size its range allows (at least 2). Returns the
    inputs in call order and the names of the trailing ones that are keyword arguments."""
    import torch
    import torch.export.graph_signature as gs
    from torch.utils import _pytree

    placeholders = {n.name: n for n in program.graph.nodes if n.op == "placeholder"}
    values = []
    for s in program.graph_signature.input_specs:
        if s.kind != gs.InputKind.USER_INPUT:
            continue
        arg = s.arg
        if isinstance(arg, gs.ConstantArgument):
            values.append(arg.value)
            continue
        node = placeholders.get(getattr(arg, "name", ""))
        val = node.meta.get("val") if node is not None else None
        if isinstance(arg, gs.TensorArgument) and isinstance(val, torch.Tensor):
            shape = [_size_hint(d, program) for d in val.shape]
            if val.dtype.is_floating_point or val.dtype.is_complex:
                values.append(torch.randn(*shape, dtype=val.dtype))
            else:
                values.append(torch.zeros(*shape, dtype=val.dtype))
        elif isinstance(arg, gs.SymIntArgument) and isinstance(val, (int, torch.SymInt)):
            values.append(_size_hint(val, program))
        elif isinstance(arg, (gs.SymFloatArgument, gs.SymBoolArgument)) and isinstance(
            val, (float, bool, torch.SymFloat, torch.SymBool)
        ):
            hint = val.node.hint if isinstance(val, (torch.SymFloat, torch.SymBool)) else val
            if hint is None:
                hint = 1.0 if isinstance(arg, gs.SymFloatArgument) else True
            values.append(float(hint) if isinstance(arg, gs.SymFloatArgument) else bool(hint))
        else:
            raise ModelLoadError(
                f"cannot build example inputs: input {getattr(arg, 'name', '?')} ({type(arg).__name__}) has no "
                "tensor shape or value recorded. Wrap the program in a model file whose get_example_inputs() "
                "returns the inputs.",
                file=path,
            )
    in_spec = program.call_spec.in_spec
    if in_spec is None:
        return tuple(values), ()
    try:
        args, kwargs = _pytree.tree_unflatten(values, in_spec)
    except Exception as exc:
        raise ModelLoadError(
            f"cannot build example inputs: the program's inputs do not match its recorded "
            f"call signature ({short_error(exc)}). Wrap the program in a model file.",
            file=path,
        ) from None
    return tuple(args) + tuple(kwargs.values()), tuple(kwargs)


def _size_hint(d, program) -> int:
    """A concrete size for a dimension: an int as is; a symbolic one the size it was exported with
    (its hint), or else the lower end of its recorded range, at least 2 (0 and 1 are special-cased
    by export, so a dynamic dimension usually starts at 2)."""
    if isinstance(d, int):
        return int(d)
    node = getattr(d, "node", None)
    hint = getattr(node, "hint", None)
    if hint is not None:
        return int(hint)
    expr = getattr(node, "expr", None)
    bounds = program.range_constraints.get(expr) if expr is not None else None
    if bounds is not None:
        lower = int(bounds.lower) if getattr(bounds.lower, "is_Integer", False) else 2
        upper = int(bounds.upper) if getattr(bounds.upper, "is_Integer", False) else max(lower, 2)
        return min(max(lower, 2), upper)
    return 2


# What torch 2.14's torch.export.load (torch/export/pt2_archive/_package.py: load_pt2) reads from an
# archive, relative to its root folder, and how. Anything else is refused: a layout this check does
# not know is a layout it cannot vouch for.
_PT2_FIXED_ENTRIES = {"archive_format", "archive_version", "byteorder", ".data/version", ".data/serialization_id"}
_PT2_REFUSE_HINT = (
    "Re-export it with torch.export.save from a trusted source, or wrap the model in a "
    "model file (get_model / get_example_inputs) instead."
)


def check_export_archive(path: str) -> None:
    """Refuse a .pt2 archive that torch.export.load would run code from, before calling it.

    torch.export.load unpickles with weights_only=False every weight or tensor constant whose
    entry in data/weights/*_weights_config.json or data/constants/*_constants_config.json says
    "use_pickle": true (tensor subclasses), loads constants named custom_obj_* (TorchScript
    unpickler) and opaque_obj_* (pickle.loads) whatever their flag, retries with
    weights_only=False any torch.save payload (data/sample_inputs/*.pt, legacy
    data/weights/NAME.pt and data/constants/NAME.pt) that weights_only=True cannot read, loads the
    AOTInductor shared libraries under data/aotinductor/, imports the modules named by enum and
    defaultdict contexts in the program's pytree specs, and, when the archive fails to
    deserialize, falls back to the torch 2.7 zip format (serialized_*.pt at the zip root, all
    unpickled with the same fallback). A crafted archive ran a shell command through the first.

    So: the zip must hold one root folder with only the entries torch.export.save writes; every
    config entry must say use_pickle false and name a raw tensor; every torch.save payload must
    load with weights_only=True (checked here, with weights_only=True); no AOTInductor files; no
    import of a module that is not already loaded. A plain torch.export.save archive passes.
    ModelLoadError names the file, the entry and why otherwise."""

    def refuse(entry: str, why: str) -> ModelLoadError:
        return ModelLoadError(f"refused to load: {entry} {why}. {_PT2_REFUSE_HINT}", file=path)

    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError) as exc:
        raise ModelLoadError(
            f"not a torch.export archive ({exc}); torch.export.save writes a zip archive.", file=path
        ) from None
    with archive:
        infos = archive.infolist()
        if not infos:
            raise refuse("the archive", "is empty")
        names: dict[str, str] = {}
        for info in infos:
            name = info.filename
            # Python's zipfile cuts a name at a NUL byte and decodes it; torch's reader does
            # neither: only plain names are unambiguous to both.
            if name != info.orig_filename or not (name.isascii() and name.isprintable()):
                raise refuse(
                    f"entry {info.orig_filename!r}",
                    "has a name that is not plain ASCII, so this check and torch could read different entries",
                )
            # torch's reader (miniz, caffe2/serialize/inline_container.cc) finds an entry by
            # name without regard to case: "x_weights_config.JSON" answers a request for
            # "x_weights_config.json". Names that differ only in case are ambiguous to it.
            key = name.lower()
            if key in names:
                twice = "appears twice" if names[key] == name else f"and {names[key]!r} differ only in case"
                raise refuse(
                    f"entry {name!r}",
                    f"{twice}; torch's reader looks names up without regard to case, "
                    "so this check and torch could read different entries",
                )
            names[key] = name
        _check_sizes(infos, refuse)
        root = infos[0].filename.split("/", 1)[0]  # torch's reader takes the first entry's folder
        if "/" not in infos[0].filename or not root:
            raise refuse(
                f"entry {infos[0].filename!r}",
                "is not inside a folder, so this is not the "
                "layout torch.export.save writes (a folder holding archive_format, models/, data/)",
            )
        entries: dict[str, zipfile.ZipInfo] = {}  # by name below the root folder
        for info in infos:
            if not info.filename.startswith(root + "/"):
                raise refuse(
                    f"entry {info.filename!r}",
                    f"lies outside the archive folder {root}/ (the older "
                    "torch.export zip format kept pickled payloads there), so this is not the layout "
                    "torch.export.save writes",
                )
            entries[info.filename[len(root) + 1 :]] = info
        by_lower = {rel.lower(): rel for rel in entries}  # what torch's case-blind lookups find

        def read(rel: str) -> bytes:
            return archive.read(entries[rel])

        def read_as_torch(rel: str) -> bytes | None:
            return read(by_lower[rel]) if rel in by_lower else None

        fmt = read_as_torch("archive_format") or b""
        if fmt != b"pt2":
            raise refuse(
                "the archive",
                "has no archive_format entry saying pt2, so it is not an archive "
                "written by torch.export.save (an older torch.export format is unpickled on load)",
            )
        from torch.export.pt2_archive.constants import ARCHIVE_VERSION_VALUE

        version = (read_as_torch("archive_version") or b"none").decode(errors="replace")
        if version != ARCHIVE_VERSION_VALUE:
            raise refuse(
                "the archive",
                f"has archive version {version!r}; this torch reads version {ARCHIVE_VERSION_VALUE!r} only",
            )
        for rel in entries:
            _check_pt2_entry(rel, read, refuse)


MAX_INFLATION = 100
"""An entry that inflates more than this many times its stored size, past ZIP_BOMB_BYTES, is
refused: torch.export.save stores every entry uncompressed (ratio 1), so only a crafted
archive (a zip bomb) inflates like that."""
ZIP_BOMB_BYTES = 16 * 2**20


def _check_sizes(infos: list[zipfile.ZipInfo], refuse: Callable[[str, str], ModelLoadError]) -> None:
    """Refuse an archive that would take more memory to load than the machine can spare (torch
    reads every weight into memory, and this check reads the JSON entries), or an entry that
    inflates like a zip bomb; before anything is read."""
    import psutil

    for info in infos:
        if info.file_size > ZIP_BOMB_BYTES and info.file_size > MAX_INFLATION * max(info.compress_size, 1):
            raise refuse(
                f"entry {info.filename!r}",
                f"inflates from {info.compress_size:,} to {info.file_size:,} "
                f"bytes (more than {MAX_INFLATION} times; torch.export.save stores entries uncompressed), "
                "as a zip bomb does",
            )
    total = sum(info.file_size for info in infos)
    available = psutil.virtual_memory().available
    if total > available // 2:
        raise refuse(
            "the archive",
            f"holds {total / 2**30:.2f} GiB once inflated, and this machine has "
            f"{available / 2**30:.2f} GiB of memory available; loading it may take at most half of that",
        )


def _check_pt2_entry(rel: str, read: Callable[[str], bytes], refuse: Callable[[str, str], ModelLoadError]) -> None:
    """One entry of a .pt2 archive (its path below the root folder); see check_export_archive.
    The entry is judged by its name in lower case, as torch's case-blind lookups take it
    ("models/X.JSON" is a program, "NAME_weights_config.JSON" a weights config)."""
    key = rel.lower()
    if key in _PT2_FIXED_ENTRIES or key.startswith("extra/"):
        return  # fixed metadata; extra files are read as text
    if key.startswith("data/aotinductor/"):
        raise refuse(
            f"entry {rel!r}",
            "is an AOTInductor artifact: torch.export.load loads its compiled shared library, which runs native code",
        )
    if key.startswith("models/"):
        if not key.endswith(".json"):
            raise refuse(
                f"entry {rel!r}",
                "is not a program (models/NAME.json), and torch.export.load reads every file under models/ as one",
            )
        _check_program_imports(rel, read(rel), refuse)
        return
    if key.startswith("data/weights/") or key.startswith("data/constants/"):
        leaf = key.split("/", 2)[2]
        if key.endswith(("_weights_config.json", "_constants_config.json")):
            _check_payload_config(rel, read(rel), refuse)
            return
        if key.endswith(".pt"):  # the legacy NAME.pt payload, loaded in place of the config
            _check_weights_only(rel, read(rel), refuse)
            return
        if "/" not in leaf and leaf.startswith("weight_" if key.startswith("data/weights/") else "tensor_"):
            return  # raw tensor bytes
        if leaf.startswith(("custom_obj_", "opaque_obj_")):
            raise refuse(
                f"entry {rel!r}",
                "is a pickled object (constants custom_obj_* and opaque_obj_* are "
                "unpickled on load), which could run arbitrary code",
            )
        raise refuse(f"entry {rel!r}", "is not part of the layout torch.export.save writes")
    if key.startswith("data/sample_inputs/") and key.endswith(".pt"):
        _check_weights_only(rel, read(rel), refuse)
        return
    raise refuse(f"entry {rel!r}", "is not part of the layout torch.export.save writes")


def _check_payload_config(rel: str, data: bytes, refuse) -> None:
    """A weights or constants config: every entry must be a raw tensor (use_pickle false)."""
    import json

    try:
        config = json.loads(data)["config"]
        items = list(config.items())
    except Exception:
        raise refuse(f"entry {rel!r}", "is not a readable payload config") from None
    constants = rel.lower().endswith("_constants_config.json")
    for fqn, meta in items:
        if not isinstance(meta, dict) or not isinstance(meta.get("path_name"), str):
            raise refuse(f"entry {rel!r}", f"has an unreadable entry for {fqn!r}")
        path_name, use_pickle = meta["path_name"], meta.get("use_pickle")
        what = f"entry {rel!r} for {fqn!r} ({path_name})"
        if constants and path_name.startswith("custom_obj_"):
            raise refuse(
                what,
                "is a TorchScript custom object, which torch.export.load unpickles and which could run arbitrary code",
            )
        if constants and path_name.startswith("opaque_obj_"):
            raise refuse(
                what,
                "is a Python object that torch.export.load unpickles with pickle.loads, which could run arbitrary code",
            )
        if use_pickle is not False:
            raise refuse(
                what,
                f'says "use_pickle": {json.dumps(use_pickle)}: torch.export.load would unpickle it '
                "with torch.load(weights_only=False), which could run arbitrary code (genuine archives "
                "use this for tensor subclasses)",
            )
        if constants and not path_name.startswith("tensor_"):
            raise refuse(what, "is not a raw tensor constant (tensor_*)")


def _check_weights_only(rel: str, data: bytes, refuse) -> None:
    """A torch.save payload that torch.export.load reads with weights_only=True and, when that fails,
    again with weights_only=False: it must load with weights_only=True (tried here, which runs no
    code), so the fallback never happens."""
    import io

    import torch

    if not data:
        return  # torch reads an empty payload as {}
    try:
        torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:
        lines = str(exc).splitlines()
        # torch's message advises retrying with weights_only=False or allowlisting the global: keep
        # only what it found (the global it refused, or the opcode it does not support)
        found = next((t for t in lines if "GLOBAL " in t or t.strip().startswith("Unsupported")), "")
        reason = found.split(". Please")[0].strip().rstrip(".") or type(exc).__name__
        raise refuse(
            f"entry {rel!r}",
            f"cannot be read with torch.load(weights_only=True) ({reason}); "
            "torch.export.load would retry with weights_only=False, which could run arbitrary code",
        ) from None


def _check_program_imports(rel: str, data: bytes, refuse) -> None:
    """A program's JSON: torch imports the module named by each enum ("__enum__") and defaultdict
    ("default_factory_module") context in its pytree specs, which sit in JSON strings inside the
    JSON. Importing a module that is not loaded yet runs its code, so that is refused."""
    import json

    try:
        document = json.loads(data)
    except Exception:
        raise refuse(f"entry {rel!r}", "is not readable JSON") from None
    stack = [(document, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            module = None
            if "__enum__" in value:
                module = str(value.get("fqn", "")).partition(":")[0]
            elif "default_factory_module" in value:
                module = str(value.get("default_factory_module", ""))
            if module is not None and module not in sys.modules:
                raise refuse(
                    f"entry {rel!r}",
                    f"makes torch import the module {module!r}, which is not loaded; importing it would run its code",
                )
            stack.extend((v, depth) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth) for v in value)
        elif isinstance(value, str) and depth < 8 and value.lstrip()[:1] in ("{", "["):
            try:
                stack.append((json.loads(value), depth + 1))
            except ValueError:
                pass
