"""Where a failed accuracy check diverges, as the Summary tab says it: profile --localize's
sentence from report.json, the submodule a job found, else how to find out; a report's
section of the wrong shape is ignored and its text escaped."""

from __future__ import annotations

from core.vocab import records as rec
from gui.panels.localization import LocalizationNote, localization_lines
from tests.gui.helpers import fake_result

SENTENCE = "outputs diverge in dynamo's graph capture (first seen with backend eager), in `block.odd` (Odd)."


def _failed(job_id="job1", backend="eager", **module):
    r = fake_result(job_id, backend=backend, breaks=False)
    r.accuracy = rec.AccuracyResult(status="fail", reason="['logits']: max abs error 0.1", **module)
    return r


def test_a_failed_check_with_a_localization_shows_its_sentence():
    lines = localization_lines([_failed()], [{"config": "eager", "sentence": SENTENCE, "module": "block.odd"}])
    assert lines == [(0, "eager", f"where the outputs diverge (profile --localize): {SENTENCE}")]


def test_a_failed_check_without_one_says_how_to_get_it():
    ((row, label, text),) = localization_lines([_failed()], None)
    assert "profile" in text and text.endswith("--localize)") and "graph_break_model.py" in text
    assert "Find where outputs diverge…" in text and "python3 main.py localize REPORT_DIR" in text
    assert "diverge (profile --localize)" not in text


def test_the_submodule_a_job_found_is_named():
    r = _failed(module="block.odd", module_kind="Odd", modules_checked=4, module_rel_error=0.05)
    ((_, _, text),) = localization_lines([r], [{"config": "aot_eager", "sentence": "elsewhere"}])  # another config's
    assert text.startswith(
        "the deepest submodule that diverges compiled alone: `block.odd` (Odd, max rel error 5.0e-02"
    )
    assert "4 submodules checked" in text and "--localize" not in text


def test_only_failed_checks_get_a_line_and_each_its_own_config():
    passed = fake_result("ok", backend="aot_eager", breaks=False)
    passed.accuracy = rec.AccuracyResult(status="pass", reason="")
    results = [passed, _failed("f", backend="inductor")]
    section = [{"config": "aot_eager", "sentence": "not this one"}, {"config": "inductor", "sentence": SENTENCE}]
    assert [(row, label) for row, label, _ in localization_lines(results, section)] == [(1, "inductor")]


def test_a_hostile_section_is_ignored_and_its_text_escaped(qtbot):
    r = _failed()
    for section in ("text", {"config": "eager"}, [1, None, {"config": 3, "sentence": "x"}, {"config": "eager"}]):
        ((_, _, text),) = localization_lines([r], section)
        assert text.endswith("--localize)")  # as with no section
    note = LocalizationNote()
    qtbot.addWidget(note)
    note.show_lines([r], [{"config": "eager", "sentence": "<img src=x> & <b>bold</b>"}])
    assert "&lt;img src=x&gt; &amp; &lt;b&gt;bold&lt;/b&gt;" in note.text() and "<img" not in note.text()
    assert not note.isHidden()
    note.show_lines([], None)
    assert note.isHidden()


def test_a_setting_the_localization_found_is_offered_to_apply_and_only_one_it_knows(qtbot):
    from core.decide.localize import fix_changes
    from gui.panels.summary import SummaryPanel

    crafted = {
        "config": "inductor",
        "sentence": "s",
        "fixes": [["cpp.cxx", "sh -c x"], ["emulate_precision_casts", 1], "x"],
    }
    assert fix_changes(crafted) == [] and fix_changes(None) == [] and fix_changes({"fixes": "no"}) == []
    (change,) = fix_changes({"fixes": [["emulate_precision_casts", True]]})
    assert change.inductor_options == (("emulate_precision_casts", True),)

    panel = SummaryPanel()
    qtbot.addWidget(panel)
    failed = _failed(backend="inductor")
    section = [
        {
            "config": failed.config.label,
            "sentence": "outputs diverge in inductor's code",
            "fixes": [["emulate_precision_casts", True], ["cpp.cxx", "x"]],
        }
    ]
    panel.set_localization(section)
    panel.show_results([failed])
    assert [b.text() for b in panel.fix_buttons] == ["Apply emulate_precision_casts=True and re-run"]
    with qtbot.waitSignal(panel.sig_apply_requested) as asked:
        panel.fix_buttons[0].click()
    assert asked.args[0] == failed.config.label and asked.args[1].inductor_options == (
        ("emulate_precision_casts", True),
    )
    panel.set_localization(None)
    panel.show_results([failed])
    assert panel.fix_buttons == []
