"""File → Compile caches…: the configs' inductor cache folders listed, the selected or all removed
after a question, a folder a running job holds kept and said (gui.window.cache_dialog)."""

from __future__ import annotations

import os

import pytest

from core.run.compile_cache import config_caches
from core.vocab.config import CompileConfig
from tests.core.run.test_compile_caches import filled, hold_in_a_process


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("COMPILE_PROFILER_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_dialog_lists_asks_then_removes_and_keeps_a_held_cache(qtbot, cache, tmp_path):
    from gui.window.cache_dialog import CacheDialog

    plain = filled(CompileConfig("inductor"), 3 * 1024 * 1024)
    autotune = filled(CompileConfig("inductor", mode="max-autotune-no-cudagraphs"), 5000)
    asked = []
    answer = {"yes": False}
    dialog = CacheDialog(confirm=lambda text: asked.append(text) or answer["yes"])
    qtbot.addWidget(dialog)
    dialog.show()
    model = dialog.model
    assert [model.index(r, 0).data() for r in range(model.rowCount())] == [
        "inductor",
        "inductor/max-autotune-no-cudagraphs",
    ]
    assert model.index(0, 1).data() == "3.0 MiB" and model.index(1, 1).data() == "5 KiB"
    assert "2 caches in" in dialog.head.text() and "3.0 MiB in all" in dialog.head.text()
    assert not dialog.remove_selected.isEnabled() and dialog.remove_all.isEnabled()
    dialog.table.selectRow(1)
    assert dialog.remove_selected.isEnabled()
    dialog.remove_selected.click()  # asked, and the answer is Cancel: nothing goes
    assert asked and "inductor/max-autotune-no-cudagraphs (5 KiB)" in asked[0] and os.path.isdir(autotune)
    answer["yes"] = True
    holder = hold_in_a_process(plain)
    try:
        dialog.remove_all.click()
        assert dialog.busy and not dialog.remove_all.isEnabled()  # on a thread: the app goes on
        qtbot.waitUntil(lambda: not dialog.busy, timeout=10_000)
        text = dialog.outcome.text()
        assert "removed inductor/max-autotune-no-cudagraphs (5 KiB)" in text
        assert "kept inductor: a running job compiles into it" in text
        assert [model.index(r, 4).data() for r in range(model.rowCount())] == ["in use by a running job"]
        dialog.resize(900, 300)
        dialog.grab().save(str(tmp_path / "caches.png"))  # looked at while writing this test
    finally:
        holder.kill()
        holder.wait()
    assert not os.path.exists(autotune) and os.path.isdir(plain)
    dialog.refresh()
    dialog.remove_all.click()
    qtbot.waitUntil(lambda: not dialog.busy, timeout=10_000)
    assert config_caches() == [] and "No compile caches" in dialog.head.text()
    assert not dialog.remove_all.isEnabled()


def test_the_file_menu_opens_one_caches_dialog(window, cache):
    from gui.window.cache_dialog import CacheDialog

    window.actions.compile_caches.trigger()
    window.actions.compile_caches.trigger()
    dialogs = window.findChildren(CacheDialog)
    assert len(dialogs) == 1 and dialogs[0].isVisible() and "No compile caches" in dialogs[0].head.text()
