"""Which links a report may open: only https pages of the PyTorch documentation."""

from __future__ import annotations

import pytest

from core.report.safety import as_html, is_documentation_url


@pytest.mark.parametrize(
    "url",
    [
        "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
        "https://pytorch.org/docs/stable/generated/torch.compile.html",
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html",  # what torch 2.14 links GB codes to
        "HTTPS://Docs.PyTorch.org/docs/",
    ],
)
def test_documentation_links_open(url):
    assert is_documentation_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "http://docs.pytorch.org/docs/",
        "ftp://pytorch.org/",
        "https://pytorch.org.evil.example/",
        "https://evil.example/pytorch.org",
        "https://docs.pytorch.org@evil.example/",
        "https://user:pw@pytorch.org/",
        "https://pytorch.org:8443/",
        "https://evil.example/gb/gb0170.html",
        "https://meta-pytorch.github.io/other-site/",
        "https://meta-pytorch.github.io/compile-graph-break-site/../x",
        "https://pytorch.org/ docs",
        "https://pytorch.org/\ndocs",
        "https://pytorch.org\\@evil.example/",
        "",
        None,
        42,
        "https://[::1/",
    ],
)
def test_anything_else_does_not(url):
    assert not is_documentation_url(url)


def test_as_html_shows_the_text_itself():
    assert (
        as_html("<img src='x'> & <a href=\"y\">\nz")
        == "&lt;img src=&#x27;x&#x27;&gt; &amp; &lt;a href=&quot;y&quot;&gt;<br>z"
    )
    assert as_html(None) == ""


# ---------------------------------------------------------------- compile settings from a file


def test_settings_that_name_programs_paths_or_code_are_flagged():
    from core.report.safety import describe_config, risky_settings, without_risky_settings
    from core.vocab.config import CompileConfig

    config = CompileConfig(
        "inductor",
        inductor_options=(
            ("cpp.cxx", ["sh", "-c", "touch /tmp/owned"]),
            ("freezing", True),
            ("trace.enabled", True),
            ("fx_graph_remote_cache", True),
            ("epilogue_fusion", True),
            ("triton.cudagraphs", False),
        ),
        dynamo_config=(
            ("allow_rnn", True),
            ("recompile_limit", 16),
            ("capture_scalar_outputs", True),
            ("repro_after", "dynamo"),
        ),
    )
    flagged = {(r.table, r.key) for r in risky_settings(config)}
    assert flagged == {
        ("inductor option", "cpp.cxx"),
        ("inductor option", "trace.enabled"),
        ("inductor option", "fx_graph_remote_cache"),
        ("torch._dynamo.config", "repro_after"),
    }
    cxx = next(r for r in risky_settings(config) if r.key == "cpp.cxx")
    assert "C++ compiler command" in cxx.why and "list value" in cxx.why
    clean = without_risky_settings(config)
    assert risky_settings(clean) == [] and dict(clean.inductor_options) == {
        "freezing": True,
        "epilogue_fusion": True,
        "triton.cudagraphs": False,
    }
    assert dict(clean.dynamo_config) == {"allow_rnn": True, "recompile_limit": 16, "capture_scalar_outputs": True}
    shown = describe_config(config)
    assert "inductor option cpp.cxx = ['sh', '-c', 'touch /tmp/owned']" in shown and "backend = 'inductor'" in shown


def test_a_report_carrying_the_compiler_command_is_read_as_data_and_flagged(tmp_path):
    """The reported attack: report.json whose job config holds inductor option cpp.cxx."""
    import json

    from core.report.files import load_report, write_report
    from core.report.safety import risky_settings
    from tests.core.fakes import fake_result

    write_report([fake_result("inductor")], str(tmp_path), {})
    doc = json.loads((tmp_path / "report.json").read_text())
    doc["jobs"][0]["spec"]["config"]["inductor_options"] = {"cpp.cxx": ["sh -c 'touch /tmp/owned'"]}
    (tmp_path / "report.json").write_text(json.dumps(doc))
    (result,), _ = load_report(str(tmp_path))
    assert [r.key for r in risky_settings(result.config)] == ["cpp.cxx"]


def test_percent_escapes_cannot_climb_out_of_the_documentation():
    """The reported case: %2e%2e passed the link check."""
    assert not is_documentation_url("https://meta-pytorch.github.io/compile-graph-break-site/%2e%2e/evil")
    assert not is_documentation_url("https://meta-pytorch.github.io/compile-graph-break-site/%2E%2E/evil")
    assert not is_documentation_url("https://docs.pytorch.org/docs/%2e%2e/%2e%2e/x")
    assert is_documentation_url("https://meta-pytorch.github.io/compile-graph-break-site/gb/gb%30170.html")


def test_terminal_text_escapes_control_sequences():
    from core.report.safety import terminal_text

    assert terminal_text("inductor\x1b]52;c;ZXZpbA==\x07 x\x1b[2J") == "inductor\\x1b]52;c;ZXZpbA==\\x07 x\\x1b[2J"
    assert terminal_text("a\tb\nc\x9bd") == "a\tb\nc\\x9bd"


# ---------------------------------------------------------------- the gate: a report's settings as jobs


def _spec(source="resnet18", **config):
    from core.vocab.config import CompileConfig, JobSpec, ModelSpec

    return JobSpec("j", ModelSpec(source), CompileConfig(**config))


def test_the_gate_refuses_risky_settings_and_python_files_until_told_how(tmp_path):
    from core.report.safety import report_gate

    model = str(tmp_path / "m.py")
    specs = [
        _spec(model, backend="inductor", inductor_options=(("cpp.cxx", "touch /tmp/pwned; g++"),)),
        _spec(model + ":other", backend="inductor", inductor_options=(("cpp.cxx", "touch /tmp/pwned; g++"),)),
    ]
    gate = report_gate(specs)
    assert [r.key for r in gate.risky] == ["cpp.cxx"] and gate.code_files == (model,)  # each once
    asked = gate.refusal(trust_report=False, without_risky=False)
    assert "cpp.cxx = 'touch /tmp/pwned; g++'" in asked and "--trust-report" in asked
    assert "--without-risky-settings" in asked and model in asked
    left = gate.refusal(trust_report=False, without_risky=True)  # the file still needs trust
    assert "cpp.cxx" not in left and model in left and "--trust-report runs it" in left
    assert gate.refusal(trust_report=True, without_risky=False) == ""
    assert gate.refusal(trust_report=True, without_risky=True) == ""
    config = specs[0].config
    assert gate.config_to_run(config, without_risky=True).inductor_options == ()
    assert gate.config_to_run(config, without_risky=False) == config
    assert gate.left_out(config, True) == ["cpp.cxx = 'touch /tmp/pwned; g++'"] and gate.left_out(config, False) == []


def test_a_library_model_with_plain_settings_passes_the_gate():
    from core.report.safety import report_gate

    gate = report_gate([_spec("resnet18", backend="inductor", inductor_options=(("freezing", True),))])
    assert gate.clear and gate.refusal(False, False) == ""
    assert report_gate([_spec("timm:resnet18"), _spec("hf:gpt2"), _spec("m.pt2")]).code_files == ()


def test_what_reports_print_escapes_bidi_controls_too():
    """One sanitizer: a config label with a right-to-left override reads backwards on a terminal."""
    from core.report.safety import terminal_text

    assert terminal_text("inductor\u202e/yppa") == "inductor\\u202e/yppa"
    assert terminal_text("a\x1b]52;c;x\x07b") == "a\\x1b]52;c;x\\x07b"
