"""The app's helper processes, one command line: `python -m core.cli.helpers torch-info` (what the
installed torch offers, as JSON, cached: core.run.torch_info), `more-models` (the timm and Hugging
Face names, as a JSON list, cached), `bundle REPORT_DIR OUT.zip [LABEL]` (a bug-report bundle,
core.report.bundle: the model is built for inputs.pt; prints a JSON line). The app's process never
imports torch: it runs these, each from the project's folder, and reads their last line.
"""

from __future__ import annotations

import json
import sys

USAGE = "usage: python -m core.cli.helpers torch-info | more-models | bundle REPORT_DIR OUT.zip [LABEL]"


def torch_info(argv: list[str]) -> int:
    from core.run.torch_info import (
        load_and_cache_torch_info,
        load_more_models,
        torch_info_to_json,
        write_more_models_cache,
    )

    if argv == ["torch-info"]:
        print(json.dumps(torch_info_to_json(load_and_cache_torch_info())))
        return 0
    names = load_more_models()
    write_more_models_cache(names)
    print(json.dumps(list(names)))
    return 0


def bundle(argv: list[str]) -> int:
    from core.report.bundle import BundleError, bundle_report
    from core.report.files import ReportError

    if len(argv) not in (2, 3):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        plan, names = bundle_report(argv[0], argv[1], argv[2] if len(argv) > 2 else None)
    except (BundleError, ReportError, OSError) as exc:
        print(json.dumps({"error": str(exc)}))
        return 1
    print(json.dumps({"finding": plan.finding.sentence, "names": names, "left_out": plan.left_out}))
    return 0


def main(argv: list[str]) -> int:
    if argv in (["torch-info"], ["more-models"]):
        return torch_info(argv)
    if argv[:1] == ["bundle"]:
        return bundle(argv[1:])
    print(USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
