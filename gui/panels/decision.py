"""Decision tab: which settings to ship, for how many calls, and what to try next.

Everything shown comes from core: the sentence, break-even, memory cost and code from
`core.decide.recommend.recommend(results, calls)`, the suggestions with their evidence and
"apply and re-run" actions from `core.decide.suggestions.suggest(results, calls)`. This file
only lays them out. The expected number of calls is the user's choice (core's
DEFAULT_CALLS until they change it), and changing it re-costs the options at once.

"Find best settings" (core.decide.tune's candidate set within a budget) starts here too: the
panel only says what was asked (`sig_tune_requested`), the window runs it like any run.
GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication
from PySide6.QtWidgets import (
    QDoubleSpinBox,
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from core.analysis.quality_advice import FORM_FIELDS
from core.decide.recommend import DEFAULT_CALLS, recommend
from core.decide.suggestions import (
    SUGGESTIONS_HEADING,
    UNTRIED_HEADING,
    held_back_note,
    suggest,
    suggestions_heading,
)
from core.decide.tune import DEFAULT_BUDGET_MIN
from core.vocab.limits import LIMITS
from gui.widgets.safe_text import plain
from gui.widgets.view import ResultsView

MAX_CALLS = int(min(LIMITS["calls"].high, 2_000_000_000))  # QSpinBox holds a C int


def _label(text: str = "", bold: bool = False) -> QLabel:
    label = plain(QLabel(text))  # every sentence quotes config labels and torch's messages
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    if bold:
        font = label.font()
        font.setBold(True)
        label.setFont(font)
    return label


def _code_box(text: str) -> QPlainTextEdit:
    box = QPlainTextEdit(text)
    box.setReadOnly(True)
    box.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
    box.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
    lines = max(1, text.count("\n") + 1)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * min(lines, 14) + 14)
    return box


class SuggestionCard(QFrame):
    """One core.decide.advice.Suggestion: what to do, the evidence, the code, and a button
    per ConfigChange. GUI thread only."""

    def __init__(self, suggestion, on_apply, parent: QWidget | None = None):
        super().__init__(parent)
        self.suggestion = suggestion
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 6)
        layout.addWidget(_label(f"[{suggestion.config}] {suggestion.title}", bold=True))
        if suggestion.premise:
            layout.addWidget(_label(f"Why this applies: {suggestion.premise}."))
        layout.addWidget(_label(f"Evidence: {suggestion.evidence}"))
        if suggestion.code:
            layout.addWidget(_code_box(suggestion.code))
        self.buttons: list[QPushButton] = []
        for change in suggestion.changes:
            button = QPushButton(f"Apply and re-run: {change.description}")
            button.setToolTip(f"Queue config {suggestion.config} with this change and run again")
            button.clicked.connect(lambda _=False, c=change: on_apply(suggestion.config, c))
            layout.addWidget(button, 0, Qt.AlignmentFlag.AlignLeft)
            self.buttons.append(button)


class DecisionPanel(QWidget, ResultsView):
    """The recommendation for the expected calls, its code with Copy, and the suggestions.
    GUI thread only."""

    refresh_when_shown = True  # recommend() and suggest(): the largest share of a job's end under py-spy, made twice

    sig_change_requested = Signal(str, object)
    """"Apply and re-run" was clicked: the config label and the core.decide.advice.ConfigChange."""

    sig_tune_requested = Signal(float)
    """"Find best settings" was clicked, with the budget in minutes."""

    sig_rerun_requested = Signal()
    """"Re-run" was clicked: the recommendation could not decide from these measurements."""

    sig_try_requested = Signal(object)
    """"Profile CONFIG" was clicked (core CompileConfig): only references were measured, and the
    decision needs that config profiled beside them."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._results: list = []
        self._busy = False
        self.recommendation = None
        self.suggestions: list = []

        self.calls = QSpinBox()
        self.calls.setRange(1, MAX_CALLS)
        self.calls.setGroupSeparatorShown(True)
        self.calls.setValue(DEFAULT_CALLS)
        self.calls.setToolTip(
            "How many times the model will be called after compiling, in one process: your "
            f"choice (default {DEFAULT_CALLS:,}). Total time = compile time + calls × time per call."
        )
        self.calls.valueChanged.connect(lambda _: self._recompute())
        self.budget = QDoubleSpinBox()
        self.budget.setRange(0.5, 24 * 60)
        self.budget.setDecimals(1)
        self.budget.setSuffix(" min")
        self.budget.setValue(DEFAULT_BUDGET_MIN)
        self.budget.setToolTip(
            "Find best settings stops starting candidates that no longer fit, and cancels the "
            "running one when the budget is over"
        )
        self.tune_button = QPushButton("Find best settings")
        self.tune_button.setToolTip(
            "Profile the chosen model with core's candidate configs for this device, "
            "cheapest compile first, within the budget; then recommend one"
        )
        self.tune_button.clicked.connect(lambda: self.sig_tune_requested.emit(self.budget.value()))
        top = QHBoxLayout()
        top.addWidget(QLabel("Expected calls (your choice):"))
        top.addWidget(self.calls)
        top.addSpacing(24)
        top.addWidget(QLabel("Budget:"))
        top.addWidget(self.budget)
        top.addWidget(self.tune_button)
        top.addStretch(1)

        self.sentence = _label("Run a profile to get a recommendation.", bold=True)
        self.details = _label()
        self.code = _code_box("")
        self.code.setToolTip("The torch.compile call (and dynamo settings) of the recommended config")
        self.copy_button = QPushButton("Copy")
        self.copy_button.setToolTip("Copy the code to the clipboard")
        self.copy_button.clicked.connect(self._on_copy_clicked)
        self.copy_button.setEnabled(False)
        code_row = QHBoxLayout()
        code_row.addWidget(self.code, 1)
        code_row.addWidget(self.copy_button, 0, Qt.AlignmentFlag.AlignTop)
        self._show_code(False)
        self.tune_notes = _label()
        self.tune_notes.hide()
        self.rerun_button = QPushButton("Re-run")
        self.rerun_button.setToolTip("Run these configs again: the measurements could not decide")
        self.rerun_button.clicked.connect(self._on_rerun_clicked)
        self.rerun_button.hide()
        self.applied = _label()  # before and after of the suggestions applied
        self.applied.hide()
        self._before: dict = {}  # new config label → the result the change was applied to

        self.suggestions_title = _label("Suggestions", bold=True)
        self.held_back = _label()  # suggestions left out for lack of a usable timing (core: held_back_note)
        self.held_back.hide()
        self.untried_title = _label(UNTRIED_HEADING, bold=True)  # over the settings not tried, in the cards
        self.untried_title.hide()
        self.cards_box = QWidget()
        self.cards = QVBoxLayout(self.cards_box)
        self.cards.setContentsMargins(0, 0, 0, 0)
        self.card_widgets: list[SuggestionCard] = []

        inner = QWidget()
        body = QVBoxLayout(inner)
        body.addLayout(top)
        body.addWidget(self.sentence)
        body.addWidget(self.rerun_button, 0, Qt.AlignmentFlag.AlignLeft)
        body.addWidget(self.applied)
        body.addWidget(self.details)
        body.addLayout(code_row)
        body.addWidget(self.tune_notes)
        body.addWidget(self.suggestions_title)
        body.addWidget(self.held_back)
        body.addWidget(self.cards_box)
        body.addStretch(1)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setWidget(inner)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addWidget(scroll)

    # ---------------------------------------------------------------- ResultsView
    def show_results(self, results: list) -> None:
        self._results = list(results)
        self._recompute()

    def refresh(self, results: list, job_id: str = "", ended: bool = False) -> None:
        if ended:  # figures of a running job are not final: the decision waits for its end
            self._results = list(results)
            self._recompute()

    # ---------------------------------------------------------------- public
    def set_busy(self, busy: bool) -> None:
        """A run is going: no new run may start from here."""
        self._busy = busy
        self.tune_button.setEnabled(not busy)
        self.rerun_button.setEnabled(not busy)
        for card in self.card_widgets:
            for button in card.buttons:
                button.setEnabled(not busy)

    def set_before(self, label: str, result) -> None:
        """Config `label` comes from applying a suggestion to `result`: once it has run, say what
        the change measured (core.decide.compare.change_effect)."""
        self._before[label] = result

    def set_tune_notes(self, text: str) -> None:
        """What the budget did to the candidates of a Find-best-settings run ('' hides it)."""
        self.tune_notes.setText(text)
        self.tune_notes.setVisible(bool(text))

    # ---------------------------------------------------------------- internals
    def _recompute(self) -> None:
        ended = [r for r in self._results if r.ended]
        calls = self.calls.value()
        if not ended:
            self.recommendation, self.suggestions = None, []
            self.sentence.setText(
                "Run a profile to get a recommendation."
                if not self._results
                else "The recommendation comes when the first config has finished."
            )
            self.details.setText("")
            self.code.setPlainText("")
            self.copy_button.setEnabled(False)
            self._show_code(False)
        else:
            rec = self.recommendation = recommend(ended, calls, FORM_FIELDS)  # re-run advice names the form's fields
            self.sentence.setText(rec.sentence)
            lines = []
            if rec.break_even_calls is not None:
                lines.append(f"Break-even: after {rec.break_even_calls:,.0f} calls the compile has paid for itself.")
            if rec.memory:
                lines.append(rec.memory)
            if rec.per_call_basis and rec.choice:  # the sentence quotes a time a call only when it chose
                lines.append(rec.per_call_basis)
            lines.append(f"How sure: {rec.how_sure}.")
            if rec.rerun:
                lines.append(f"To decide: {rec.rerun}.")
            self.details.setText("\n".join(lines))
            self.code.setPlainText(rec.code)
            self.code.setFixedHeight(self.code.fontMetrics().lineSpacing() * min(rec.code.count("\n") + 1, 14) + 14)
            self.copy_button.setEnabled(bool(rec.code))
            self._show_code(bool(rec.code))  # no empty box under "cannot tell" or "not compiled"
            self.suggestions = suggest(ended, calls)
        rerun = self.recommendation is not None and bool(self.recommendation.rerun)
        needs = self.recommendation.try_config if rerun else None
        # only references measured: running them again cannot decide, profiling the config can
        self.rerun_button.setText(f"Profile {needs.label}" if needs is not None else "Re-run")
        self.rerun_button.setToolTip(
            f"Profile {needs.label} beside these results (what the decision needs)"
            if needs is not None
            else "Run these configs again: the measurements could not decide"
        )
        self.rerun_button.setVisible(rerun)
        self.rerun_button.setEnabled(not self._busy)
        self._show_applied(ended)
        self._show_suggestions()

    def _show_code(self, shown: bool) -> None:
        self.code.setVisible(shown)
        self.copy_button.setVisible(shown)

    def _on_rerun_clicked(self) -> None:
        needs = self.recommendation.try_config if self.recommendation is not None else None
        if needs is not None:
            self.sig_try_requested.emit(needs)
        else:
            self.sig_rerun_requested.emit()

    def _show_applied(self, ended: list) -> None:
        """Before and after of each suggestion applied in this session."""
        from core.decide.compare import change_effect

        lines = []
        for r in ended:
            if not r.spec.applied:
                continue
            rule, source, description = (list(r.spec.applied) + ["", "", ""])[:3]
            before = self._before.get(r.config.label)
            if before is None:  # a saved session: the earlier result is among the results
                before = next((b for b in self._results if b.config.label == source and b is not r), None)
            if before is not None:
                lines.append(change_effect(before, r, f"Applied {description} ({rule} suggestion)"))
        self.applied.setText("\n".join(lines))
        self.applied.setVisible(bool(lines))

    def _show_suggestions(self) -> None:
        for card in self.card_widgets:
            self.cards.removeWidget(card)
            card.deleteLater()
        self.cards.removeWidget(self.untried_title)
        said = [s for s in self.suggestions if not s.untried]
        untried = [s for s in self.suggestions if s.untried]  # after their own heading (core: suggestion_sections)
        self.card_widgets = [SuggestionCard(s, self.sig_change_requested.emit) for s in said + untried]
        for i, card in enumerate(self.card_widgets):
            if i == len(said) and untried:
                self.cards.addWidget(self.untried_title)
            self.cards.addWidget(card)
            for button in card.buttons:
                button.setEnabled(not self._busy)
        self.untried_title.setVisible(bool(untried))
        self.suggestions_title.setText(
            suggestions_heading(self.recommendation)
            if said
            else f"{SUGGESTIONS_HEADING}: none."
            if self.recommendation
            else ""
        )
        note = held_back_note([r for r in self._results if r.ended]) if self.recommendation else ""
        self.held_back.setText(note)
        self.held_back.setVisible(bool(note))

    def _on_copy_clicked(self) -> None:
        if self.recommendation is not None:
            QGuiApplication.clipboard().setText(self.recommendation.code)
