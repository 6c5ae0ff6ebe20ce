"""Task → Generate: the main window's form sends a Hugging Face causal LM to the generation window,
which profiles it live (the forward's calls charted as tokens are generated, prefill and compiles
marked) and then shows core's figures, finding and recompiles, refuses bad input with the field's
name, and writes the same report folder as the command line."""

from __future__ import annotations

import json
import os

from PySide6.QtWidgets import QMessageBox, QPushButton

from core.vocab.config import CompileConfig

TINY_GPT2 = ("n_layer=1", "n_embd=32", "n_head=2", "vocab_size=128", "n_positions=64")


def test_a_tiny_gpt2_generates_live_then_its_figures_and_report(qtbot, tmp_path):
    from gui.window.generation_window import GenerationWindow

    w = GenerationWindow()
    qtbot.addWidget(w)
    w.show()
    w.set_workload("hf:gpt2", TINY_GPT2, 1, 8, "cpu", [CompileConfig("eager")])
    w.new_tokens.setValue(4)
    w.generations.setValue(2)
    w.static.setChecked(False)
    w.dynamic.setChecked(True)
    with qtbot.waitSignal(w.sig_finished, timeout=300_000) as finished:
        assert w.run()
        assert not w.run_button.isEnabled() and w.cancel_button.isEnabled()
    (result,) = finished.args[0]
    assert result.label == "dynamic cache/eager"
    view = w.view
    # the chart: every forward call of both runs, the prefills every 4th call, the calls that compiled
    entry = next(iter(view.folds[("dynamic cache/eager", "compiled")].run.entries.values()))
    assert entry.calls == 4 * 3  # (1 warm-up + 2 timed) generations × 4 tokens
    curve = view._items[("dynamic cache/eager", "compiled", "curve")]
    assert len(curve.getData()[0]) == 12
    prefill = view._items[("dynamic cache/eager", "compiled", "prefill")].getData()[0]
    assert list(prefill) == [0, 4, 8]
    compiled = view._items[("dynamic cache/eager", "compiled", "compile")].getData()[0]
    assert len(compiled) >= 2 and compiled[0] == 0  # the prefill compiles, the growing cache recompiles
    # the table: core's figures
    assert view.model.rowCount() == 1
    row = [view.model.data(view.model.index(0, c)) for c in range(view.model.columnCount())]
    assert row[0] == "dynamic cache/eager" and row[1] == "8" and row[8] == str(len(result.recompiles)) != "0"
    assert "time to first token" in view.summary.toPlainText()
    assert view.breaks.compile_panel.recompile_model.rowCount() == sum(
        len(e.recompiles) for e in result.script.compiled.entries.values()
    )
    assert w.save_button.isEnabled() and w.save_report(str(tmp_path / "report"))
    doc = json.load(open(tmp_path / "report" / "report.json"))
    assert doc["kind"] == "generation" and doc["configs"][0]["label"] == "dynamic cache/eager"
    assert os.path.exists(tmp_path / "report" / "latency.csv")
    # the recompiles' advice, each a button that re-runs the config changed, the other results kept
    assert w.advice_box.isVisibleTo(w)
    buttons = [b for b in w.advice_box.findChildren(QPushButton) if "static cache" in b.text()]
    assert [b.text() for b in buttons] == [
        "Apply and re-run: dynamic cache/eager with static cache (cache_implementation='static')"
    ]
    with qtbot.waitSignal(w.sig_finished, timeout=300_000) as again:
        buttons[0].click()
    assert [r.label for r in again.args[0]] == ["dynamic cache/eager", "static cache/eager"]
    assert view.model.rowCount() == 2 and view.model.data(view.model.index(1, 0)) == "static cache/eager"
    assert ("static cache/eager", "compiled") in view.folds and ("dynamic cache/eager", "compiled") not in view.folds
    w.close()


def test_bad_input_is_refused_naming_the_field(qtbot):
    from gui.window.generation_window import GenerationWindow

    w = GenerationWindow()
    qtbot.addWidget(w)
    w.set_workload("hf:gpt2", TINY_GPT2, 1, 8, "cpu", [CompileConfig("eager")])
    w.prompt_lens.setText("16,abc")
    assert not w.run() and "Prompt lengths must be whole numbers" in w.statusBar().currentMessage()
    w.prompt_lens.setText("16")
    w.static.setChecked(False)
    assert not w.run() and "choose at least one cache (Caches:" in w.statusBar().currentMessage()
    w.static.setChecked(True)
    w.set_workload("resnet18", (), 1, 8, "cpu", [CompileConfig("eager")])
    assert not w.run() and "Hugging Face causal language model" in w.statusBar().currentMessage()
    assert not w.controller.busy
    for box in w.findChildren(QMessageBox):
        box.close()


def test_task_generate_in_the_main_window_opens_the_generation_window(qtbot, window, monkeypatch):
    from gui.window import generation_window

    started = []
    monkeypatch.setattr(generation_window.GenerationWindow, "run", lambda self: started.append(self.source) or True)
    window.model_panel.set_source("hf:gpt2")
    window.model_panel.set_task("generate")
    window.run_profile()
    assert started == ["hf:gpt2"] and window.generation_window.isVisible()
    assert "compile configs:" in window.generation_window.workload.text()
    window.model_panel.set_source("resnet18")
    assert not window.run_profile() and "Generate needs a Hugging Face model" in window.status_label.text()
