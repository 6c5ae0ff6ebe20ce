"""`main.py bundle`: a Ctrl+C while the report is read or the bundle is made says what it
stopped (it said "before the command had started"), exit 130, and leaves no zip."""

from __future__ import annotations

import os

from core.cli import bundle as cli


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_a_ctrl_c_while_the_bundle_is_made_says_so_and_writes_nothing(tmp_path, capsys, monkeypatch):
    from core.analysis.results import JobResult
    from core.vocab.config import JobSpec, ModelSpec

    out = str(tmp_path / "b.zip")
    monkeypatch.setattr(cli, "write_bundle", _interrupt)
    assert cli.save(JobResult(JobSpec("j", ModelSpec("resnet18"))), str(tmp_path), out) == 130
    err = capsys.readouterr().err
    assert "interrupted (Ctrl+C) while the bundle was being made: nothing was written at " + out in err
    assert "before the command had started" not in err and not os.path.exists(out)


def test_a_ctrl_c_while_the_report_is_read_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli, "load_report", _interrupt)
    assert cli.main([str(tmp_path)]) == 130
    assert "interrupted (Ctrl+C) while the report was read: no bundle was made." in capsys.readouterr().err
