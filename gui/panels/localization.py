"""Where a config's compiled outputs diverge, on screen: one line per config whose accuracy
check failed, above the Summary table.

The sentence is `profile --localize`'s own (core.decide.localize.Localization.sentence, kept in
report.json's `localization` section); the submodule is the job's own finding
(AccuracyResult.module, from core.measure.localize_modules). A failed check with neither
says how to get them: the Summary's "Find where outputs diverge…" (gui.window.localize_run) or the command line.
A report is untrusted input: entries of the wrong shape are ignored and every text is
escaped. GUI thread only.
"""

from __future__ import annotations

import shlex

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QWidget

from core.decide.localize import needs_localizing
from gui.widgets.safe_text import markup
from gui.widgets.theme import config_text_color, error_color


def localization_entries(section) -> dict[str, dict]:
    """report.json's `localization` section by config label; entries that are not a dict
    with a text `config` and `sentence` are left out (a report may hold anything)."""
    if not isinstance(section, list):
        return {}
    out: dict[str, dict] = {}
    for entry in section:
        if isinstance(entry, dict) and isinstance(entry.get("config"), str) and isinstance(entry.get("sentence"), str):
            out.setdefault(entry["config"], entry)
    return out


def localize_command(result) -> str:
    """The command line that localizes this config (profile's own --localize)."""
    return f"python3 main.py profile {shlex.quote(result.spec.model.source)} … --localize"


def localization_lines(results: list, section) -> list[tuple[int, str, str]]:
    """(row, config label, plain sentence) for each config whose accuracy check failed: where
    its outputs diverge, the submodule found, or how to find out."""
    entries = localization_entries(section)
    lines = []
    for row, result in enumerate(results):
        if not needs_localizing(result):
            continue
        label = result.config.label
        acc = result.accuracy
        entry = entries.get(label)
        parts = []
        if entry is not None:
            parts.append(f"where the outputs diverge (profile --localize): {entry['sentence']}")
        if acc.module and (entry is None or entry.get("module") != acc.module):
            err = f", max rel error {acc.module_rel_error:.1e}" if acc.module_rel_error is not None else ""
            parts.append(
                f"the deepest submodule that diverges compiled alone: `{acc.module}` ({acc.module_kind}{err}, "
                f"{acc.modules_checked} submodules checked)"
            )
        elif not acc.module and acc.module_reason and entry is None:
            parts.append(f"no submodule found: {acc.module_reason}")
        if not parts:
            parts.append(
                "the accuracy check failed; Find where outputs diverge… finds the compiler stage, the submodule "
                "and a numerics setting that fixes it (from the command line: python3 main.py localize REPORT_DIR, "
                f"or {localize_command(result)})"
            )
        lines.append((row, label, "; ".join(parts)))
    return lines


class LocalizationNote(QLabel):
    """The lines of `localization_lines`, hidden when no config failed its accuracy check.
    GUI thread only."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("localization")
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.setToolTip(
            "Where the compiled outputs diverge from eager's: the compiler stage, the submodule and any "
            "numerics setting that fixes it (profile --localize, docs/cli.md)."
        )
        self.lines: list[tuple[int, str, str]] = []
        self.hide()

    def show_lines(self, results: list, section) -> None:
        self.lines = localization_lines(results, section)
        self.setText(
            "<br>".join(
                f"<span style='color:{error_color()}'>✗</span> <span style='color:{config_text_color(row).name()}'>"
                f"<b>{markup(label)}</b></span>: {markup(text)}"
                for row, label, text in self.lines
            )
        )
        self.setVisible(bool(self.lines))
