"""File → Compare with report…: the results on screen against a saved baseline.

core.decide.compare does everything: `compare_reports` matches configs by label and writes each
verdict, `trends` says which way each figure moved; this dialog formats the figures, colours
them (worse red, better green, within the noise grey), lists the warnings (different torch,
device, threads) above the table and the verdict lines below it, and hands the baseline's
results to the window's distribution chart, which draws them under the current ones.
The baseline report is untrusted: read by core.report.files.load_report, shown as plain text.
GUI thread only.
"""

from __future__ import annotations

import os
from typing import Callable

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QCheckBox, QDialog, QLabel, QVBoxLayout

from core.analysis.quality_advice import FORM_FIELDS
from core.decide.compare import (
    BETTER,
    DEFAULT_THRESHOLD_PCT,
    NOISE,
    WORSE,
    Comparison,
    compare_reports,
    trends,
)
from core.decide.report_match import model_mismatch
from core.vocab.formatting import cell
from gui.widgets.safe_text import plain, tooltip
from gui.widgets.table_model import RowTableModel, make_table
from gui.widgets.theme import error_color
from gui.window.app_window import AppWindow

TREND_COLORS = {WORSE: error_color, BETTER: lambda: "#2e9d4a", NOISE: lambda: "#888888"}


def _change(base, new, digits: int = 3, pct=None) -> str:
    if base is None and new is None:
        return "–"
    text = f"{cell(base, f',.{digits}f', missing='–')} → {cell(new, f',.{digits}f', missing='–')}"
    if pct is None and base and new is not None:
        pct = 100 * (new / base - 1)
    return text + (f" ({pct:+.1f}%)" if pct is not None else "")


# (header, tooltip, trend key, text of a compare.csv row)
COLUMNS = (
    ("Config", "Configs are matched by label", "", lambda r: r["config"]),
    (
        "Compiled median ms",
        "Baseline → now; red/green: beyond the threshold with the 95% intervals apart, grey: within the noise",
        "compiled",
        lambda r: _change(r["compiled_median_base_ms"], r["compiled_median_new_ms"], pct=r["compiled_change_pct"]),
    ),
    (
        "Eager median ms",
        "Baseline → now (a change here means the machine or torch changed)",
        "eager",
        lambda r: _change(r["eager_median_base_ms"], r["eager_median_new_ms"], pct=r["eager_change_pct"]),
    ),
    (
        "Speedup",
        "Baseline → now; coloured when the 95% intervals are apart",
        "speedup",
        lambda r: _change(r["speedup_base"], r["speedup_new"], 2),
    ),
    (
        "Compile s",
        "First compiled call, baseline → now",
        "compile_time",
        lambda r: _change(r["compile_time_base_s"], r["compile_time_new_s"], 2),
    ),
    (
        "Peak MB",
        "Peak memory running compiled, baseline → now",
        "compiled_peak",
        lambda r: _change(r["compiled_peak_base_mb"], r["compiled_peak_new_mb"], 0),
    ),
    (
        "Accuracy",
        "Accuracy check, baseline → now",
        "accuracy",
        lambda r: f"{r['accuracy_base'] or '–'} → {r['accuracy_new'] or '–'}",
    ),
    (
        "Graph breaks",
        "Breaks added (+) and removed (−), by location and reason; hover for the list",
        "graph_breaks",
        lambda r: (
            f"+{len(r['graph_breaks_added'].split(' | ')) if r['graph_breaks_added'] else 0} / "
            f"−{len(r['graph_breaks_removed'].split(' | ')) if r['graph_breaks_removed'] else 0}"
        ),
    ),
    (
        "Recompiles",
        "Baseline → now",
        "recompiles",
        lambda r: (
            f"{'–' if r['recompiles_base'] is None else r['recompiles_base']} → "
            f"{'–' if r['recompiles_new'] is None else r['recompiles_new']}"
        ),
    ),
    ("Verdict", "core.decide.compare's verdict for this config", "", lambda r: r["verdict"]),
)


