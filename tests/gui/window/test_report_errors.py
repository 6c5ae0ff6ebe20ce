"""Opening a report that cannot be read (a value of the wrong type) or comes from another
report version: the error names the file and the problem in a message box, no traceback,
what was on screen stays; the report's warnings are shown above the results. The results
always say which model and configs they belong to."""

from __future__ import annotations

import json
import os

from PySide6.QtWidgets import QMessageBox

from core.report.files import ReportError
from core.report.report_contents import report_json
from core.vocab import records as rec
from tests.gui.helpers import GRAPH_BREAK_MODEL, fake_result


def _error_box(window) -> QMessageBox:
    boxes = [b for b in window.findChildren(QMessageBox, "error_box") if b.isVisible()]
    assert boxes, "no error box shown"
    return boxes[-1]


def _write(tmp_path, doc, name="report.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(doc))
    return str(path)


def _shown_before(window) -> None:
    window.session.load([fake_result("before")], {})
    assert window.summary_panel.model.rowCount() == 1


def _still_shown(window) -> None:
    assert [r.job_id for r in window.session.results] == ["before"]
    assert window.summary_panel.model.rowCount() == 1
    assert window.graph_breaks_panel.model.rowCount() == 2
    assert window.latency_chart.point_count("before", "compiled") == 20


def test_report_error_is_shown_with_the_file_and_nothing_is_lost(qtbot, window, tmp_path, monkeypatch, capfd):
    _shown_before(window)

    def refuse(path):
        raise ReportError(f"{path} cannot be opened: jobs[0].compile.compile_time_s must be a number, not 'fast'.")

    monkeypatch.setattr("gui.window.report_opening.load_report", refuse)
    path = str(tmp_path / "colleague.json")
    assert not window.open_session(path)
    box = _error_box(window)
    assert "colleague.json" in box.windowTitle() + box.text() and "compile_time_s must be a number" in box.text()
    assert "stays" in box.text()
    _still_shown(window)
    assert "Traceback" not in capfd.readouterr().err


def test_wrong_typed_values_are_refused_without_a_traceback(qtbot, window, tmp_path, capfd):
    _shown_before(window)
    doc = json.loads(report_json([fake_result("new")]))
    bad_latency = json.loads(json.dumps(doc))
    bad_latency["jobs"][0]["compile"]["compile_time_s"] = "fast"
    bad_backend = json.loads(json.dumps(doc))
    bad_backend["jobs"][0]["spec"]["config"]["backend"] = 3
    for name, bad, field in (("latency.json", bad_latency, "compile_time_s"), ("backend.json", bad_backend, "backend")):
        path = _write(tmp_path, bad, name)
        assert not window.open_session(path)
        box = _error_box(window)
        assert name in box.text() and field in box.text(), box.text()
        box.close()
        _still_shown(window)
    err = capfd.readouterr().err
    assert "Traceback" not in err, err


def test_a_value_no_panel_can_show_puts_the_previous_results_back(qtbot, window, tmp_path, monkeypatch, capfd):
    """Whatever slips past the report's type checks is caught when the panels draw it."""
    _shown_before(window)
    broken = fake_result("broken")
    broken.graph_breaks[0] = rec.GraphBreak("reason", file="model.py", line="15")  # not a number
    monkeypatch.setattr("gui.window.report_opening.load_report", lambda path: ([broken], {}))
    assert not window.open_session(str(tmp_path / "odd.json"))
    assert "odd.json" in _error_box(window).text()
    _still_shown(window)
    assert "Traceback" not in capfd.readouterr().err


def test_report_version_warnings_are_shown_above_the_results(qtbot, window, tmp_path):
    doc = json.loads(report_json([fake_result("new")]))
    doc["report_version"] = 99
    assert window.open_session(_write(tmp_path, doc))
    banner = window.results_header.warnings
    assert banner.isVisibleTo(window) and "newer compile-profiler" in banner.text() and "99" in banner.text()
    assert "warning" in window.status_label.text()
    window.session.load([fake_result("run")], {})  # a run of its own: no report, no warning
    assert not banner.isVisibleTo(window)


def test_results_say_which_model_and_configs_they_belong_to(qtbot, window, tmp_path):
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    window.session.load([fake_result("a"), fake_result("b", backend="aot_eager")], {})
    header = window.results_header
    assert "Results: graph_break_model.py</b> (eager, aot_eager)" in header.text()
    assert not header.is_previous_model() and "graph_break_model.py" in window.windowTitle()
    # choosing another model (as a click in the examples list does during a run) marks the results
    window.model_panel.example_list.setCurrentIndex(window.model_panel.examples.index(0))
    chosen = window.model_panel.source()
    assert chosen != GRAPH_BREAK_MODEL
    assert header.is_previous_model()
    assert "previous model" in header.text() and os.path.basename(chosen) in header.text()
    assert "graph_break_model.py" in window.windowTitle()  # the title names the results' model
    window.set_model(GRAPH_BREAK_MODEL, trusted=True)
    assert not header.is_previous_model()


def test_the_header_button_puts_the_results_model_and_configs_in_the_form_and_runs_nothing(qtbot, window):
    started = []
    window.controller.start = lambda specs, **kw: started.append(specs)
    window.set_model("resnet18")
    window.session.load([fake_result("a"), fake_result("b", backend="aot_eager")], {})
    header = window.results_header
    assert header.is_previous_model() and header.load_button.isVisibleTo(window)
    header.load_button.click()
    assert window.model_panel.source() == GRAPH_BREAK_MODEL and not header.is_previous_model()
    assert [c.backend for c in window.config_panel.queue.configs] == ["eager", "aot_eager"]
    assert not started  # the form is set for the next run; nothing ran
    assert not header.load_button.isVisibleTo(window)  # the results are now the next run's model


def test_results_of_the_same_model_at_another_workload_are_said_so_and_the_button_loads_it(qtbot, window):
    """A report of resnet18 at batch 2 and 64 px opened with the form at 1 and 224: the header
    said nothing, and Run would have profiled another workload silently."""
    import dataclasses

    from core.vocab.config import ModelSpec
    from tests.core.fakes import fake_result as measured

    started = []
    window.controller.start = lambda specs, **kw: started.append(specs)
    window.set_model("resnet18")
    window.model_panel.batch.setValue(1)
    window.model_panel.image.setValue(224)
    r = measured("inductor", model="resnet18")
    r.spec = dataclasses.replace(r.spec, model=ModelSpec("resnet18", batch_size=2, image_size=64))
    window.session.load([r], {})
    header = window.results_header
    assert not header.is_previous_model()
    assert "another workload: batch size 1 (these results: 2), image size 224 (these results: 64)" in header.text()
    assert header.load_button.isVisibleTo(window)
    window.model_panel.batch.setValue(2)  # the form changed by hand: the header follows
    assert "batch size" not in header.text() and "image size 224 (these results: 64)" in header.text()
    header.load_button.click()
    assert window.model_panel.batch.value() == 2 and window.model_panel.image.value() == 64
    assert "another workload" not in header.text() and not header.load_button.isVisibleTo(window)
    assert not started


def test_a_broken_model_file_is_refused_when_chosen_not_in_a_job(qtbot, window, tmp_path, monkeypatch):
    """Issue 44: a .py with a syntax error and a fake .pt2 were accepted as the next run's model
    and failed only after a job had started. Refused now, nothing run, the form's model kept."""
    from PySide6.QtWidgets import QMessageBox

    from gui.form import trust

    asked = []  # the first-run notice is asked only of a file that can be profiled
    monkeypatch.setattr(trust, "confirm_python_file", lambda parent, settings, path: asked.append(path) or True)
    window.set_model("resnet18")
    broken, fake = tmp_path / "broken.py", tmp_path / "fake.pt2"
    broken.write_text("def get_model(:\n")
    fake.write_text("not a zip")
    for path, said in ((broken, "syntax error"), (fake, "not a torch.export archive")):
        assert not window.open_model_file(str(path))
        assert str(path) in window.last_error and said in window.last_error, window.last_error
        assert window.model_panel.source() == "resnet18"
        for box in window.findChildren(QMessageBox, "error_box"):
            box.close()
    assert asked == []
    assert window.open_model_file(GRAPH_BREAK_MODEL) and asked == [GRAPH_BREAK_MODEL]  # a sound file opens


def test_the_window_title_leaves_the_apps_name_to_the_platform(qtbot, window):
    """Issue 44: the title bar read "compile-profiler — resnet18 — compile-profiler": the platform
    adds the app's display name after the title (Qt's formatWindowTitle), and the title had it too."""
    window.set_model("resnet18")
    assert window.windowTitle() == "resnet18"
    window.set_model("")
    assert window.windowTitle() == ""  # the platform shows the app's name alone


def test_a_script_runs_report_opens_in_the_script_window_and_a_generations_says_where_to_look(
    qtbot, window, tmp_path, monkeypatch
):
    """File → Open session with the report of `main.py run` said only "not a compile-profiler
    report (no 'jobs')", though this product wrote it."""
    import numpy as np

    from core.report.script_report import write_script_report
    from tests.core.analysis.test_script_results import compared, events, noisy

    rng = np.random.default_rng(0)
    result = compared(
        events(800.0, noisy(2.0, 60, rng), between=noisy(6.0, 60, rng)),
        events(4.0, noisy(4.0, 60, rng), between=noisy(6.0, 60, rng)),
    )
    from core.report.files import OutputFolder

    folder = tmp_path / "run-report"
    claimed = OutputFolder(str(folder)).claim()
    try:
        write_script_report(claimed, result)
    finally:
        claimed.release()
    _shown_before(window)
    assert window.open_session(str(folder))
    view = window.script_window.view
    assert window.script_window.isVisible() and view.model.rowCount() == 1
    assert view.model.data(view.model.index(0, 0)) == "step (train.py:12)"
    from core.vocab.formatting import speedup_interval

    assert view.model.data(view.model.index(0, 4)) == speedup_interval(view.result.functions[0].iteration.speedup)
    assert (
        view.headline.text() == result.headline()
        and "the loop's iteration around each one's calls" in result.headline()
    )
    assert "Opened" in window.status_label.text() and "script window" in window.status_label.text()
    _still_shown(window)  # the main window's results are another session's: untouched
    # while a script is profiled there, another report is refused, the running one untouched
    controller = window.script_window.controller
    monkeypatch.setattr(type(controller), "busy", property(lambda self: True))
    shown = view.result
    assert not window.open_session(str(folder))
    assert "A script is being profiled in the script window" in _error_box(window).text()
    assert view.result is shown
    monkeypatch.undo()
    generation = _write(tmp_path, {"kind": "generation", "configs": []})
    assert not window.open_session(generation)
    text = _error_box(window).text()
    assert "is the report of a text generation (profile --task generate)" in text and "summary.txt" in text
    _still_shown(window)
