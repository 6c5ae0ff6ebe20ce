"""A generation config profiled: its script written (core.models.generation), run as any script is
(core.run.script_process.ScriptProfile: as written, then under set_stance("force_eager")), and its
records folded (core.analysis.generation_results). No Qt; `run` blocks, `cancel` from any thread.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import threading

from core.run.script_process import ScriptProfile
from core.vocab.config import CompileConfig
from core.vocab.generation import GenerationSpec
from core.vocab.script_job import ScriptJob

RECORDS_MAX_BYTES = 64 * 2**20


def script_name(label: str) -> str:
    """The script's file name for a config label ("static cache/inductor" -> generate_static_cache_inductor.py)."""
    return "generate_" + re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_")[:80] + ".py"


def read_records(path: str) -> list[dict]:
    """The results file's JSON lines (a line that cannot be read is skipped)."""
    out = []
    try:
        with open(path, "rb") as fh:
            data = fh.read(RECORDS_MAX_BYTES)
    except OSError:
        return out
    for line in data.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


class GenerationProfile:
    """One generation config: `run()` returns its GenerationResult (the script's text kept in
    `script_text` for the report)."""

    def __init__(
        self,
        spec: GenerationSpec,
        config: CompileConfig,
        checked: dict,
        baseline: bool = True,
        repeat: int = 1,
        timeout_s: float = 3600.0,
        on_output=None,
        on_event=None,
        on_run=None,
    ):
        self.spec, self.config, self.checked = spec, config, checked
        self.baseline, self.repeat, self.timeout_s = baseline, repeat, timeout_s
        self.on_output, self.on_event, self.on_run = on_output, on_event, on_run
        self.label = f"{spec.cache} cache/{config.label}"
        self.script_text = ""
        self._profile: ScriptProfile | None = None
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        self._cancelled.set()
        if self._profile is not None:
            self._profile.cancel()

    def run(self):
        from core.analysis.generation_results import fold_generation

        folder = tempfile.mkdtemp(prefix="compile-profiler-generate-")
        try:
            name = script_name(self.label)
            from core.models.generation import write_script

            path = write_script(
                self.spec, self.checked, self.config.compile_kwargs(), self.config.dynamo_config, folder, name
            )
            with open(path, encoding="utf-8") as fh:
                self.script_text = fh.read()
            results = os.path.join(folder, "results.jsonl")
            job = ScriptJob(target=path, args=(results,), cwd=folder, timeout_s=self.timeout_s)
            self._profile = ScriptProfile(
                job, self.baseline, self.on_output, self.on_event, self.on_run, repeat=self.repeat
            )
            if self._cancelled.is_set():
                self._profile.cancel()
            script = self._profile.run()
            return fold_generation(self.spec, self.label, script, read_records(results), name)
        finally:
            shutil.rmtree(folder, ignore_errors=True)


class GenerationSeries:
    """Several generation configs profiled one after another (each cache with each compile
    config). Callbacks name the config: `on_config(index, label)` as one starts,
    `on_run((label, side))`, `on_event((label, side), event)`, `on_output((label, side), stream,
    text)`, `on_result(result)` as one ends. `run()` returns the results of the configs that ran
    (a cancel keeps those and the cancelled one's). No Qt; `cancel` from any thread."""

    def __init__(
        self,
        pairs: list[tuple[GenerationSpec, CompileConfig]],
        checked: dict,
        baseline: bool = True,
        repeat: int = 1,
        timeout_s: float = 3600.0,
        on_config=None,
        on_run=None,
        on_event=None,
        on_output=None,
        on_result=None,
    ):
        self.pairs, self.checked = list(pairs), checked
        self.baseline, self.repeat, self.timeout_s = baseline, repeat, timeout_s
        self.on_config, self.on_run, self.on_event = on_config, on_run, on_event
        self.on_output, self.on_result = on_output, on_result
        self.current: GenerationProfile | None = None
        self.cancelled = threading.Event()

    def cancel(self) -> None:
        self.cancelled.set()
        current = self.current
        if current is not None:
            current.cancel()

    def run(self) -> list:
        results = []
        for index, (spec, config) in enumerate(self.pairs):
            if self.cancelled.is_set():
                break
            profile = GenerationProfile(spec, config, self.checked, self.baseline, self.repeat, self.timeout_s)
            label = profile.label
            profile.on_run = self.on_run and (lambda side, label=label: self.on_run((label, side)))
            profile.on_event = self.on_event and (lambda side, e, label=label: self.on_event((label, side), e))
            profile.on_output = self.on_output and (
                lambda side, stream, text, label=label: self.on_output((label, side), stream, text)
            )
            self.current = profile
            if self.cancelled.is_set():
                profile.cancel()
            if self.on_config is not None:
                self.on_config(index, label)
            result = profile.run()
            result.script_text = profile.script_text
            results.append(result)
            if self.on_result is not None:
                self.on_result(result)
        return results
