"""Where each config's compile time went: one horizontal bar per config, split into core's
exclusive stages (core.analysis.compile_stages: tracing, AOTAutograd, inductor lowering, code
generation, the kernel compile, autotuning, outside the compiler), on one time scale so the
configs compare at a glance. Hovering a segment shows the stage, its seconds and share, and
torch's own nested, cumulative figures. Nothing is computed here. GUI thread only.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFontMetrics, QPainter, QPalette
from PySide6.QtWidgets import QSizePolicy, QToolTip, QWidget

from core.analysis.compile_stages import STAGE_KEYS, STAGE_LABELS, compile_stages, nested_figures, seconds_text
from gui.widgets.safe_text import tooltip
from gui.widgets.theme import config_text_color

# Okabe–Ito: the compiler's own stages in blues and greens, the C++/Triton compiler in
# vermillion, autotuning purple, what lies outside the compiler grey.
STAGE_COLORS = {
    "tracing": "#0072B2",
    "aot": "#56B4E9",
    "lowering": "#009E73",
    "codegen": "#E69F00",
    "kernel_compile": "#D55E00",
    "autotune": "#CC79A7",
    "outside": "#BBBBBB",
}
ROW_HEIGHT = 20
LEGEND_HEIGHT = 20
LABEL_WIDTH = 170
TOTAL_WIDTH = 64


@dataclass
class _Row:
    index: int
    label: str
    compile_result: object
    stages: list
    total_s: float


class CompileStagesChart(QWidget):
    """The bars (module docstring). `set_results` takes the session's JobResults."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._rows: list[_Row] = []
        self._untimed: list[str] = []
        self._segments: list[tuple[QRectF, str]] = []  # where each segment was drawn, and its hover text
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setToolTip("")

    # ---------------------------------------------------------------- data
    def set_results(self, results) -> None:
        self._rows, self._untimed = [], []
        for i, r in enumerate(results):
            if r.compile is None:
                continue
            stages = compile_stages(r.compile)
            if stages:
                total = max(r.compile.compile_time_s, sum(s.seconds for s in stages))
                self._rows.append(_Row(i, r.config.label, r.compile, stages, total))
            else:
                self._untimed.append(r.config.label)
        self.updateGeometry()
        self.update()

    def row_count(self) -> int:
        return len(self._rows)

    def stage_keys(self, row: int) -> list[str]:
        """The stages drawn in the row-th bar, in order (tests)."""
        return [s.key for s in self._rows[row].stages]

    def hover_text(self, row: int, key: str) -> str:
        """What hovering that stage of the row-th bar shows."""
        r = self._rows[row]
        stage = next(s for s in r.stages if s.key == key)
        return f"{r.label}\n{stage.sentence()}\n\n{nested_figures(r.compile_result)}"

    def present_stages(self) -> list[str]:
        keys = {s.key for r in self._rows for s in r.stages}
        return [k for k in STAGE_KEYS if k in keys]

    # ---------------------------------------------------------------- size
    def sizeHint(self) -> QSize:
        rows = max(1, len(self._rows)) + (1 if self._untimed else 0)
        return QSize(600, LEGEND_HEIGHT + rows * ROW_HEIGHT + 6)

    def minimumSizeHint(self) -> QSize:
        return QSize(300, self.sizeHint().height())

    # ---------------------------------------------------------------- drawing
    def paintEvent(self, event) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        text_color = self.palette().color(QPalette.ColorRole.Text)
        metrics = QFontMetrics(self.font())
        self._segments = []
        if not self._rows:
            painter.setPen(QColor("#808080"))
            painter.drawText(
                self.rect().adjusted(4, 0, 0, 0),
                Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                "No compile timed yet: the stages appear once a config has compiled."
                if not self._untimed
                else "torch timed no stage of these compiles (a report without them, or nothing compiled).",
            )
            return
        x = 4
        for key in self.present_stages():  # the legend: only the stages drawn
            painter.fillRect(QRectF(x, 5, 10, 10), QColor(STAGE_COLORS[key]))
            painter.setPen(text_color)
            label = STAGE_LABELS[key]
            painter.drawText(x + 14, 4 + metrics.ascent(), label)
            x += 14 + metrics.horizontalAdvance(label) + 12
        label_width = min(LABEL_WIDTH, max(80, self.width() // 4))
        bar_left = label_width + 8
        bar_width = max(40, self.width() - bar_left - TOTAL_WIDTH)
        longest = max(r.total_s for r in self._rows) or 1.0
        for n, row in enumerate(self._rows):
            y = LEGEND_HEIGHT + n * ROW_HEIGHT + 2
            painter.setPen(config_text_color(row.index))
            name = metrics.elidedText(row.label, Qt.TextElideMode.ElideMiddle, label_width)
            painter.drawText(QRectF(4, y, label_width, ROW_HEIGHT - 4), Qt.AlignmentFlag.AlignVCenter, name)
            if name != row.label:  # shortened: the whole label on hover
                self._segments.append((QRectF(4, y, label_width, ROW_HEIGHT - 4), row.label))
            left = float(bar_left)
            for stage in row.stages:
                width = bar_width * stage.seconds / longest
                rect = QRectF(left, y + 1, max(width, 1.0), ROW_HEIGHT - 6)
                painter.fillRect(rect, QColor(STAGE_COLORS[stage.key]))
                text = seconds_text(stage.seconds)
                if metrics.horizontalAdvance(text) + 6 < width:
                    painter.setPen(
                        QColor("#000000") if stage.key in ("aot", "codegen", "outside") else QColor("#ffffff")
                    )
                    painter.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)
                self._segments.append((rect, self.hover_text(n, stage.key)))
                left += width
            painter.setPen(text_color)
            painter.drawText(
                QRectF(left + 4, y, TOTAL_WIDTH + 40, ROW_HEIGHT - 4),
                Qt.AlignmentFlag.AlignVCenter,
                seconds_text(row.total_s),
            )
        if self._untimed:
            y = LEGEND_HEIGHT + len(self._rows) * ROW_HEIGHT + 2
            painter.setPen(QColor("#808080"))
            whole = "No stages timed by torch for: " + ", ".join(self._untimed)
            rect = QRectF(4, y, self.width() - 8, ROW_HEIGHT - 4)
            shown = metrics.elidedText(whole, Qt.TextElideMode.ElideRight, self.width() - 8)
            painter.drawText(rect, Qt.AlignmentFlag.AlignVCenter, shown)
            if shown != whole:  # shortened: the whole list on hover
                self._segments.append((rect, whole))

    def mouseMoveEvent(self, event) -> None:
        pos = event.position()
        text = next((tip for rect, tip in self._segments if rect.contains(pos)), "")
        if text:
            QToolTip.showText(event.globalPosition().toPoint(), tooltip(text), self)
        else:
            QToolTip.hideText()
        super().mouseMoveEvent(event)
