"""The latency chart's compile markers (gui.charts.latency): a dotted vertical line at each job's
compile (its first compiled call, before the warm-up calls) and, beside it, a label with the
compile's wall time and cache state; and the words the chart's text shares (the legend's and
the labels' backdrop, the lines that count what has no room).

The labels stack down from the top of the view in the jobs' order, a text line apart at least.
Each is kept whole inside the view box: moved right or left of its line when the line sits near
(or past) an edge of the view, shortened (the whole text in its tooltip) when wider than the
view, and moved below the legend when it would run under it (a new user's narrow window showed
"compile inductor mode=max-au…" drawn over the legend's entries, issue 44). The labels that do
not fit in the view's height give way to one line that counts them. GUI thread only.
"""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QBrush, QColor, QFontMetricsF, QPalette
from PySide6.QtWidgets import QApplication

from gui.widgets.safe_text import line_label
from gui.widgets.theme import config_color, config_text_color

MARKER_LABEL_CHARS = 36
CROWDED_CONFIGS = 3  # past this many configs the legend and compile labels get a backdrop
MARKER_Z = 5  # the compile markers and their labels: above the curves
MARKER_LABEL_TOP = 0.92  # the first compile marker's label, as a fraction of the view's height
MARKER_LABEL_STEP = 0.07  # the least step between labels, as a fraction of the view's height
LEGEND_GAP_PX = 4  # the least room between a label and the legend
LEGEND_ROW_PX = 20  # a legend entry's height: pyqtgraph's sample is 20 px square
LEGEND_CHROME_PX = 70  # a legend entry's width less its text (sample, margins), and its offset


def marker_label_positions(
    count: int,
    view_px: float,
    line_px: float,
    spans: list[tuple[float, float]] | None = None,
    avoid: tuple[float, float, float, float] | None = None,
    more_span: tuple[float, float] | None = None,
) -> tuple[list[float | None], float | None]:
    """Where `count` compile markers' labels sit up each line (fractions of the view's height,
    the first highest), a text line and 2 px apart at least: at 0.07 of a 150 px view five
    labels overlapped (a banner above the chart leaves it that short). When they do not all fit
    in the view's height, the last line that fits says how many more there are (the second
    value: its place) and the rest have no label (None): wrapped to the top again, eleven
    labels overwrote each other there. Returns (each marker's place or None, the place of the
    "more" line or None).

    `spans`: each label's (left, right) in the view's pixels, and `more_span` the "more" line's;
    `avoid`: a (left, top, right, bottom) rectangle of the view's pixels (y down: the legend)
    that no label may cross: a label that would is moved down to the next line clear of it."""
    step = max(MARKER_LABEL_STEP, (line_px + 2) / view_px) if view_px > 0 else MARKER_LABEL_STEP
    lines = [MARKER_LABEL_TOP - step * k for k in range(max(1, int((MARKER_LABEL_TOP - 0.02) / step) + 1))]

    def clear(span: tuple[float, float] | None, place: float) -> bool:
        if avoid is None or span is None or view_px <= 0:
            return True
        left, top, right, bottom = avoid
        centre = (1 - place) * view_px
        return (
            span[1] + LEGEND_GAP_PX <= left
            or span[0] >= right + LEGEND_GAP_PX
            or centre + line_px / 2 <= top
            or centre - line_px / 2 >= bottom + LEGEND_GAP_PX
        )

    def stack(items: list) -> list[float] | None:
        """Each item's line, down from the top and in order, clear of `avoid`; None: no room."""
        places, k = [], 0
        for span in items:
            while k < len(lines) and not clear(span, lines[k]):
                k += 1
            if k == len(lines):
                return None
            places.append(lines[k])
            k += 1
        return places

    spans = list(spans) if spans is not None else [None] * count
    for shown in range(count, -1, -1):  # as many labels as fit, then the line that counts the rest
        places = stack(spans[:shown] if shown == count else [*spans[:shown], more_span])
        if places is None:
            continue
        if shown == count:
            return places, None
        return places[:shown] + [None] * (count - shown), places[shown]
    return [None] * count, None  # not even the "more" line: a view shorter than a text line


