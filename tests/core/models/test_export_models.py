""".pt2 archives: the safety check that runs before torch.export.load, and genuine exports run
end to end through the job (inputs for dynamic shapes, integer and bool inputs, keywords)."""

import json
import pickle
import sys
import zipfile

import pytest
import torch
from torch.export import Dim

from core.measure.job import run_job
from core.models import ModelLoadError, check_forward, load_model
from core.models.export_archives import check_export_archive
from core.vocab import events as ev
from core.vocab.config import CompileConfig, JobSpec, ModelSpec


class _CreatesMarker:
    """A pickle payload that runs code when unpickled: open(path, "w") creates the marker file."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


class LinearReLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(6, 3)

    def forward(self, x):
        return torch.relu(self.lin(x))


class ConvNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.head = torch.nn.Linear(8, 4)

    def forward(self, x):
        return self.head(torch.relu(self.bn(self.conv(x))).mean((2, 3)))


class Tokens(torch.nn.Module):
    """int64 token ids and a bool mask next to a float input."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 4)
        self.lin = torch.nn.Linear(4, 4)

    def forward(self, x, ids, mask):
        return self.lin(x) + self.emb(ids).sum(1, keepdim=True) * mask.unsqueeze(-1)


class Keywords(torch.nn.Module):
    def forward(self, x, scale=2.0, bias=None):
        return x * scale + bias


def save(tmp_path, model, args, name="model.pt2", kwargs=None, dynamic_shapes=None):
    program = torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)
    path = tmp_path / name
    torch.export.save(program, str(path))
    return path


