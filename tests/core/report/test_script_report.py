"""Reading reports of other kinds than a model's: a script's or a generation's report given where
a model's is expected is named for what it is; a hostile `kind` is a clear error, no traceback."""

from __future__ import annotations

import json

import pytest

from core.report.files import OtherKindError, ReportError, load_report


@pytest.mark.parametrize(
    "doc, said",
    [
        ({"kind": "script", "script": {}}, "is the report of a script run (main.py run)"),
        ({"kind": "generation", "configs": []}, "is the report of a text generation"),
        ({"kind": [], "x": 1}, "is not a compile-profiler report (no 'jobs')"),
        ({"kind": {"a": 1}}, "is not a compile-profiler report (no 'jobs')"),
    ],
)
def test_another_kind_of_report_is_named_and_a_hostile_kind_is_a_clear_error(tmp_path, doc, said):
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ReportError) as caught:
        load_report(str(path))
    assert said in str(caught.value)
    assert isinstance(caught.value, OtherKindError) == isinstance(doc["kind"], str)
