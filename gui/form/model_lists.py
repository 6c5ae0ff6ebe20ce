"""The model panel's lists: the bundled examples (`ExampleModel`) and the torchvision, timm and
Hugging Face names ranked as the user types (`ModelMatches`, `match_rank`: prefix first, then
word starts, then anywhere). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, QStringListModel, Qt

from core.models.examples import Example


class ExampleModel(QAbstractListModel):
    """Rows: the bundled examples (`core.models.examples.Example`). GUI thread only."""

    def __init__(self, examples: list[Example] | None = None, parent=None):
        super().__init__(parent)
        self._examples = list(examples or [])

    def example(self, row: int) -> Example:
        return self._examples[row]

    def row_of(self, source: str) -> int:
        for row, example in enumerate(self._examples):
            if example.source == source:
                return row
        return -1

    def rowCount(self, parent=QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._examples)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        example = self._examples[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return example.name + ("  · shape sweep" if example.sweepable else "")
        if role == Qt.ItemDataRole.ToolTipRole:
            return (
                (example.summary or example.name)
                + "\n\nBundled example: "
                + example.source
                + ("\nDefines get_input_variants(): a shape sweep is possible." if example.sweepable else "")
            )
        if role == Qt.ItemDataRole.UserRole:
            return example.source
        return None


SOURCE_PREFIXES = ("timm:", "hf:")


def search_key(name: str) -> tuple[str, str]:
    """What `match_rank` compares of a name, made once per name: the name, and the name after
    its source ("resnet18" of "timm:resnet18"), both lower case."""
    full = name.lower()
    return full, next((full[len(p) :] for p in SOURCE_PREFIXES if full.startswith(p)), full)


def match_rank(name: str, text: str, key: tuple[str, str] | None = None) -> int | None:
    """How well a model name answers a search (lower is better), None when it does not match:
    0 the exact name, 1 the exact name after its source ("timm:resnet18" for "resnet18"),
    2 a name that starts with the text, 3 one whose name after its source does, 4 one that
    contains it. Case-blind, as the filter. `key`: the name's `search_key`, when made before."""
    text = text.strip().lower()
    if not text:
        return 0
    full, bare = key or search_key(name)
    if full == text:
        return 0
    if bare == text:
        return 1
    if full.startswith(text):
        return 2
    if bare.startswith(text):
        return 3
    return 4 if text in full else None


class ModelMatches(QStringListModel):
    """The model names that match the search, the best match first (`match_rank`), then in
    the catalog's order: ranked in one Python pass over the names whenever the search or the
    names change, and held as a string list, so the list view's layout and paint never call
    back into Python. (A sorting proxy called back into Python for every comparison and every
    row: 17-43 ms of the GUI thread for the 1,866 names, each time the search changed or the
    timm and Hugging Face names arrived; a Python list model, for every row's count and text:
    3,758 calls when the names arrived.) Not edited: the view has no edit triggers.
    GUI thread only."""

    def __init__(self, names: QStringListModel, parent=None):
        super().__init__(parent)
        self._source = names
        self._text = ""
        self._where: dict[int, int] = {}  # source row → row shown
        self._names: list[str] = []
        self._keys: list[tuple[str, str]] | None = None  # each name's search_key, once searched
        names.modelReset.connect(self._rank)
        names.rowsInserted.connect(self._rank)
        names.rowsRemoved.connect(self._rank)
        names.dataChanged.connect(self._rank)
        self._rank()

    def set_search(self, text: str) -> None:
        self._text = text
        self._rank(names_changed=False)

    def _rank(self, *args, names_changed: bool = True) -> None:
        if names_changed:
            self._names = self._source.stringList()
            self._keys = None
        names, text = self._names, self._text
        if self._keys is None and text.strip():  # each name's key made once, at the first search
            self._keys = [search_key(name) for name in names]
        keys = self._keys or [None] * len(names)
        ranked = sorted(
            (rank, row) for row, name in enumerate(names) if (rank := match_rank(name, text, keys[row])) is not None
        )
        self._where = {row: shown for shown, (_, row) in enumerate(ranked)}
        self.setStringList([names[row] for _, row in ranked])

    def mapFromSource(self, source_index) -> QModelIndex:
        """The shown row of a row of the names (invalid when the search hides it)."""
        shown = self._where.get(source_index.row()) if source_index.isValid() else None
        return self.index(shown, 0) if shown is not None else QModelIndex()
