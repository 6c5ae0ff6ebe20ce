"""What the commands print from torch's records, file names and reports is safe for a terminal:
no raw escape sequences, no bidirectional controls (core.vocab.terminal)."""

from core.cli.output import Progress, print_summary
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab.terminal import terminal_text
from tests.core.fakes import fake_result
from tests.core.helpers import make_spec

HOSTILE = "evil\x1b]52;c;cGF5bG9hZA==\x07\u202egpj.py"  # OSC 52 (the clipboard), then a right-to-left override


def test_terminal_text_escapes_controls_and_bidi_and_keeps_the_rest():
    assert terminal_text("a\x1b[2Jb\u202ec\u2066d\u200fe\u2028f\tg\nh é 中") == (
        "a\\x1b[2Jb\\u202ec\\u2066d\\u200fe\\u2028f\tg\nh é 中"
    )
    assert terminal_text(None) == ""


def _assert_safe(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "\\x1b]52" in text and "\\u202egpj.py" in text


def test_the_summary_escapes_a_graph_breaks_file_and_function(capsys):
    """The reported case: escape codes and U+202E from file and function names reached the console."""
    brk = rec.GraphBreak(f"reason {HOSTILE}", "GB0170", file=f"/models/{HOSTILE}", line=3, source="x")
    skip = rec.GraphBreak("skipped", "", file=f"/m/{HOSTILE}", line=1, frame_skipped=True, eager_function=HOSTILE)
    print_summary([fake_result("inductor", graph_breaks=(brk, skip))])
    _assert_safe(capsys.readouterr().out)


def test_progress_lines_escape_what_the_job_reports(capsys):
    progress = Progress(bar=False)
    spec = make_spec(f"/tmp/{HOSTILE}")
    progress.on_job_started(1, 1, spec)
    progress.on_event(ev.PhaseChanged(spec.job_id, phase="load", detail=f"loading /tmp/{HOSTILE}"))
    _assert_safe(capsys.readouterr().err)
