"""File → Run a zoo…: the model picker, and a real local sweep started from the app whose
Zoo window fills in as jobs end (each job a real child process, backend eager, few calls)."""

from __future__ import annotations

import csv
import os

from PySide6.QtCore import Qt

from core.vocab.config import CompileConfig
from tests.core.helpers import MLP_MODEL
from tests.gui.helpers import RUN_TIMEOUT_MS


def test_the_picker_offers_the_chosen_model_examples_and_torchvision(window):
    from gui.window.zoo_run_dialog import ZooRunDialog

    window.set_model("resnet18")
    dialog = ZooRunDialog(window)
    assert dialog.picks.picked() == ["resnet18"]
    sources = [
        dialog.picks.data(dialog.picks.index(r), Qt.ItemDataRole.UserRole) for r in range(dialog.picks.rowCount())
    ]
    assert sources[0] == "resnet18" and "mobilenet_v3_small" in sources and any(s.endswith(".py") for s in sources)
    dialog.filter.setText("mobilenet_v3")
    shown = [dialog.proxy.data(dialog.proxy.index(r, 0)) for r in range(dialog.proxy.rowCount())]
    assert shown and all("mobilenet_v3" in s for s in shown)
    dialog.proxy.setData(dialog.proxy.index(0, 0), Qt.CheckState.Checked, Qt.ItemDataRole.CheckStateRole)
    assert dialog.picks.picked()[0] == "resnet18" and len(dialog.picks.picked()) == 2
    assert "mobilenet_v3" in dialog.picks.picked()[1]
    dialog.close()


def test_a_zoo_run_from_the_app_fills_its_window_live(window, qtbot, tmp_path):
    from gui.window.zoo_run_dialog import run_zoo

    models = []
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text(MLP_MODEL)
        models.append(str(tmp_path / name))
    window.config_panel.set_config(CompileConfig("eager"))
    window.config_panel.warmup.setValue(1)
    window.config_panel.iters.setValue(3)
    out = str(tmp_path / "zoo")
    ended = []
    zoo_window = run_zoo(window, models, out)
    assert zoo_window is not None and zoo_window.controller.busy
    zoo_window.controller.sig_job_ended.connect(lambda job, zoo: ended.append([r.status for r in zoo.rows]))
    assert zoo_window.panel.model.data(zoo_window.panel.model.index(1, 1)) in ("-", "running…")
    with qtbot.waitSignal(zoo_window.controller.sig_finished, timeout=RUN_TIMEOUT_MS):
        pass
    assert ended == [["completed", "pending"], ["completed", "completed"]]  # the grid filled in as jobs ended
    assert zoo_window.progress.isHidden() and zoo_window.zoo.finished
    with open(os.path.join(out, "zoo.csv"), newline="") as fh:
        assert [r["status"] for r in csv.DictReader(fh)] == ["completed", "completed"]
    texts = {zoo_window.panel.model.data(zoo_window.panel.model.index(r, 1)) for r in (1, 2)}
    assert all(t.endswith("x ref") for t in texts)  # backend eager: a reference, never a speedup
    zoo_window.close()


def test_a_zoo_checks_named_models_in_its_jobs_not_on_the_gui_thread(window, tmp_path, monkeypatch):
    """The reported case: a Hugging Face config was sized on the GUI thread (112 s frozen for
    100,000 layers), importing torch and transformers into the app's process."""
    import core.models
    from gui.window.zoo_run_dialog import build_sweep

    checked = []
    monkeypatch.setattr(core.models, "check_source", lambda spec, device="cpu": checked.append(spec.source))
    (tmp_path / "a.py").write_text(MLP_MODEL)
    window.config_panel.set_config(CompileConfig("eager"))
    models = ["hf:bert", "timm:resnet18", "resnet18", str(tmp_path / "a.py")]
    sweep, jobs = build_sweep(window, models, str(tmp_path / "zoo"))
    assert checked == [str(tmp_path / "a.py")]  # a file's existence only
    assert {j.spec.model.source for j in jobs} >= {"hf:bert", "timm:resnet18", "resnet18"}


def test_a_zoo_builds_hugging_face_models_as_the_form_says_and_leaves_one_models_marks_out(window, tmp_path):
    """The reported case: the zoo profiled the full 124M GPT-2 at 128 tokens where the form said a
    2-layer one at 64, and proposed one model's mark_dynamic for every model."""
    import dataclasses

    from core.vocab.config import DimMark
    from gui.window.zoo_run_dialog import ZooRunDialog, build_sweep

    mp = window.model_panel
    mp.seq_len.setValue(64)
    mp.hf_config.setText("n_layer=2")
    marked = dataclasses.replace(CompileConfig("eager"), mark_dynamic=(DimMark(0, 0),))
    window.config_panel.queue.clear()
    window.config_panel.queue.add(marked)  # as Apply and re-run queues one model's marks
    assert window.config_panel.run_configs()[0].mark_dynamic
    (tmp_path / "a.py").write_text(MLP_MODEL)
    sweep, jobs = build_sweep(window, ["hf:gpt2", str(tmp_path / "a.py")], str(tmp_path / "zoo"))
    by_source = {j.spec.model.source: j.spec for j in jobs}
    gpt2 = by_source["hf:gpt2"]
    assert gpt2.model.seq_len == 64 and gpt2.model.hf_config == ("n_layer=2",)
    assert by_source[str(tmp_path / "a.py")].model.hf_config == ()  # a file model takes no HF config
    assert all(not j.spec.config.mark_dynamic for j in jobs)
    dialog = ZooRunDialog(window)
    text = dialog.settings.text()
    assert "Hugging Face models: sequence length 64, config n_layer=2" in text
    assert "Left out: mark_dynamic=" in text
    dialog.close()
