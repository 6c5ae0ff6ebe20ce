"""Graphs: what the compiler made. Pick a config and one of its graphs (its id as torch names
it, frame/compile: "0/0"; "0/1" is frame 0 recompiled, shown with the guard failure that
made it) and see its readable FX code, its guards and, for inductor, the output code it
generated, with Python syntax highlighting; the config's compile log opens from here.

The graphs are `JobResult.graphs` (core's CompiledGraph); their texts are read by core
(core.report.artifact_views.graph_texts) from the session's own artifacts folder, the path rebuilt
from the config label and the graph id: never a path the report names. Every text is shown
as plain text or escaped. The graph-breaks tab jumps here (`show_graph`). GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QBrush, QColor, QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.report.artifact_views import GraphTexts, graph_texts
from core.report.tlparse import tlparse_job
from core.vocab.source_paths import display_path
from gui.panels.compile_log import CompileLogDialog
from gui.widgets.config_picker import ConfigPicker
from gui.widgets.open_path import OpenedPath
from gui.widgets.python_highlighter import PythonHighlighter
from gui.widgets.safe_text import markup, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import error_color
from gui.widgets.view import ResultsView

# What a graph costs first (its time a call, its compile), then what it is made of: in a narrow
# pane those are the columns in sight without scrolling.
COLUMNS = (
    ("Graph", "The graph's id as torch names it: frame/compile (0/1 is frame 0 recompiled)"),
    ("Function", "The compiled frame: function (file:line)"),
    ("ms / call", "Time inside this graph per compiled call (op profile)"),
    ("Compile s", "The frame's compile time"),
    ("Ops", "Operations in the graph (torch's count)"),
    ("Guards", "Conditions torch checks before reusing the graph"),
    ("Runs / call", "How many times a compiled call runs this graph (a recompiled graph: which variant ran)"),
    ("Guards ms", "Per compiled call: dynamo's guard checks (cache lookup) that chose this graph"),
    (
        "Wrappers ms",
        "Per compiled call: the runtime wrappers' own time around this graph (AOT prologue, pre-graph bytecode)",
    ),
    ("Recompiled because", "The guard failure that made this graph (empty for a first compile)"),
)
REASON_COLUMN = len(COLUMNS) - 1
NO_GRAPH = "Select a graph to see its code, guards and generated code."


def _graph_key(graph: str):
    """'1/10' sorts after '1/9': frame, then compile, as numbers."""
    parts = graph.split("/")
    try:
        return tuple(int(p.split("_")[0]) for p in parts)
    except ValueError:
        return (graph,)


class GraphModel(RowTableModel):
    """Rows: (CompiledGraph, GraphTime or None) of one config. GUI thread only."""

    HEADERS = COLUMNS

    def set_result(self, result) -> None:
        self.beginResetModel()
        graphs = sorted(result.graphs, key=lambda g: _graph_key(g.graph)) if result is not None else []
        self._rows = [(g, result.graph_time(g.graph)) for g in graphs]
        self.endResetModel()

    def graph(self, row: int):
        return self._rows[row][0]

    def row_of(self, graph: str) -> int:
        return next((i for i, (g, _) in enumerate(self._rows) if g.graph == graph), -1)

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        g, t = self._rows[index.row()]
        column = index.column()
        ms = t.ms_per_call if t is not None else None
        runs = t.calls_per_call if t is not None else None
        guard = t.guard_ms_per_call if t is not None else None
        wrap = t.wrapper_ms_per_call if t is not None else None
        if role == Qt.ItemDataRole.UserRole:
            return (
                _graph_key(g.graph),
                g.function,
                -1.0 if ms is None else ms,
                g.compile_s,
                g.ops,
                g.guards,
                -1.0 if runs is None else runs,
                -1.0 if guard is None else guard,
                -1.0 if wrap is None else wrap,
                g.recompile_reason,
            )[column]
        if role == Qt.ItemDataRole.DisplayRole:
            return (
                g.graph,
                g.function,
                "–" if ms is None else f"{ms:.3f}",
                f"{g.compile_s:.2f}",
                str(g.ops),
                str(g.guards),
                "–" if runs is None else f"{runs:g}",
                "–" if guard is None else f"{guard:.3f}",
                "–" if wrap is None else f"{wrap:.3f}",
                g.recompile_reason.splitlines()[0] if g.recompile_reason else "",
            )[column]
        if role == Qt.ItemDataRole.ToolTipRole:
            if column == REASON_COLUMN and g.recompile_reason:
                return tooltip(g.recompile_reason)
            if column == 1 and g.function:
                return tooltip(g.function)
            return COLUMNS[column][1]
        if role == Qt.ItemDataRole.ForegroundRole and column == REASON_COLUMN:
            return QBrush(QColor(error_color()))
        if role == Qt.ItemDataRole.TextAlignmentRole and 2 <= column < REASON_COLUMN:  # the figures
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None


def kernel_lines_text(g, result) -> str:
    """The graph's kernels, one a line, each with the source lines its time was charged to
    (core.measure.line_profile: `lines.csv`), when the op profile timed them."""
    lines_of: dict[str, list[str]] = {}
    profile = result.op_profile if result is not None else None
    for t in profile.lines if profile is not None else ():
        for k in t.kernels:
            lines_of.setdefault(k, []).append(f"{display_path(t.file)}:{t.line}")
    out = []
    for kernel in g.kernels:
        where = lines_of.get(f"{kernel} [{g.graph}]")
        out.append(f"{kernel}    ← {', '.join(where)}" if where else kernel)
    extern = sorted(k for k in lines_of if k.startswith("extern_kernels.") and k.endswith(f" [{g.graph}]"))
    for k in extern:  # calls into aten inside the graph (no kernel of inductor's own)
        out.append(f"{k[: -len(f' [{g.graph}]')]}    ← {', '.join(lines_of[k])}")
    return "\n".join(out)


def graph_info_html(g) -> str:
    """The header above a graph's texts: every report text escaped. Short on purpose: the
    inputs and kernels (a hundred on a real model) have tabs of their own beside the code."""
    counts = [f"{g.ops} ops", f"{g.guards} guards", f"compiled in {g.compile_s:.2f} s"]
    if g.inputs:
        counts.append(f"{len(g.inputs)} inputs")
    if g.kernels:
        counts.append(f"{len(g.kernels)} generated kernels")
    parts = [f"<b>Graph {markup(g.graph)}</b> — {markup(g.function or '?')}", " · ".join(counts)]
    top = sorted(g.stages, key=lambda t: -t.seconds)[:3]
    if top:  # where its compile went, exclusive, the three longest stages
        parts.append("compile: " + ", ".join(f"{markup(t.stage)} {t.seconds:.2f} s" for t in top))
    if g.recompile_reason:
        parts.append(
            f"<span style='color:{error_color()}'>Recompiled because: " + markup(g.recompile_reason) + "</span>"
        )
    return "<br>".join(parts)


def _code_view(tip: str, highlight: bool) -> QPlainTextEdit:
    view = QPlainTextEdit()
    view.setReadOnly(True)
    view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    font = QFont("monospace")
    font.setStyleHint(QFont.StyleHint.Monospace)
    view.setFont(font)
    view.setToolTip(tip)
    if highlight:
        view.highlighter = PythonHighlighter(view.document())
    return view


class GraphsPanel(QWidget, ResultsView):
    """GUI thread only."""

    refresh_when_shown = True  # ~50-70 ms a refresh with resnet18's graphs

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the code views are left to `construction_steps()`, which the caller runs
        (gui.window.view_slot: one per event-loop turn after the window's show); else they are
        made here."""
        super().__init__(parent)
        self._session = None
        self.picker = ConfigPicker("The config whose graphs are shown")
        self.picker.sig_config_chosen.connect(self._on_config_chosen)
        self.log_button = QPushButton("Compile log…")
        self.log_button.setToolTip(
            "torch's compile log of this config (compile_log/<config>.log), with a search "
            "and a level filter; more detail with --compile-log on the command line"
        )
        self.log_button.clicked.connect(self.open_compile_log)
        self.tlparse_button = QPushButton("Open in tlparse")
        self.tlparse_button.setToolTip(
            "tlparse's HTML report of this config's structured trace (torch_trace/), "
            "made with the tlparse package and opened in your browser"
        )
        self.tlparse_button.clicked.connect(self.open_tlparse)
        self.header = QLabel("")
        self.header.setTextFormat(Qt.TextFormat.PlainText)
        self.header.setWordWrap(True)
        top = QHBoxLayout()
        top.addWidget(QLabel("Config:"))
        top.addWidget(self.picker)
        top.addWidget(self.header, 1)
        top.addWidget(self.log_button)
        top.addWidget(self.tlparse_button)
        self.opened = OpenedPath()  # where tlparse's report is, opened or not

        self.model = GraphModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(Qt.ItemDataRole.UserRole)
        self.table = make_table(self.proxy, "The graphs torch compiled for this config; select one", stretch_last=True)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Interactive)
        header.resizeSection(1, self.table.fontMetrics().horizontalAdvance("…forward_at_15") + 16)
        self.table.setTextElideMode(Qt.TextElideMode.ElideLeft)
        self.table.selectionModel().currentRowChanged.connect(self._on_current_changed)

        self.info = QLabel(NO_GRAPH)
        self.info.setTextFormat(Qt.TextFormat.RichText)  # our markup; report text inside is escaped
        self.info.setWordWrap(True)
        self.info.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # The header scrolls (a long guard failure) and a splitter gives the code its room:
        # the code views get the space, the user moves the line.
        info_scroll = QScrollArea()
        info_scroll.setWidget(self.info)
        info_scroll.setWidgetResizable(True)
        info_scroll.setFrameShape(QFrame.Shape.NoFrame)
        info_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        info_scroll.setMinimumHeight(self.info.fontMetrics().lineSpacing() * 2 + 8)
        self.info_scroll = info_scroll
        self.right_splitter = QSplitter(Qt.Orientation.Vertical)
        self.right_splitter.addWidget(info_scroll)
        self.right_splitter.setChildrenCollapsible(False)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(self.table)
        self.splitter.addWidget(self.right_splitter)
        self.splitter.setStretchFactor(0, 2)
        self.splitter.setStretchFactor(1, 3)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.opened)
        layout.addWidget(self.splitter, 1)
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The code views in two steps (the first use of the monospace font and the highlighter
        is ~12 ms here), then the config's graphs: built in one turn, the panel held the GUI
        thread 17-31 ms at launch."""
        return [self._add_code_views, self._add_more_code_views, self._finish]

    def _add_code_views(self) -> None:
        self.code = _code_view("The graph's readable FX code, as torch prints it (input shapes in the signature)", True)
        self.guards = _code_view(
            "The guards: what torch checks before reusing this graph; a failing one recompiles", False
        )

    def _add_more_code_views(self) -> None:
        self.output_code = _code_view(
            "The module inductor generated for this graph (C++ on the CPU, Triton on the GPU)", True
        )
        self.inputs = _code_view("The graph's inputs: parameters, buffers and the tensors it takes, one a line", False)
        self.kernels = _code_view("The kernels inductor generated for this graph, one a line", False)
        self.texts = QTabWidget()
        self.texts.addTab(self.code, "FX graph")
        self.texts.addTab(self.guards, "Guards")
        self.texts.addTab(self.output_code, "Output code")
        self.texts.addTab(self.inputs, "Inputs")
        self.texts.addTab(self.kernels, "Kernels")
        self.right_splitter.addWidget(self.texts)
        self.right_splitter.setStretchFactor(0, 0)
        self.right_splitter.setStretchFactor(1, 1)
        self.right_splitter.setSizes([self.info.fontMetrics().lineSpacing() * 3 + 12, 10_000])

    def _finish(self) -> None:
        self._show_texts(None)
        self._on_config_chosen()

    # ---------------------------------------------------------------- view protocol
    def bind(self, session) -> None:
        super().bind(session)
        self._session = session

    @property
    def artifacts_dir(self) -> str:
        return self._session.artifacts_dir if self._session is not None else ""

    def show_results(self, results: list) -> None:
        self.picker.set_results(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        current = self.picker.current()
        if ended or (current is not None and current.job_id == job_id and len(current.graphs) != self.model.rowCount()):
            selected = self.selected_graph()
            self.picker.set_results(results)
            if selected is not None:
                self.select_graph(selected.graph)

    # ---------------------------------------------------------------- navigation
    def show_graph(self, label: str, graph: str) -> bool:
        """Show graph `graph` of the config called `label` (the graph-breaks tab jumps here);
        False when there is no such graph."""
        self.make_owed_refreshes()  # asked while hidden: the graphs of a run that just ended
        if not self.picker.choose(label):
            return False
        return self.select_graph(graph)

    def select_graph(self, graph: str) -> bool:
        row = self.model.row_of(graph)
        if row < 0:
            return False
        index = self.proxy.mapFromSource(self.model.index(row, 0))
        self.table.setCurrentIndex(index)
        self.table.scrollTo(index)
        return True

    def selected_graph(self):
        index = self.table.currentIndex()
        return self.model.graph(self.proxy.mapToSource(index).row()) if index.isValid() else None

    def open_compile_log(self) -> CompileLogDialog | None:
        result = self.picker.current()
        if result is None:
            return None
        dialog = CompileLogDialog(self.artifacts_dir, result.config.label, self)
        dialog.show()
        return dialog

    def open_tlparse(self) -> str:
        """Make (once) and open tlparse's report of the chosen config; returns its index.html
        path, or "" with the reason shown in the header. The path is shown with Copy, and
        said so when no browser could open it."""
        result = self.picker.current()
        if result is None or not self.artifacts_dir:
            return ""
        index, problem = tlparse_job(self.artifacts_dir, result.config.label)
        if problem:
            self.header.setText(f"tlparse: {problem}")
            return ""
        self.opened.open(index, "tlparse's report", "browser")
        return index

    # ---------------------------------------------------------------- slots
    def _on_config_chosen(self) -> None:
        result = self.picker.current()
        self.model.set_result(result)
        self.log_button.setEnabled(result is not None)
        self.tlparse_button.setEnabled(result is not None)
        if result is None:
            self.header.setText("Run a profile to see the graphs torch compiled.")
        elif not result.graphs:
            self.header.setText(
                "No graph recorded for this config yet."
                if not result.ended
                else "No graph recorded for this config (nothing compiled, or a report without graphs)."
            )
        else:
            recompiled = len([g for g in result.graphs if g.recompile_reason])
            self.header.setText(
                f"{len(result.graphs)} graph(s), {recompiled} from recompiles (hover a row's "
                "reason for the guard that failed)"
            )
        if self.model.rowCount():
            self.table.setCurrentIndex(self.proxy.index(0, 0))
        else:
            self._show_texts(None)

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        self._show_texts(self.model.graph(self.proxy.mapToSource(current).row()) if current.isValid() else None)

    def _show_texts(self, g) -> None:
        result = self.picker.current()
        if g is None or result is None:
            self.info.setText(NO_GRAPH)
            texts = GraphTexts()
        else:
            self.info.setText(graph_info_html(g))
            texts = graph_texts(self.artifacts_dir, result.config.label, g.graph)
        missing = "# Not in this folder: the report was saved without its graphs/ folder." if g is not None else ""
        self.code.setPlainText(texts.code or missing)
        self.guards.setPlainText(texts.guards or missing)
        self.output_code.setPlainText(
            texts.output_code
            or (
                f"# No output code: only inductor generates code (this config's backend is {result.config.backend})."
                if g is not None and result is not None and result.config.backend != "inductor"
                else missing
            )
        )
        self.texts.setTabEnabled(2, bool(texts.output_code) or g is None)
        inputs, kernels = (g.inputs, g.kernels) if g is not None else ((), ())
        self.inputs.setPlainText("\n".join(inputs))
        self.kernels.setPlainText(kernel_lines_text(g, result) if g is not None else "")
        self.texts.setTabText(3, f"Inputs ({len(inputs)})" if g is not None else "Inputs")
        self.texts.setTabText(4, f"Kernels ({len(kernels)})" if g is not None else "Kernels")
        self.texts.setTabEnabled(3, bool(inputs))
        self.texts.setTabEnabled(4, bool(kernels))