def rewrite(src, dst, edit):
    """Copy a zip archive entry by entry; edit(name, data) returns new data, or None to drop it."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info.filename, data)
    return dst


def run_whole_job(path):
    events = []
    outcome = run_job(
        JobSpec(job_id="t", model=ModelSpec(str(path)), config=CompileConfig(backend="eager"), warmup=1, iters=3),
        events.append,
    )
    failed = [e for e in events if isinstance(e, ev.JobFailed)]
    assert outcome == "completed" and isinstance(events[-1], ev.JobCompleted), (
        failed[0].reason + "\n" + failed[0].detail if failed else events[-1]
    )
    return events


# ------------------------------------------------------------------ the check before torch.export.load


@pytest.fixture
def genuine(tmp_path):
    return save(tmp_path, LinearReLU(), (torch.randn(5, 6),), "genuine.pt2")


def use_pickle_weight(marker):
    """The reported attack: one weight marked "use_pickle": true, its bytes a pickle that runs code."""

    def edit(name, data):
        if name.endswith("data/weights/model_weights_config.json"):
            config = json.loads(data)
            first = next(iter(config["config"].values()))
            first["use_pickle"] = True
            return json.dumps(config).encode()
        if name.endswith("data/weights/weight_0"):
            return pickle.dumps(_CreatesMarker(marker), protocol=2)
        return data

    return edit


def test_genuine_archive_passes_the_check(genuine):
    assert check_export_archive(str(genuine)) is None
    loaded = load_model(ModelSpec(str(genuine)))
    assert tuple(loaded.model(*loaded.inputs).shape) == (5, 3)


def test_crafted_archive_runs_code_in_torch_export_load(genuine, tmp_path):
    """The crafted archive below is a real exploit: torch.export.load itself runs its payload.
    (If this ever fails, torch changed its loader: re-read it before trusting the refusal test.)"""
    marker = tmp_path / "ran-by-torch"
    crafted = rewrite(genuine, tmp_path / "crafted.pt2", use_pickle_weight(marker))
    with pytest.raises(Exception):
        torch.export.load(str(crafted))
    assert marker.exists()


def test_crafted_use_pickle_weight_is_refused_before_anything_is_unpickled(genuine, tmp_path):
    marker = tmp_path / "must-not-exist"
    crafted = rewrite(genuine, tmp_path / "crafted.pt2", use_pickle_weight(marker))
    with pytest.raises(ModelLoadError) as err:
        load_model(ModelSpec(str(crafted)))
    assert not marker.exists()
    text = str(err.value)
    assert err.value.file == str(crafted) and text.startswith(str(crafted))
    assert "data/weights/model_weights_config.json" in text and "use_pickle" in text
    assert "arbitrary code" in text and "torch.export.save" in text and "model file" in text


def test_the_whole_job_refuses_the_crafted_archive(genuine, tmp_path):
    marker = tmp_path / "must-not-exist"
    crafted = rewrite(genuine, tmp_path / "crafted.pt2", use_pickle_weight(marker))
    events = []
    run_job(
        JobSpec(job_id="t", model=ModelSpec(str(crafted)), config=CompileConfig(backend="eager"), warmup=1, iters=1),
        events.append,
    )
    assert isinstance(events[-1], ev.JobFailed) and "use_pickle" in events[-1].reason
    assert not marker.exists()


def _sample_inputs_payload(marker):
    """torch loads the sample inputs with weights_only=True and, when that fails, with False."""
    payload = pickle.dumps(_CreatesMarker(marker), protocol=2)
    return lambda name, data: payload if "/data/sample_inputs/" in name else data


def _truthy_use_pickle_constant(marker):
    """use_pickle must be exactly false: torch tests it for truth, so "yes" would unpickle."""

    def edit(name, data):
        if name.endswith("data/constants/model_constants_config.json"):
            return json.dumps(
                {
                    "config": {
                        "c": {"path_name": "tensor_0", "is_param": False, "use_pickle": "yes", "tensor_meta": None}
                    }
                }
            ).encode()
        return data

    return edit


@pytest.mark.parametrize(
    "attack, expected",
    [
        (
            _sample_inputs_payload,
            r"data/sample_inputs/model.pt.*weights_only=True.*GLOBAL io.open was not an allowed global",
        ),
        (
            _truthy_use_pickle_constant,
            r"model_constants_config.json' for 'c' \(tensor_0\) says \"use_pickle\": \"yes\"",
        ),
    ],
)
def test_other_pickled_payloads_are_refused(genuine, tmp_path, attack, expected):
    marker = tmp_path / "must-not-exist"
    crafted = rewrite(genuine, tmp_path / "crafted.pt2", attack(marker))
    with pytest.raises(ModelLoadError, match=expected):
        load_model(ModelSpec(str(crafted)))
    assert not marker.exists()


def enum_in_spec(tmp_path, monkeypatch, genuine, module):
    """An archive whose input spec holds an enum key of `module`, a module on sys.path that
    creates a marker file when imported. Returns (archive, marker)."""
    marker = tmp_path / f"{module}-imported"
    (tmp_path / f"{module}.py").write_text(
        f"open({str(marker)!r}, 'w')\nimport enum\n\n\nclass Colour(enum.Enum):\n    RED = 1\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)  # and forget it again afterwards

    def edit(name, data):
        if name.endswith("/models/model.json"):
            program = json.loads(data)
            signature = program["graph_module"]["module_call_graph"][0]["signature"]
            spec = json.loads(signature["in_spec"])
            spec[1]["children_spec"][1]["context"] = json.dumps(
                [{"__enum__": True, "fqn": f"{module}:Colour", "name": "RED"}]
            )  # the kwargs dict's keys
            signature["in_spec"] = json.dumps(spec)
            return json.dumps(program).encode()
        return data

    return rewrite(genuine, tmp_path / "crafted.pt2", edit), marker


def test_enum_context_imports_a_module_in_torch_export_load(genuine, tmp_path, monkeypatch):
    """Control: torch.export.load imports the module the archive names."""
    crafted, marker = enum_in_spec(tmp_path, monkeypatch, genuine, "pt2_import_probe_control")
    try:
        torch.export.load(str(crafted))
    except Exception:
        pass
    assert marker.exists()


def test_enum_context_naming_an_unloaded_module_is_refused(genuine, tmp_path, monkeypatch):
    crafted, marker = enum_in_spec(tmp_path, monkeypatch, genuine, "pt2_import_probe_refused")
    with pytest.raises(ModelLoadError, match="models/model.json.*import the module 'pt2_import_probe_refused'"):
        load_model(ModelSpec(str(crafted)))
    assert not marker.exists()


_OPAQUE_CONFIG = json.dumps(
    {"config": {"obj": {"path_name": "opaque_obj_0", "is_param": False, "use_pickle": True, "tensor_meta": None}}}
)


@pytest.mark.parametrize(
    "added, expected",
    [
        # a pickled Python object as a constant: unpickled with pickle.loads whatever its flag
        (
            {
                "{root}/data/constants/model_constants_config.json": _OPAQUE_CONFIG,
                "{root}/data/constants/opaque_obj_0": "PAYLOAD",
            },
            ["opaque_obj_0", "pickle.loads"],
        ),
        # AOTInductor: torch.export.load loads the compiled shared library
        ({"{root}/data/aotinductor/model/model.so": "PAYLOAD"}, ["data/aotinductor/model/model.so", "native code"]),
        # the torch 2.7 zip format torch.export.load falls back to when the archive fails to load
        (
            {"version": "1", "serialized_state_dict.pt": "PAYLOAD"},
            ["'version'", "outside the archive folder", "older torch.export zip format"],
        ),
        # a legacy weights file, loaded in place of the weights config
        ({"{root}/data/weights/model.pt": "PAYLOAD"}, ["data/weights/model.pt", "weights_only=True"]),
        # anything torch.export.save does not write
        ({"{root}/data/executorch/x.bin": "PAYLOAD"}, ["data/executorch/x.bin", "not part of the layout"]),
    ],
)
def test_pickled_objects_native_code_legacy_and_unknown_entries_are_refused(genuine, tmp_path, added, expected):
    marker = tmp_path / "must-not-exist"
    root = zipfile.ZipFile(genuine).namelist()[0].split("/")[0]
    added = {
        name.format(root=root): pickle.dumps(_CreatesMarker(marker)) if data == "PAYLOAD" else data
        for name, data in added.items()
    }
    crafted = rewrite(genuine, tmp_path / "crafted.pt2", lambda name, data: None if name in added else data)
    with zipfile.ZipFile(crafted, "a") as zout:
        for name, data in added.items():
            zout.writestr(name, data)
    with pytest.raises(ModelLoadError) as err:
        load_model(ModelSpec(str(crafted)))
    assert all(e in str(err.value) for e in expected), str(err.value)
    assert not marker.exists()


def test_duplicate_entries_and_non_archives_are_refused(genuine, tmp_path):
    duplicate = rewrite(genuine, tmp_path / "dup.pt2", lambda name, data: data)
    name = next(n for n in zipfile.ZipFile(genuine).namelist() if n.endswith("model_weights_config.json"))
    with pytest.warns(UserWarning), zipfile.ZipFile(duplicate, "a") as zout:
        zout.writestr(name, b"{}")
    with pytest.raises(ModelLoadError, match="appears twice"):
        check_export_archive(str(duplicate))
    not_zip = tmp_path / "text.pt2"
    not_zip.write_text("hello")
    with pytest.raises(ModelLoadError, match="not a torch.export archive"):
        check_export_archive(str(not_zip))


def case_variant_config(genuine, dst, marker):
    """The reported attack on the check: torch's reader finds entries by name without regard to
    case, so a second weights config spelled `.JSON`, placed after the genuine one, is what
    torch reads. The model is named weight_m, so the old check took that entry for raw tensor
    bytes (data/weights/weight_*) and passed the archive."""
    rename = {
        "/models/model.json": "/models/weight_m.json",
        "/model_": "/weight_m_",
        "/sample_inputs/model.pt": "/sample_inputs/weight_m.pt",
    }
    with zipfile.ZipFile(genuine) as zin, zipfile.ZipFile(dst, "w") as zout:
        root = zin.namelist()[0].split("/")[0]
        for info in zin.infolist():
            name, data = info.filename, zin.read(info.filename)
            for old, new in rename.items():
                name = name.replace(old, new)
            zout.writestr(name, data)
            if name.endswith("/weight_m_weights_config.json"):
                config = json.loads(data)
                first = next(iter(config["config"].values()))
                first["use_pickle"], first["path_name"] = True, "weight_crafted"
                zout.writestr(name[: -len(".json")] + ".JSON", json.dumps(config))
                zout.writestr(f"{root}/data/weights/weight_crafted", pickle.dumps(_CreatesMarker(marker), protocol=2))
    return dst


def test_a_case_variant_entry_runs_code_in_torch_export_load(genuine, tmp_path):
    """The exploit is real: torch.export.load runs the payload of the `.JSON` entry. (If this
    fails, torch's reader changed: re-read it before trusting the refusal below.)"""
    marker = tmp_path / "ran-by-torch"
    crafted = case_variant_config(genuine, tmp_path / "crafted.pt2", marker)
    with pytest.raises(Exception):
        torch.export.load(str(crafted))
    assert marker.exists()


def test_entries_that_differ_only_in_case_are_refused(genuine, tmp_path):
    marker = tmp_path / "must-not-exist"
    crafted = case_variant_config(genuine, tmp_path / "crafted.pt2", marker)
    with pytest.raises(ModelLoadError) as err:
        load_model(ModelSpec(str(crafted)))
    assert "weight_m_weights_config.JSON" in str(err.value) and "differ only in case" in str(err.value)
    assert not marker.exists()


def test_an_entry_is_judged_by_the_name_torch_resolves_it_to(genuine, tmp_path):
    """Alone, an upper-case `.JSON` weights config is what torch reads for `.json`: it is checked
    as a weights config, and its use_pickle refused."""
    marker = tmp_path / "must-not-exist"

    def edit(name, data):
        return None if name.endswith("model_weights_config.json") else data

    crafted = rewrite(genuine, tmp_path / "crafted.pt2", edit)
    source = rewrite(genuine, tmp_path / "pickled.pt2", use_pickle_weight(marker))
    with zipfile.ZipFile(source) as zin, zipfile.ZipFile(crafted, "a") as zout:
        name = next(n for n in zin.namelist() if n.endswith("model_weights_config.json"))
        zout.writestr(name.replace("/model_weights_config.json", "/MODEL_weights_config.JSON"), zin.read(name))
    with pytest.raises(ModelLoadError) as err:
        check_export_archive(str(crafted))
    assert "MODEL_weights_config.JSON" in str(err.value) and "use_pickle" in str(err.value)
    assert not marker.exists()


def test_a_zip_bomb_and_an_archive_too_big_for_memory_are_refused(genuine, tmp_path, monkeypatch):
    bomb = rewrite(genuine, tmp_path / "bomb.pt2", lambda name, data: data)
    root = zipfile.ZipFile(genuine).namelist()[0].split("/")[0]
    with zipfile.ZipFile(bomb, "a", compression=zipfile.ZIP_DEFLATED) as zout:
        zout.writestr(f"{root}/data/weights/weight_9", bytes(64 * 2**20))  # 64 MiB of zeros: ~64 KiB stored
    with pytest.raises(ModelLoadError, match="zip bomb"):
        check_export_archive(str(bomb))

    import psutil

    real = psutil.virtual_memory()
    monkeypatch.setattr(psutil, "virtual_memory", lambda: real._replace(available=4000))
    with pytest.raises(ModelLoadError, match=r"GiB once inflated.*at most half"):
        check_export_archive(str(genuine))


def test_a_callable_argument_in_the_graph_is_refused(genuine, tmp_path):
    """torch's loader resolves an "as_operator" argument by attribute lookup on torch, so a crafted
    program can pass a Python function (torch.os.getcwd here, harmless) to a higher-order operator
    that calls its function argument."""

    def edit(name, data):
        if name.endswith("/models/model.json"):
            program = json.loads(data)
            program["graph_module"]["graph"]["nodes"].insert(
                0,
                {
                    "target": "torch.ops.higher_order.wrap_with_set_grad_enabled",
                    "inputs": [
                        {"name": "", "arg": {"as_bool": True}, "kind": 1},
                        {"name": "", "arg": {"as_operator": "torch.os.getcwd"}, "kind": 1},
                    ],
                    "outputs": [{"as_none": True}],
                    "metadata": {},
                    "is_hop_single_tensor_return": None,
                    "name": "crafted",
                },
            )
            return json.dumps(program).encode()
        return data

    crafted = rewrite(genuine, tmp_path / "crafted.pt2", edit)
    with pytest.raises(ModelLoadError, match="not an operator"):
        load_model(ModelSpec(str(crafted)))


# ------------------------------------------------------------------ genuine exports through the job


def test_linear_relu_export_runs_the_whole_job(tmp_path):
    events = run_whole_job(save(tmp_path, LinearReLU(), (torch.randn(5, 6),)))
    loaded = next(e for e in events if isinstance(e, ev.ModelLoaded))
    assert loaded.model_kind == "export" and loaded.input_shapes == ("float32[5×6]",)


def test_conv_export_runs_the_whole_job(tmp_path):
    run_whole_job(save(tmp_path, ConvNet().eval(), (torch.randn(2, 3, 16, 16),)))


def test_dynamic_shapes_and_integer_and_bool_inputs(tmp_path):
    batch = Dim("batch", min=4, max=64)
    args = (torch.randn(8, 5, 4), torch.randint(0, 10, (8, 3)), torch.ones(8, 5, dtype=torch.bool))
    path = save(tmp_path, Tokens(), args, dynamic_shapes=({0: batch}, {0: batch}, {0: batch}))
    loaded = load_model(ModelSpec(str(path)))
    x, ids, mask = loaded.inputs
    assert (x.shape, ids.shape, mask.shape) == ((8, 5, 4), (8, 3), (8, 5))  # the size it was exported with
    assert (x.dtype, ids.dtype, mask.dtype) == (torch.float32, torch.int64, torch.bool)
    assert int(ids.max()) < 10  # a valid embedding index
    check_forward(loaded, str(path))
    run_whole_job(path)


def test_derived_dynamic_dims_and_a_dynamic_int_input(tmp_path):
    class Cat(torch.nn.Module):
        def forward(self, x, y, n):
            return torch.cat([x, y]) * n

    half = Dim("half", min=3, max=20)
    path = save(
        tmp_path,
        Cat(),
        (torch.randn(6, 2), torch.randn(7, 2), 3),
        dynamic_shapes=({0: 2 * half}, {0: 2 * half + 1}, Dim.DYNAMIC),
    )
    loaded = load_model(ModelSpec(str(path)))
    assert [tuple(t.shape) for t in loaded.inputs[:2]] == [(6, 2), (7, 2)] and loaded.inputs[2] == 3
    check_forward(loaded, str(path))


def test_keyword_inputs_are_passed_as_keywords(tmp_path):
    path = save(tmp_path, Keywords(), (torch.randn(3),), kwargs={"scale": 3.0, "bias": torch.randn(3)})
    loaded = load_model(ModelSpec(str(path)))
    assert len(loaded.inputs) == 3 and loaded.inputs[1] == 3.0
    check_forward(loaded, str(path))
    run_whole_job(path)


def test_a_symbolic_dim_without_a_hint_takes_the_low_end_of_its_range():
    import types

    import sympy
    from torch.utils._sympy.numbers import int_oo
    from torch.utils._sympy.value_ranges import ValueRanges

    from core.models.export_archives import _size_hint

    s = sympy.Symbol("s0", integer=True, positive=True)

    def size(bounds):
        dim = types.SimpleNamespace(node=types.SimpleNamespace(hint=None, expr=s))
        return _size_hint(dim, types.SimpleNamespace(range_constraints={s: bounds} if bounds else {}))

    assert size(ValueRanges(4, 64)) == 4
    assert size(ValueRanges(0, int_oo)) == 2  # 0 and 1 are special-cased by export
    assert size(ValueRanges(1, 1)) == 1
    assert size(None) == 2
