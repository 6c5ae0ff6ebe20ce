"""A zoo's files: zoo.csv, zoo_summary.csv and zoo.json written from a core.zoo.results.Zoo, and
zoo.json read back as the untrusted input it is (every value type-checked, folder names
plain names inside the zoo folder); and the folder each model's report goes to.
"""

from __future__ import annotations

import dataclasses
import json
import os

from core.vocab.artifacts import safe_name
from core.zoo.results import ROW_COLUMNS, SUMMARY_COLUMNS, Zoo, ZooRow

ZOO_VERSION = 1
ZOO_FILES = ("zoo.csv", "zoo_summary.csv", "zoo.json")


def folder_name(model: str) -> str:
    """A model source as a folder name: "resnet18" stays, "timm:resnet50" → "timm_resnet50",
    "/a/b/net.py:make" → "net.py_make"."""
    if "/" in model or os.sep in model:
        head, sep, factory = model.rpartition(":")
        base = os.path.basename(head if sep and "/" not in factory and head else model)
        model = base + (f"_{factory}" if sep and "/" not in factory and head else "")
    name = safe_name(model.replace(":", "_")).strip("._") or "model"
    return name[:100]


def folder_names(models: list[str], taken: dict[str, str] | None = None) -> dict[str, str]:
    """A distinct folder per model ("net.py", "net.py-2" for a second file of that name);
    `taken` keeps the folders an earlier run of this zoo chose (--resume)."""
    found = dict(taken or {})
    used = set(found.values())
    for model in models:
        if model in found:
            continue
        base = name = folder_name(model)
        n = 2
        while name in used:
            name, n = f"{base}-{n}", n + 1
        found[model] = name
        used.add(name)
    return {m: found[m] for m in models}


def _cell(value):
    from core.report.csv_cells import safe_cell

    if isinstance(value, float):
        return round(value, 6)
    return safe_cell(value)


def _csv(columns: list[str], rows: list[dict]) -> str:
    from core.report.csv_cells import csv_text

    return csv_text(columns, rows, _cell)


def zoo_files(zoo: Zoo) -> dict[str, str]:
    """File name → text of zoo.csv, zoo_summary.csv and zoo.json."""
    summaries = zoo.summaries()
    doc = {
        "zoo_version": ZOO_VERSION,
        "tool": "compile-profiler",
        "finished": zoo.finished,
        "options": zoo.options,
        "models": [{"model": m, "folder": f} for m, f in zoo.models.items()],
        "configs": zoo.configs,
        "rows": [dataclasses.asdict(r) for r in zoo.rows],
        "summary": [{**dataclasses.asdict(s), "pass_rate": s.pass_rate, "sentence": s.sentence()} for s in summaries],
        "environment_warning": zoo.overall_warning(),
    }
    return {
        "zoo.csv": _csv(ROW_COLUMNS, [dataclasses.asdict(r) for r in zoo.rows]),
        "zoo_summary.csv": _csv(
            SUMMARY_COLUMNS, [{**dataclasses.asdict(s), "pass_rate": s.pass_rate} for s in summaries]
        ),
        "zoo.json": json.dumps(doc, indent=1, default=str),
    }


def write_zoo(zoo: Zoo, zoo_dir: str) -> list[str]:
    """Write the zoo's files into `zoo_dir` atomically; returns their paths."""
    from core.report.files import atomic_write

    paths = []
    for name, text in zoo_files(zoo).items():
        path = os.path.join(zoo_dir, name)
        atomic_write(path, text)
        paths.append(path)
    return paths


def load_zoo(path: str) -> Zoo:
    """Read a zoo folder (or its zoo.json) back, every value type-checked: ReportError names
    the file and the field. Folder names must be plain names inside the zoo folder."""
    from core.report.files import ReportError, read_json_file
    from core.vocab.schema import SchemaError, build, check

    doc, path = read_json_file(path, "zoo.json")
    where = path
    if not isinstance(doc, dict) or "rows" not in doc or "models" not in doc:
        raise ReportError(f"{path} is not a compile-profiler zoo (no 'rows' or 'models').")
    warnings = []
    version = doc.get("zoo_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise ReportError(f"{path}: zoo_version must be a whole number, not {version!r}.")
    if version > ZOO_VERSION:
        warnings.append(
            f"This zoo was written by a newer compile-profiler (zoo version {version}); what this "
            "version knows is shown."
        )
    try:
        models = {}
        for i, m in enumerate(check(tuple[dict, ...], doc["models"], "models")):
            model = check(str, m.get("model"), f"models[{i}].model")
            folder = check(str, m.get("folder"), f"models[{i}].folder")
            if not folder or folder in (".", "..") or os.path.basename(folder) != folder or "\\" in folder:
                raise SchemaError(f"models[{i}].folder must be a plain folder name, not {folder!r}")
            models[model] = folder
        configs = list(check(tuple[str, ...], doc.get("configs", []), "configs"))
        rows = []
        for i, r in enumerate(check(tuple[dict, ...], doc["rows"], "rows")):
            known = {k: v for k, v in r.items() if k in ROW_COLUMNS} if isinstance(r, dict) else r
            row = build(ZooRow, known, f"rows[{i}]")
            if row.model not in models:
                raise SchemaError(f"rows[{i}].model {row.model!r} is not one of the zoo's models")
            rows.append(dataclasses.replace(row, folder=models[row.model]))
        options = check(dict, doc.get("options", {}), "options")
        finished = check(bool, doc.get("finished", True), "finished")
    except SchemaError as exc:
        raise ReportError(f"{where} cannot be opened: {exc}.") from exc
    configs = configs or list(dict.fromkeys(r.config for r in rows))
    return Zoo(models, configs, rows, options, finished, os.path.dirname(os.path.abspath(path)), warnings)
