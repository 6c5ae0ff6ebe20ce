"""Every model source and its error cases."""

import pytest
import torch

from core.models import ModelLoadError, check_forward, load_model
from core.vocab.config import ModelSpec
from tests.core.helpers import MLP_MODEL


def test_torchvision_by_name_builds_without_download():
    loaded = load_model(ModelSpec("resnet18", batch_size=2, image_size=64))
    assert loaded.kind == "torchvision" and "weights=None" in loaded.description
    assert tuple(loaded.inputs[0].shape) == (2, 3, 64, 64)
    check_forward(loaded, "resnet18")


def test_torchvision_video_and_segmentation_inputs():
    video = load_model(ModelSpec("r3d_18"))
    assert tuple(video.inputs[0].shape) == (1, 3, 16, 112, 112)
    seg = load_model(ModelSpec("lraspp_mobilenet_v3_large", image_size=64))
    check_forward(seg, "lraspp_mobilenet_v3_large")  # returns a dict: fine


def test_torchvision_unknown_names():
    # Detection and optical-flow models are profiled now: tests/core/test_sources_torchvision.py
    with pytest.raises(ModelLoadError, match="neither a file nor a torchvision model.*resnet18"):
        load_model(ModelSpec("resnet1"))


def test_torchvision_local_weights(tmp_path):
    import torchvision

    good = tmp_path / "r18.pth"
    torch.save(torchvision.models.resnet18(weights=None).state_dict(), good)
    loaded = load_model(ModelSpec("resnet18", weights=str(good), image_size=32))
    assert loaded.kind == "torchvision"
    bad = tmp_path / "mlp.pth"
    torch.save(torch.nn.Linear(2, 2).state_dict(), bad)
    with pytest.raises(ModelLoadError, match="weights do not fit this model"):
        load_model(ModelSpec("resnet18", weights=str(bad)))


def test_python_model_file(write_model):
    path = write_model(MLP_MODEL)
    loaded = load_model(ModelSpec(path))
    assert loaded.kind == "python" and loaded.description.startswith("model.py: A small MLP")
    check_forward(loaded, path)


@pytest.mark.parametrize(
    "source, line, message",
    [
        ("import torch\ndef get_model(:\n    pass\n", 2, "syntax error"),
        ("import torch\nx = 1\nraise RuntimeError('boom at import')\n", 3, "RuntimeError: boom at import"),
        ("import torch\ndef get_example_inputs():\n    return (torch.randn(1),)\n", 0, r"no get_model\(\) function"),
        (
            "import torch\ndef get_model():\n    return 5\ndef get_example_inputs():\n    return ()\n",
            2,
            "must return an nn.Module or a callable, not int",
        ),
        (
            "import torch\ndef get_model():\n    return torch.nn.Linear(2, 2)\n"
            "def get_example_inputs():\n    return 'x'\n",
            4,
            "must return a tuple of inputs, not str",
        ),
        (
            "import torch\ndef get_model():\n    cfg = {}\n    return torch.nn.Linear(cfg['width'], 2)\n"
            "def get_example_inputs():\n    return (torch.randn(1, 2),)\n",
            4,
            "get_model\\(\\) raised KeyError",
        ),
    ],
)
def test_python_model_file_errors_name_file_and_line(write_model, source, line, message):
    path = write_model(source, "broken.py")
    with pytest.raises(ModelLoadError, match=message) as err:
        load_model(ModelSpec(path))
    assert err.value.file == path
    assert err.value.line == line
    if line:
        assert str(err.value).startswith(f"{path}:{line}: ")


def test_forward_errors_name_the_line(write_model):
    raising = write_model(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        raise ValueError('unsupported input')\n"
        "def get_model():\n    return M()\n"
        "def get_example_inputs():\n    return (torch.randn(2),)\n",
        "raising.py",
    )
    loaded = load_model(ModelSpec(raising))
    with pytest.raises(ModelLoadError, match="forward raised ValueError: unsupported input") as err:
        check_forward(loaded, raising)
    assert err.value.line == 4

    shapes = write_model(
        "import torch\n"
        "class M(torch.nn.Module):\n"
        "    def __init__(self):\n        super().__init__()\n        self.lin = torch.nn.Linear(16, 4)\n"
        "    def forward(self, x):\n"
        "        return self.lin(x)\n"
        "def get_model():\n    return M()\n"
        "def get_example_inputs():\n    return (torch.randn(3, 5),)\n",
        "shapes.py",
    )
    loaded = load_model(ModelSpec(shapes))
    with pytest.raises(ModelLoadError, match=r"float32\[3×5\].*get_example_inputs") as err:
        check_forward(loaded, shapes)
    assert err.value.line == 7


def test_missing_file():
    with pytest.raises(ModelLoadError, match="file not found"):
        load_model(ModelSpec("/nonexistent/model.py"))


def test_export_pt2_builds_inputs_from_the_program(tmp_path):
    model = torch.nn.Sequential(torch.nn.Linear(6, 3), torch.nn.ReLU())
    program = torch.export.export(model, (torch.randn(5, 6),))
    path = tmp_path / "mlp.pt2"
    torch.export.save(program, str(path))
    loaded = load_model(ModelSpec(str(path)))
    assert loaded.kind == "export" and loaded.compile_supported
    assert tuple(loaded.inputs[0].shape) == (5, 6)
    assert tuple(loaded.model(*loaded.inputs).shape) == (5, 3)


