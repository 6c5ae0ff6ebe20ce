"""Summary table: one row per config with the figures of `JobResult.summary()`.

Nothing is computed here: the row dicts come from core (`JobResult.summary`, the columns
of summary.csv), this file only formats them. A running job's row is refreshed at most
once a second and without the speedup's bootstrap interval (`summary(ci=False)`); an ended
job's in the event loop's next turn, with it (gui.widgets.turns). A shape sweep has no single
latency: its cells say "sweep" and its compile time is the sweep's total (the Shape sweep tab
has the figures per variant). Above the table, where a failed accuracy check diverges
(gui.panels.localization).
"""

from __future__ import annotations

import functools

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFont, QFontDatabase
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from core.analysis.figure_agreement import agreement_note, medians_note
from gui.panels.localization import LocalizationNote
from gui.panels.summary_columns import (
    ACCURACY_COLUMN,
    COLUMNS,
    GRADE_COLORS,
    TIMING_COLUMN,
    Row,
    failing,
    graph_breaks,
    row_of,
    sites,
)
from gui.widgets.safe_text import markup, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import config_text_color, error_color, warning_color
from gui.widgets.turns import one_per_turn, piece_timer
from gui.widgets.view import ResultsView

REFRESH_INTERVAL_MS = 1000
COVERAGE_LINES = 4  # configs listed a line each above the table; past that, those that say the same share one
DETAILS_PLACEHOLDER = "Select a config in the table to see all its figures and findings here."
NOT_ENDED_DETAILS = "its figures and findings show here when it ends."


class SummaryModel(RowTableModel):
    """Rows: the session's JobResults; cells: their `summary()` figures. GUI thread only."""

    HEADERS = tuple((c.header, c.tooltip) for c in COLUMNS)

    def __init__(self, parent=None):
        super().__init__(parent)
        self._results: list = []
        self._rows: list[Row] = []
        self._stale: set[str] = set()
        # turns of its own (gui.widgets.turns): the rows' grades, then the rows
        self._timer = piece_timer(self, REFRESH_INTERVAL_MS, self._grade_stale_rows)

    def set_results(self, results) -> None:
        self.beginResetModel()
        self._results = list(results)
        self._rows = [row_of(r) for r in self._results]
        self._stale.clear()
        self.endResetModel()

    def summary(self, row: int) -> Row:
        self.make_owed_rows()
        return self._rows[row]

    def result(self, row: int):
        self.make_owed_rows()
        return self._results[row]

    def mark_changed(self, job_id: str, now: bool = False) -> None:
        """A job's result changed: refresh its row within a second, or, `now` (it ended), in
        the event loop's next turn (gui.widgets.turns: its final row, with the bootstrap
        interval, is a piece of its own, not part of the turn that folded the job's end)."""
        self._stale.add(job_id)
        if now:
            result = next((r for r in self._results if r.job_id == job_id), None)
            if result is not None:  # its bootstrap interval, the row's largest part: a piece before it
                one_per_turn(self, result.summary_speedup)
            one_per_turn(self, self._on_refresh_due)  # asked again before it ran: once
        elif not self._timer.isActive():
            self._timer.start()

    def make_owed_rows(self) -> None:
        """Make now the rows owed to a later turn or to the 1 s refresh (what reads a row reads them)."""
        if self._stale:
            self._on_refresh_due()

    def _grade_stale_rows(self) -> None:
        """The 1 s refresh's first piece: each stale row's timing grade (core.analysis.quality:
        numpy over every process's calls, ~2-3 ms, half of a running row's figures), kept on its
        result for the row made in the next piece. In one piece the refresh held the GUI thread
        ~5 ms at a time during the timed calls (a 10 ms timer is late by as much)."""
        for result in self._results:
            if result.job_id in self._stale:
                result.quality(ci=result.ended)  # what its row asks for (`row_of`)
        one_per_turn(self, self._on_refresh_due)

    def _on_refresh_due(self) -> None:
        stale, self._stale = self._stale, set()
        for row, result in enumerate(self._results):
            if result.job_id in stale:
                self._rows[row] = row_of(result)
                self.dataChanged.emit(self.index(row, 0), self.index(row, len(COLUMNS) - 1))

    # ---------------------------------------------------------------- Qt model
    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column.text(row)
        if role == Qt.ItemDataRole.ToolTipRole:
            if index.column() == 1 and row.get("failure_reason"):
                detail = self._results[index.row()].failure_detail
                return tooltip(row["failure_reason"] + ("\n\n" + detail[-1500:] if detail else ""))
            if index.column() == 0 and failing(row):
                return tooltip(f"accuracy fail: {row.get('accuracy_reason') or ''}")
            if index.column() == 0 and row.get("coverage"):
                return tooltip(row["coverage"])
            if index.column() == ACCURACY_COLUMN and row.get("accuracy_reason"):
                return tooltip(f"{row['accuracy']}: {row['accuracy_reason']}")
            if index.column() == TIMING_COLUMN and row.get("timing_quality"):
                return tooltip(self._results[index.row()].quality(ci=self._results[index.row()].ended).details())
            return column.tooltip
        if role == Qt.ItemDataRole.ForegroundRole:
            if index.column() == 1 and row.get("status") == "failed":
                return QBrush(QColor(error_color()))
            if index.column() == ACCURACY_COLUMN and failing(row):
                return QBrush(QColor(error_color()))
            if index.column() == ACCURACY_COLUMN and row.get("accuracy") == "nondeterministic":
                return QBrush(QColor("gray"))
            if index.column() == TIMING_COLUMN and row.get("timing_quality") in GRADE_COLORS:
                return QBrush(QColor(GRADE_COLORS[row["timing_quality"]]()))
            if index.column() == 0:
                return QBrush(config_text_color(index.row()))
        if role == Qt.ItemDataRole.BackgroundRole and failing(row):
            fill = QColor(error_color())
            fill.setAlpha(40)  # the whole row of a wrong config stands out
            return QBrush(fill)
        if role == Qt.ItemDataRole.FontRole and index.column() == ACCURACY_COLUMN and failing(row):
            font = QFont()
            font.setBold(True)
            return font
        if role == Qt.ItemDataRole.TextAlignmentRole and index.column() >= 2:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.UserRole:
            if column.text is graph_breaks:
                return sites(row)
            return row.get(column.sort_key)
        return None


