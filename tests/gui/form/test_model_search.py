"""Searching the model list (issue 19, item 6): the exact name first, then names that start
with the text, then the rest; typing never changes the model the next run profiles; Enter
(or Down, then Enter) chooses, as a search box does."""

from __future__ import annotations

from PySide6.QtCore import Qt

from gui.form.model_lists import match_rank
from gui.form.model_panel import ModelPanel

# Names in the catalog's order (torchvision first, then timm and Hugging Face), as the app lists them.
NAMES = (
    "alexnet",
    "regnet_y_400mf",
    "resnet101",
    "resnet152",
    "resnet18",
    "resnet34",
    "timm:legacy_seresnet18",
    "timm:resnet18",
    "timm:resnet18d",
    "timm:seresnet18",
    "hf:resnet",
)


def _panel(qtbot) -> ModelPanel:
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models(NAMES)
    panel.set_source("alexnet")
    panel.show()
    return panel


def _shown(panel: ModelPanel) -> list[str]:
    return [panel.proxy.index(r, 0).data() for r in range(panel.proxy.rowCount())]


def test_the_rank_puts_the_exact_name_first():
    assert match_rank("resnet18", "ResNet18") == 0
    assert match_rank("timm:resnet18", "resnet18") == 1
    assert match_rank("resnet18", "resnet") == 2 and match_rank("timm:resnet18d", "resnet") == 3
    assert match_rank("timm:legacy_seresnet18", "resnet18") == 4
    assert match_rank("alexnet", "resnet18") is None


def test_typing_ranks_the_matches_and_changes_no_choice(qtbot):
    panel = _panel(qtbot)
    chosen = []
    panel.sig_model_chosen.connect(chosen.append)
    qtbot.keyClicks(panel.search, "resnet18")  # one key event at a time, as the user typed it
    assert _shown(panel)[:3] == ["resnet18", "timm:resnet18", "timm:resnet18d"]
    assert set(_shown(panel)[3:]) == {"timm:legacy_seresnet18", "timm:seresnet18"}
    assert chosen == [] and panel.source() == "alexnet"
    assert not panel.list.currentIndex().isValid()


def test_enter_chooses_the_best_match_and_down_moves_to_the_next(qtbot):
    panel = _panel(qtbot)
    chosen = []
    panel.sig_model_chosen.connect(chosen.append)
    qtbot.keyClicks(panel.search, "resnet18")
    qtbot.keyClick(panel.search, Qt.Key.Key_Return)
    assert panel.source() == "resnet18" and chosen == ["resnet18"]
    assert panel.list.currentIndex().data() == "resnet18"  # in view, not scrolled away

    panel.search.clear()
    qtbot.keyClicks(panel.search, "resnet18")
    assert panel.source() == "resnet18"  # typing again chose nothing
    qtbot.keyClick(panel.search, Qt.Key.Key_Down)  # the best match, highlighted
    qtbot.keyClick(panel.search, Qt.Key.Key_Down)  # the next one
    assert panel.source() == "resnet18"
    qtbot.keyClick(panel.search, Qt.Key.Key_Return)
    assert panel.source() == "timm:resnet18" and chosen == ["resnet18", "timm:resnet18"]

    panel.search.clear()
    qtbot.keyClicks(panel.search, "no such model")
    qtbot.keyClick(panel.search, Qt.Key.Key_Return)
    assert panel.source() == "timm:resnet18" and panel.proxy.rowCount() == 0


def test_a_click_still_chooses_and_an_empty_search_keeps_the_catalog_order(qtbot):
    panel = _panel(qtbot)
    assert _shown(panel) == list(NAMES)
    qtbot.keyClicks(panel.search, "resnet")
    index = panel.proxy.index(2, 0)
    panel.list.setCurrentIndex(index)  # what a click or the list's own arrow keys do
    assert panel.source() == index.data()
    panel.search.clear()
    assert _shown(panel) == list(NAMES)


def test_names_that_arrive_during_a_search_are_ranked_with_it(qtbot):
    """The timm and Hugging Face names arrive after torchvision's, maybe while a search is
    typed: they are ranked into the shown matches at once, once each, and a name the search
    hides has no row (the list then shows nothing selected for it)."""
    panel = ModelPanel()
    qtbot.addWidget(panel)
    panel.set_models([n for n in NAMES if ":" not in n])
    panel.search.setText("resnet18")
    assert _shown(panel) == ["resnet18"]
    panel.add_models([n for n in NAMES if ":" in n] + ["resnet18"])  # a name already listed is not added twice
    assert _shown(panel) == ["resnet18", "timm:resnet18", "timm:resnet18d", "timm:legacy_seresnet18", "timm:seresnet18"]
    assert panel.names.stringList().count("resnet18") == 1
    hidden = panel.names.index(panel.names.stringList().index("alexnet"))
    assert not panel.proxy.mapFromSource(hidden).isValid()
    panel.search.setText("")
    assert _shown(panel) == list(NAMES)
