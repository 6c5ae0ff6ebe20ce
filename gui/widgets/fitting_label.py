"""A one-line label that shows the longest of its texts the room allows: a chart title that
wrapped into a five-line column in a narrow window (the chart below it lost that height) now
drops its parenthetical instead. GUI thread only."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QLabel, QSizePolicy


class FittingLabel(QLabel):
    """Shows the first of `texts` (rich text, longest first) that fits its width in one line;
    the last when none does (cut at the right). Its width follows the layout, never the text."""

    def __init__(self, texts: list[str], parent=None):
        super().__init__(texts[0], parent)
        self._texts = list(texts)
        self._widths: dict[str, float] = {}
        self.setWordWrap(False)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(0)

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

    def changeEvent(self, event) -> None:  # another font: measure again
        super().changeEvent(event)
        if event.type() == event.Type.FontChange:
            self._widths.clear()
