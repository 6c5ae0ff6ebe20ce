"""A script profiled (`gui.window.script_window`): its compiled functions live as they are called,
then compiled against eager; each function's calls on a chart; the finding; the graph breaks and
recompiles in the main window's own view (gui.panels.graph_breaks, each function a row:
core.analysis.script_breaks); the script's output.

While the script runs, each run's events fold into a core.analysis.script_runs.LiveFold and
the table and chart are redrawn at REDRAW_MS from it (data is never dropped, only redraws are
throttled). At the end the table shows core's FunctionResult rows: speedup with its interval,
verdict, pay-back, breaks and recompiles, every sentence core's. GUI thread only.
"""

from __future__ import annotations

import time

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QFrame,
    QLabel,
    QPlainTextEdit,
    QScrollArea,
    QSplitter,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from core.analysis.script_breaks import function_breaks
from core.analysis.script_results import ScriptResult, summary_lines
from core.analysis.script_runs import LiveFold
from core.capture.compile_watch import STALL_S, stalled_text
from core.vocab.formatting import fmt_ms, speedup_interval
from gui.panels.graph_breaks import GraphBreaksPanel
from gui.widgets.safe_text import plain
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import config_color

REDRAW_MS = 250
RUNNING = {
    "compiled": "Running the script as written…",
    "eager": "Running the script again under set_stance('force_eager'), the eager baseline…",
}
CHART_MIN_HEIGHT = 180  # px: the calls chart's axes, ticks and legend readable
OUTPUT_LINES = 5000  # of the script's output kept on screen (the report keeps its own tail)
CHART_POINTS = 20_000  # a function's calls drawn at most (the last ones), each run


class FunctionsModel(RowTableModel):
    """One row per compiled function: live figures while the script runs, core's verdict after."""

    HEADERS = (
        ("Function", "The compiled function (or module class) and the script's line that compiled it"),
        ("Calls", "Calls as written / in the eager run"),
        ("Steady median", "The median of calls that compiled nothing and met no new input shapes: compiled / eager"),
        ("Speedup", "Eager's steady median over compiled's, with its 95% interval"),
        (
            "Per iteration",
            "The loop's iteration around the calls (from a call's start to the next call's: the backward pass, "
            "the optimizer step and loading data between calls included): its speedup with its 95% interval",
        ),
        ("Verdict", "faster / slower only when the interval and the timing say so; else why not"),
        ("Pay-back", "Whether compiling paid for itself within this run"),
        ("Graph breaks", "Places where the graph broke (skipped frames apart)"),
        ("Recompiles", "Recompiles during the run"),
        ("Compile", "torch's compile time for this function's frames"),
    )

    def __init__(self, parent=None):
        super().__init__(parent)
        self._tooltips: list[dict[int, str]] = []

    def set_rows(self, rows: list[tuple[str, ...]]) -> None:
        self._tooltips = []
        if len(rows) == len(self._rows):
            self._rows = rows
            if rows:
                self.dataChanged.emit(self.index(0, 0), self.index(len(rows) - 1, len(self.HEADERS) - 1))
            return
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def set_tooltips(self, tooltips: list[dict[int, str]]) -> None:
        """Per row, the whole sentence behind a shortened cell (column -> text)."""
        self._tooltips = tooltips

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return self._rows[index.row()][index.column()]
        if role == Qt.ItemDataRole.ToolTipRole:
            row = self._tooltips[index.row()] if index.row() < len(self._tooltips) else {}
            return row.get(index.column(), self._rows[index.row()][index.column()])
        return None


def text_pane(max_lines: int = 0) -> QPlainTextEdit:
    """A read-only monospace pane (a finding, a program's output: `max_lines` kept, 0: all)."""
    pane = QPlainTextEdit()
    pane.setReadOnly(True)
    if max_lines:
        pane.setMaximumBlockCount(max_lines)
    fixed = QFont("monospace")
    fixed.setStyleHint(QFont.StyleHint.TypeWriter)
    pane.setFont(fixed)
    return pane


def result_tabs(finding: QPlainTextEdit, breaks: QWidget, output: QPlainTextEdit, output_title: str) -> QTabWidget:
    """The finding, the graph breaks and recompiles (scrolling: their own minimum height never
    squeezes the chart above), and the program's output, a tab each."""
    page = QScrollArea()
    page.setWidget(breaks)
    page.setWidgetResizable(True)
    page.setFrameShape(QFrame.Shape.NoFrame)
    tabs = QTabWidget()
    tabs.addTab(finding, "Finding")
    tabs.addTab(page, "Graph breaks && recompiles")
    tabs.addTab(output, output_title)
    return tabs