class CompareModel(RowTableModel):
    """Rows: core.decide.compare.ConfigComparison of each config. GUI thread only."""

    HEADERS = tuple((c[0], c[1]) for c in COLUMNS)

    def __init__(self, comparison: Comparison, parent=None):
        super().__init__(parent)
        self.comparison = comparison
        self._rows = [c.row() for c in comparison.configs]
        self._trends = [trends(c, comparison.threshold_pct) for c in comparison.configs]

    def trend(self, row: int, column: int) -> str:
        return self._trends[row].get(COLUMNS[column][2], "") if COLUMNS[column][2] else ""

    def data(self, index: QModelIndex | QPersistentModelIndex, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        row, column = self._rows[index.row()], COLUMNS[index.column()]
        if role == Qt.ItemDataRole.DisplayRole:
            return column[3](row)
        if role == Qt.ItemDataRole.ForegroundRole:
            trend = self.trend(index.row(), index.column())
            if not trend and index.column() == len(COLUMNS) - 1 and row["regression"]:
                trend = WORSE
            return QBrush(QColor(TREND_COLORS[trend]())) if trend else None
        if role == Qt.ItemDataRole.ToolTipRole:
            if column[2] == "graph_breaks":
                lines = [f"+ {x}" for x in row["graph_breaks_added"].split(" | ") if x]
                lines += [f"− {x}" for x in row["graph_breaks_removed"].split(" | ") if x]
                return tooltip("\n".join(lines) or "no change")
            if index.column() == len(COLUMNS) - 1:
                return tooltip(row["verdict"])
            return column[1]
        return None


class CompareDialog(QDialog):
    """The comparison of the results on screen (new) with a baseline report. GUI thread only."""

    def __init__(
        self,
        comparison: Comparison,
        baseline_path: str,
        parent=None,
        recompare: Callable[[bool], Comparison] | None = None,
    ):
        super().__init__(parent)
        self.setWindowTitle(f"Compare with {os.path.basename(baseline_path)}")
        self.comparison = comparison
        self._recompare = recompare
        self.model = CompareModel(comparison, self)
        self.table = make_table(self.model, "One row per config: baseline → now", stretch_last=True)
        head = plain(
            QLabel(
                f"Baseline: {baseline_path}  (threshold {comparison.threshold_pct:g}%; "
                "red: worse, green: better, grey: within the noise)"
            )
        )
        head.setWordWrap(True)
        self.relative = QCheckBox(
            "Judge compiled against eager (the speedup): a slower machine as a whole is not a regression"
        )
        self.relative.setToolTip(
            "compare --relative: the compiled side is judged against the eager side of its "
            "own run, for baselines from another or a busier machine"
        )
        self.relative.setChecked(comparison.relative)
        self.relative.setEnabled(recompare is not None)
        self.relative.toggled.connect(self._set_relative)
        self.warnings = plain(QLabel("\n".join(f"Warning: {w}" for w in comparison.warnings)))
        self.warnings.setWordWrap(True)
        self.warnings.setStyleSheet(f"color: {error_color()}")
        self.warnings.setVisible(bool(comparison.warnings))
        self.verdicts = plain(QLabel(self._verdict_text()))
        self.verdicts.setWordWrap(True)
        self.verdicts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout = QVBoxLayout(self)
        layout.addWidget(head)
        layout.addWidget(self.relative)
        layout.addWidget(self.warnings)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.verdicts)
        self.resize(1300, 440)

    def _verdict_text(self) -> str:
        return "\n".join(f"{c.config}: {c.verdict}" for c in self.comparison.configs)

    def _set_relative(self, relative: bool) -> None:
        self.comparison = self._recompare(relative)
        old, old_selection = self.model, self.table.selectionModel()
        self.model = CompareModel(self.comparison, self)
        self.table.setModel(self.model)
        old_selection.deleteLater()
        old.deleteLater()
        self.verdicts.setText(self._verdict_text())


def compare_with_report(window: AppWindow, path: str | None = None) -> CompareDialog | None:
    """Ask for (or take) a baseline report, compare the window's results with it, show the
    dialog and draw the baseline's distribution; None when nothing was compared."""
    from gui.window.report_opening import read_report

    results = [r for r in window.session.results if r.ended]
    if not results:
        window.show_error(
            "Nothing to compare",
            "Run a profile or open a session first: the results on screen are compared with the baseline report.",
        )
        return None
    read = read_report(window, path, window.folders.get("report"), "Compare with a baseline report")
    if read is None:
        return None
    base, base_header, path = read
    window.folders.remember("report", path)
    mismatch = model_mismatch(base, results)
    if mismatch:
        window.show_error("Not the same model", mismatch)
        return None
    new_header = {
        "environment": next((r.environment for r in results if r.environment), {}),
        "warnings": list(window.session.warnings or []),
    }
    pending = frozenset(r.config.label for r in window.session.results if not r.ended)

    def recompare(relative: bool) -> Comparison:
        return compare_reports(
            base, base_header, results, new_header, DEFAULT_THRESHOLD_PCT, relative, pending, FORM_FIELDS
        )

    comparison = recompare(False)
    window.distribution_chart.set_baseline(base, os.path.basename(os.path.dirname(os.path.abspath(path))) or path)
    dialog = CompareDialog(comparison, path, window, recompare)
    dialog.finished.connect(lambda _: window.distribution_chart.set_baseline([]))
    dialog.show()
    window.compare_dialog = dialog
    window.status_label.setText(f"Compared with {path}: {compare_status(comparison)}")
    return dialog


def compare_status(comparison: Comparison) -> str:
    """The status bar's line after a comparison: what regressed, what went missing, what could
    not be judged (a missing config read "no regression beyond the threshold and the noise")."""
    said = []
    if comparison.regressed:
        said.append("regression in " + ", ".join(c.config for c in comparison.configs if c.regression))
    if comparison.missing:
        said.append("missing from this run: " + ", ".join(comparison.missing))
    if comparison.undecided:
        said.append("cannot tell for " + ", ".join(comparison.undecided))
    return "; ".join(said) or "no regression beyond the threshold and the noise"
