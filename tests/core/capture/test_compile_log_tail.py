"""A huge compile log is read at its start and its end, never whole (issue 18 item 8): a 2 GB
log must not be read, and what went wrong at the end of a long compile is where users look."""

from __future__ import annotations

import os
import time

from core.capture.compile_log import read_log, unread_part
from tests.core.helpers import LOG_FIRST as FIRST
from tests.core.helpers import LOG_LAST as LAST
from tests.core.helpers import sparse_log


def test_a_2_gb_log_shows_its_start_and_its_end_read_in_part(tmp_path):
    path = tmp_path / "huge.log"
    sparse_log(path, 2 * 2**30)
    start = time.monotonic()
    entries = read_log(str(path))
    took = time.monotonic() - start
    assert took < 10  # reading 72 MB of it; the whole 2 GB would take far longer and the memory with it
    assert entries[0].text.startswith("compiling forward (the first message)") and entries[0].compile_id == "0/0"
    assert entries[-2].level == "error" and entries[-2].text == "the last message: compile failed at the end"
    assert entries[-1].text == "done" and entries[-1].compile_id == "3/7"
    note = unread_part(entries)
    assert note.startswith(f"{path} is 2.0 GB: shown are its first 64 MB and its last 8 MB; the 1.9 GB between")
    assert sum(len(e.text) for e in entries) < 1_000_000  # the holes' NULs cut as over-long lines


def test_a_log_that_fits_is_read_whole_with_no_note(tmp_path):
    path = tmp_path / "small.log"
    path.write_text(FIRST * 10 + LAST)
    entries = read_log(str(path), max_bytes=1000, tail_bytes=1000)
    assert unread_part(entries) == "" and entries[-1].text == "done"
    entries = read_log(str(path), max_bytes=200, tail_bytes=150)  # 1.3 KB: a start, an end, the middle named
    note = unread_part(entries)
    assert note and "between were not read" in note and entries[-1].text == "done"
    assert entries[0].text.startswith("compiling forward")
    os.mkfifo(tmp_path / "fifo.log")
    assert read_log(str(tmp_path / "fifo.log")) == []  # never blocks on a FIFO
