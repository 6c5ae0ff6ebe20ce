"""Resource panel: the job process's CPU % and resident memory over time (GPU utilisation
and memory when there is a GPU), shaded by phase, and peak memory per phase per config.

Samples come from the runner, which reads the child from outside (psutil/NVML) every
0.2 s. Jobs run one after another, so each job's clock is shifted to follow the previous
job on one time axis. Without a GPU the panel says so instead of drawing empty charts.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget

from core.vocab.records import PHASES
from gui.charts.buffers import GrowingSeries
from gui.charts.plot_parts import PlotParts
from gui.widgets.safe_text import markup
from gui.widgets.theme import PHASE_COLORS, config_color, config_text_color, over_chart_background, phase_brush
from gui.widgets.turns import piece_timer
from gui.widgets.view import ResultsView

REDRAW_INTERVAL_MS = 100
GAP_S = 0.5  # space between consecutive jobs on the time axis
MEMORY_PHASES = ("eager", "compile", "compiled")


class _Track:
    """One job's readings on one plot."""

    def __init__(self, curve):
        self.curve = curve
        self.data = GrowingSeries()


class ResourcePanel(QWidget, ResultsView):
    """GUI thread only."""

    def __init__(self, parent: QWidget | None = None, staged: bool = False):
        """`staged`: the plots are left to `construction_steps()`, which the caller runs (the
        main window's ViewSlot: one per turn of the event loop after the window's show, ~20 ms
        a plot, gui.window.view_slot); else they are built here."""
        super().__init__(parent)
        self.layout_widget = pg.GraphicsLayoutWidget()
        self.cpu_plot = self.rss_plot = self.memory_plot = None
        self.gpu_util_plot = self.gpu_mem_plot = None
        self.gpu_note = QLabel("GPU: waiting for torch to load…")
        self.gpu_note.setWordWrap(True)
        self.gpu_note.setToolTip("GPU utilisation and memory come from NVML (nvidia-ml-py) when a GPU is present.")

        # One wrapping line (nine phases side by side made the tab, and so the window, wider
        # than a 1280-pixel screen).
        self.phase_key = QLabel(
            "Phases: "
            + " ".join(
                f"<span style='white-space:nowrap'><span style='background:{PHASE_COLORS.get(phase, '#999999')}'>"
                f"&nbsp;&nbsp;&nbsp;</span>&nbsp;{phase}</span>"
                for phase in PHASES
            )
        )
        self.phase_key.setTextFormat(Qt.TextFormat.RichText)
        self.phase_key.setWordWrap(True)
        self.phase_key.setToolTip("Shaded background of the charts: the phase the job was in")

        left = QWidget()
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.phase_key)
        left_layout.addWidget(self.layout_widget, 1)
        left_layout.addWidget(self.gpu_note)

        self.splitter = QSplitter(Qt.Orientation.Horizontal)
        self.splitter.addWidget(left)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.splitter)

        self._tracks: dict[tuple[str, str], _Track] = {}
        self._order: list[str] = []
        self._offsets: dict[str, float] = {}
        self._last_t = 0.0
        self._regions: dict[str, list] = {}  # job → [(phase, start, end, [items])]
        self._bars: list = []
        self._memory_key = None  # the figures the bars show: the same are not drawn again
        self._dirty = False
        self._timer = piece_timer(self, REDRAW_INTERVAL_MS, self._on_redraw)  # a turn of its own (gui.widgets.turns)
        self.build_unless_staged(staged)

    def construction_steps(self) -> list:
        """The three plots, each made in pieces of a few ms (gui.charts.plot_parts) and then
        set up and placed in a step of its own (gui.window.view_slot.ViewSlot runs them)."""
        return [
            *PlotParts().steps(then=self._add_cpu_plot),
            *PlotParts().steps(then=self._add_rss_plot),
            *PlotParts().steps(then=self._add_memory_plot),
        ]

    def _add_cpu_plot(self, plot: pg.PlotItem) -> None:
        tip = "CPU use of the job process and its compile workers (100% = one core)"
        self.cpu_plot = self._add_plot(0, "CPU", "%", tip, plot)

    def _add_rss_plot(self, plot: pg.PlotItem) -> None:
        # the job process with its compile workers (inductor keeps its worker pool after the
        # compile): more than the per-phase peaks beside it, which are the job process's alone
        tip = (
            "Resident memory of the job process and its compile workers together (inductor keeps its workers "
            "after the compile), so it can read more than the per-phase peaks beside it, the job process's own"
        )
        self.rss_plot = self._add_plot(1, "RSS with compile workers", "MB", tip, plot)
        self.rss_plot.setXLink(self.cpu_plot)
        self.rss_plot.setLabel("bottom", "time", units="s")

    def _add_memory_plot(self, plot: pg.PlotItem) -> None:
        self.memory_widget = pg.PlotWidget(plotItem=plot)
        self.memory_plot = self.memory_widget.getPlotItem()
        key = " ".join(f"<span style='color:{PHASE_COLORS[p]}'>■ {p}</span>" for p in MEMORY_PHASES)
        self.memory_plot.setTitle(f"Peak RSS (MB) of the job process<br>{key}", size="9pt")
        self.memory_plot.getAxis("left").enableAutoSIPrefix(False)
        self.memory_plot.showGrid(y=True, alpha=0.2)
        self.memory_widget.setToolTip(
            "Peak resident memory of the job process in the eager, compile and compiled phases, per config"
        )
        self.memory_widget.setMinimumWidth(260)
        # which config each numbered bar group is: the labels themselves overlapped under the bars
        self.memory_key = QLabel("")
        self.memory_key.setWordWrap(True)
        self.memory_key.setTextFormat(Qt.TextFormat.RichText)
        self.memory_key.hide()
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.memory_widget, 1)
        column.addWidget(self.memory_key)
        self.splitter.addWidget(box)
        self.splitter.setStretchFactor(0, 3)
        self.splitter.setStretchFactor(1, 1)

    def _add_plot(self, row: int, title: str, units: str, tip: str, plot: pg.PlotItem | None = None):
        """`plot`: made before (gui.charts.plot_parts); else made here."""
        if plot is None:
            plot = pg.PlotItem()
        self.layout_widget.addItem(plot, row=row, col=0)
        plot.setLabel("left", title, units=units)
        plot.getAxis("left").enableAutoSIPrefix(False)
        plot.showGrid(x=True, y=True, alpha=0.2)
        plot.setClipToView(True)
        plot.setDownsampling(auto=True, mode="peak")
        plot.setToolTip(tip)
        return plot

    def _plots(self) -> list:
        return [p for p in (self.cpu_plot, self.rss_plot, self.gpu_util_plot, self.gpu_mem_plot) if p is not None]

    # ---------------------------------------------------------------- GPU
    def set_gpu(self, available: bool, reason: str) -> None:
        """Show GPU charts when a GPU can be read, else say why there are none."""
        if available and self.gpu_util_plot is None:
            self.gpu_util_plot = self._add_plot(2, "GPU", "%", "GPU utilisation (NVML)")
            self.gpu_mem_plot = self._add_plot(3, "GPU memory", "MB", "GPU memory used by the job (NVML)")
            for p in (self.gpu_util_plot, self.gpu_mem_plot):
                p.setXLink(self.cpu_plot)
            self.gpu_note.hide()
        elif not available:
            self.gpu_note.setText(
                f"<b>No GPU charts:</b> {markup(reason or 'no NVIDIA GPU was found')}. With an NVIDIA GPU this "
                "panel would also chart the job's GPU utilisation and GPU memory; CPU and memory are shown above."
            )
            self.gpu_note.show()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        self._on_redraw()  # what arrived while the tab was not shown

    # ---------------------------------------------------------------- data in
    def bind(self, session) -> None:
        super().bind(session)
        session.sig_resource_sampled.connect(self.add_sample)

    def show_results(self, results: list) -> None:
        self.reset(results)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        self.update_memory(results)

    def set_torch_info(self, torch_info) -> None:
        self.set_gpu(bool(getattr(torch_info.gpu_monitor, "available", False)), torch_info.gpu_reason)

    def reset(self, results) -> None:
        self._memory_key = None
        for plot in self._plots():
            for item in list(plot.listDataItems()):
                plot.removeItem(item)
        for spans in self._regions.values():
            for _, _, _, items in spans:
                for plot, item in items:
                    plot.removeItem(item)
        self._tracks.clear()
        self._order.clear()
        self._offsets.clear()
        self._regions.clear()
        self._last_t = 0.0
        for index, result in enumerate(results):
            self._order.append(result.job_id)
            for sample in result.resources:
                self.add_sample(result.job_id, sample)
        self.update_memory(results)
        self._on_redraw()

    def add_sample(self, job_id: str, sample) -> None:
        if job_id not in self._order:
            self._order.append(job_id)
        if job_id not in self._offsets:
            self._offsets[job_id] = self._last_t + (GAP_S if self._last_t else 0.0)
        t = self._offsets[job_id] + sample.t_s
        self._last_t = max(self._last_t, t)
        index = self._order.index(job_id)
        values = [(self.cpu_plot, "cpu", sample.cpu_percent), (self.rss_plot, "rss", sample.rss_mb)]
        if self.gpu_util_plot is not None:
            values += [
                (self.gpu_util_plot, "gpu", sample.gpu_util_percent),
                (self.gpu_mem_plot, "gpumem", sample.gpu_mem_mb),
            ]
        for plot, key, value in values:
            if value is None:
                continue
            track = self._tracks.get((job_id, key))
            if track is None:
                track = _Track(plot.plot([], [], pen=pg.mkPen(config_color(index), width=2)))
                self._tracks[(job_id, key)] = track
            track.data.extend([t], [value])
        self._extend_phase(job_id, sample.phase, t)
        self._dirty = True
        if not self._timer.isActive():
            self._timer.start()

    def _extend_phase(self, job_id: str, phase: str, t: float) -> None:
        spans = self._regions.setdefault(job_id, [])
        if spans and spans[-1][0] == phase:
            spans[-1][2] = t
            return
        start = spans[-1][2] if spans else t
        # its shaded regions are made at the next redraw (_on_redraw), not here: a phase change
        # made one LinearRegionItem a chart (~3 ms each) in the turn that folded the sample,
        # shown or not (34 in a 3-process run)
        spans.append([phase, start, t, []])

    def _make_regions(self, phase: str, start: float, end: float) -> list:
        items = []
        for plot in self._plots():
            region = pg.LinearRegionItem(
                (start, end), movable=False, brush=over_chart_background(phase_brush(phase)), pen=pg.mkPen(None)
            )
            region.setZValue(-10)
            plot.addItem(region, ignoreBounds=True)
            items.append((plot, region))
        return items

    def update_memory(self, results) -> None:
        """Redraw the peak-memory bars from each result's per-phase MemoryPeak (not when they
        show these figures already: every job's change and end asks, ~3 ms a redraw)."""
        key = tuple(
            (r.config.label, tuple(getattr(r.memory.get(phase), "peak_rss_mb", None) for phase in MEMORY_PHASES))
            for r in results
        )
        if key == self._memory_key:
            return
        self._memory_key = key
        for item in self._bars:
            self.memory_plot.removeItem(item)
        self._bars.clear()
        ticks = []
        width = 0.8 / len(MEMORY_PHASES)
        for p, phase in enumerate(MEMORY_PHASES):
            xs, heights = [], []
            for i, result in enumerate(results):
                peak = result.memory.get(phase)
                if peak is not None:
                    xs.append(i + (p - 1) * width)
                    heights.append(peak.peak_rss_mb)
            if xs:
                bars = pg.BarGraphItem(
                    x=np.array(xs),
                    height=np.array(heights),
                    width=width * 0.95,
                    brush=phase_brush(phase, 200),
                    pen=pg.mkPen(None),
                    name=phase,
                )
                self.memory_plot.addItem(bars)
                self._bars.append(bars)
        numbered = len(results) > 1
        for i, result in enumerate(results):
            label = result.config.label
            ticks.append((i, str(i + 1) if numbered else label if len(label) <= 18 else label[:17] + "…"))
        self.memory_plot.getAxis("bottom").setTicks([ticks])
        self.memory_key.setText(
            " · ".join(
                f"<b>{i + 1}</b> <span style='color:{config_text_color(i).name()}'>{markup(r.config.label)}</span>"
                for i, r in enumerate(results)
            )
        )
        self.memory_key.setVisible(numbered)
        if results:
            self.memory_plot.setXRange(-0.6, len(results) - 0.4, padding=0)

    def _on_redraw(self) -> None:
        if not self._dirty:
            return
        if self.window().isVisible() and not self.isVisible():
            return  # its tab is not shown: drawn when it is (showEvent), not at 5 Hz on the GUI thread
        self._dirty = False
        for track in self._tracks.values():
            track.curve.setData(track.data.x, track.data.y)
        for spans in self._regions.values():
            for span in spans:
                phase, start, end, items = span
                if not items:
                    span[3] = self._make_regions(phase, start, end)
                    continue
                for _, region in items:
                    region.setRegion((start, end))
