"""The Zoo view's words at every stage of a run (issue 44, item 7): before any job had ended,
every config, inductor's too, was called "a debugging reference" (its pending rows name no
backend, and "all of none are references" held); and its texts, shortened, say the whole on
hover."""

from __future__ import annotations

from PySide6.QtCore import Qt

from core.zoo.files import load_zoo
from core.zoo.results import Zoo, ZooRow
from gui.panels.zoo import ZooGridModel, ZooPanel
from tests.core.zoo_fakes import write_fake_zoo

MODELS = {"resnet18": "resnet18", "timm:vit_tiny": "timm_vit_tiny"}


def _zoo(rows) -> Zoo:
    return Zoo(dict(MODELS), ["inductor", "aot_eager"], rows, finished=False, path="/tmp/zoo")


def _pending(model: str, config: str) -> ZooRow:
    return ZooRow(model, MODELS[model], config, "pending")  # as core.zoo.sweep makes a job not ended yet


def _words(zoo: Zoo, qtbot) -> list[str]:
    """Every text the view shows of the configs: the summary row's cells, their tooltips, the sentences."""
    panel = ZooPanel()
    qtbot.addWidget(panel)
    panel.show_zoo(zoo)
    model = panel.model
    cells = [model.data(model.index(0, c)) for c in (1, 2)]
    tips = [model.data(model.index(0, c), Qt.ItemDataRole.ToolTipRole) for c in (1, 2)]
    return [*cells, *tips, panel.sentences.text()]


def test_before_any_job_ends_no_config_is_called_a_reference(qtbot):
    zoo = _zoo([_pending(m, c) for m in MODELS for c in ("inductor", "aot_eager")])
    words = _words(zoo, qtbot)
    assert not [w for w in words if "reference" in w], words
    assert not any(s.reference for s in zoo.summaries())


def test_while_the_run_goes_on_only_the_debugging_backends_are_references(qtbot, tmp_path):
    """One model's jobs ended (inductor and aot_eager), the other's pending: inductor is a
    speedup, aot_eager a reference, at every stage."""
    write_fake_zoo(str(tmp_path))
    ended = {(r.model, r.config): r for r in load_zoo(str(tmp_path)).rows}
    rows = [ended[("resnet18", "inductor")], _pending("resnet18", "aot_eager")]
    rows += [_pending("timm:vit_tiny", "inductor"), _pending("timm:vit_tiny", "aot_eager")]
    inductor, aot_eager = _zoo(rows).summaries()
    assert not inductor.reference and not aot_eager.reference  # aot_eager: none of its jobs ended yet
    rows[1] = ended[("resnet18", "aot_eager")]
    inductor, aot_eager = _zoo(rows).summaries()
    assert not inductor.reference and "reference" not in inductor.sentence()
    assert aot_eager.reference and "a debugging reference" in aot_eager.sentence()
    model = ZooGridModel()
    model.set_zoo(_zoo(rows))
    assert "reference" not in model.data(model.index(0, 1)) and "reference" in model.data(model.index(0, 2))