TABLE_ROWS = 3  # the Summary's rows always in sight, however short the window (the rest scroll)


class SummaryPanel(QWidget, ResultsView):
    """The summary table with each config's coverage sentence above it. GUI thread only."""

    sig_localize_requested = Signal(str)
    """Find where this config's outputs diverge (its label): gui.window.localize_run."""

    sig_apply_requested = Signal(str, object)
    """Apply a change a localization found (config label, core ConfigChange) and re-run."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.model = SummaryModel(self)
        self.coverage = QLabel("Run a profile to see whether compiling pays off.")
        self.coverage.setWordWrap(True)
        self.coverage.setTextFormat(Qt.TextFormat.RichText)
        self.coverage.setToolTip(
            "How much of the model actually runs compiled, per config (from dynamo's compilation metrics)."
        )
        # The timed medians against the Time breakdown's profiled calls, when they disagree.
        self.disagreement = QLabel("")
        self.disagreement.setWordWrap(True)
        self.disagreement.setTextFormat(Qt.TextFormat.RichText)
        self.disagreement.setToolTip(
            "The Summary's medians are the benchmark's timed calls; the Time breakdown explains a few calls made "
            "afterwards under the profiler (slower by its recording). A profiled call far faster than the timed "
            "median, or the two pointing opposite ways, means the benchmark was disturbed."
        )
        self.disagreement.hide()
        self.localization = LocalizationNote()  # where a failed accuracy check diverges (gui.panels.localization)
        self.localization_section = None  # the report's `localization` section (set_localization)
        self.table = make_table(self.model, "One row per config; hover a cell for what it means.", stretch_last=False)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(self.coverage)
        layout.addWidget(self.disagreement)
        # a config failed its accuracy check and has no localization yet: find out, on request
        self.localize_button = QPushButton("Find where outputs diverge…")
        self.localize_button.setToolTip(
            "Runs the failed config through each compiler stage, its submodules one at a time and, for inductor, "
            "each numerics setting (a job each: python3 main.py localize); the finding shows here."
        )
        self.localize_button.clicked.connect(self._on_localize_clicked)
        self.localize_button.hide()
        self.fix_buttons: list[QPushButton] = []  # apply a numerics setting a localization found
        self.fix_row = QHBoxLayout()
        buttons = QVBoxLayout()
        buttons.addWidget(self.localize_button)
        buttons.addLayout(self.fix_row)
        row = QHBoxLayout()
        row.addWidget(self.localization, 1)
        row.addLayout(buttons)
        layout.addLayout(row)
        # Below the table, the selected config's every figure and finding, the very lines
        # `main.py profile` prints (core.cli.output.config_lines): worded once, in core.
        self.details = QPlainTextEdit()
        self.details.setReadOnly(True)
        self.details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.details.setPlaceholderText(DETAILS_PLACEHOLDER)
        self.details.setToolTip("The selected config's figures and findings, as `main.py profile` prints them")
        self._details_shown: tuple | None = None  # (the result shown, whether it had ended)
        split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.table)
        split.addWidget(self.details)
        split.setChildrenCollapsible(False)
        split.setStretchFactor(0, 1)
        split.setStretchFactor(1, 1)
        # the table keeps TABLE_ROWS rows in sight, the details a few lines: at 1024x700 the
        # details' two thirds left the table one row
        self.table.setMinimumHeight(self._rows_height(TABLE_ROWS))
        self.details.setMinimumHeight(self.details.fontMetrics().lineSpacing() * 3 + 12)
        layout.addWidget(split, 1)
        self.table.selectionModel().currentRowChanged.connect(self._ask_details)
        self.model.modelReset.connect(self._ask_details)
        self.model.dataChanged.connect(self._on_rows_changed)
        self.model.modelReset.connect(self._on_rows_changed)
        # Columns fitted to their contents when a text got longer than the column's longest at
        # the last fit, not at every change: with ResizeToContents the header measured every
        # cell and header at each row's 1 Hz refresh during a run (~370 calls into Python).
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self._fitted_lengths: list[int] = []
        self.model.dataChanged.connect(self._fit_columns_if_longer)
        self.model.modelReset.connect(self._fit_columns)
        self._fit_columns()  # no rows yet: each column as wide as its header (two lines were cut)

    def _rows_height(self, rows: int) -> int:
        """The table's height for its header, `rows` rows and its sideways scroll bar."""
        table = self.table
        return (
            table.horizontalHeader().sizeHint().height()
            + rows * table.verticalHeader().defaultSectionSize()
            + table.horizontalScrollBar().sizeHint().height()
            + 2 * table.frameWidth()
        )

    def _texts(self, row: int) -> list[str]:
        return [str(self.model.index(row, column).data() or "") for column in range(len(COLUMNS))]

    def _fit_columns(self) -> None:
        self.table.resizeColumnsToContents()
        lengths = [0] * len(COLUMNS)
        for row in range(self.model.rowCount()):
            lengths = [max(a, len(b)) for a, b in zip(lengths, self._texts(row))]
        self._fitted_lengths = lengths

    def _fit_columns_if_longer(self, top_left, bottom_right, *args) -> None:
        """Fit the columns whose text got longer, those only: a live row's figures grow at 1 Hz,
        and fitting every column measured every cell (~3-6 ms a refresh on the GUI thread)."""
        longer, fitted = set(), self._fitted_lengths
        fitted.extend([0] * (len(COLUMNS) - len(fitted)))  # none fitted yet: every text is longer
        for row in range(top_left.row(), bottom_right.row() + 1):
            for column, text in enumerate(self._texts(row)):
                if len(text) > fitted[column]:
                    fitted[column] = len(text)
                    longer.add(column)
        for column in sorted(longer):
            self.table.resizeColumnToContents(column)

    def bind(self, session) -> None:
        super().bind(session)
        session.sig_samples_added.connect(lambda job_id, samples: self.model.mark_changed(job_id))

    def set_localization(self, section) -> None:
        """The `localization` section of the report whose results come next (None for a run)."""
        self.localization_section = section

    def show_results(self, results: list) -> None:
        self.model.set_results(results)
        # new results start at the Config column: a sideways scroll of the previous ones hid it
        self.table.horizontalScrollBar().setValue(0)

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        self.model.mark_changed(job_id, now=ended)
        if ended:
            self._ask_details()

    def _ask_details(self, *args) -> None:
        """The details in a turn of their own, after the rows' pieces asked before them (a job's
        final row with its interval: the details then read that row, not a summary of their own)."""
        one_per_turn(self, self._show_details)

    def _show_details(self) -> None:
        """The selected config's lines (the first config's when none is selected). A running
        job's come at its end: made at every 1 Hz refresh they would cost the GUI thread."""
        count = self.model.rowCount()
        current = self.table.currentIndex()
        row = current.row() if current.isValid() else 0
        if not count or row >= count:
            self._details_shown = None
            self.details.setPlainText("")
            return
        result = self.model.result(row)
        shown = self._details_shown
        if shown is not None and shown[0] is result and shown[1] == result.ended:
            return
        self._details_shown = (result, result.ended)
        if not result.ended:
            status = getattr(result.status, "value", result.status)  # "pending" (queued) or "running"
            self.details.setPlainText(f"{result.config.label}: {status}; {NOT_ENDED_DETAILS}")
            return
        from core.cli.output import config_lines

        try:
            # the row's summary, made already (a summary of its own was 20 ms at 500,000 calls)
            text = "\n".join(config_lines(result, summary=self.model.summary(row)))
        except Exception as exc:  # noqa: BLE001 - a bug here must not leave another config's lines
            self._details_shown = None
            self.details.setPlainText(f"{result.config.label}: its details could not be shown: {exc}")
            return
        # the text's layout in a turn of its own: with the lines, 8-9 ms in one turn
        one_per_turn(self, functools.partial(self._set_details, self._details_shown, text))

    def _set_details(self, shown: tuple, text: str) -> None:
        if shown is self._details_shown:  # still the config to show (no other was selected since)
            self.details.setPlainText(text)

    def _on_rows_changed(self, *args) -> None:
        said: dict[tuple, list[str]] = {}  # (row or None, each line's text) → the configs it is said of
        rows = self.model.rowCount()
        for row in range(rows):
            s = self.model.summary(row)
            color = config_text_color(row).name()
            name = f"<span style='color:{color}'><b>{markup(s['config'])}</b></span>"
            text = s.get("coverage") or (
                "failed: " + s["failure_reason"] if s.get("status") == "failed" else s.get("status", "")
            )
            # past a few configs, one line for those that say the same ("completed", "Fully
            # compiled: ..."): eleven lines left the table below them one row
            said.setdefault((None if rows > COVERAGE_LINES else row, text), []).append(name)
        lines = [f"{', '.join(names)}: {markup(text)}" for (_, text), names in said.items()]
        self.coverage.setText("<br>".join(lines) if lines else "Run a profile to see whether compiling pays off.")
        results = [self.model.result(row) for row in range(self.model.rowCount())]
        self._show_disagreement(results)
        self.localization.show_lines(results, self.localization_section)
        self.localize_button.setVisible(bool(self.unlocalized()))
        self._show_fixes()

    def _show_fixes(self) -> None:
        """A button per numerics setting the report's localization found to make a failed
        config's check pass (core.decide.localize.fix_changes: only settings it knows)."""
        from core.decide.localize import fix_changes
        from gui.panels.localization import localization_entries

        for button in self.fix_buttons:
            self.fix_row.removeWidget(button)
            button.deleteLater()
        self.fix_buttons = []
        entries = localization_entries(self.localization_section)
        for _, label, _ in self.localization.lines:
            for change in fix_changes(entries.get(label)):
                key, value = change.inductor_options[0]
                button = QPushButton(f"Apply {key}={value} and re-run")
                button.setToolTip(f"Config {label}: {change.description}")
                button.clicked.connect(lambda _=False, lb=label, c=change: self.sig_apply_requested.emit(lb, c))
                self.fix_row.addWidget(button)
                self.fix_buttons.append(button)

    def unlocalized(self) -> list[str]:
        """The configs on screen whose accuracy check failed and that the report has not localized."""
        from gui.panels.localization import localization_entries

        done = localization_entries(self.localization_section)
        return [label for _, label, _ in self.localization.lines if label not in done]

    def _on_localize_clicked(self) -> None:
        labels = self.unlocalized()
        if labels:
            self.sig_localize_requested.emit(labels[0])

    def _show_disagreement(self, results) -> None:
        notes = [(row, _figure_notes(r, self.model.summary(row))) for row, r in enumerate(results) if r.ended]
        lines = [
            f"<span style='color:{config_text_color(row).name()}'><b>{markup(results[row].config.label)}</b></span>: "
            f"<span style='color:{warning_color()}'>{markup(note)}</span>"
            for row, note in notes
            if note
        ]
        self.disagreement.setText("<br>".join(lines))
        self.disagreement.setVisible(bool(lines))


def _figure_notes(result, summary: dict) -> str:
    """Why the figures of a row (`summary`: the row's, made once) do not divide into each other
    or disagree with the profiled calls (core.analysis.figure_agreement), as one text; "" when
    nothing needs saying."""
    medians = medians_note(summary)
    if medians:
        medians = medians[0].upper() + medians[1:] + "."
    return " ".join(n for n in (medians, agreement_note(result)) if n)
