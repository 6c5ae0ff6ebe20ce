"""The notice before running a Python model file for the first time.

A model file is a Python program: profiling it runs it, with this user's rights. The first
time a given file content is opened, the app says so and asks; the answer is remembered
per SHA-256 of the content (QSettings), so an edited file asks again. GUI thread only.
"""

from __future__ import annotations

import hashlib
import os

from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QMessageBox, QWidget

from gui.widgets.safe_text import markup

SETTINGS_KEY = "trust/python_file_hashes"
MAX_REMEMBERED = 500


def file_hash(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


def _known(settings: QSettings) -> list[str]:
    value = settings.value(SETTINGS_KEY, [])
    if isinstance(value, str):
        value = [value]
    return list(value or [])


def needs_notice(settings: QSettings, path: str) -> bool:
    """True for a .py file whose current content was never accepted."""
    if not path.endswith(".py"):
        return False
    try:
        return file_hash(path) not in _known(settings)
    except OSError:
        return False  # unreadable: the job reports the error


def remember(settings: QSettings, path: str) -> None:
    try:
        digest = file_hash(path)
    except OSError:
        return
    known = [h for h in _known(settings) if h != digest] + [digest]
    settings.setValue(SETTINGS_KEY, known[-MAX_REMEMBERED:])


def confirm_python_file(parent: QWidget, settings: QSettings, path: str) -> bool:
    """Ask before the first run of a Python file's content; True when it may run."""
    if not needs_notice(settings, path):
        return True
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning)
    box.setWindowTitle("Run code from this file?")
    box.setTextFormat(Qt.TextFormat.RichText)  # our markup; the file's name inside is escaped
    box.setText(
        f"<b>{markup(os.path.basename(path))}</b> is a Python program. Profiling it runs it on this "
        "machine, with your permissions: it can read, change or delete your files."
    )
    box.setInformativeText(
        f"<p>{markup(path)}</p><p>Only continue if you trust where this file came from. You will "
        "be asked again if its content changes.</p>"
    )
    run = box.addButton("Trust and use", QMessageBox.ButtonRole.AcceptRole)
    box.addButton(QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.exec()
    if box.clickedButton() is run:
        remember(settings, path)
        return True
    return False


RUN, RUN_WITHOUT, CANCEL = "run", "run without", "cancel"


def config_notice_box(parent: QWidget, origin: str, to_run: str, risky: list) -> QMessageBox:
    """The question before a config read from a file runs (see confirm_config_from_file); built
    apart so that a test can read it without a modal loop."""
    box = QMessageBox(parent)
    box.setIcon(QMessageBox.Icon.Warning if risky else QMessageBox.Icon.Question)
    box.setWindowTitle("Run this config from a report?")
    box.setTextFormat(Qt.TextFormat.RichText)
    where = markup(os.path.basename(origin) or "a report")
    if risky:
        items = "".join(
            f"<li><tt>{markup(r.key)} = {markup(repr(r.value))}</tt> ({markup(r.table)}): {markup(r.why)}</li>"
            for r in risky
        )
        box.setText(
            f"This config comes from <b>{where}</b>, and some of its settings could make torch run a "
            f"program, read or write a path, or run code:<ul>{items}</ul>Run them only if you trust "
            "where the report came from."
        )
    else:
        box.setText(f"This config comes from <b>{where}</b>. It will run as shown below.")
    box.setInformativeText(f"<p>{markup(origin)}</p><p>What will run:</p><pre>{markup(to_run)}</pre>")
    box.setProperty("to_run", to_run)
    box.addButton(QMessageBox.StandardButton.Cancel)
    if risky:
        box.addButton("Run without them", QMessageBox.ButtonRole.AcceptRole).setObjectName(RUN_WITHOUT)
        box.addButton("Run with them", QMessageBox.ButtonRole.DestructiveRole).setObjectName(RUN)
    else:
        box.addButton("Run", QMessageBox.ButtonRole.AcceptRole).setObjectName(RUN)
    box.setDefaultButton(QMessageBox.StandardButton.Cancel)
    box.setEscapeButton(QMessageBox.StandardButton.Cancel)
    return box


def confirm_config_from_file(parent: QWidget, origin: str, to_run: str, risky: list) -> str:
    """Ask before running a config read from a report file (`origin`), showing every setting
    that will run (`to_run`, core.report.safety.describe_config) and the risky ones
    (core.report.safety.risky_settings). RUN, RUN_WITHOUT (the risky settings left out) or CANCEL,
    the default."""
    box = config_notice_box(parent, origin, to_run, risky)
    box.exec()
    clicked = box.clickedButton()
    return clicked.objectName() if clicked is not None and clicked.objectName() in (RUN, RUN_WITHOUT) else CANCEL
