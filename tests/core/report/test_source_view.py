"""The "By source line" view's figures (core.report.source_view): which lines got slower, what
the lines account for, and a source file read only when it is the one the report profiled."""

from __future__ import annotations

import os

from core.report.source_view import MAX_SOURCE_BYTES, accounted_text, got_slower, line_files, source_file
from core.vocab.op_records import LineTime, OpProfile, SideOpProfile

SOURCE = "import torch\n\n\ndef forward(x):\n    h = x.relu()\n    if h.sum() > 0:\n        h = h * 2\n    return h\n"


def _lines(path: str) -> tuple[LineTime, ...]:
    return (
        LineTime(path, 5, "h = x.relu()", eager_ms=0.30, compiled_ms=0.10, kernels=("cpp_fused_relu_0",)),
        LineTime(path, 6, "if h.sum() > 0:", eager_ms=0.05, compiled_ms=0.20, graph_break=True),
        LineTime(path, 7, "h = h * 2", eager_ms=0.10, compiled_ms=0.104),  # within the noise
    )


def test_a_line_got_slower_only_past_the_noise():
    a, b, c = _lines("/m.py")
    assert not got_slower(a) and got_slower(b) and not got_slower(c)
    assert not got_slower(LineTime("/m.py", 1, eager_ms=0.1))  # the compiled side not profiled
    assert got_slower(LineTime("/m.py", 1, eager_ms=0.0, compiled_ms=0.01))  # time only compiled


def test_what_the_lines_account_for_names_both_sides_and_the_rest():
    compiled = SideOpProfile("compiled", calls=3, ms_per_call=0.5)
    p = OpProfile(
        calls=3,
        compiled=compiled,
        lines=_lines("/m.py"),
        lines_eager_ms=0.45,
        lines_eager_call_ms=0.6,
        lines_compiled_ms=0.404,
        lines_unmatched_ms=0.02,
        lines_note="the eager calls under the line timer took 2.1x the profiled eager call",
    )
    text = accounted_text(p)
    assert "The 3 lines hold 0.45 ms of the 0.60 ms eager call" in text
    assert "0.40 ms of the 0.50 ms compiled call (96 µs on no line" in text and "20 µs of kernels" in text
    assert "Note: the eager calls under the line timer took 2.1x" in text
    assert accounted_text(None) == "" and accounted_text(OpProfile(calls=3)) == ""


def test_files_with_most_time_come_first():
    lines = (*_lines("/a.py"), LineTime("/b.py", 1, eager_ms=5.0, compiled_ms=5.0))
    assert line_files(OpProfile(calls=1, lines=lines)) == ["/b.py", "/a.py"] and line_files(None) == []


def test_the_profiled_file_is_shown_whole_with_its_times(tmp_path):
    path = str(tmp_path / "model.py")
    open(path, "w").write(SOURCE)
    view = source_file(path, (*_lines(path), LineTime("/other.py", 5, "x")))
    assert view.whole and not view.note and len(view.rows) == 8
    assert [r.number for r in view.rows if r.times] == [5, 6, 7] and view.rows[4].times.kernels == ("cpp_fused_relu_0",)
    assert view.rows[0].text == "import torch" and view.rows[4].text == "    h = x.relu()"


def test_a_changed_missing_or_foreign_file_shows_only_the_recorded_lines(tmp_path):
    path = str(tmp_path / "model.py")
    open(path, "w").write(SOURCE.replace("h * 2", "h * 3"))
    changed = source_file(path, _lines(path))
    assert not changed.whole and "line 7 reads differently now" in changed.note
    assert [(r.number, r.text) for r in changed.rows] == [(5, "h = x.relu()"), (6, "if h.sum() > 0:"), (7, "h = h * 2")]
    missing = source_file(str(tmp_path / "gone.py"), _lines(str(tmp_path / "gone.py")))
    assert not missing.whole and "cannot be read here" in missing.note and len(missing.rows) == 3
    # a report naming a file that is not Python: never read, whatever it names
    passwd = source_file("/etc/passwd", (LineTime("/etc/passwd", 1, "a line the report made up", eager_ms=1.0),))
    assert not passwd.whole and "not a Python file" in passwd.note
    assert [r.text for r in passwd.rows] == ["a line the report made up"]
    # a FIFO named like a model file: not opened for reading (it would block)
    fifo = str(tmp_path / "pipe.py")
    os.mkfifo(fifo)
    assert not source_file(fifo, (LineTime(fifo, 1, "x", eager_ms=1.0),)).whole
    # a huge file is not read
    big = str(tmp_path / "big.py")
    with open(big, "w") as fh:
        fh.write("x = 1\n" * (MAX_SOURCE_BYTES // 6 + 10))
    assert "over" in source_file(big, (LineTime(big, 1, "x = 1", eager_ms=1.0),)).note


def test_one_guessed_line_shows_a_window_around_it_not_the_whole_file(tmp_path):
    """The reported case: a report naming any .py file with one line that is easy to guess
    ("import os") showed the whole file."""
    from core.report.source_view import CONTEXT_LINES

    path = str(tmp_path / "settings.py")
    body = [f"SECRET_{i} = {i}" for i in range(1, 200)]
    body[99] = "import os"  # line 100
    open(path, "w").write("\n".join(body) + "\n")
    view = source_file(path, (LineTime(path, 100, "import os", eager_ms=1.0),))
    assert not view.whole and f"{CONTEXT_LINES} lines either side" in view.note
    assert [r.number for r in view.rows] == list(range(100 - CONTEXT_LINES, 100 + CONTEXT_LINES + 1))
    assert view.rows[CONTEXT_LINES].text == "import os" and view.rows[CONTEXT_LINES].times is not None