def legend_rows(view_px: float) -> int:
    """How many legend entries fit one above the other in a view `view_px` tall (its offset
    from the top and a margin left free)."""
    return max(1, int((view_px - 30) // LEGEND_ROW_PX)) if view_px > 0 else 8


def legend_names(labels: list[str], view_px: float) -> list[str]:
    """The configs' labels as the legend shows them: each shortened in its middle (the backend
    and the last setting tell configs apart) to what fits the view `view_px` wide beside its
    sample; whole in a view not laid out yet. A legend wider than a narrow view ran off its
    left edge, its entries cut there."""
    if view_px <= 0:
        return list(labels)
    metrics = QFontMetricsF(QApplication.font())
    room = max(6 * metrics.averageCharWidth(), view_px - LEGEND_CHROME_PX)
    return [
        label
        if metrics.horizontalAdvance(label) <= room
        else metrics.elidedText(label, Qt.TextElideMode.ElideMiddle, room)
        for label in labels
    ]


def text_backdrop() -> QColor:
    """Behind the chart's text (legend, compile labels): the charts' background, mostly opaque,
    so text stays readable over the curves and the curves show faintly through."""
    back = QColor(QApplication.palette().color(QPalette.ColorRole.Base))
    back.setAlpha(215)
    return back


def more_configs_text(hidden: int) -> str:
    """The latency chart legend's line for the configs it has no room for."""
    return f"+{hidden} more (colours: Summary tab)"


def more_compiles_text(hidden: int) -> str:
    """The latency chart's line for the compile markers whose labels did not fit."""
    return f"+{hidden} more compile{'s' if hidden != 1 else ''} (times: Graph breaks & compile tab)"


def compile_text(label: str, compile_result) -> str:
    """A compile marker's whole words: the config, the compile's wall time and its cache state
    (shown shortened: `fitting_text`)."""
    text = f"compile {label}: {compile_result.compile_time_s:.2f} s"
    cache = compile_result.cache_state
    if cache and cache != "n/a":
        text += f" (cache {cache})"
    return text


def fitting_text(text: str, metrics: QFontMetricsF, room: float) -> str:
    """A compile label as shown: its config shortened in the middle (the legend beside it has
    the whole label; the backend and the last setting tell configs apart) to MARKER_LABEL_CHARS
    and to `room` px, the words around it ("compile", the time) kept; else the whole text cut
    at its end."""
    head, sep, tail = text.partition(" ")
    label, colon, rest = tail.rpartition(": ")
    if not (sep and colon):
        return (
            text
            if metrics.horizontalAdvance(text) <= room
            else metrics.elidedText(text, Qt.TextElideMode.ElideRight, room)
        )
    if len(label) > MARKER_LABEL_CHARS:
        keep = MARKER_LABEL_CHARS - 1
        label = label[: (keep + 1) // 2] + "…" + label[len(label) - keep // 2 :]
    short = f"{head} {label}: {rest}"
    if metrics.horizontalAdvance(short) <= room:
        return short
    around = metrics.horizontalAdvance(f"{head} : {rest}")
    if room - around >= 4 * metrics.averageCharWidth():
        whole = tail.rpartition(": ")[0]
        return f"{head} {metrics.elidedText(whole, Qt.TextElideMode.ElideMiddle, room - around)}: {rest}"
    return metrics.elidedText(short, Qt.TextElideMode.ElideRight, room)


class CompileMarkers:
    """The markers of one plot, keyed by job id (`lines`), their labels placed by `place()`.
    `legend`: the plot's legend, which the labels keep clear of."""

    def __init__(self, plot: pg.PlotItem, legend: pg.LegendItem):
        self.plot, self.legend = plot, legend
        self.lines: dict[str, pg.InfiniteLine] = {}
        self.texts: dict[str, str] = {}  # job → its marker's whole text: the same is not redrawn
        self.more: pg.InfiniteLine | None = None  # "+N more compiles", when not all labels fit
        self.fill: QBrush = pg.mkBrush(None)  # the labels' backdrop (the chart's, when crowded)
        self.order: list[str] = []  # the jobs' order (the chart's configs), the labels' from the top
        plot.getViewBox().sigResized.connect(self.place)
        plot.getViewBox().sigXRangeChanged.connect(self.place)  # a line's place on screen moved
        for moved in (legend.xChanged, legend.yChanged, legend.widthChanged, legend.heightChanged):
            moved.connect(self.place)  # the legend re-anchored or grew after the view's resize

    def clear(self) -> None:
        for line in self.lines.values():
            self.plot.removeItem(line)
        self.lines.clear()
        self.texts.clear()
        self.order.clear()
        if self.more is not None:
            self.more.hide()

    def mark(self, job_id: str, index: int, x: float, text: str) -> None:
        """Job `job_id` (the `index`-th config) compiled: its line at `x` with `text`; the same
        text again keeps the line (a job's later changes and its end: ~3 ms to make anew)."""
        if job_id in self.lines and self.texts.get(job_id) == text:
            return
        old = self.lines.pop(job_id, None)
        if old is not None:
            self.plot.removeItem(old)
        line = pg.InfiniteLine(
            pos=x,
            angle=90,
            movable=False,
            pen=pg.mkPen(config_color(index), width=1, style=Qt.PenStyle.DotLine),
            label=line_label(text),
            labelOpts={
                "position": MARKER_LABEL_TOP,  # placed beside the others' (place)
                "color": config_text_color(index),  # readable as text (the line: its own colour)
                "anchors": [(0, 0.5), (0, 0.5)],
                "rotateAxis": None,
            },
        )
        # In the view's bounds: a marker left of the first warm-up call would sit outside the
        # view, its label cut at the left edge ("ompile inductor…").
        self.plot.addItem(line, ignoreBounds=False)
        line.setZValue(MARKER_Z)  # its label above every curve, the later jobs' too
        self.lines[job_id] = line
        self.texts[job_id] = text
        self.place()

    def set_visible(self, on: bool) -> None:
        for line in self.lines.values():
            line.setVisible(on)
        self.place()

    def set_fill(self, fill: QBrush) -> None:
        self.fill = fill
        self.place()

    def place(self, *args) -> None:
        """Each label a text line apart from the next, in the jobs' order (`order`, then any
        other in the order they were marked in), whole in the view and clear of the legend;
        those that do not fit in the view's height hidden behind one line that counts them."""
        jobs = [*self.order, *(job for job in self.lines if job not in self.order)]
        shown = [job for job in jobs if job in self.lines and self.lines[job].isVisible()]
        if not shown:
            if self.more is not None:
                self.more.hide()
            return
        box = self.plot.getViewBox()
        view_w, view_h = box.width(), box.height()
        metrics = QFontMetricsF(self.lines[shown[0]].label.textItem.font())
        spans = [self._fit(self.lines[job], self.texts[job], metrics, view_w) for job in shown]
        more_text = line_label(more_compiles_text(len(shown)))  # the widest it can be, for its place
        more_span = self._span(self.lines[shown[0]], metrics.horizontalAdvance(more_text) + 8, view_w)[:2]
        places, more_place = marker_label_positions(
            len(shown), view_h, metrics.height(), [s[:2] for s in spans], self._legend_rect(), more_span
        )
        for job, position, span in zip(shown, places, spans):
            label = self.lines[job].label
            if label.fill.style() != self.fill.style():
                label.fill = self.fill
                label.update()
            if position is None:
                if label.isVisible():
                    label.setVisible(False)
                continue
            if not label.isVisible():
                label.setVisible(True)
            self._put(label, position, span[2])
        if more_place is None:
            if self.more is not None:
                self.more.hide()
            return
        self._show_more(self.lines[shown[0]].value(), places.count(None), more_place, view_w)

    def _fit(self, line: pg.InfiniteLine, text: str, metrics: QFontMetricsF, view_w: float) -> tuple:
        """The label's text, shortened to the view's width (whole in its tooltip); its span."""
        label = line.label
        room = max(0.0, view_w - 2 * label.textItem.document().documentMargin() - 2) if view_w > 0 else float("inf")
        shown = fitting_text(text, metrics, room)
        if label.format != line_label(shown):
            label.setFormat(line_label(shown))
        label.setToolTip(text if shown != text else "")
        return self._span(line, label.textItem.boundingRect().width(), view_w)

    def _span(self, line: pg.InfiniteLine, width: float, view_w: float) -> tuple[float, float, float]:
        """(left, right, anchor) of a label `width` px wide beside `line`: from the line to the
        right, moved in to stay whole in a view `view_w` px wide; the anchor puts it there."""
        box = self.plot.getViewBox()
        at = box.mapFromView(QPointF(line.value(), 0)).x() if view_w > 0 else 0.0
        left = max(0.0, min(at, view_w - width - 1)) if view_w > 0 else at
        return left, left + width, (at - left) / width if width > 0 else 0.0

    def _put(self, label, position: float, anchor: float) -> None:
        anchors = [(anchor, 0.5), (anchor, 0.5)]
        if label.anchors != anchors or label.orthoPos != position:
            label.anchors = anchors
            label.setPosition(position)

    def _legend_rect(self) -> tuple[float, float, float, float] | None:
        """The legend's rectangle in the view's pixels (left, top, right, bottom), or None."""
        legend = self.legend
        if legend is None or not legend.isVisible() or not legend.items:
            return None
        rect: QRectF = legend.mapRectToItem(self.plot.getViewBox(), legend.boundingRect())
        return rect.left(), rect.top(), rect.right(), rect.bottom()

    def _show_more(self, x: float, hidden: int, place: float, view_w: float) -> None:
        text = line_label(more_compiles_text(hidden))
        if self.more is None:
            self.more = pg.InfiniteLine(
                angle=90,
                movable=False,
                pen=pg.mkPen(None),
                label=text,
                labelOpts={
                    "position": place,
                    "color": QApplication.palette().color(QPalette.ColorRole.Text),
                    "fill": text_backdrop(),
                    "anchors": [(0, 0.5), (0, 0.5)],
                },
            )
            self.plot.addItem(self.more, ignoreBounds=True)
            self.more.setZValue(MARKER_Z)
        self.more.setValue(x)
        self.more.show()
        if self.more.label.format != text:
            self.more.label.setFormat(text)
        anchor = self._span(self.more, self.more.label.textItem.boundingRect().width(), view_w)[2]
        self._put(self.more.label, place, anchor)
