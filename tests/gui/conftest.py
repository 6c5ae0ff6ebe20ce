"""Fixtures for the desktop app's tests: a window with throwaway settings, garbage collected
on the GUI thread as the app does (the helpers the tests share are in tests/gui/helpers.py)."""

from __future__ import annotations

import pytest

from gui import qt_compat
from tests.gui.helpers import TORCH_INFO_TIMEOUT_MS

qt_compat.install()  # see gui/qt_compat.py: PySide6 6.12.0 on Python 3.11 leaks references to None


@pytest.fixture(autouse=True, scope="session")
def _gui_thread_garbage_collection(qapp):
    """As the app does (gui.app.main): garbage is collected on the GUI thread only."""
    return qt_compat.collect_garbage_on_gui_thread()


@pytest.fixture
def settings(tmp_path):
    from PySide6.QtCore import QSettings

    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    """A main window with torch's catalogs loaded, closed (run cancelled) afterwards."""
    from gui.window.main_window import MainWindow

    win = MainWindow(settings)
    qtbot.addWidget(win)
    win.show()
    qtbot.waitUntil(lambda: win.torch_info is not None, timeout=TORCH_INFO_TIMEOUT_MS)
    win.config_panel.processes.setValue(1)  # one timing process keeps the suite short (3 is tested apart)
    yield win
    win.close_now()  # no question about a run a test left going (tests/gui/window/test_closing.py asks)
