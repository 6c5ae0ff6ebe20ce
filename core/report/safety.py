"""What a report may make the app do: which links it may open, how its text is kept text, and
which of its settings may run.

A report.json can come from anyone (a colleague, a bug tracker, a download), so every string
in it is untrusted: the app shows it as plain text and never follows a path or a URL it
names, except documentation links that pass `is_documentation_url`. Its compile settings and
model file become jobs only through one gate (`ReportGate`): settings that could run a program
or code (`risky_settings`) and a Python model file run only as the user says. No Qt; any thread.
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from core.vocab.terminal import terminal_text  # noqa: F401  (one sanitizer: re-exported for the report's printers)

DOC_HOSTS = ("docs.pytorch.org", "pytorch.org")
"""Hosts of the PyTorch documentation: any https page there may open in the browser."""

DOC_PREFIXES = ("https://meta-pytorch.github.io/compile-graph-break-site/",)
"""PyTorch's graph-break documentation, which torch itself links every GB code to (torch
2.14's graph-break messages say "For more details about this graph break, please visit:
https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html"). Only pages below
this exact prefix, not the rest of the host."""


def is_documentation_url(url: str) -> bool:
    """True only for an https link into the PyTorch documentation (DOC_HOSTS, DOC_PREFIXES):
    no other scheme (file:, javascript:, http:), no user name or port, no control characters
    or spaces that a browser might read differently."""
    if not isinstance(url, str) or not url or len(url) > 2000:
        return False
    if any(ch.isspace() or ord(ch) < 32 or ord(ch) == 127 or ch == "\\" for ch in url):
        return False
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return False
    if parts.scheme != "https" or parts.username is not None or parts.password is not None or port is not None:
        return False
    if "@" in parts.netloc or not parts.hostname:
        return False
    host = parts.hostname.lower()
    # the path as the server will read it: percent-escapes decoded ("%2e%2e" is "..")
    path = unquote(parts.path)
    if ".." in path or "\\" in path or any(ord(ch) < 32 for ch in path):
        return False
    if host in DOC_HOSTS:
        return True
    normalized = f"https://{host}{path}"
    return any(normalized.startswith(prefix) for prefix in DOC_PREFIXES)


def as_html(text) -> str:
    """Untrusted text as HTML that shows exactly that text (tags, entities and all), line
    breaks kept: for the places that need our own markup around report text."""
    return html.escape("" if text is None else str(text), quote=True).replace("\n", "<br>")


# ---------------------------------------------------------------- compile settings from a file

RISKY_WORDS = frozenset(
    (
        "cxx",
        "cc",
        "compiler",
        "cmd",
        "command",
        "flags",
        "dir",
        "path",
        "home",
        "root",
        "file",
        "filename",
        "hook",
        "pass",
        "passes",
        "fn",
        "class",
        "module",
        "lib",
        "libs",
        "url",
        "upload",
        "log",
        "logpath",
        "output",
        "worker",
        "repro",
        "script",
        "remote",
        "debug",
        "trace",
        "save",
        "dump",
        "profile",
        "minifier",
        "shim",
        "arch",
    )
)
"""Words (between dots and underscores) of a setting's name that say it names a program, a path,
code or a place torch writes to: `cpp.cxx`, `trace.debug_dir`, `fx_graph_remote_cache`."""


@dataclass(frozen=True)
class RiskySetting:
    """A compile setting that came from a file and that could name a program, a path or code
    torch would use: `table` is "torch._dynamo.config" or "inductor option"."""

    table: str
    key: str
    value: Any
    why: str

    def line(self) -> str:
        return f"{self.table} {self.key} = {self.value!r}: {self.why}"


def risky_settings(config) -> list[RiskySetting]:
    """The dynamo overrides and inductor options of a CompileConfig read from a file (a report
    anyone could have written) that are not plainly data: a value other than True/False or a
    number (a string, list, dict or None can name a program, a path, a pattern or code; the
    inductor option cpp.cxx is the C++ compiler command inductor runs), or a setting whose name
    says it names a program, a folder, a file or code, or writes debugging files (a trace, a
    dump, a minifier repro) wherever torch puts them. Such a config must be shown to the user,
    and run only when they confirm (or without these settings)."""
    out: list[RiskySetting] = []
    for table, pairs in (("torch._dynamo.config", config.dynamo_config), ("inductor option", config.inductor_options)):
        for key, value in pairs:
            if not isinstance(value, (bool, int, float)):
                why = (
                    f"a {type(value).__name__} value, which can name a program, a path or code "
                    "(only True/False and numbers are plain data)"
                )
            elif RISKY_WORDS.intersection(re.split(r"[._]", key.lower())):
                why = "its name says it sets a program, a path, code, or files torch writes"
            else:
                continue
            if key == "cpp.cxx":
                why = "the C++ compiler command inductor runs; " + why
            out.append(RiskySetting(table, key, value, why))
    return out


def without_risky_settings(config):
    """`config` without the settings risky_settings names."""
    import dataclasses

    risky = {(r.table, r.key) for r in risky_settings(config)}
    return dataclasses.replace(
        config,
        dynamo_config=tuple((k, v) for k, v in config.dynamo_config if ("torch._dynamo.config", k) not in risky),
        inductor_options=tuple((k, v) for k, v in config.inductor_options if ("inductor option", k) not in risky),
    )


def describe_config(config) -> str:
    """Every setting of a CompileConfig, one per line, as it will run (the app shows this before
    it runs a config from a file)."""
    lines = [
        f"backend = {config.backend!r}",
        f"mode = {config.mode!r}",
        f"dynamic = {config.dynamic}",
        f"fullgraph = {config.fullgraph}",
    ]
    lines += [f"torch._dynamo.config.{k} = {v!r}" for k, v in config.dynamo_config]
    lines += [f"inductor option {k} = {v!r}" for k, v in config.inductor_options]
    if config.compile_optimizer:
        lines.append("optimizer step compiled too")
    return "\n".join(lines)


# ---------------------------------------------------------------- the gate: a report's settings as jobs

TRUST_REPORT_FLAG = "--trust-report"
WITHOUT_RISKY_FLAG = "--without-risky-settings"


@dataclass(frozen=True)
class ReportGate:
    """What running jobs from a report's specs would do on this machine that only the report
    says: `risky`, the settings risky_settings names (each config's, once), and `code_files`,
    the Python model files those jobs would run (a model file is a program). The one gate every
    path from a report's settings to a job goes through (`localize` on the command line and the
    app's "Find where outputs diverge", which runs it; the app's Apply and re-run asks with the
    same risky_settings): nothing runs until the user said how (`refusal`, `config_to_run`)."""

    risky: tuple[RiskySetting, ...] = ()
    code_files: tuple[str, ...] = ()

    @property
    def clear(self) -> bool:
        """Nothing in the report needs the user's word."""
        return not self.risky and not self.code_files

    def refusal(self, trust_report: bool, without_risky: bool) -> str:
        """Why the jobs may not run as asked ("" when they may): each risky setting and each
        Python file named, with the ways on. `trust_report`: run the report's settings and
        model file as written; `without_risky`: leave the risky settings out (a Python file
        still needs `trust_report`)."""
        parts = []
        if self.risky and not trust_report and not without_risky:
            parts.append(
                "the report's config holds settings that could make torch run a program, read or write a "
                "path, or run code:\n"
                + "\n".join(f"  {terminal_text(r.line())}" for r in self.risky)
                + f"\nRun them only if you trust where the report came from: {TRUST_REPORT_FLAG} runs them as "
                f"written, {WITHOUT_RISKY_FLAG} leaves them out."
            )
        if self.code_files and not trust_report:
            parts.append(
                "the report's model is a Python file, and every job runs it with your permissions:\n"
                + "\n".join(f"  {terminal_text(p)}" for p in self.code_files)
                + f"\nRun it only if you trust that file: {TRUST_REPORT_FLAG} runs it."
            )
        return "\n".join(parts)

    def flags(self, trust_report: bool, without_risky: bool) -> list[str]:
        """The `localize` options that say how (what the app passes once the user answered)."""
        return [TRUST_REPORT_FLAG] * trust_report + [WITHOUT_RISKY_FLAG] * without_risky

    def config_to_run(self, config, without_risky: bool):
        """`config` as it may run once `refusal` is empty: without the risky settings when asked."""
        return without_risky_settings(config) if without_risky else config

    def left_out(self, config, without_risky: bool) -> list[str]:
        """The settings of `config` that `config_to_run` leaves out, as `key = value` lines."""
        return [f"{r.key} = {r.value!r}" for r in risky_settings(config)] if without_risky else []


def report_gate(specs) -> ReportGate:
    """The gate for running jobs like these JobSpecs, read from a report: their risky settings
    and their Python model files (the path a job would load, core.models.split_factory)."""
    from core.models import PY_SUFFIXES, source_kind, split_factory

    risky: dict[tuple[str, str, str], RiskySetting] = {}
    files: list[str] = []
    for spec in specs:
        for r in risky_settings(spec.config):
            risky.setdefault((r.table, r.key, repr(r.value)), r)
        if source_kind(spec.model.source) == "file":
            path = os.path.abspath(os.path.expanduser(split_factory(spec.model.source)[0]))
            if path.endswith(PY_SUFFIXES) and path not in files:
                files.append(path)
    return ReportGate(tuple(risky.values()), tuple(files))