def compile_progress(stage) -> str:
    """ " compiling FRAME [ID]: STAGE (12 s)" for a run's CompilingNow (core.analysis.script_runs),
    past STALL_S the stalled notice naming the stage and the frame; "" when nothing compiles."""
    if stage is None:
        return ""
    took = time.monotonic() - stage.since
    now = stage.text()
    return " " + (stalled_text(now, took) if took >= STALL_S else f"{now} ({took:.0f} s)")


def _median(values: np.ndarray) -> str:
    return fmt_ms(float(np.median(values))) if values.size else "–"


def live_rows(compiled: LiveFold, eager: LiveFold | None) -> list[tuple[str, ...]]:
    rows = []
    other = eager.run.entries if eager is not None else {}
    for key, e in compiled.run.entries.items():
        b = other.get(key)
        breaks = sum(1 for gb in e.graph_breaks if not gb.frame_skipped and not gb.compile_failed)
        rows.append(
            (
                f"{e.name} ({e.where})",
                f"{e.calls or len(e.ms):,}" + (f" / {b.calls or len(b.ms):,}" if b is not None else ""),
                _median(e.steady()) + (f" / {_median(b.steady())}" if b is not None else ""),
                "…",
                "…",
                "running",
                "",
                str(breaks),
                str(len(e.recompiles)),
                f"{e.compile_s:.2f} s",
            )
        )
    return rows


def result_rows(result: ScriptResult) -> list[tuple[str, ...]]:
    rows = []
    for f in result.functions:
        c, e = f.compiled, f.eager
        medians = (fmt_ms(f.compiled_median_ms) if f.compiled_median_ms is not None else "–") + (
            f" / {fmt_ms(f.eager_median_ms)}" if f.eager_median_ms is not None else ""
        )
        rows.append(
            (
                f.label,
                f"{c.calls:,}" + (f" / {e.calls:,}" if e is not None else ""),
                medians,
                f.speedup_text(),
                speedup_interval(f.iteration.speedup) if f.iteration is not None and f.iteration.speedup else "–",
                f.verdict_cell(),
                f.payback_cell(),
                str(sum(1 for gb in c.graph_breaks if not gb.frame_skipped and not gb.compile_failed)),
                str(len(c.recompiles)),
                f"{c.compile_s:.2f} s",
            )
        )
    return rows


