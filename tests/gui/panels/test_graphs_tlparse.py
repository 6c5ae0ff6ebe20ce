"""Graphs → Open in tlparse: the report's path is shown with Copy, and a desktop with no browser
is said in words (issue 19 item 7: it failed silently, the path never shown)."""

from __future__ import annotations

import os

import pytest
from PySide6.QtGui import QDesktopServices, QGuiApplication

from gui.run.session import ProfileSession
from tests.gui.panels.explain_fakes import explained_result


@pytest.fixture
def graphs(qtbot, tmp_path, monkeypatch):
    from gui.panels.graphs import GraphsPanel

    session = ProfileSession()
    session.load([explained_result(str(tmp_path), "job1", "inductor")], {}, str(tmp_path / "report.json"))
    index = tmp_path / "made" / "index.html"
    index.parent.mkdir()
    index.write_text("<html>tlparse</html>")
    monkeypatch.setattr("gui.panels.graphs.tlparse_job", lambda folder, label: (str(index), ""))
    view = GraphsPanel()
    qtbot.addWidget(view)
    view.bind(session)
    view.show_results(session.results)
    view.show()
    return view, str(index)


@pytest.mark.parametrize("browser", [True, False])
def test_tlparse_path_shown_with_copy_opened_or_not(graphs, monkeypatch, browser):
    view, index = graphs
    asked = []
    monkeypatch.setattr(
        QDesktopServices, "openUrl", staticmethod(lambda url: asked.append(url.toLocalFile()) or browser)
    )
    assert not view.opened.isVisible()
    assert view.open_tlparse() == index and asked == [index]
    text = view.opened.label.text()
    assert view.opened.isVisible() and index in text
    assert ("Nothing could open" in text and "no browser" in text) == (not browser)
    assert text.startswith("Opened tlparse's report in your browser") == browser
    view.opened.copy_button.click()
    assert QGuiApplication.clipboard().text() == index and os.path.isfile(index)
