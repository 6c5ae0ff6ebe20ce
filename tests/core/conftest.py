"""The core tests' fixtures: tiny model files written into tmp_path, and what torch itself
logs on its graph_breaks artifact (helpers they use are in tests/core/helpers.py)."""

from __future__ import annotations

import logging
import textwrap

import pytest

from tests.core.helpers import TorchLog


@pytest.fixture
def write_model(tmp_path):
    """write_model(source, name="m.py") -> path of a model file with that text."""

    def write(source: str, name: str = "model.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(source))
        return str(path)

    return write


@pytest.fixture
def torch_log():
    import torch._dynamo.convert_frame  # noqa: F401  (creates the artifact loggers)
    import torch._dynamo.symbolic_convert  # noqa: F401

    handler = TorchLog()
    loggers = [logging.getLogger(n) for n in list(logging.root.manager.loggerDict) if n.endswith(".__graph_breaks")]
    for logger in loggers:
        logger.addHandler(handler)
    yield handler
    for logger in loggers:
        logger.removeHandler(handler)
