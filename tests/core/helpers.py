"""What the core tests share: tiny model files as text, a job spec for them, running a job in
this process or `main.py profile` in a child, and a handler that collects what torch itself
logs on its graph_breaks artifact. Imported by the tests; fixtures are in conftest.py."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys

from core import PROJECT_ROOT as ROOT
from core.analysis.results import JobResult
from core.measure.job import run_job
from core.vocab.config import CompileConfig, JobSpec, ModelSpec

BREAKS_MODEL = '''\
"""Three graph breaks: a data-dependent branch, .item() and an explicit graph_break()."""
import torch
import torch.nn.functional as F


class Breaks(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        if y.sum() > 0:                      # line 13
            y = F.relu(y)
        else:
            y = -F.relu(-y)
        n = y.sum().item()                   # line 17
        y = y + n
        torch._dynamo.graph_break()          # line 19
        return y.cos()


def get_model():
    return Breaks()


def get_example_inputs():
    return (torch.randn(4, 8),)
'''


MLP_MODEL = '''\
"""A small MLP with no graph breaks."""
import torch


def get_model():
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def get_example_inputs():
    return (torch.randn(2, 16),)
'''


# The disabled function runs eagerly, so dynamo cannot see the counter: the code after it
# receives a tensor whose size alternates, and with dynamic=false that forces a recompile.
SHAPE_CHANGE_MODEL = """\
import torch

CALLS = [0]


@torch.compiler.disable
def grow(x):
    CALLS[0] += 1
    return x.repeat(1 + CALLS[0] % 2, 1)


class ShapeChange(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = grow(x)
        return self.lin(y).relu()


def get_model():
    return ShapeChange()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


LSTM_MODEL = """\
import torch


def get_model():
    return torch.nn.LSTM(input_size=8, hidden_size=16, num_layers=2)


def get_example_inputs():
    return (torch.randn(5, 1, 8),)
"""


def make_spec(source: str, backend: str = "eager", iters: int = 6, warmup: int = 2, **kwargs) -> JobSpec:
    config = kwargs.pop("config", None) or CompileConfig(
        backend=backend, dynamic=kwargs.pop("dynamic", "auto"), dynamo_config=kwargs.pop("dynamo_config", ())
    )
    import uuid

    return JobSpec(
        job_id=uuid.uuid4().hex[:8], model=ModelSpec(source), config=config, iters=iters, warmup=warmup, **kwargs
    )


def run_in_process(spec, should_stop=lambda: False):
    result = JobResult(spec)
    events = []

    def emit(event):
        events.append(event)
        assert result.apply(event)

    outcome = run_job(spec, emit, should_stop)
    return outcome, result, events


def profile_command(*args, timeout=240, processes="1", cache: str | None = None):
    """The command as typed; one timing process unless a test asks for more (the default, 3,
    is tested once below). `cache`: the product's cache folder for it (core.run.torch_info), else
    the test session's."""
    more = ["--processes", processes] if processes else []
    env = None if cache is None else {**os.environ, "COMPILE_PROFILER_CACHE": cache}
    return subprocess.run(
        [sys.executable, "main.py", "profile", *args, *more],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


def default_sigint() -> None:
    """For a child that a test interrupts: Ctrl+C as in a terminal. A test run started in the
    background of a non-interactive shell inherits SIGINT ignored, and Python keeps it so."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


SCALED_WHEN_COMPILED = '''\
"""Computes something else when compiled (torch.compiler.is_compiling() is True while tracing)."""
import torch


class Scaled(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 8)

    def forward(self, x):
        y = self.lin(x)
        if torch.compiler.is_compiling():
            y = y * 1.05
        return {"logits": y, "top": y.argmax(-1)}


def get_model():
    return Scaled()


def get_example_inputs():
    return (torch.randn(4, 16),)
'''


TINY_GPT2 = (
    "num_hidden_layers=1",
    "hidden_size=32",
    "num_attention_heads=2",
    "vocab_size=100",
    "max_position_embeddings=64",
)


class TorchLog(logging.Handler):
    """What torch logged on its graph_breaks artifact: (file, line) per record, read from the
    first line of the message ("Graph break ... in user code at FILE:LINE"), and the compile
    id torch's own log formatter prints before it ("[1/0]"), in `compile_ids`."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.sites: list[tuple[str, int]] = []
        self.compile_ids: list[str] = []

    def emit(self, record):
        from torch._guards import CompileContext

        compile_id = CompileContext.current_compile_id()
        self.compile_ids.append(str(compile_id) if compile_id is not None else "")
        text = record.getMessage()
        m = re.match(r"Graph break.*? in user code at (.*):(\d+)$", text.splitlines()[0])
        if m:
            self.sites.append((m.group(1), int(m.group(2))))
        else:  # a frame torch skips: the location is the last frame of the user code it shows
            frames = re.findall(r'File "(.*)", line (\d+)', text)
            self.sites.append((frames[-1][0], int(frames[-1][1])) if frames else ("?", 0))


# A huge compile log without the disk: real lines at its start and its end, holes between.
LOG_FIRST = "I1130 06:07:44.123456 1 torch/_dynamo/convert_frame.py:10] [0/0] compiling forward (the first message)\n"
LOG_LAST = (
    "E1130 09:07:44.123456 1 torch/_inductor/compile_fx.py:20] [3/7] the last message: "
    "compile failed at the end\nW1130 09:07:45.000001 1 torch/_dynamo/convert_frame.py:30] [3/7] done\n"
)


def sparse_log(path, size: int) -> None:
    """A sparse file of `size` bytes (os.truncate): LOG_FIRST three times at its start, LOG_LAST at its end."""
    import os

    with open(path, "wb") as fh:
        fh.write(LOG_FIRST.encode() * 3)
    os.truncate(path, size)
    with open(path, "r+b") as fh:
        fh.seek(size - len(LOG_LAST) - 1)
        fh.write(b"\n" + LOG_LAST.encode())


# A submodule that behaves differently while dynamo traces it: compiled outputs diverge at
# dynamo's graph capture, in `block.odd` (the localization tests).
COMPILING_MODEL = """\
import torch


class Odd(torch.nn.Module):
    def forward(self, x):
        if torch.compiler.is_compiling():  # differs under compile: the bug to find
            return x * 1.5
        return x


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(16, 16)
        self.odd = Odd()

    def forward(self, x):
        return self.odd(self.lin(x)).relu()


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.first = torch.nn.Linear(16, 16)
        self.block = Block()
        self.last = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.last(self.block(self.first(x)))


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(8, 16),)
"""
