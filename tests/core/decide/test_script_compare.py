"""Two reports of one script compared function by function (core.decide.script_compare), and the
`compare` command on script report folders: a CI gate on a real script."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np

from core import PROJECT_ROOT
from core.analysis.script_results import result_from_runs
from core.analysis.script_runs import fold_run
from core.decide.script_compare import CANNOT_TELL, IMPROVED, MISSING, REGRESSION, SAME, compare_scripts
from core.report.files import OutputFolder
from core.report.script_report import load_script_report, write_script_report
from core.vocab.script_job import FLAG_COMPILED, FLAG_NEW_SHAPE, STANCE_COMPILED, STANCE_EAGER, ScriptEvents


def run_events(functions: dict[str, float], others=0.0, breaks=0, seed=0):
    """A run's events: each function (name -> its steady ms) called 1 + 200 times."""
    rng = np.random.default_rng(seed)
    ev = []
    for i, (name, ms) in enumerate(functions.items()):
        calls = [50.0] + list(ms * (1 + 0.01 * rng.standard_normal(200)))
        ev.append({"t": "entry", "id": i, "name": name, "file": "/w/train.py", "line": 10 + i, "kind": "function"})
        ev.append(
            {"t": "calls", "id": i, "first": 0, "ms": calls, "flags": [FLAG_NEW_SHAPE | FLAG_COMPILED] + [0] * 200}
        )
        for b in range(breaks):
            gb = {"reason": "Data-dependent branching", "file": "/w/train.py", "line": 40 + b, "compile_id": f"{i}/0"}
            ev.append({"t": "break", "id": i, "gb": gb})
    ev.append({"t": "end", "exit": 0, "error": "", "wall_s": 1.0})
    return ScriptEvents(events=ev, exit_code=0, others_cores=[others] * 4)


def result(compiled: dict, eager: dict, **kwargs):
    return result_from_runs(
        "/w/train.py",
        ("--epochs", "1"),
        False,
        "/w",
        (),
        fold_run(run_events(compiled, **kwargs), STANCE_COMPILED),
        fold_run(run_events(eager, seed=1), STANCE_EAGER),
    )


def statuses(comparison):
    return {f.name.split(" ")[0]: f.status for f in comparison.functions}


def test_a_slower_function_is_a_regression_and_the_gate_fails():
    base = result({"step": 1.0, "evaluate": 2.0}, {"step": 2.0, "evaluate": 2.0})
    new = result({"step": 1.6, "evaluate": 2.0}, {"step": 2.0, "evaluate": 2.0})
    c = compare_scripts(base, new, 5.0, relative=True)
    assert statuses(c) == {"step": REGRESSION, "evaluate": SAME} and c.exit_code == 1
    assert "speedup 2.00x -> 1.25x (-37.5%)" in c.functions[0].detail
    better = compare_scripts(new, base, 5.0, relative=True)
    assert statuses(better)["step"] == IMPROVED and better.exit_code == 0
    # by default the compiled times, as model reports are judged: the same verdicts here
    by_time = compare_scripts(base, new, 5.0)
    assert statuses(by_time) == {"step": REGRESSION, "evaluate": SAME}
    assert by_time.functions[0].detail.startswith("compiled steady call 1.00 ms -> 1.60 ms (+6")


def test_a_function_gone_more_breaks_and_an_unusable_timing():
    base = result({"step": 1.0, "evaluate": 2.0}, {"step": 2.0, "evaluate": 2.0})
    gone = result({"step": 1.0}, {"step": 2.0})
    assert statuses(compare_scripts(base, gone, 5.0))["evaluate"] == MISSING
    broken = result({"step": 1.0, "evaluate": 2.0}, {"step": 2.0, "evaluate": 2.0}, breaks=2)
    c = compare_scripts(base, broken, 5.0)
    assert statuses(c)["step"] == REGRESSION and "graph-break places 0 -> 2" in c.functions[0].detail
    busy = result({"step": 1.0, "evaluate": 2.0}, {"step": 2.0, "evaluate": 2.0}, others=1.5)
    c = compare_scripts(base, busy, 5.0)
    assert set(statuses(c).values()) == {CANNOT_TELL} and c.exit_code == 3


