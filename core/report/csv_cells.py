"""CSV text a spreadsheet opens safely: every cell through `safe_cell` (text a spreadsheet would run
as a formula, starting with = + - @, a tab or a carriage return, is prefixed with a quote;
numbers are written as numbers), the file's text made by `csv_text`.
"""

from __future__ import annotations

import csv
import io
from typing import Any, Callable, Iterable

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def safe_cell(value):
    """Make a value safe for a spreadsheet: formula-like text gets a leading quote."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return value
    text = str(value)
    if text.startswith(_FORMULA_START):
        return "'" + text
    return text


def csv_text(columns: list[str], rows: Iterable[dict], cell: Callable[[Any], Any] | None = None) -> str:
    """A CSV file's text: the header, then each row's `columns` (a missing key is empty),
    every cell through `cell` (default `safe_cell`: no spreadsheet formulas)."""
    cell = cell or safe_cell
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([cell(row.get(c)) for c in columns])
    return buf.getvalue()
