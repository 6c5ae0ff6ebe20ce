"""What the app remembers of the user's files between sessions (QSettings): the recent model
files (`RecentFiles`) and the last folder of each kind of file dialog (`LastFolders`), with the
reports folder in the user's home as every dialog's first start. GUI thread only.
"""

from __future__ import annotations

import os

from gui.widgets.safe_text import tooltip

MAX_RECENT = 10
REPORTS_FOLDER_NAME = "compile-profiler-reports"
# Each kind of file a dialog asks for remembers its own last folder.
FOLDER_KINDS = ("model", "report", "export", "zoo")
# ...and a folder written into is where the next report is read from (Open session, Compare)
ALSO_REMEMBERED = {"export": ("report",)}


def reports_folder() -> str:
    """The default folder for what the app writes: ~/compile-profiler-reports (made when asked)."""
    return os.path.join(os.path.expanduser("~"), REPORTS_FOLDER_NAME)


class LastFolders:
    """The last folder used per kind of file (FOLDER_KINDS) in the settings. A kind never used
    (or whose folder is gone) starts in the reports folder in the user's home when it exists
    or when the dialog writes (it is made then), else in the home folder; never the checkout."""

    def __init__(self, settings):
        self.settings = settings

    def get(self, kind: str, writing: bool = False) -> str:
        last = str(self.settings.value(f"folders/{kind}", "") or "")
        if last and os.path.isdir(last):
            return last
        reports = reports_folder()
        if writing and not os.path.isdir(reports):
            try:
                os.mkdir(reports)
            except OSError:
                return os.path.expanduser("~")
        return reports if os.path.isdir(reports) else os.path.expanduser("~")

    def remember(self, kind: str, path: str) -> None:
        """Remember the folder of `path` (a file) or `path` itself (a folder) for `kind`; an
        export or a saved session also for the reports opened and compared (ALSO_REMEMBERED):
        the report just written is the one to open next."""
        if not path:
            return
        folder = path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path))
        for each in (kind, *ALSO_REMEMBERED.get(kind, ())):
            self.settings.setValue(f"folders/{each}", folder)

    def new_zoo_folder(self) -> str:
        """A zoo folder not there yet beside the last one used, else in the reports folder:
        <folder>/zoo, zoo-2, zoo-3, … Nothing is made here (the zoo makes its folder when it
        starts)."""
        last = str(self.settings.value("folders/zoo", "") or "")
        base = last if last and os.path.isdir(last) else reports_folder()
        name, n = os.path.join(base, "zoo"), 1
        while os.path.lexists(name):
            n += 1
            name = os.path.join(base, f"zoo-{n}")
        return name


class RecentFiles:
    """The recent model files, in the settings, the File menu and the model panel."""

    def __init__(self, settings, model_panel, menu, open_file):
        self.settings, self.model_panel, self.menu, self.open_file = settings, model_panel, menu, open_file
        self.folders = LastFolders(settings)

    def paths(self) -> list[str]:
        value = self.settings.value("recent_files", [])
        return [value] if isinstance(value, str) else list(value or [])

    def add(self, path: str) -> None:
        recent = [path] + [p for p in self.paths() if p != path]
        self.settings.setValue("recent_files", recent[:MAX_RECENT])
        self.folders.remember("model", path)
        self.refresh()

    def remove(self, path: str) -> None:
        self.settings.setValue("recent_files", [p for p in self.paths() if p != path])
        self.refresh()

    def refresh(self) -> None:
        recent = self.paths()
        self.model_panel.set_recent(recent)
        self.menu.clear()
        for path in recent:
            action = self.menu.addAction(os.path.basename(path))
            action.setToolTip(tooltip(path))
            action.triggered.connect(lambda checked=False, p=path: self.open_file(p))
        self.menu.setEnabled(bool(recent))

    def last_folder(self) -> str:
        """Where the model file dialogs start: the last model's folder, else home."""
        last = str(self.settings.value("folders/model", "") or "")
        return last if last and os.path.isdir(last) else os.path.expanduser("~")
