"""One-line labels that never cut their text silently. `FittingLabel` shows the longest of its
texts the room allows: a chart title that wrapped into a five-line column in a narrow window (the
chart below it lost that height) now drops its parenthetical instead. `ElidedLabel` shows one
line of plain text shortened with "…" to its width: a status line cut at a window's progress bar
("Running timm:vit_tiny · inductor: compiling forw", issue 44). Both say their whole text in
their tooltip whenever they show less of it. GUI thread only.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy


def _plain(rich: str) -> str:
    doc = QTextDocument()
    doc.setHtml(rich)
    return doc.toPlainText()


class FittingLabel(QLabel):
    """Shows the first of `texts` (rich text, longest first) that fits its width in one line;
    the last when none does (cut at the right). Its width follows the layout, never the text.
    While it shows a shorter text its tooltip is the first, unless `setToolTip` gave one."""

    def __init__(self, texts: list[str], parent=None):
        super().__init__(texts[0], parent)
        self._texts = list(texts)
        self._widths: dict[str, float] = {}
        self._own_tip = ""  # the tooltip given by setToolTip; "" until then
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)

    def setToolTip(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._own_tip = text
        super().setToolTip(text)

    def text_width(self, text: str) -> float:
        width = self._widths.get(text)
        if width is None:
            doc = QTextDocument()
            doc.setDefaultFont(self.font())
            doc.setDocumentMargin(0)
            doc.setHtml(text)
            width = self._widths[text] = doc.idealWidth()
        return width

    def fitting_text(self, width: float) -> str:
        return next((t for t in self._texts if self.text_width(t) <= width), self._texts[-1])

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        text = self.fitting_text(self.contentsRect().width())
        if text != self.text():
            self.setText(text)
            if not self._own_tip:
                super().setToolTip("" if text == self._texts[0] else _plain(self._texts[0]))

    def changeEvent(self, event) -> None:  # another font: measure again
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._widths.clear()


class ElidedLabel(QLabel):
    """One line of plain text (untrusted text stays text), shortened with "…" at `mode` to its
    width; the whole text in its tooltip while shortened (`tip`, a tooltip of its own, after it).
    Its width follows the layout, never the text. `setText` sets the whole text; `text()` is
    what shows, `whole_text()` the whole."""

    def __init__(
        self, text: str = "", mode: Qt.TextElideMode = Qt.TextElideMode.ElideRight, parent=None, tip: str = ""
    ):
        super().__init__(parent)
        self._whole, self._mode, self._tip = "", mode, tip
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)
        self.setText(text)

    def whole_text(self) -> str:
        return self._whole

    def setText(self, text: str) -> None:  # noqa: N802 (Qt's name)
        self._whole = str(text)
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def changeEvent(self, event) -> None:  # another font: another width
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._fit()

    def _fit(self) -> None:
        width = self.contentsRect().width() - 2 * self.margin()
        shown = self.fontMetrics().elidedText(self._whole, self._mode, max(0, width)) if width > 0 else self._whole
        if shown != super().text():
            super().setText(shown)
        whole = self._whole if shown != self._whole else ""
        super().setToolTip("\n\n".join(t for t in (whole, self._tip) if t))