class ScriptView(QWidget):
    """The functions table over the calls chart, and the finding and the output in tabs."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.folds: dict[str, LiveFold] = {}
        self._side = ""  # the run going on ("compiled" or "eager"), "" before the first
        self.result: ScriptResult | None = None
        self._dirty = False
        self.model = FunctionsModel(self)
        self.table = make_table(self.model, "The script's compiled functions")
        self.chart = pg.PlotWidget()
        self.chart.setLogMode(y=True)
        self.chart.setLabel("left", "ms a call (log)")
        self.chart.setLabel("bottom", "call")
        self.chart.addLegend(offset=(-10, 10))
        self.chart.setClipToView(True)
        self._curves: dict[tuple[str, tuple], pg.PlotDataItem] = {}
        self.headline = plain(QLabel("Choose a script and press Run."))
        self.headline.setWordWrap(True)
        self.summary, self.output = text_pane(), text_pane(OUTPUT_LINES)
        # the main window's own Graph breaks & compile view, its rows the script's functions
        self.breaks = GraphBreaksPanel()
        self.breaks.show_functions()
        self._breaks_shown: tuple = ()
        self.tabs = result_tabs(self.summary, self.breaks, self.output, "Script output")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.chart)
        split.addWidget(self.tabs)
        self.chart.setMinimumHeight(CHART_MIN_HEIGHT)
        split.setSizes([160, 220, 220])
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(split)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw)

    # ---- a run
    def start(self) -> None:
        """A new profile: everything of the last one cleared."""
        self.folds = {}
        self.result = None
        self.model.set_rows([])
        self.chart.clear()
        self.chart.addLegend(offset=(-10, 10))
        self._curves = {}
        self.summary.clear()
        self.output.clear()
        self._show_breaks([], ended=False)
        self.tabs.setCurrentWidget(self.output)
        self._timer.start()

    def show_report(self, result: ScriptResult) -> None:
        """A saved script report (core.report.script_report): its runs drawn, the tail of the
        script's output each run kept, and core's comparison, as at the end of a run."""
        self.start()
        self._timer.stop()
        for side, run in (("compiled", result.compiled), ("eager", result.eager)):
            if run is None:
                continue
            fold = LiveFold(side)
            fold.run = run
            self.folds[side] = fold
            tail = (run.stdout_tail + run.stderr_tail).strip()
            title = "compiled run (as written)" if side == "compiled" else "eager run (force_eager)"
            self.add_output(side, "", f"───── the {title}: the end of its output as saved ─────\n{tail}\n")
        self.finish(result)

    def run_started(self, side: str) -> None:
        """A run began (a repeated pair's runs replace the live view's earlier ones)."""
        self.folds[side] = LiveFold(side)
        for key in [k for k in self._curves if k[0] == side]:
            self.chart.removeItem(self._curves.pop(key))
        self.add_output(
            side,
            "",
            f"───── the {'compiled run (as written)' if side == 'compiled' else 'eager run (force_eager)'} ─────\n",
        )
        self._side = side
        self._show_running()

    def add_event(self, side: str, event) -> None:
        fold = self.folds.get(side)
        if fold is not None and isinstance(event, dict):
            fold.add(event)
            self._dirty = True

    def add_output(self, side: str, stream: str, text: str) -> None:
        self.output.moveCursor(self.output.textCursor().MoveOperation.End)
        self.output.insertPlainText(text)

    def finish(self, result: ScriptResult | None, error: str = "") -> None:
        """The end: core's comparison shown (or why there is none)."""
        self._timer.stop()
        self._side = ""
        self.result = result
        if result is None:
            self.headline.setText(f"The script could not be profiled: {error}")
            return
        self._dirty = True
        self._redraw()
        self.model.set_rows(result_rows(result))
        self.model.set_tooltips(
            [
                {4: f.iteration_line() or "Not measured", 5: f.verdict_line(), 6: f.payback_line()}
                for f in result.functions
            ]
        )
        self.summary.setPlainText("\n".join(summary_lines(result)))
        self._show_breaks([f.compiled for f in result.functions], ended=True)
        self.headline.setText(result.headline())
        self.tabs.setCurrentWidget(self.summary)

    # ---- drawing
    def _show_breaks(self, entries, ended: bool) -> None:
        """The Graph breaks & recompiles tab, redrawn only when what it shows changed (a redraw
        resets its table: at every live redraw it lost the row the user was reading)."""
        shown = (ended, tuple((e.key, len(e.graph_breaks), len(e.recompiles)) for e in entries))
        if shown != self._breaks_shown:
            self._breaks_shown = shown
            self.breaks.set_results(function_breaks(entries, ended=ended))

    def _show_running(self) -> None:
        """The headline while a run goes on: which run, and what the compiler does now, for how
        long (a stage unchanged for STALL_S is said to be so, naming the stage and the frame)."""
        fold = self.folds.get(self._side)
        text = RUNNING[self._side]
        stage = fold.run.compiling if fold is not None else None
        self.headline.setText(text + compile_progress(stage))

    def _redraw(self) -> None:
        if self.result is None and self._side:
            self._show_running()  # every tick: the stage's seconds go on while nothing arrives
        if not self._dirty:
            return
        self._dirty = False
        compiled = self.folds.get("compiled")
        if compiled is None:
            return
        if self.result is None:
            self.model.set_rows(live_rows(compiled, self.folds.get("eager")))
            self._show_breaks(list(compiled.run.entries.values()), ended=False)
        keys = list(compiled.run.entries)
        for side, fold in self.folds.items():
            for key, entry in fold.run.entries.items():
                if key not in keys:
                    keys.append(key)
                curve = self._curves.get((side, key))
                if curve is None:
                    color = config_color(keys.index(key))
                    pen = pg.mkPen(
                        color, width=1, style=Qt.PenStyle.SolidLine if side == "compiled" else Qt.PenStyle.DashLine
                    )
                    name = f"{entry.name} ({'compiled' if side == 'compiled' else 'eager'})"
                    curve = self._curves[(side, key)] = self.chart.plot([], [], pen=pen, name=name)
                ms = np.asarray(entry.ms[-CHART_POINTS:], dtype=float)
                first = len(entry.ms) - ms.size
                curve.setData(np.arange(first, first + ms.size), np.maximum(ms, 1e-4))
