"""A zoo folder built from fake results (no job runs): for the zoo's arithmetic and the Zoo
view's tests."""

from __future__ import annotations

import os

from core.report.files import write_report
from core.vocab.config import CompileConfig
from core.zoo.files import folder_names, write_zoo
from core.zoo.results import Zoo, ZooRow
from tests.core.fakes import fake_result

# model → config → (eager ms, compiled ms, compile s, status, accuracy, graph-break places)
FIGURES = {
    "resnet18": {
        "inductor": (10.0, 5.0, 30.0, "completed", "pass", 0),
        "aot_eager": (10.0, 9.5, 3.0, "completed", "pass", 0),
    },
    "timm:vit_tiny": {
        "inductor": (20.0, 16.0, 60.0, "completed", "pass", 2),
        "aot_eager": (20.0, 21.0, 6.0, "completed", "pass", 2),
    },
    "mobilenet_v3_small": {
        "inductor": (4.0, 4.4, 20.0, "completed", "fail", 0),
        "aot_eager": (4.0, 4.1, 2.0, "failed", None, 0),
    },
}


def fake_zoo_results(figures=FIGURES, environment=None) -> dict[str, list]:
    """model → its JobResults, one per config, with the figures above."""
    from core.vocab import records as rec

    found = {}
    for model, configs in figures.items():
        results = []
        for i, (label, (eager, compiled, compile_s, status, accuracy, breaks)) in enumerate(configs.items()):
            gbs = [
                rec.GraphBreak(reason=f"break {k}", file="m.py", line=10 + k, logged=1, per_call=1)
                for k in range(breaks)
            ]
            r = fake_result(
                CompileConfig(backend=label),
                eager_ms=eager,
                compiled_ms=compiled,
                compile_s=compile_s,
                status=status,
                accuracy=accuracy,
                graph_breaks=gbs,
                model=model,
                n=40,
                seed=i,
                noise=0.002,
                environment={"node": "node-a", **((environment or {}).get(model, {}))},
            )
            results.append(r)
        found[model] = results
    return found


def write_fake_zoo(path: str, figures=FIGURES, environment=None) -> Zoo:
    """A zoo folder as `zoo` writes it: a report folder per model and the zoo's files."""
    by_model = fake_zoo_results(figures, environment)
    folders = folder_names(list(by_model))
    rows = []
    for model, results in by_model.items():
        write_report(results, os.path.join(path, folders[model]), {"model": model})
        rows += [ZooRow.from_result(model, folders[model], r) for r in results]
    configs = list(dict.fromkeys(r.config.label for rs in by_model.values() for r in rs))
    zoo = Zoo(folders, configs, rows, {"argv": ["fake"]}, True, path)
    write_zoo(zoo, path)
    return zoo
