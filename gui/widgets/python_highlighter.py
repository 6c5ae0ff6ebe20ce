"""A small Python syntax highlighter for the FX graph code and inductor's output code:
keywords, strings, comments, numbers and `def`/`class` names. Line by line (triple-quoted
strings spanning lines are carried over with the block state). GUI thread only."""

from __future__ import annotations

import keyword
import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat

from gui.widgets.theme import is_dark


def _format(color: str, bold: bool = False, italic: bool = False) -> QTextCharFormat:
    f = QTextCharFormat()
    f.setForeground(QColor(color))
    if bold:
        f.setFontWeight(QFont.Weight.Bold)
    f.setFontItalic(italic)
    return f


class PythonHighlighter(QSyntaxHighlighter):
    """Highlights the QTextDocument it is given as Python."""

    _RULES = (
        ("keyword", r"\b(?:" + "|".join(keyword.kwlist) + r")\b"),
        ("builtin", r"\b(?:torch|aten|prims|self|None|True|False)\b"),
        ("number", r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"),
        ("definition", r"(?<=\bdef )\w+|(?<=\bclass )\w+"),
        ("string", r"'[^'\\\n]*(?:\\.[^'\\\n]*)*'|\"[^\"\\\n]*(?:\\.[^\"\\\n]*)*\""),
        ("comment", r"#[^\n]*"),
    )
    _TRIPLE = re.compile(r"'''|\"\"\"")

    def __init__(self, document):
        super().__init__(document)
        dark = is_dark()
        self.formats = {
            "keyword": _format("#ff79c6" if dark else "#0000c0", bold=True),
            "builtin": _format("#8be9fd" if dark else "#00627a"),
            "number": _format("#bd93f9" if dark else "#1750eb"),
            "definition": _format("#50fa7b" if dark else "#795e26", bold=True),
            "string": _format("#f1fa8c" if dark else "#067d17"),
            "comment": _format("#8a8a8a", italic=True),
        }
        self.rules = [(re.compile(pattern), kind) for kind, pattern in self._RULES]

    def highlightBlock(self, text: str) -> None:
        for pattern, kind in self.rules:
            for m in pattern.finditer(text):
                self.setFormat(m.start(), m.end() - m.start(), self.formats[kind])
        # triple-quoted strings (inductor's output code holds C++ kernels in them)
        start, in_string = 0, self.previousBlockState() == 1
        self.setCurrentBlockState(0)
        pos = 0
        while True:
            m = self._TRIPLE.search(text, pos)
            if in_string:
                end = m.end() if m else len(text)
                self.setFormat(start, end - start, self.formats["string"])
                if m is None:
                    self.setCurrentBlockState(1)
                    return
                in_string, pos = False, m.end()
            else:
                if m is None:
                    return
                in_string, start, pos = True, m.start(), m.end()
