"""The Resources tab's wording and colours (issue 19 item 10)."""

from __future__ import annotations

from core.run.sampling import nvml_reason
from core.vocab.records import PHASES


def test_no_gpu_note_says_why_and_what_the_panel_would_show(qtbot):
    from gui.panels.resources import ResourcePanel

    panel = ResourcePanel()
    qtbot.addWidget(panel)
    panel.set_gpu(False, nvml_reason(type("NVMLError_LibraryNotFound", (Exception,), {})()))
    text = panel.gpu_note.text()
    assert "no NVIDIA driver on this machine" in text and "LibraryNotFound)" not in text
    assert "would also chart the job's GPU utilisation and GPU memory" in text


def test_every_phase_has_a_colour_of_its_own():
    from gui.widgets.theme import PHASE_COLORS

    assert set(PHASES) <= set(PHASE_COLORS)
    colours = [PHASE_COLORS[p] for p in PHASES]
    assert len(set(colours)) == len(colours)  # accuracy, op_profile and localize were all load's grey
