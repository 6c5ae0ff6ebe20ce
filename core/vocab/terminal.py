"""Untrusted text made safe to print on a terminal: what the commands print from torch's records
(file and function names, reasons), model paths and reports goes through `terminal_text`.

Control characters (ESC sequences that move the cursor, set the window title or the clipboard,
OSC 52) are written as escapes ("\\x1b"); so are the Unicode bidirectional controls (U+202E
RIGHT-TO-LEFT OVERRIDE and the rest: a file name with one reads backwards, "Trojan Source") and
the line and paragraph separators. Tabs and line breaks are kept. No Qt; any thread.
"""

from __future__ import annotations

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)  # ALM, LRM, RLM, LRE, RLE, PDF, LRO, RLO, LRI, RLI, FSI, PDI
LINE_SEPARATORS = frozenset("\u2028\u2029")


def _escaped(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal_text(text) -> str:
    """`text` (any value; None is "") as it may be printed to a terminal: see the module docstring."""
    text = "" if text is None else str(text)
    return "".join(
        _escaped(ch)
        if (ch not in "\n\t" and (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F))
        or ch in BIDI_CONTROLS
        or ch in LINE_SEPARATORS
        else ch
        for ch in text
    )
