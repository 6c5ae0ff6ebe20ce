"""The Throughput tab (batch sweeps) from hand-made results, and the form's workload fields."""

from __future__ import annotations

from core.analysis.results import JobResult
from core.vocab import records as rec
from core.vocab.config import CompileConfig, JobSpec, ModelSpec
from gui.panels.throughput import ThroughputModel, ThroughputPanel


def batch_result(label_backend: str = "inductor") -> JobResult:
    spec = JobSpec("j1", ModelSpec("resnet18"), CompileConfig(backend=label_backend), sweep_batch=(1, 4, 16))
    r = JobResult(spec)
    r.variants = [
        rec.VariantResult(
            0,
            ("float32[1×3×64×64]",),
            1,
            False,
            compile_time_s=2.0,
            eager_ms=(10.0,),
            compiled_ms=(5.0,),
            batch_size=1,
            peak_mb=300.0,
        ),
        rec.VariantResult(
            1,
            ("float32[4×3×64×64]",),
            1,
            True,
            compile_time_s=1.0,
            eager_ms=(20.0,),
            compiled_ms=(8.0,),
            batch_size=4,
            peak_mb=350.0,
        ),
        rec.VariantResult(
            2,
            ("float32[16×3×64×64]",),
            0,
            False,
            batch_size=16,
            peak_mb=900.0,
            error="out of memory at batch size 16: boom",
        ),
    ]
    return r


def test_throughput_model_passes_qtmodeltester(qtmodeltester):
    model = ThroughputModel()
    model.set_results([batch_result()])
    assert model.rowCount() == 3
    qtmodeltester.check(model, force_py=True)
    assert model.index(1, 5).data() == "500.0"  # 4 × 1000 / 8 ms
    assert model.index(2, 8).data().startswith("out of memory")


def test_throughput_panel_names_the_best_batch_size(qtbot):
    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.show_results([batch_result(), JobResult(JobSpec("j2", ModelSpec("resnet18")))])
    assert panel.sentences() == ["inductor: best compiled throughput at batch size 4: 500.0 items/s, 2.50× eager"]
    assert len(panel.plot.listDataItems()) == 2  # eager and compiled of the one sweep
    assert not panel.splitter.isHidden()


def test_throughput_panel_without_a_batch_sweep_shows_how_to_make_one_not_bare_axes(qtbot):
    from gui.panels.throughput import EMPTY_TEXT

    panel = ThroughputPanel()
    qtbot.addWidget(panel)
    panel.show_results([JobResult(JobSpec("j2", ModelSpec("resnet18")))])
    assert panel.header.text() == EMPTY_TEXT and panel.splitter.isHidden()


def test_model_panel_workload_fields(qtbot):
    from gui.form.model_panel import ModelPanel

    panel = ModelPanel()
    qtbot.addWidget(panel)
    assert panel.task_value() == "inference" and not panel.optimizer.isEnabled()
    panel.set_task("training")
    assert panel.task_value() == "training" and panel.optimizer.isEnabled()
    panel.sweep_batch_edit.setText("1, 8,32")
    assert panel.sweep_batch() == (1, 8, 32)
    panel.hf_config.setText("num_hidden_layers=2 hidden_size=64")
    assert panel.hf_overrides() == ("num_hidden_layers=2", "hidden_size=64")


def test_model_panel_lists_timm_and_hf_sources(qtbot):
    from gui.form.model_panel import ModelPanel

    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models(("resnet18", "timm:resnet50", "hf:bert"))
    panel.search.setText("hf:")
    assert panel.list.model().rowCount() == 1
    panel.set_source("hf:bert")
    assert "Hugging Face" in panel.current.text()


def test_a_hugging_face_folder_opens_as_hf_source(window, tmp_path):
    folder = tmp_path / "tiny_bert"
    folder.mkdir()
    (folder / "config.json").write_text('{"model_type": "bert"}')
    assert window.open_model_file(str(folder))
    assert window.model_panel.source() == f"hf:{folder}"
    assert str(folder) in window.recent.paths()
    assert not window.open_model_file(str(tmp_path))  # no config.json: refused with the reason
