"""Save a picture of the Zoo view over a zoo folder (for the README):

QT_QPA_PLATFORM=offscreen .venv/bin/python -m tests.gui.zoo_screenshot ZOO_DIR OUT.png [ORDER]
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    from PySide6.QtWidgets import QApplication

    from gui import qt_compat

    qt_compat.install()
    app = QApplication.instance() or QApplication([])
    from gui.window.zoo_window import ZooWindow

    class NoMain:  # the picture needs no main window: nothing is clicked
        def show_error(self, title, text):
            print(f"{title}: {text}", file=sys.stderr)

    window = ZooWindow(NoMain())
    if not window.open(argv[0]):
        return 1
    if len(argv) > 2:
        window.panel.order.setCurrentText(argv[2])
    window.resize(820, 440)
    window.show()
    for _ in range(5):
        app.processEvents()
    return 0 if window.grab().save(argv[1]) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
