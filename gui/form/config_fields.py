"""The compile config panel's fields (gui.form.config_panel), each made with its range, tooltip
and size: how torch.compile is called, how calls are timed and computed, the dynamo setting the
model needs, the queue of configs with its buttons, and the run bar. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QCheckBox,
    QComboBox,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from core.vocab.config import AUTOCASTS, DTYPES, DYNAMIC_CHOICES, TIMINGS
from core.vocab.limits import LIMITS
from gui.form.config_queue import QueueModel
from gui.widgets.table_model import keyboard_friendly

AUTO_TEXT = "auto"  # what the iterations box shows at 0
DEFAULT_BACKENDS = ("inductor", "eager", "aot_eager")  # shown until torch's own list arrives
DEFAULT_MODES = ("default",)
QUEUE_ROWS = 2.5  # the queue's rows in sight at the least (half a row says there are more)


class QueueTable(QTableView):
    """The queue's table: as tall as its minimum unless given more (Qt's ~190 px hint took the
    form's rows from it in the window's left column), so the form above it keeps its room."""

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt's name)
        return QSize(super().sizeHint().width(), self.minimumHeight())


def combo(items, tip: str) -> QComboBox:
    box = QComboBox()
    box.addItems(list(items))
    box.setToolTip(tip)
    return box


def row(*widgets) -> QHBoxLayout:
    """Several fields on one form row (the left panel is short of height)."""
    row = QHBoxLayout()
    for widget in widgets:
        row.addWidget(widget, 0 if isinstance(widget, (QLabel, QCheckBox)) else 1)
    return row


def set_items(box: QComboBox, items, keep: str) -> None:
    """Replace the choices, keeping the current one even when torch does not offer it: it is
    never swapped silently for another; validation shows why it cannot run."""
    items = list(items)
    box.blockSignals(True)
    box.clear()
    box.addItems(items)
    if keep and keep not in items:
        box.addItem(keep)
    if keep:
        box.setCurrentText(keep)
    box.blockSignals(False)


def compile_fields() -> tuple[QComboBox, QComboBox, QComboBox, QCheckBox, QCheckBox]:
    """Backend, mode, dynamic, fullgraph, and whether a training step compiles its optimizer step."""
    backend = combo(DEFAULT_BACKENDS, "torch.compile backend (from torch._dynamo.list_backends())")
    mode = combo(
        DEFAULT_MODES,
        "Inductor mode (from torch._inductor.list_mode_options()); other backends take 'default' only",
    )
    dynamic = combo(
        DYNAMIC_CHOICES,
        "dynamic=: auto (None, torch decides after a shape change), "
        "true (symbolic shapes from the start) or false (specialise)",
    )
    fullgraph = QCheckBox("fullgraph")
    fullgraph.setToolTip("fullgraph=True: fail on the first graph break instead of splitting the graph")
    compile_optimizer = QCheckBox("optimizer step")
    compile_optimizer.setToolTip(
        "Training step: compile the optimizer step too (torch.compile(optimizer.step)); ignored for inference"
    )
    return backend, mode, dynamic, fullgraph, compile_optimizer


def dynamo_config_field() -> QLineEdit:
    field = QLineEdit()
    field.setPlaceholderText("KEY=VALUE, e.g. allow_rnn=True")
    field.setClearButtonEnabled(True)
    field.setToolTip(
        "torch._dynamo.config overrides for the compile, KEY=VALUE separated by "
        "commas or spaces (e.g. allow_rnn=True, recompile_limit=16); checked "
        "against the installed torch's settings"
    )
    return field


def count_fields() -> tuple[QSpinBox, QSpinBox, QSpinBox]:
    """Warm-up calls, timed iterations (0: auto) and processes. Their ranges are core's accepted
    ranges (LIMITS), so what a box holds is always what the command line and `profile` accept."""
    warmup = QSpinBox()
    warmup.setRange(int(LIMITS["warmup"].low), int(LIMITS["warmup"].high))
    warmup.setValue(5)
    warmup.setToolTip("Untimed-in-statistics warm-up calls per side before the timed iterations")
    iters = QSpinBox()  # 0 reads "auto": blocks until the speedup is known within the precision
    iters.setRange(0, int(LIMITS["iters"].high))
    iters.setSpecialValueText(AUTO_TEXT)
    iters.setValue(0)
    iters.setToolTip(
        f"Timed calls per side, eager and compiled alternating in blocks; {AUTO_TEXT} (the "
        f"default): blocks until the speedup is known within ±{LIMITS['precision'].default:g}%, "
        f"at most {LIMITS['max_time'].default:g} s per config"
    )
    processes = QSpinBox()
    processes.setRange(int(LIMITS["processes"].low), int(LIMITS["processes"].high))
    processes.setValue(int(LIMITS["processes"].default))
    processes.setToolTip(
        "Time each config in this many fresh processes: one process is one draw (its "
        "memory layout and placement can shift its speed for its whole life); the "
        "speedup's interval includes the spread between them"
    )
    for box in (warmup, iters, processes):  # sized for usual values, not the widest allowed
        box.setMinimumWidth(box.fontMetrics().horizontalAdvance("99999") + 24)
    return warmup, iters, processes


def precision_field() -> QComboBox:
    """The dtype, or float32 under autocast (core.vocab.config: DTYPES, AUTOCASTS)."""
    precision = QComboBox()
    for dtype in DTYPES:
        precision.addItem(dtype, (dtype, ""))
    for autocast in AUTOCASTS:
        precision.addItem(f"autocast {autocast}", ("float32", autocast))
    precision.setToolTip(
        "The model's parameters and floating inputs in this dtype, or float32 under torch.autocast; "
        "eager and compiled alike. A dtype the device or model cannot run fails the job saying so"
    )
    return precision


def timing_field() -> QComboBox:
    return combo(
        TIMINGS,
        "latency: each call alone, synchronised (what one request waits); throughput: blocks of calls back "
        "to back, one synchronisation a block (what a stream of calls gets); both: the two side by side",
    )


def suggestion_box(label: QLabel, button: QPushButton) -> QFrame:
    label.setWordWrap(True)
    label.setToolTip("A torch._dynamo.config setting this model needs to be compiled at all")
    box = QFrame()
    box.setFrameShape(QFrame.Shape.StyledPanel)
    box_layout = QVBoxLayout(box)
    box_layout.setContentsMargins(6, 4, 6, 4)
    box_layout.addWidget(label)
    box_layout.addWidget(button)
    box.hide()
    return box


def queue_buttons() -> tuple[QPushButton, QPushButton, QPushButton]:
    add = QPushButton("Add to queue")
    add.setToolTip("Queue this config to compare several in one run")
    remove = QPushButton("Remove")
    remove.setToolTip("Remove the selected config from the queue")
    dynamics = QPushButton("Dynamic false/auto/true")
    dynamics.setToolTip(
        "Queue this config three times, with dynamic=false, auto and true: the comparison a shape sweep is for"
    )
    return add, remove, dynamics


def queue_view(queue: QueueModel) -> QueueTable:
    view = keyboard_friendly(QueueTable())
    view.setModel(queue)
    view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    view.verticalHeader().hide()
    view.horizontalHeader().setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    # The status fits its text ("cancelled: …", "benchmark"); a failure's reason is cut short in
    # the cell (config_queue.STATUS_CHARS), whole in its tooltip: a fixed width elided it in the
    # middle ("cance…hmark").
    view.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
    view.setTextElideMode(Qt.TextElideMode.ElideRight)
    view.setWordWrap(False)
    view.setToolTip(
        "Configs of the next run and the status of their last job. With an empty queue, Run profiles the config above."
    )
    # the header and QUEUE_ROWS rows in sight (90 px showed the header and 1.5 rows)
    view.setMinimumHeight(
        view.horizontalHeader().sizeHint().height()
        + int(QUEUE_ROWS * view.verticalHeader().defaultSectionSize())
        + 2 * view.frameWidth()
    )
    return view


def queue_box(view: QueueTable, *buttons: QPushButton) -> QWidget:
    """The queue with its buttons: the window keeps it in view below the (scrolling) form, above
    the run bar (at 1366x768 it lay below the form's last row, out of sight)."""
    box = QWidget()
    queue_layout = QVBoxLayout(box)
    queue_layout.setContentsMargins(4, 2, 4, 0)
    row = QHBoxLayout()
    for button in buttons:
        row.addWidget(button)
    queue_layout.addLayout(row)
    queue_layout.addWidget(view, 1)
    return box


def run_bar(run: QPushButton, cancel: QPushButton) -> QWidget:
    """Run and Cancel: the window keeps the bar in view below the (scrolling) panel."""
    bar = QWidget()
    buttons = QHBoxLayout(bar)
    buttons.setContentsMargins(4, 2, 4, 2)
    buttons.addWidget(run, 2)
    buttons.addWidget(cancel, 1)
    return bar
