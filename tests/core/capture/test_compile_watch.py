"""The compiler at work, live: the frame torch compiles and its stage, from torch's own timed
regions (chromium events in the structured trace), said as the compile phase's progress; a
compile whose stage does not change for a while is said to be stalled, naming stage and frame."""

from __future__ import annotations

import json
import logging

from core.capture.compile_watch import CompileWatch, stage_of, stalled_text
from tests.core.helpers import BREAKS_MODEL
from tests.core.helpers import profile_command as profile


def record(metadata, payload=None):
    r = logging.LogRecord("torch.__trace", logging.DEBUG, "", 0, "", (), None)
    r.metadata, r.payload = metadata, payload
    return r


def chromium(name, ph, cid="0/0"):
    frame, compile_ = cid.split("/")
    return record(
        {"chromium_event": {}, "frame_id": int(frame), "frame_compile_id": int(compile_)},
        json.dumps({"name": name, "ph": ph}),
    )


def test_the_innermost_known_region_is_the_stage_and_each_change_is_said():
    said = []
    w = CompileWatch(said.append, lambda: (1, 2))
    w.emit(
        record(
            {
                "dynamo_start": {"stack": [{"line": 10, "name": "forward", "filename": 7}]},
                "frame_id": 0,
                "frame_compile_id": 0,
            }
        )
    )
    w.emit(record({"str": ("/u/model.py", 7)}))  # torch may intern the file after naming it
    for name, ph in [("dynamo", "B"), ("entire_frame_compile", "B"), ("bytecode_tracing", "B"), ("bytecode_tracing", "E"),
                     ("backend_compile", "B"), ("create_aot_dispatcher_function", "B"), ("inductor_compile", "B"),
                     ("GraphLowering.run", "B"), ("GraphLowering.run", "E"), ("compile_file", "B")]:  # fmt: skip
        w.emit(chromium(name, ph))
    stages = [t.split(": ", 1)[1].split(" (")[0].split(";")[0] for t in said]
    assert stages == ["dynamo tracing", "backend compile", "AOT autograd", "inductor", "inductor lowering", "inductor",
                      "C++/Triton kernel compile"]  # fmt: skip
    assert (
        said[-1]
        == "compiling forward (model.py:10) [0/0]: C++/Triton kernel compile; 1 graph, 2 graph breaks found so far"
    )
    assert set(w.totals) == {"dynamo tracing", "backend compile", "AOT autograd", "inductor", "inductor lowering"}
    assert stage_of("select_algorithm.autotune") == "autotuning" and stage_of("gc") == ""
    w.emit(record({"chromium_event": {}}, "not json"))  # a record it cannot read changes nothing
    assert w.stage == "C++/Triton kernel compile"
    assert stalled_text("compiling forward: inductor lowering", 61, "a.log") == (
        "no compile stage has changed for 61 s, still compiling forward: inductor lowering; torch's compile log: a.log"
    )


def test_the_cli_says_the_frame_and_stage_while_it_compiles_and_a_stall(write_model, tmp_path, monkeypatch, capsys):
    path = write_model(BREAKS_MODEL, "breaks.py")
    proc = profile(
        path,
        "--backend",
        "aot_eager",
        "--iters",
        "5",
        "--processes",
        "1",
        "--op-profile",
        "0",
        "--out",
        str(write_model.__self__ if False else path + ".r"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    lines = [t for t in proc.stderr.splitlines() if "] aot_eager: compiling " in t and "found so far" in t]
    assert lines and "(breaks.py:" in lines[-1] and "graph break" in lines[-1]

    from core.cli import output
    from core.vocab import events as ev

    monkeypatch.setattr(output, "STALL_S", 0.0)
    progress = output.Progress(bar=False)
    progress._label = "[1/1] inductor"
    progress.on_event(
        ev.PhaseChanged("j", phase="compile", detail="compiling forward (m.py:3) [0/0]: inductor lowering")
    )
    progress.on_event(ev.ResourceSampled("j", sample=None))
    progress.on_event(ev.ResourceSampled("j", sample=None))  # said once per stall
    err = capsys.readouterr().err
    assert (
        err.count("no compile stage has changed for") == 1
        and "still compiling forward (m.py:3) [0/0]: inductor lowering" in err
    )


def test_the_stage_is_read_back_from_the_detail_for_a_small_place():
    from core.capture.compile_watch import stage_in

    detail = "compiling forward (m.py:10) [0/0]: C++/Triton kernel compile (so far: inductor 1.0 s); 1 graph, 0 graph breaks found so far"
    assert stage_in(detail) == "C++/Triton kernel compile"
    assert stage_in("process 2 of 3: compiling with inductor again in a fresh process") == ""
    assert stage_in("compiling with inductor (first compiled call)") == ""


def test_each_graph_keeps_its_own_stages_and_a_real_run_writes_them_to_graphs_csv(write_model, tmp_path):
    import csv

    from core.vocab.records import StageTime

    w = CompileWatch(lambda text: None)
    w.emit(chromium("dynamo", "B", "1/0"))
    w.emit(chromium("bytecode_tracing", "B", "1/0"))
    w.emit(chromium("bytecode_tracing", "E", "1/0"))
    assert [t.stage for t in w.stages_of("1/0")] == ["dynamo tracing"] and w.stages_of("0/0") == ()
    assert isinstance(w.stages_of("1/0")[0], StageTime)
    w.emit(chromium("dynamo", "B", "2/0"))  # the next frame compile starts from nothing
    assert w.stages_of("2/0") == ()

    path = write_model(BREAKS_MODEL, "breaks.py")
    proc = profile(
        path,
        "--backend",
        "aot_eager",
        "--iters",
        "5",
        "--processes",
        "1",
        "--op-profile",
        "0",
        "--out",
        str(tmp_path / "r"),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    with open(tmp_path / "r" / "graphs.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all("dynamo tracing" in r["compile_stages"] for r in rows)
    for r in rows:  # exclusive: they add up to no more than the frame's compile time
        total = sum(float(part.rsplit(" ", 2)[1]) for part in r["compile_stages"].split(" | "))
        assert 0 < total <= float(r["compile_s"]) + 0.01
