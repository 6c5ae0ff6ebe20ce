"""What a Ray task does with the files a job needs (core.zoo.ray_task, no Ray started): a model
file the node lacks, or holds with other content, is written from the shipped copy; one it
holds as shipped is used where it is."""

import dataclasses
import hashlib
import importlib.util

import pytest

from core.vocab.config import ModelSpec
from tests.core.helpers import make_spec

pytestmark = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")


def test_files_a_node_lacks_come_from_the_shipped_copy(tmp_path):
    from core.zoo.ray_task import _localize, files_of

    text = b"import torch\ndef make():\n    return torch.nn.Linear(2, 2)\n"
    sha = hashlib.sha256(text).hexdigest()
    missing = str(tmp_path / "elsewhere" / "net.py")
    spec = dataclasses.replace(
        make_spec(f"{missing}:make"), model=ModelSpec(f"{missing}:make", weights=str(tmp_path / "w.pt"))
    )
    assert files_of(spec) == [missing, str(tmp_path / "w.pt")] and files_of(make_spec("resnet18")) == []
    local = _localize(spec, {missing: (sha, text)}, str(tmp_path / "node"))
    path, factory = local.model.source.rsplit(":", 1)
    assert factory == "make" and path.startswith(str(tmp_path / "node")) and open(path, "rb").read() == text
    assert local.model.weights == str(tmp_path / "w.pt")  # not shipped: left as it was
    here = tmp_path / "here.py"
    here.write_bytes(text)
    same = _localize(make_spec(str(here)), {str(here): (sha, text)}, str(tmp_path / "node"))
    assert same.model.source == str(here)
    here.write_bytes(b"# another file at the same path\n")
    other = _localize(make_spec(str(here)), {str(here): (sha, text)}, str(tmp_path / "node"))
    assert other.model.source != str(here) and open(other.model.source, "rb").read() == text