def test_torchscript_is_recognised_and_compile_refused(tmp_path):
    scripted = torch.jit.script(torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU()))
    path = tmp_path / "conv.pt"
    scripted.save(str(path))
    loaded = load_model(ModelSpec(str(path), image_size=32))
    assert loaded.kind == "torchscript" and not loaded.compile_supported
    assert "does not support ScriptModules" in loaded.note
    check_forward(loaded, str(path))


def test_pickled_module_is_refused_with_the_reason(tmp_path):
    path = tmp_path / "whole.pt"
    torch.save(torch.nn.Linear(2, 2), str(path))
    with pytest.raises(ModelLoadError, match="weights_only=False.*refused"):
        load_model(ModelSpec(str(path)))


_FACTORY = "def get_model():\n    return torch.nn.Linear(2, 2)\n"
_INPUTS = "def get_example_inputs():\n    return (torch.randn(1, 2),)\n"


@pytest.mark.parametrize(
    "source, line, message",
    [
        (
            "import sys\nimport torch\nsys.exit(0)\n" + _FACTORY + _INPUTS,
            3,
            r"running the file called sys\.exit\(0\); a model file must define get_model\(\) and get_example_inputs\(\) "
            r"\(put script code under `if __name__ == \"__main__\":`\), not exit\.",
        ),
        (
            "import sys\nimport torch\ndef get_model():\n    sys.exit(0)\n" + _INPUTS,
            4,
            r"get_model\(\) called sys\.exit\(0\); a model file must return a model, not exit\.",
        ),
        (
            "import torch\n" + _FACTORY + "def get_example_inputs():\n    raise SystemExit('no inputs')\n",
            5,
            r"get_example_inputs\(\) called sys\.exit\('no inputs'\); a model file must return a tuple of inputs",
        ),
        ("import torch\ndef get_model():\n    exit()\n" + _INPUTS, 3, r"get_model\(\) called sys\.exit\(\);"),
        (
            "import argparse\nimport torch\ndef get_model():\n    argparse.ArgumentParser().parse_args(['--x'])\n"
            + _INPUTS,
            4,
            r"get_model\(\) called sys\.exit\(2\) \(argparse exits when the command line does not match",
        ),
        (
            "import torch\nclass Stop(BaseException):\n    pass\ndef get_model():\n    raise Stop('halt')\n" + _INPUTS,
            5,
            r"get_model\(\) raised Stop: halt, which is not an Exception",
        ),
    ],
)
def test_exiting_model_files_name_file_and_line(write_model, source, line, message):
    """sys.exit() in a model file used to surface as "load failed (SystemExit): 0"."""
    path = write_model(source, "exits.py")
    with pytest.raises(ModelLoadError, match=message) as err:
        load_model(ModelSpec(path))
    assert (err.value.file, err.value.line) == (path, line)
    assert str(err.value).startswith(f"{path}:{line}: ")


def test_exit_in_forward_names_the_line(write_model):
    path = write_model(
        "import sys\nimport torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n"
        "        sys.exit(3)\ndef get_model():\n    return M()\n" + _INPUTS,
        "exits.py",
    )
    loaded = load_model(ModelSpec(path))
    with pytest.raises(ModelLoadError, match=r"forward called sys\.exit\(3\)") as err:
        check_forward(loaded, path)
    assert err.value.line == 5


_INTERRUPTED = {
    "import": "import torch\nraise KeyboardInterrupt\n" + _FACTORY + _INPUTS,
    "get_model": "import torch\ndef get_model():\n    raise KeyboardInterrupt\n" + _INPUTS,
    "get_example_inputs": "import torch\n" + _FACTORY + "def get_example_inputs():\n    raise KeyboardInterrupt\n",
    "forward": "import torch\nclass M(torch.nn.Module):\n    def forward(self, x):\n        raise KeyboardInterrupt\n"
    "def get_model():\n    return M()\n" + _INPUTS,
}


@pytest.mark.parametrize("where", sorted(_INTERRUPTED))
def test_keyboard_interrupt_propagates(write_model, where):
    """Ctrl+C is not a mistake in the model file: it must stop the job, not become a ModelLoadError."""
    path = write_model(_INTERRUPTED[where], "interrupted.py")
    with pytest.raises(KeyboardInterrupt):
        check_forward(load_model(ModelSpec(path)), path)


def test_a_folder_given_as_a_model_file_is_refused_before_any_job(tmp_path):
    """A folder without a config.json ran a job that failed reading it as TorchScript."""
    from core.models import ModelLoadError, check_source
    from core.vocab.config import ModelSpec

    (tmp_path / "models").mkdir()
    with pytest.raises(ModelLoadError, match="is a folder, not a model file"):
        check_source(ModelSpec(str(tmp_path / "models")))


def test_a_million_inputs_are_described_by_the_first_ones_and_a_count():
    """A model with 10^6 inputs wrote a 12 MB error line three times and a 55 MB report.json."""
    import torch

    from core.models import INPUTS_DESCRIBED, LoadedModel, describe_inputs

    loaded = LoadedModel(torch.nn.Identity(), tuple(torch.ones(1) for _ in range(1000)), "python", "")
    shown = describe_inputs(loaded)
    assert len(shown) == INPUTS_DESCRIBED + 1 and shown[-1] == f"… {1000 - INPUTS_DESCRIBED:,} more inputs"
    assert shown[0] == "float32[1]"
