"""The bundled examples in the model panel (found from the files' text, never imported),
choosing one, and the dynamo-config overrides: parsed, validated against the installed
torch, shown in red before a run, carried into the config; the allow_rnn suggestion."""

from __future__ import annotations

import os

from PySide6.QtCore import Qt

from core.models import examples
from core.vocab import dynamo_overrides
from core.vocab.config import CompileConfig
from tests.gui.helpers import LSTM_EXAMPLE, ROOT

MODELS = os.path.join(ROOT, "resources", "models")


def test_examples_are_read_from_the_files_text():
    found = {e.name: e for e in examples.examples_in()}
    assert set(found) >= {
        "resnet50.py",
        "lstm_variable_length.py",
        "conditional_execution.py",
        "custom_kernel.py",
        "custom_kernel.py:get_model_custom_op",
    }
    op = found["custom_kernel.py:get_model_custom_op"]
    assert op.source == os.path.join(MODELS, "custom_kernel.py") + ":get_model_custom_op"
    assert "custom_op" in op.summary
    assert found["lstm_variable_length.py"].summary.startswith("2-layer LSTM")
    assert found["lstm_variable_length.py"].sweepable and found["resnet50.py"].sweepable
    assert not found["conditional_execution.py"].sweepable
    assert examples.is_bundled(op.source) and not examples.is_bundled(__file__)
    assert examples.needed_dynamo_config(LSTM_EXAMPLE)[:2] == ("allow_rnn", "True")
    assert examples.needed_dynamo_config(op.source) is None


def test_override_text_parsing():
    assert dynamo_overrides.split_items("allow_rnn=True, recompile_limit = 16 x=[1, 2]") == [
        "allow_rnn=True",
        "recompile_limit=16",
        "x=[1, 2]",
    ]
    assert dynamo_overrides.parse("allow_rnn=true recompile_limit=16", None) == (
        ("allow_rnn", True),
        ("recompile_limit", 16),
    )


def test_choosing_an_example(qtbot, window):
    panel = window.model_panel
    names = [panel.examples.index(r).data() for r in range(panel.examples.rowCount())]
    assert names[0].startswith("conditional_execution.py") and "custom_kernel.py:get_model_custom_op" in names
    row = next(r for r, n in enumerate(names) if n.startswith("lstm_variable_length.py"))
    tip = panel.examples.index(row).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith("2-layer LSTM over variable-length sequences")
    rect = panel.example_list.visualRect(panel.examples.index(row))
    with qtbot.waitSignal(panel.sig_model_chosen) as chosen:
        qtbot.mouseClick(panel.example_list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert chosen.args == [LSTM_EXAMPLE] and panel.source() == LSTM_EXAMPLE
    assert panel.sweep.isEnabled() and not panel.list.currentIndex().isValid()
    assert window.is_trusted(LSTM_EXAMPLE)  # bundled: no "runs code" notice
    # the LSTM is not compiled without allow_rnn: the panel says so and adds it in one click
    config = window.config_panel
    assert config.suggestion_box.isVisibleTo(window) and "GB0014" in config.suggestion.text()
    config.suggestion_button.click()
    assert config.dynamo_config.text() == "allow_rnn=True"
    assert config.current_config().dynamo_config == (("allow_rnn", True),)
    assert not config.suggestion_box.isVisibleTo(window)
    # a model without variants: no sweep; a factory entry selects FILE.py:NAME
    op = next(r for r, n in enumerate(names) if n.endswith(":get_model_custom_op"))
    panel.example_list.setCurrentIndex(panel.examples.index(op))
    assert panel.source().endswith("custom_kernel.py:get_model_custom_op")
    assert not panel.sweep.isEnabled() and not panel.sweep_shapes()
    window.set_model("resnet18")
    assert not panel.example_list.currentIndex().isValid()


def test_dynamo_overrides_are_validated_before_a_run(qtbot, window):
    config = window.config_panel
    config.queue.clear()
    config.set_config(CompileConfig(backend="eager"))
    config.dynamo_config.setText("allow_rn=True")
    assert config.error.isVisibleTo(window)
    assert "no setting 'allow_rn'" in config.error.text() and "allow_rnn" in config.error.text()
    assert not window.run_profile() and "allow_rn" in window.last_error
    config.add_button.click()
    assert config.queue.rowCount() == 0 and "Not queued" in config.error.text()
    config.dynamo_config.setText("allow_rnn=maybe")
    assert "takes True or False" in config.error.text()
    config.dynamo_config.setText("recompile_limit=16, allow_rnn=True")
    assert not config.error.isVisibleTo(window)
    assert config.current_config().dynamo_config == (("allow_rnn", True), ("recompile_limit", 16))
    assert config.current_config().label == "eager/allow_rnn=True/recompile_limit=16"
    config.dynamics_button.click()  # the three dynamic settings of a sweep, one click
    assert [c.dynamic for c in config.queue.configs] == ["false", "auto", "true"]
    assert all(c.dynamo_config == (("allow_rnn", True), ("recompile_limit", 16)) for c in config.queue.configs)


def test_hinted_setting_is_offered_with_apply_and_rerun(qtbot, window):
    """torch's hint naming a dynamo setting becomes a core suggestion in the Decision tab,
    whose button changes the queue and starts a run (one path: core.decide.suggestions)."""
    from core.vocab import events as ev
    from core.vocab import records as rec
    from tests.gui.helpers import fake_result

    result = fake_result("a")
    result.apply(
        ev.GraphBreakFound(
            "a",
            graph_break=rec.GraphBreak(
                "Attempted to wrap RNN, GRU, or LSTM",
                "GB0014",
                hints=(
                    "Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, and LSTM",
                ),
                frame_skipped=True,
            ),
        )
    )
    window.config_panel.queue.clear()
    window.config_panel.queue.add(CompileConfig(backend="eager"))
    window.session.load([result], {})
    decision = window.view("decision")
    buttons = [b for card in decision.card_widgets for b in card.buttons if "allow_rnn" in b.text()]
    assert len(buttons) == 1 and "re-run" in buttons[0].text().lower()
    started = []
    # The window's real wiring (button → sig_change_requested → run_profile → controller.start);
    # only the controller is replaced, so no job process starts.
    window.controller.start = lambda specs, **kw: started.append(specs)
    buttons[0].click()
    expected = CompileConfig(backend="eager", dynamo_config=(("allow_rnn", True),))
    assert window.config_panel.queue.configs == [expected]
    assert len(started) == 1 and [s.config for s in started[0]] == [expected], window.last_error
