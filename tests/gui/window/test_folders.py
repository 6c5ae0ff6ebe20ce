"""Where the app's file dialogs start and what they remember (issue 19 item 8): never the
project's checkout; the last folder per kind of file (QSettings); a reports folder in the
user's home by default; a typed new folder made; the Compare dialog titled for what it asks."""

from __future__ import annotations

import os

import pytest
from PySide6.QtWidgets import QFileDialog, QLineEdit

from core.report.files import write_report
from tests.gui.helpers import fake_result


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return home


def test_typing_a_new_folder_name_makes_it(qtbot, tmp_path):
    from gui.widgets.folder_dialog import FolderDialog

    dialog = FolderDialog(None, "Export report into folder", str(tmp_path))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.findChild(QLineEdit, "fileNameEdit").setText("new-report")  # as the user types it
    dialog.accept()
    assert dialog.result() == QFileDialog.DialogCode.Accepted
    assert os.path.isdir(tmp_path / "new-report") and dialog.selectedFiles() == [str(tmp_path / "new-report")]
    # a name inside folders that are not there yet makes them too (issue 44: it was refused)
    dialog = FolderDialog(None, "Export", str(tmp_path))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.selectFile(str(tmp_path / "missing" / "deeper"))
    dialog.accept()
    assert dialog.result() == QFileDialog.DialogCode.Accepted and os.path.isdir(tmp_path / "missing" / "deeper")
    # one that cannot be made (inside a file) is refused, saying why
    (tmp_path / "a-file").write_text("")
    dialog = FolderDialog(None, "Export", str(tmp_path))
    dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.selectFile(str(tmp_path / "a-file" / "deeper"))
    dialog.accept()
    assert dialog.result() != QFileDialog.DialogCode.Accepted and dialog.problem.startswith("Cannot make ")


def test_last_folder_per_kind_defaults_to_a_reports_folder_in_home(home, settings, tmp_path):
    from gui.window.remembered import REPORTS_FOLDER_NAME, LastFolders

    folders = LastFolders(settings)
    reports = home / REPORTS_FOLDER_NAME
    assert folders.get("report") == str(home) and not reports.exists()  # reading makes nothing
    assert folders.get("export", writing=True) == str(reports) and reports.is_dir()
    assert folders.get("report") == str(reports)
    mine = tmp_path / "mine"
    mine.mkdir()
    folders.remember("model", str(mine / "model.py"))
    assert folders.get("model") == str(mine) and folders.get("report") == str(reports)  # per kind
    # what was just exported is what is opened next (issue 44: the dialogs started elsewhere)
    folders.remember("export", str(mine / "report.json"))
    assert folders.get("export") == str(mine) and folders.get("report") == str(mine)
    folders.remember("report", str(reports / "report.json"))
    assert folders.get("export") == str(mine)  # reading does not move where to write
    mine.rmdir()
    assert folders.get("export") == str(reports)  # a folder gone: the default again
    reports.rmdir()
    assert folders.new_zoo_folder() == str(reports / "zoo") and not reports.exists()  # made by the zoo, not here
    (reports / "zoo").mkdir(parents=True)
    assert folders.new_zoo_folder() == str(reports / "zoo-2")  # never an earlier zoo's folder
    assert os.getcwd() not in (folders.get("zoo"), folders.get("model"))


def test_dialogs_start_in_the_remembered_folder_and_say_what_they_ask(window, home, tmp_path, monkeypatch):
    from gui.window.compare_dialog import compare_with_report
    from gui.window.remembered import REPORTS_FOLDER_NAME
    from gui.window.zoo_run_dialog import ZooRunDialog

    reports = home / REPORTS_FOLDER_NAME
    window.session.load([fake_result("a")], {})
    asked = []

    def ask_folder(parent, title, start):
        asked.append((title, start))
        return str(tmp_path / f"export{len(asked)}")

    monkeypatch.setattr("gui.window.file_actions.ask_folder", ask_folder)
    assert window.export_csv() and asked == [("Export report into folder", str(reports))]
    assert window.export_csv() and asked[1] == ("Export report into folder", str(tmp_path / "export1"))

    write_report([fake_result("b")], str(tmp_path / "base"), {})
    opened = []

    def ask_report(parent, title, start):
        opened.append((title, start))
        return str(tmp_path / "base")  # a report folder

    monkeypatch.setattr("gui.window.report_opening.ask_report", ask_report)
    compare = compare_with_report(window)  # where the report was just exported
    assert compare is not None and opened == [("Compare with a baseline report", str(tmp_path / "export2"))]
    compare.close()
    assert window.open_session() and opened[1] == ("Open session", str(tmp_path / "base"))  # the last report's

    dialog = ZooRunDialog(window)
    dialog.deleteLater()
    assert dialog.folder.text() == str(reports / "zoo")


def test_the_report_dialog_chooses_a_report_folder_as_well_as_a_report_json(qtbot, tmp_path):
    """Issue 44: Compare with report… could not pick a report folder (Open went into it)."""
    from gui.window.report_opening import ReportDialog

    write_report([fake_result("b")], str(tmp_path / "base"), {})
    (tmp_path / "plain").mkdir()
    dialog = ReportDialog(None, "Compare with a baseline report", str(tmp_path))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.selectFile(str(tmp_path / "plain"))  # a folder without a report: Open goes into it
    dialog.accept()
    assert dialog.result() != QFileDialog.DialogCode.Accepted and dialog.chosen == ""
    dialog.setDirectory(str(tmp_path))
    dialog.selectFile(str(tmp_path / "base"))
    dialog.accept()
    assert dialog.result() == QFileDialog.DialogCode.Accepted and dialog.chosen == str(tmp_path / "base")
    dialog = ReportDialog(None, "Open session", str(tmp_path / "base"))
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.selectFile(str(tmp_path / "base" / "report.json"))
    dialog.accept()
    assert dialog.result() == QFileDialog.DialogCode.Accepted and dialog.chosen == str(
        tmp_path / "base" / "report.json"
    )


def test_the_first_window_fits_the_screen(qtbot, settings):
    """Issue 44's trial: on a 1366x768 screen the first launch's 1400x900 window reached past
    the screen's bottom, the queue, Run and the status bar out of sight."""
    from PySide6.QtCore import QSize

    from gui.window.main_window import MainWindow
    from gui.window.settings import DEFAULT_SIZE, FRAME_PX, fit_to_screen, fitted_size

    assert (
        fitted_size(DEFAULT_SIZE, QSize(1920, 1080)) == DEFAULT_SIZE and fitted_size(DEFAULT_SIZE, None) == DEFAULT_SIZE
    )
    width, height = fitted_size(DEFAULT_SIZE, QSize(1366, 768))
    assert width + FRAME_PX[0] <= 1366 and height + FRAME_PX[1] <= 768 and height >= 700
    window = MainWindow(settings)
    qtbot.addWidget(window)
    fit_to_screen(window)  # as the app's launch does
    room = window.screen().availableGeometry().size()
    minimum = window.minimumSizeHint()
    assert window.width() <= max(room.width() - FRAME_PX[0], minimum.width())
    assert window.height() <= max(room.height() - FRAME_PX[1], minimum.height())
