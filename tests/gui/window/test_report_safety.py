"""A report is untrusted input: a crafted report.json with HTML in every text field, a
file:/// documentation link and a graph break "in" /etc/passwd opens as plain text, opens no
link but PyTorch documentation, and makes the app read no file it names."""

from __future__ import annotations

import builtins
import json
import linecache

import pyqtgraph as pg
from PySide6.QtCore import Qt, QUrl
from PySide6.QtWidgets import QLabel

from core.report.report_contents import report_json
from core.vocab import events as ev
from tests.gui.helpers import fake_result

IMG = "<img src='/tmp/evil.png'>"
LINK = "<a href='https://evil.example/'>click me</a>"
DOC = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"


def crafted_report(tmp_path) -> str:
    failed = fake_result(
        "job2",
        backend="aot_eager",
        breaks=False,
        status_event=ev.JobFailed("job2", reason="compile failed", detail="Traceback", phase="compile"),
    )
    doc = json.loads(report_json([fake_result("job1"), failed]))
    first, second = doc["jobs"]
    first["spec"]["model"]["source"] = f"/tmp/{IMG}/model.py"
    second["spec"]["model"]["source"] = f"/tmp/{IMG}/model.py"
    first["spec"]["config"]["backend"] = f"{IMG}{LINK}"
    first["compile"]["coverage"] = f"{LINK} {IMG}"
    second["failure_reason"] = f"{IMG} failed {LINK}"
    second["failure_detail"] = f"{LINK}\n{IMG}"
    first["recompiles"][0]["reasons"] = [f"{IMG} guard {LINK}"]
    gb, user_break = first["graph_breaks"][:2]
    gb.update(
        reason=f"<b>bold</b>{IMG}",
        explanation=f"{LINK} explained",
        hints=[f"{IMG} hint", LINK],
        source=f"{LINK}",
        doc_url="file:///etc/passwd",
        file="/etc/passwd",
        line=1,
        context=[],
        context_start=0,
        user_file=f"/tmp/{IMG}.py",
        user_line=3,
        eager_function=f"{IMG} (x.py:1)",
        frame_skipped=True,
    )
    user_break.update(doc_url="javascript:alert(1)", file="/etc/passwd", line=2, context=[], context_start=0)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc))
    return str(path)


def _labels_are_safe(window) -> list[str]:
    unsafe = []
    for label in window.findChildren(QLabel):
        if label.textFormat() == Qt.TextFormat.PlainText:
            continue
        if "<img" in label.text() or "<a " in label.text():
            unsafe.append(label.text())
    return unsafe


def _tooltips(model) -> list[str]:
    return [
        str(model.index(row, column).data(Qt.ItemDataRole.ToolTipRole) or "")
        for row in range(model.rowCount())
        for column in range(model.columnCount())
    ]


def test_crafted_report_shows_its_text_as_text_and_reads_no_file(qtbot, window, tmp_path, monkeypatch):
    opened_files, opened_urls = [], []
    real_open, real_getline = builtins.open, linecache.getline
    monkeypatch.setattr(builtins, "open", lambda f, *a, **k: (opened_files.append(str(f)), real_open(f, *a, **k))[1])
    monkeypatch.setattr(
        linecache, "getline", lambda f, *a, **k: (opened_files.append(str(f)), real_getline(f, *a, **k))[1]
    )
    monkeypatch.setattr("gui.panels.graph_breaks.QDesktopServices.openUrl", lambda url: opened_urls.append(url) or True)
    chosen_before = window.model_panel.source()
    assert window.open_session(crafted_report(tmp_path)), window.last_error

    assert not _labels_are_safe(window)  # summary sentence, results header, graph-break header, status...
    assert IMG in window.results_header.text().replace("&lt;", "<").replace("&gt;", ">").replace("&#x27;", "'")
    panels = window.graph_breaks_panel
    models = (
        window.summary_panel.model,
        panels.model,
        panels.compile_panel.breakdown_model,
        panels.compile_panel.recompile_model,
        window.config_panel.queue,
    )
    for model in models:
        for tip in _tooltips(model):
            assert "<img" not in tip and "<a " not in tip, tip
    names = [label.text for _, label in window.latency_chart.legend.items]
    names += [curve.name() for curve in window.distribution_chart._curves.values()]
    assert names and not any("<img" in name or "<a " in name for name in names), names
    # the model the report names is neither read nor chosen for the next run
    assert window.model_panel.source() == chosen_before

    for row in range(panels.proxy.rowCount()):
        panels.select_row(row)
        html = panels.detail.toHtml()
        assert "<img" not in html, html
        assert 'href="https://evil' not in html and 'href="file:' not in html and 'href="javascript' not in html
    panels.select_break((f"<b>bold</b>{IMG}", "/etc/passwd", 1))
    shown = panels.detail.toPlainText()
    assert "file:///etc/passwd" in shown and "not opened" in shown  # the link as text, never a link
    assert IMG in shown and "ran eagerly: " + IMG in shown
    assert "root:" not in shown  # /etc/passwd's content: no file the report names is read
    assert not [f for f in opened_files if "passwd" in f or "evil" in f], opened_files

    # a click on any link other than PyTorch documentation opens nothing
    refused = []
    panels.sig_link_refused.connect(refused.append)
    panels.detail.anchorClicked.emit(QUrl("file:///etc/passwd"))
    assert refused == ["file:///etc/passwd"]
    assert not panels.open_link("javascript:alert(1)") and not panels.open_link("http://docs.pytorch.org/x")
    assert opened_urls == []
    assert panels.open_link(DOC)
    assert [u.toString() for u in opened_urls] == [DOC]


def test_detail_links_only_pytorch_documentation(qtbot):
    from gui.panels.break_detail import detail_html

    gb = fake_result().graph_breaks[0]
    assert f"<a href='{DOC}'>" in detail_html(gb)
    for url in (
        "file:///etc/passwd",
        "https://evil.example/gb/gb0170.html",
        "https://pytorch.org.evil.example/",
        "https://docs.pytorch.org@evil.example/",
    ):
        html = detail_html(type(gb)(**{**gb.__dict__, "doc_url": url}))
        assert "<a " not in html and "not opened" in html


def test_legends_and_axis_labels_escape_config_labels(qtbot):
    from gui.charts.sweep import SweepChart
    from tests.gui.helpers import fake_sweep_result

    chart = SweepChart()
    qtbot.addWidget(chart)
    result = fake_sweep_result("a")
    result.variants[:] = [type(v)(**{**v.__dict__, "input_shapes": (f"{IMG}[{v.index}]",)}) for v in result.variants]
    import dataclasses

    result.spec = dataclasses.replace(result.spec, config=dataclasses.replace(result.spec.config, backend=IMG))
    chart.reset([result])
    key = chart.key.text()  # the sweep's key, under the plot (rich text)
    assert "&lt;img" in key and "<img" not in key
    axis: pg.AxisItem = chart.plot.getAxis("bottom")
    assert "<img" not in axis.labelText
