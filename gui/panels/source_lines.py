"""The Time breakdown's "By source line" view: each line of the model's code with its time per
call eager and compiled (core.measure.line_profile's LineTime rows of the op profile).

A sortable table of every line with time (file:line, source, eager, compiled, change, kernels)
beside the source of the chosen file with the times in a margin; lines that got slower compiled
(core.report.source_view.got_slower) are drawn in the theme's warning colour, graph-break lines
marked; what the lines account for on each side and the profile's note above. Clicking a line
shows its kernels below. A source file is read only as core.report.source_view allows (the
file the report profiled, unchanged), else the lines the report recorded are shown. Report
text is shown as plain text. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.report.source_view import accounted_text, got_slower, line_files, source_file
from core.vocab.formatting import ms_fixed
from core.vocab.source_paths import display_path
from gui.widgets.safe_text import plain, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import warning_color

NO_LINES = (
    "No time per source line for this config: the job ran no op profile, or its report was made before "
    "the profiler timed source lines."
)
BREAK_MARK = "break"
SLOWER_MARK = "slower"


def _change(t) -> str:
    lost = t.lost_ms
    return "–" if lost is None else f"{lost:+.3f}"


def _mark(t) -> str:
    marks = [BREAK_MARK] if t.graph_break else []
    if got_slower(t):
        marks.append(SLOWER_MARK)
    return ", ".join(marks)


def _slower_brush() -> QBrush:
    return QBrush(QColor(warning_color()))


class LinesModel(RowTableModel):
    """Rows: the LineTime of every line with time, of one config. GUI thread."""

    HEADERS = (
        ("Line", "The file and line (library code is folded under the line of yours that called it)"),
        ("Source", "The line's code as the profiled run read it"),
        ("Eager\nms / call", "The torch calls made from this line in an eager call"),
        ("Compiled\nms / call", "The compiled kernels charged to this line (a fused kernel shared among its lines)"),
        ("Change\nms / call", "Compiled − eager: positive is slower compiled"),
        (
            "Mark",
            "break: a graph break's line (the eager code between the graphs it splits is charged here); slower: lost time compiled",
        ),
        ("Kernels", "The kernels charged to this line"),
    )
    CHANGE_COLUMN = 4

    def set_lines(self, lines) -> None:
        self.beginResetModel()
        self._rows = list(lines)
        self.endResetModel()

    def line_at(self, row: int):
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        t = self._rows[index.row()]
        column = index.column()
        if role == Qt.ItemDataRole.UserRole:  # sort keys
            return (
                (t.file, t.line),
                t.source,
                t.eager_ms,
                -1e9 if t.compiled_ms is None else t.compiled_ms,
                -1e9 if t.lost_ms is None else t.lost_ms,
                _mark(t),
                len(t.kernels),
            )[column]
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                f"{display_path(t.file)}:{t.line}",
                t.source,
                ms_fixed(t.eager_ms),
                ms_fixed(t.compiled_ms),
                _change(t),
                _mark(t),
                ", ".join(t.kernels),
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == 0:
                return tooltip(f"{t.file}:{t.line}")
            if column == 6 and t.kernels:
                return tooltip("\n".join(t.kernels))
            return self.HEADERS[column][1]
        if role == Qt.ItemDataRole.ForegroundRole and got_slower(t) and column in (0, 3, 4, 5):
            return _slower_brush()
        if role == Qt.ItemDataRole.TextAlignmentRole and 2 <= column <= 4:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


class SourceModel(RowTableModel):
    """Rows: core.report.source_view.SourceRow of one file, the times in the first columns (the
    margin). GUI thread."""

    HEADERS = (
        ("Eager", "ms per eager call spent on this line"),
        ("Compiled", "ms per compiled call charged to this line"),
        ("", "graph break (◆) or slower compiled (▲)"),
        ("#", "Line number"),
        ("Source", "The file's code"),
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self._font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self._bold = QFont(self._font)
        self._bold.setBold(True)

    def set_file(self, source) -> None:
        self.beginResetModel()
        self._rows = list(source.rows) if source is not None else []
        self.endResetModel()

    def row_of(self, line: int) -> int:
        return next((i for i, r in enumerate(self._rows) if r.number == line), -1)

    def row_at(self, row: int):
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        r = self._rows[index.row()]
        t, column = r.times, index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            if column == 0:
                return ms_fixed(t.eager_ms) if t else ""
            if column == 1:
                return (ms_fixed(t.compiled_ms) if t.compiled_ms is not None else "–") if t else ""
            if column == 2:
                return ("◆" if t.graph_break else "") + ("▲" if got_slower(t) else "") if t else ""
            return str(r.number) if column == 3 else r.text.expandtabs(4)
        if role == Qt.ItemDataRole.FontRole:
            return self._bold if (t is not None and column == 4) else self._font
        if role == Qt.ItemDataRole.ForegroundRole and t is not None and got_slower(t) and column != 3:
            return _slower_brush()
        if role == Qt.ItemDataRole.ForegroundRole and column == 3:
            return QBrush(QColor("#808080"))
        if role == Qt.ItemDataRole.TextAlignmentRole and column <= 3:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole and t is not None:
            marks = _mark(t)
            kernels = "\n".join(t.kernels) or "no kernels"
            return tooltip(f"{display_path(t.file)}:{t.line}{' (' + marks + ')' if marks else ''}\n{kernels}")
        return None


class SourceLinesView(QWidget):
    """The "By source line" view of one config's op profile. GUI thread only."""

    sig_graph_requested = Signal(str, str)
    """Show this config's graph in the Graphs tab: (config label, graph id) of the chosen
    line's first kernel."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._lines: tuple = ()
        self.accounted = plain(QLabel(NO_LINES))
        self.accounted.setWordWrap(True)
        self.accounted.setToolTip("What the lines hold of each side's profiled call, and what is on no line")
        self.lines_model = LinesModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.lines_model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.lines_table = make_table(
            self.proxy, "Every line with time; click a header to sort, a line to see its source", stretch_last=False
        )
        self.lines_table.setSortingEnabled(True)
        self.lines_table.sortByColumn(LinesModel.CHANGE_COLUMN, Qt.SortOrder.DescendingOrder)
        header = self.lines_table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(1, 240)
        header.setSectionResizeMode(6, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(6, 200)
        self.lines_table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.lines_table.selectionModel().currentRowChanged.connect(self._on_line_chosen)

        self.file_box = QComboBox()
        self.file_box.setToolTip("The source file shown (the one with most time first)")
        self.file_box.currentIndexChanged.connect(self._on_file_chosen)
        self.source_note = plain(QLabel(""))
        self.source_note.setWordWrap(True)
        self.source_model = SourceModel(self)
        self.source_table = make_table(
            self.source_model, "The file's source with each line's ms per call in the margin", stretch_last=True
        )
        self.source_table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 2)
        self.source_table.setAlternatingRowColors(False)
        self.source_table.selectionModel().currentRowChanged.connect(self._on_source_row_chosen)
        self.detail = plain(QLabel("Click a line to see the kernels charged to it."))
        self.detail.setWordWrap(True)
        self.detail.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        source_side = QWidget()
        source_layout = QVBoxLayout(source_side)
        source_layout.setContentsMargins(0, 0, 0, 0)
        files = QHBoxLayout()
        files.addWidget(QLabel("File:"))
        files.addWidget(self.file_box, 1)
        source_layout.addLayout(files)
        source_layout.addWidget(self.source_note)
        source_layout.addWidget(self.source_table, 1)
        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.lines_table)
        self.splitter.addWidget(source_side)
        self.splitter.setStretchFactor(0, 1)
        self.splitter.setStretchFactor(1, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.accounted)
        layout.addWidget(self.splitter, 1)
        self.graph_button = QPushButton("Show its graph")
        self.graph_button.setToolTip("Open the Graphs tab at the graph of the chosen line's first kernel")
        self.graph_button.clicked.connect(self._on_graph_clicked)
        self.graph_button.setEnabled(False)
        self._label, self._graph = "", ""
        bottom = QHBoxLayout()
        bottom.addWidget(self.detail, 1)
        bottom.addWidget(self.graph_button, 0, Qt.AlignmentFlag.AlignTop)
        layout.addLayout(bottom)

    def set_result(self, result) -> None:
        """Show `result`'s lines (None or a result without lines: say why there are none)."""
        profile = result.op_profile if result is not None else None
        self._lines = profile.lines if profile is not None else ()
        self._label, self._graph = (result.config.label if result is not None else ""), ""
        self.graph_button.setEnabled(False)
        self.lines_model.set_lines(self._lines)
        self.accounted.setText(accounted_text(profile) or NO_LINES)
        self.file_box.blockSignals(True)
        self.file_box.clear()
        for f in line_files(profile):
            self.file_box.addItem(display_path(f), f)
            self.file_box.setItemData(self.file_box.count() - 1, f, Qt.ItemDataRole.ToolTipRole)
        self.file_box.blockSignals(False)
        self._on_file_chosen()
        self.detail.setText("Click a line to see the kernels charged to it." if self._lines else "")

    def current_file(self) -> str:
        return self.file_box.currentData() or ""

    def _on_file_chosen(self, _=None) -> None:
        file = self.current_file()
        source = source_file(file, self._lines) if file else None
        self.source_model.set_file(source)
        self.source_note.setText(source.note if source is not None else "")
        self.source_note.setVisible(bool(source is not None and source.note))
        self.source_table.resizeColumnsToContents()
        first = next((i for i, r in enumerate(source.rows) if r.times is not None), -1) if source else -1
        if first >= 0:  # the first line with time, near the top
            self.source_table.scrollTo(self.source_model.index(first, 4), self.source_table.ScrollHint.PositionAtTop)

    def show_line(self, file: str, line: int) -> bool:
        """Choose `file` and scroll its source to `line`; False when the view has no such line."""
        index = self.file_box.findData(file)
        if index < 0:
            return False
        if index != self.file_box.currentIndex():
            self.file_box.setCurrentIndex(index)
        row = self.source_model.row_of(line)
        if row < 0:
            return False
        target = self.source_model.index(row, 4)
        self.source_table.scrollTo(target, self.source_table.ScrollHint.PositionAtCenter)
        self.source_table.selectionModel().blockSignals(True)
        self.source_table.selectRow(row)
        self.source_table.selectionModel().blockSignals(False)
        return True

    def _describe(self, t) -> None:
        graphs = [k.rsplit(" [", 1)[1][:-1] for k in t.kernels if k.endswith("]") and " [" in k]
        self._graph = graphs[0] if graphs else ""
        self.graph_button.setEnabled(bool(self._graph))
        self.graph_button.setText(f"Show graph {self._graph}" if self._graph else "Show its graph")
        marks = _mark(t)
        kernels = ", ".join(t.kernels) if t.kernels else "none (no kernel of the compiled code was charged here)"
        self.detail.setText(
            f"{display_path(t.file)}:{t.line}{' (' + marks + ')' if marks else ''}: eager {ms_fixed(t.eager_ms)} ms, "
            f"compiled {ms_fixed(t.compiled_ms)} ms per call. Kernels: {kernels}."
        )

    def _on_line_chosen(self, current: QModelIndex, _previous=None) -> None:
        t = self.lines_model.line_at(self.proxy.mapToSource(current).row()) if current.isValid() else None
        if t is not None:
            self._describe(t)
            self.show_line(t.file, t.line)

    def _on_source_row_chosen(self, current: QModelIndex, _previous=None) -> None:
        r = self.source_model.row_at(current.row()) if current.isValid() else None
        if r is not None and r.times is not None:
            self._describe(r.times)

    def _on_graph_clicked(self) -> None:
        if self._label and self._graph:
            self.sig_graph_requested.emit(self._label, self._graph)
