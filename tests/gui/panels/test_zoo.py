"""The Zoo view: the grid model over a zoo (summary row, cells, colours, order), a click on a
cell, and File → Open zoo report… in the main window: a cell opens that model's report in
the usual views; a crafted zoo.json is refused with the field named."""

from __future__ import annotations

import json
import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QMessageBox

from core.zoo.files import load_zoo
from gui.panels.zoo import FAILED_COLOR, ZooGridModel, ZooPanel, display_name, speedup_color
from tests.core.zoo_fakes import write_fake_zoo


def _texts(model, row):
    return [model.data(model.index(row, c)) for c in range(model.columnCount())]


def test_grid_summary_row_cells_and_orders(qtmodeltester, tmp_path):
    write_fake_zoo(str(tmp_path))
    model = ZooGridModel()
    model.set_zoo(load_zoo(str(tmp_path)), "worst speedup")
    qtmodeltester.check(model)
    assert model.rowCount() == 4 and model.columnCount() == 3
    assert [model.headerData(c, Qt.Orientation.Horizontal) for c in range(3)] == ["model", "inductor", "aot_eager"]
    assert _texts(model, 0) == ["all models", "1.58x geomean · 2/3 passed", "1.00x reference · 2/3 passed"]
    assert model.models() == ["mobilenet_v3_small", "timm:vit_tiny", "resnet18"]
    assert _texts(model, 1) == ["mobilenet_v3_small", "0.91x acc!", "FAILED"]
    assert _texts(model, 2) == ["timm:vit_tiny", "1.25x 2 br", "0.95x ref 2 br"]
    # a debugging backend is a reference: never coloured as faster or slower, nor its summary
    assert model.data(model.index(2, 2), Qt.ItemDataRole.BackgroundRole) is None
    assert model.data(model.index(0, 2), Qt.ItemDataRole.BackgroundRole) is None
    failed = model.data(model.index(1, 2), Qt.ItemDataRole.BackgroundRole).color()
    assert failed == FAILED_COLOR
    assert "compile failed (fake)" in model.data(model.index(1, 2), Qt.ItemDataRole.ToolTipRole)
    assert "failed the accuracy check" in model.data(model.index(0, 1), Qt.ItemDataRole.ToolTipRole)
    faster = model.data(model.index(3, 1), Qt.ItemDataRole.BackgroundRole).color()
    assert faster.blue() > faster.red()  # 2x: blue
    slower = speedup_color(0.5)
    assert slower.red() > slower.blue()
    model.set_order("longest compile")
    assert model.models()[0] == "timm:vit_tiny"
    assert display_name("/a/b/net.py") == "net.py" and display_name("/a/net.py:make") == "net.py:make"


def test_clicking_a_cell_names_the_report_and_config(qtbot, tmp_path):
    write_fake_zoo(str(tmp_path))
    panel = ZooPanel()
    qtbot.addWidget(panel)
    panel.show_zoo(load_zoo(str(tmp_path)))
    panel.show()
    assert "3 models × 2 configs" in panel.title.text()
    assert panel.sentences.text().splitlines()[0].startswith("inductor: 2 of 3 models passed")
    index = panel.model.index(3, 1)  # resnet18 (fastest, last in worst-speedup order) · inductor
    with qtbot.waitSignal(panel.sig_job_chosen) as signal:
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=panel.table.visualRect(index).center())
    assert signal.args == [os.path.join(str(tmp_path), "resnet18"), "inductor"]


def test_machines_that_differ_are_warned_above_the_grid(qtbot, tmp_path):
    write_fake_zoo(str(tmp_path), environment={"resnet18": {"torch": "2.13.0", "node": "node-b"}})
    panel = ZooPanel()
    qtbot.addWidget(panel)
    panel.show_zoo(load_zoo(str(tmp_path)))
    assert not panel.warning.isHidden() and "machines that differ" in panel.warning.text()


def test_open_zoo_and_a_cell_opens_the_models_report_in_the_window(window, qtbot, tmp_path):
    from gui.window.zoo_window import open_zoo

    write_fake_zoo(str(tmp_path))
    zoo_window = open_zoo(window, str(tmp_path))
    assert zoo_window is not None and zoo_window in window.zoo_windows
    panel = zoo_window.panel
    row = panel.model.models().index("timm:vit_tiny") + 1
    with qtbot.waitSignal(zoo_window.sig_report_opened):
        panel.table.clicked.emit(panel.model.index(row, 2))
    assert [r.config.label for r in window.session.results] == ["inductor", "aot_eager"]
    assert window.session.results[0].spec.model.source == "timm:vit_tiny"
    zoo_window.close()


def test_a_crafted_zoo_is_refused_with_the_field_named(window, tmp_path):
    from gui.window.zoo_window import open_zoo

    write_fake_zoo(str(tmp_path))
    doc = json.loads((tmp_path / "zoo.json").read_text())
    doc["models"][0]["folder"] = "../../etc"
    (tmp_path / "zoo.json").write_text(json.dumps(doc))
    assert open_zoo(window, str(tmp_path / "zoo.json")) is None
    assert "models[0].folder must be a plain folder name" in window.last_error
    boxes = [b for b in window.findChildren(QMessageBox, "error_box") if b.isVisible()]
    assert boxes and "../../etc" in boxes[-1].text()


def test_the_running_cell_says_what_the_job_does_now_and_the_whole_detail_on_hover(qtmodeltester, tmp_path):
    from core.capture.compile_watch import stage_in

    write_fake_zoo(str(tmp_path))
    model = ZooGridModel()
    model.set_zoo(load_zoo(str(tmp_path)), "model")
    qtmodeltester.check(model)
    name = model.models()[0]
    model.set_running(name, "inductor")
    cell = model.index(1, 1)
    assert model.data(cell) == "running…"
    detail = "compiling forward (m.py:10) [0/0]: inductor lowering (so far: dynamo tracing 0.4 s); 1 graph, 0 graph breaks found so far"
    model.set_running_phase(stage_in(detail), detail)
    assert model.data(cell) == "inductor lowering…"
    assert detail in model.data(cell, Qt.ItemDataRole.ToolTipRole)
    model.set_running_phase(stage_in("5 calls a side") or "benchmark", "5 calls a side")
    assert model.data(cell) == "benchmark…"
    model.set_running(None, None)
    assert model.data(cell) != "benchmark…" and model.running_phase == ""