def test_the_compare_command_reads_two_script_report_folders(tmp_path):
    for name, ms in (("base", 1.0), ("new", 1.6)):
        folder = OutputFolder(str(tmp_path / name)).claim()
        try:
            write_script_report(folder, result({"step": ms}, {"step": 2.0}))
        finally:
            folder.release()
    assert load_script_report(str(tmp_path / "base")).functions[0].speedup.value > 1.9
    folder = OutputFolder(str(tmp_path / "pairs")).claim()
    try:  # further pairs (--repeat) are written and read back
        two = result({"step": 1.0}, {"step": 2.0})
        two.repeats = [(two.compiled, two.eager)]
        two.compare()
        write_script_report(folder, two)
    finally:
        folder.release()
    back = load_script_report(str(tmp_path / "pairs"))
    assert len(back.repeats) == 1 and back.functions[0].runs == 2
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(PROJECT_ROOT, "main.py"),
            "compare",
            str(tmp_path / "base"),
            str(tmp_path / "new"),
            "--relative",
            "--out",
            str(tmp_path / "cmp"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    assert "step (train.py:10): REGRESSION (speedup 2.00x -> 1.25x" in proc.stdout
    assert "FAILED: 1 regression(s), 0 missing function(s)" in proc.stdout
    # --out writes compare.csv for script reports too (it was silently ignored)
    assert "step (train.py:10),REGRESSION,speedup 2.00x -> 1.25x" in (tmp_path / "cmp" / "compare.csv").read_text()


def test_a_crafted_script_report_is_refused_with_a_sentence(tmp_path):
    """Values of the wrong type are refused when the report is read, never later in a sentence
    (a count as text made `compare` raise in its f-string)."""
    import json

    from core.report.files import ReportError

    folder = OutputFolder(str(tmp_path / "r")).claim()
    try:
        write_script_report(folder, result({"step": 1.0}, {"step": 2.0}))
    finally:
        folder.release()
    path = tmp_path / "r" / "report.json"
    doc = json.loads(path.read_text())
    doc["runs"]["compiled"]["entries"][0]["calls"] = "many"
    path.write_text(json.dumps(doc))
    import pytest

    with pytest.raises(ReportError, match="not a script report this version can read"):
        load_script_report(str(tmp_path / "r"))
    proc = subprocess.run(
        [sys.executable, os.path.join(PROJECT_ROOT, "main.py"), "compare", str(tmp_path / "r"), str(tmp_path / "r")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "error:" in proc.stderr


def test_a_training_loops_iteration_that_regressed_is_its_own_row():
    """The forward call as fast as before, the backward between calls slower: only the
    iteration's row says so."""
    from tests.core.analysis.test_script_results import compared, events, noisy

    rng = np.random.default_rng(11)

    def run(between_compiled: float):
        return compared(
            events(500.0, noisy(2.0, 200, rng), between=noisy(between_compiled, 200, rng)),
            events(5.0, noisy(4.0, 200, rng), between=noisy(8.0, 200, rng)),
        )

    base, slower_backward = run(6.0), run(9.0)
    for relative, detail in ((True, "speedup 1.50x -> 1.09x"), (False, "compiled iteration 8.0")):
        c = compare_scripts(base, slower_backward, 5.0, relative=relative)
        rows = {f.name: f for f in c.functions}
        assert rows["step (train.py:12)"].status == SAME
        it = rows["step (train.py:12), per iteration"]
        assert it.status == REGRESSION and it.detail.startswith(detail) and c.exit_code == 1
    old = run(6.0)
    for f in old.functions:  # a baseline from before iterations were recorded: no such row
        f.iteration = None
    for relative in (True, False):
        assert [f.name for f in compare_scripts(old, base, 5.0, relative=relative).functions] == ["step (train.py:12)"]


def test_work_added_to_every_step_is_a_slower_step_by_default_not_with_relative():
    """The new user's finding: 2 ms of work added between calls on both sides made the compiled
    step 80% slower, and `compare` said "improved" (the speedup nearer 1) and passed."""
    from tests.core.analysis.test_script_results import compared, events, noisy

    rng = np.random.default_rng(15)

    def run(added: float):
        return compared(
            events(500.0, noisy(1.0, 200, rng), between=noisy(2.5 + added, 200, rng)),
            events(5.0, noisy(1.0, 200, rng), between=noisy(1.2 + added, 200, rng)),
        )

    c1, c2 = run(0.0), run(2.0)
    by_time = {f.name: f for f in compare_scripts(c1, c2, 5.0).functions}
    it = by_time["step (train.py:12), per iteration"]
    assert it.status == REGRESSION and it.detail.startswith("compiled iteration 3.5") and "-> 5.5" in it.detail
    # compiled was slower than eager (0.63x): the same work on both sides brings it nearer 1,
    # which --relative reads as an improvement (it judges compiled against eager, by design)
    relative = {f.name: f.status for f in compare_scripts(c1, c2, 5.0, relative=True).functions}
    assert relative["step (train.py:12), per iteration"] == IMPROVED


def test_the_iteration_is_judged_even_where_the_calls_are_too_noisy():
    from tests.core.analysis.test_script_results import compared, events, noisy

    rng = np.random.default_rng(14)

    def run(between_compiled: float, spread: float):
        calls = list(np.abs(2.0 * (1 + spread * rng.standard_normal(200))) + 0.01)
        return compared(
            events(500.0, calls, between=noisy(between_compiled, 200, rng)),
            events(5.0, noisy(4.0, 200, rng), between=noisy(12.0, 200, rng)),
        )

    c = compare_scripts(run(6.0, 0.9), run(12.0, 0.9), 5.0)
    rows = {f.name: f.status for f in c.functions}
    assert rows["step (train.py:12)"] == CANNOT_TELL
    assert rows["step (train.py:12), per iteration"] == REGRESSION and c.exit_code == 1
