"""A model file chosen in the app is checked before it becomes the next run's, read and never
run (core.report.model_file_check): issue 44's broken .py and fake .pt2 failed only in a job."""

from __future__ import annotations

import zipfile

from core.report.model_file_check import check_chosen_model_file

GOOD_PY = "import torch\n\ndef get_model():\n    return torch.nn.ReLU()\n\ndef get_example_inputs():\n    return (torch.randn(2),)\n"


def _zip(path, entries: dict[str, bytes]):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in entries.items():
            z.writestr(name, data)
    return str(path)


def test_a_python_file_that_does_not_parse_or_lacks_get_model_is_refused(tmp_path):
    good, broken, empty = tmp_path / "good.py", tmp_path / "broken.py", tmp_path / "empty.py"
    good.write_text(GOOD_PY)
    broken.write_text(GOOD_PY + "def oops(:\n")
    empty.write_text("print('would run')\n")
    assert check_chosen_model_file(str(good)) == ""
    said = check_chosen_model_file(str(broken))
    assert said.startswith(f"{broken}:") and "syntax error" in said, said
    assert "defines no get_model() function" in check_chosen_model_file(str(empty))


def test_a_pt2_that_is_not_laid_out_as_torch_export_save_writes_is_refused(tmp_path):
    fake = tmp_path / "fake.pt2"
    fake.write_text("not a zip")
    assert "not a torch.export archive (File is not a zip file)" in check_chosen_model_file(str(fake))
    flat = _zip(tmp_path / "flat.pt2", {"archive_format": b"pt2", "model.json": b"{}"})
    assert "not a torch.export archive (not one folder)" in check_chosen_model_file(flat)
    other = _zip(tmp_path / "other.pt2", {"m/archive_format": b"zip", "m/models/model.json": b"{}"})
    assert "no archive_format saying pt2" in check_chosen_model_file(other)
    laid_out = _zip(tmp_path / "m.pt2", {"m/archive_format": b"pt2", "m/models/model.json": b"{}"})
    assert check_chosen_model_file(laid_out) == ""


def test_a_genuine_export_is_accepted(tmp_path):
    import torch

    program = torch.export.export(torch.nn.Linear(3, 2), (torch.randn(1, 3),))
    torch.export.save(program, str(tmp_path / "genuine.pt2"))
    assert check_chosen_model_file(str(tmp_path / "genuine.pt2")) == ""
