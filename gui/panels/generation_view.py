"""Text generation profiled (`gui.window.generation_window`): per-token latency live as tokens are
generated, prefill and compiles marked; then each config's figures against eager (time to first
token, per-token decode, tokens/s, compile, recompiles, verdict: core's words and figures); the
finding; the graph breaks and recompiles in the main window's own view; the scripts' output.

The live chart reads the compiled forward's calls from the generation script's events (each
generate() makes exactly `new_tokens` forward calls: the first is the prefill), folded per config
and run by core.analysis.script_runs.LiveFold; redrawn at REDRAW_MS (no data dropped, only
redraws throttled). GUI thread only.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import (
    QLabel,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.analysis.generation_results import fig_median, result_lines
from core.analysis.script_breaks import FunctionBreaks, FunctionLabel
from core.analysis.script_runs import LiveFold
from core.vocab.formatting import fmt_ms, seconds, speedup_interval
from core.vocab.script_job import FLAG_COMPILED
from gui.panels.graph_breaks import GraphBreaksPanel
from gui.panels.script_view import compile_progress, result_tabs, text_pane
from gui.widgets.safe_text import plain
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import config_color, error_color

REDRAW_MS = 250
OUTPUT_LINES = 5000
CHART_POINTS = 20_000  # a run's forward calls drawn at most (the last ones)
CHART_MIN_HEIGHT = 180


class GenerationModel(RowTableModel):
    """One row per config and prompt length, core's figures (summary.csv's) formatted."""

    HEADERS = (
        ("Config", "The cache and the compile config"),
        ("Prompt", "Prompt length in tokens"),
        ("First token", "Time to first token (the prefill): compiled / eager, medians"),
        ("Decode / token", "Per-token decode latency: compiled / eager, medians over every step"),
        ("Decode speedup", "Eager's per-token decode over compiled's, with its 95% interval"),
        ("Tokens/s", "Tokens a second of the median generation, prefill included: compiled / eager"),
        ("Verdict", "faster / slower only when the interval and the timing say so; else why not"),
        ("Compile", "torch's compile time in the compiled run"),
        ("Recompiles", "Recompiles while generating (the dynamic cache grows every step)"),
    )

    def set_rows(self, rows: list[tuple[str, ...]]) -> None:
        self.beginResetModel()
        self._rows = rows
        self.endResetModel()

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            return self._rows[index.row()][index.column()]
        return None


def _pair(compiled: float | None, eager: float | None, fmt) -> str:
    def one(v):
        return "–" if v is None else fmt(v)

    return one(compiled) + (f" / {one(eager)}" if eager is not None else "")


def result_rows(results) -> list[tuple[str, ...]]:
    rows = []
    for r in results:
        for p in r.prompts:
            c, e = p.compiled, p.eager
            rows.append(
                (
                    r.label,
                    str(p.prompt_len),
                    _pair(fig_median(c.ttft_ms), fig_median(e.ttft_ms) if e else None, fmt_ms),
                    _pair(fig_median(c.token_ms), fig_median(e.token_ms) if e else None, fmt_ms),
                    speedup_interval(p.decode),
                    _pair(fig_median(c.tokens_per_s), fig_median(e.tokens_per_s) if e else None, lambda v: f"{v:,.0f}"),
                    p.verdict,
                    seconds(r.compile_s) if r.compile_s else "–",
                    str(len(r.recompiles)),
                )
            )
    return rows


class GenerationView(QWidget):
    """The live per-token chart over the table, and the finding, the breaks and the output in tabs."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.new_tokens = 1
        self.folds: dict[tuple[str, str], LiveFold] = {}
        self.results: list = []
        self._labels: list[str] = []
        self._running: tuple | None = None  # (the run going on, its headline)
        self._dirty = False
        self.headline = plain(QLabel("Choose a Hugging Face causal language model and press Run."))
        self.headline.setWordWrap(True)
        self.model = GenerationModel(self)
        self.table = make_table(self.model, "Each config's generation figures, compiled against eager")
        self.chart = pg.PlotWidget()
        self.chart.setLogMode(y=True)
        self.chart.setLabel("left", "ms a forward call (log)")
        self.chart.setLabel("bottom", "forward call (each generate(): the prefill, then one call a token)")
        self.chart.setMinimumHeight(CHART_MIN_HEIGHT)
        self.chart.setClipToView(True)
        self._items: dict[tuple, object] = {}
        self.summary, self.output = text_pane(), text_pane(OUTPUT_LINES)
        self.breaks = GraphBreaksPanel()
        self.breaks.show_functions()
        self.tabs = result_tabs(self.summary, self.breaks, self.output, "Output")
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.chart)
        split.addWidget(self.table)
        split.addWidget(self.tabs)
        split.setSizes([240, 140, 220])
        layout = QVBoxLayout(self)
        layout.addWidget(self.headline)
        layout.addWidget(split, 1)
        self._timer = QTimer(self)
        self._timer.setInterval(REDRAW_MS)
        self._timer.timeout.connect(self._redraw)

    # ---- a run
    def start(self, new_tokens: int, labels: list[str], keep=()) -> None:
        """A new profile of the configs `labels`, each generate() making `new_tokens` calls;
        `keep`: results of an earlier profile shown on beside the new ones (not charted)."""
        self.new_tokens = max(1, new_tokens)
        self._labels = list(labels)
        self.folds, self.results, self._items = {}, list(keep), {}
        self.chart.clear()
        self.chart.addLegend(offset=(-10, 10), brush=pg.mkBrush(0, 0, 0, 170))  # the curves show through
        self.summary.clear()
        self.output.clear()
        self._show_results()
        self.headline.setText(f"Starting: {len(labels)} config(s), {new_tokens} new tokens each generation…")
        self.tabs.setCurrentWidget(self.output)
        self._timer.start()

    def run_started(self, key) -> None:
        label, side = key
        self.folds[key] = LiveFold(side)
        for item_key in [k for k in self._items if k[:2] == (label, side)]:
            self.chart.removeItem(self._items.pop(item_key))
        what = "as written (compiled)" if side == "compiled" else "under force_eager (the eager baseline)"
        self._running = (key, f"{label}: generating {what}…")
        self._show_running()
        self.add_output(key, "", f"───── {label}, {what} ─────\n")

    def _show_running(self) -> None:
        """The headline while a config runs: which, and what the compiler does now, for how long."""
        if self._running is None:
            return
        key, text = self._running
        fold = self.folds.get(key)
        stage = fold.run.compiling if fold is not None else None
        self.headline.setText(text + compile_progress(stage))

    def add_event(self, key, event) -> None:
        fold = self.folds.get(key)
        if fold is not None and isinstance(event, dict):
            fold.add(event)
            self._dirty = True

    def add_output(self, key, stream: str, text: str) -> None:
        self.output.moveCursor(self.output.textCursor().MoveOperation.End)
        self.output.insertPlainText(text)

    def add_result(self, result) -> None:
        """A config ended: its row, its finding and its breaks shown now, the others still running."""
        self.results.append(result)
        self._show_results()

    def finish(self, results, error: str = "") -> None:
        self._timer.stop()
        self._running = None
        self._dirty = True
        self._redraw()
        if results is not None:  # every new config's (those that ended were added as they did)
            done = {id(r) for r in self.results}
            self.results += [r for r in results if id(r) not in done]
        self._show_results()
        if error and not self.results:
            self.headline.setText(f"Generation could not be profiled: {error}")
            return
        new = sum(1 for r in self.results if r.label in self._labels)
        ended = f"{new} of {len(self._labels)} config(s) profiled"
        self.headline.setText(ended + (f"; then: {error}" if error else "."))
        self.tabs.setCurrentWidget(self.summary)

    def _show_results(self) -> None:
        self.model.set_rows(result_rows(self.results))
        self.summary.setPlainText("\n".join(line for r in self.results for line in [*result_lines(r), ""]))
        rows = []
        for r in self.results:
            run = r.script.compiled
            for e in run.entries.values() if run is not None else ():
                rows.append(FunctionBreaks(FunctionLabel(f"{r.label}: {e.name}"), e.graph_breaks, e.recompiles))
        self.breaks.set_results(rows)

    # ---- drawing
    def _redraw(self) -> None:
        self._show_running()  # every tick: a stage's seconds go on while nothing arrives
        if not self._dirty:
            return
        self._dirty = False
        for (label, side), fold in self.folds.items():
            entries = list(fold.run.entries.values())
            if not entries:
                continue
            entry = entries[0]  # the model's forward: the one compiled entry point of the script
            index = self._labels.index(label) if label in self._labels else len(self._labels)
            color = config_color(index)
            ms = np.asarray(entry.ms[-CHART_POINTS:], dtype=float)
            first = len(entry.ms) - ms.size
            x = np.arange(first, first + ms.size)
            y = np.maximum(ms, 1e-4)
            self._curve(label, side, color).setData(x, y)
            prefill = (x % self.new_tokens) == 0
            self._marks(label, side, "prefill", color).setData(x[prefill], y[prefill])
            if side == "compiled":
                flags = np.asarray(entry.flags[-CHART_POINTS:], dtype=int)
                compiled = (flags & FLAG_COMPILED) != 0
                self._marks(label, side, "compile", error_color()).setData(x[compiled], y[compiled])

    def _curve(self, label: str, side: str, color):
        key = (label, side, "curve")
        if key not in self._items:
            pen = pg.mkPen(color, width=1, style=Qt.PenStyle.SolidLine if side == "compiled" else Qt.PenStyle.DashLine)
            self._items[key] = self.chart.plot([], [], pen=pen, name=f"{label} ({side})")
        return self._items[key]

    def _marks(self, label: str, side: str, kind: str, color):
        key = (label, side, kind)
        if key not in self._items:
            symbol = "t" if kind == "prefill" else "x"
            name = None
            if kind == "compile" and not any(k[2] == "compile" for k in self._items):
                name = "a call that compiled (first compile or recompile)"
            elif kind == "prefill" and not any(k[2] == "prefill" for k in self._items):
                name = "prefill (first token)"
            self._items[key] = self.chart.plot(
                [],
                [],
                pen=None,
                symbol=symbol,
                symbolSize=9 if kind == "compile" else 6,
                symbolBrush=color,
                symbolPen=color,
                name=name,
            )
        return self._items[key]
