"""Graph breaks as torch logs them: kept beside skipped frames, sent at once, located exactly.

Each test runs a job in-process on a tiny model file (backend "eager", well under a second of
compiling) and compares the break table with what torch itself logged, collected here by a
handler of our own on torch's graph_breaks loggers.
"""

import os
import re

from core.analysis.results import JobResult
from core.capture import break_records
from core.vocab import events as ev
from core.vocab import records as rec
from core.vocab import source_paths as paths
from core.vocab.config import CompileConfig
from tests.core.helpers import BREAKS_MODEL, LSTM_MODEL, make_spec
from tests.core.helpers import run_in_process as run


def ordinary(result):
    return [g for g in result.graph_breaks if not g.frame_skipped]


def skipped(result):
    return [g for g in result.graph_breaks if g.frame_skipped]


# A break in a loop makes dynamo skip `looped`; forward's own .item() is a break of the same
# kind (GB0124). Merging skipped frames by GB code used to drop every ordinary GB0124 break.
SHARED_CODE_MODEL = """\
import torch


def looped(x):
    for i in range(2):
        x = x + x.sum().item()           # line 6: a break in a loop: dynamo skips this frame
    return x


class M(torch.nn.Module):
    def forward(self, x):
        y = torch.relu(x)
        n = y.sum().item()               # line 13: an ordinary break of the same kind
        return looped(y + n)


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


def test_ordinary_breaks_are_kept_beside_a_skipped_frame_of_the_same_kind(write_model, torch_log):
    path = write_model(SHARED_CODE_MODEL, "shared.py")
    outcome, result, _ = run(make_spec(path, iters=2, warmup=1))
    assert outcome == "completed", result.failure_detail
    assert {(g.file, g.line) for g in ordinary(result)} == {(path, 13), (path, 6)}
    (skip,) = skipped(result)
    assert (skip.file, skip.line, skip.gb_code) == (path, 6, "GB0124")
    assert skip.eager_function == "looped (shared.py:4)"  # the function that ran eagerly
    assert all(g.gb_code == "GB0124" for g in result.graph_breaks)
    # every place torch logged is in the table, and the counts add up to what torch logged
    assert set(torch_log.sites) == {(g.file, g.line) for g in result.graph_breaks}
    assert sum(g.logged for g in result.graph_breaks) == len(torch_log.sites) == 3
    # each break is tagged with torch's compile id; the skipped frame keeps its own
    assert all(re.fullmatch(r"\d+/\d+", g.compile_id) for g in result.graph_breaks)
    assert skip.compile_id not in {g.compile_id for g in ordinary(result)}
    s = result.summary()
    assert (s["graph_break_sites"], s["graph_break_per_call"], s["frames_skipped"]) == (2, 2, 1)


def test_a_skipped_frame_follow_up_moves_its_breaks_without_double_counting():
    """The job sends each break when torch logs it, then a follow-up once the metrics show
    that the frame compiled under that compile id was skipped: the fold moves it."""
    result = JobResult(make_spec("m.py"))
    where = dict(reason="Unsupported Tensor.item() call", gb_code="GB0124", file="/m.py", line=6)
    events = [
        ev.GraphBreakFound(result.job_id, graph_break=rec.GraphBreak(**where, compile_id="0/0")),
        ev.GraphBreakFound(result.job_id, graph_break=rec.GraphBreak(**where, compile_id="0/0", per_call=0)),
        ev.GraphBreakFound(result.job_id, graph_break=rec.GraphBreak(**where, compile_id="1/0", per_call=0)),
        ev.GraphBreakFound(
            result.job_id,
            graph_break=rec.GraphBreak(
                **where, compile_id="0/0", frame_skipped=True, logged=2, eager_function="f (m.py:4)"
            ),
        ),
    ]
    for e in events:
        assert result.apply(e)
    (skip,) = skipped(result)
    (kept,) = ordinary(result)
    assert (skip.logged, skip.per_call, skip.eager_function) == (2, 1, "f (m.py:4)")
    assert (kept.logged, kept.per_call, kept.compile_id) == (1, 0, "1/0")
    assert sum(g.logged for g in result.graph_breaks) == 3  # what torch logged, once each
    # a follow-up whose breaks were all in the skipped frame leaves no ordinary row
    again = JobResult(result.spec)
    for e in events[:2] + events[3:]:
        again.apply(e)
    assert [g.frame_skipped for g in again.graph_breaks] == [True]
    assert again.summary()["graph_break_sites"] == 0


# maybe_hang() runs eagerly (compiler.disable), counting model calls: the eager check is
# call 1, the eager warm-up calls 2-3, the compile call 4, where it hangs after the break.
HANG_AFTER_BREAK_MODEL = """\
import time
import torch

CALLS = [0]


@torch.compiler.disable
def maybe_hang():
    CALLS[0] += 1
    if CALLS[0] >= 4:
        time.sleep(600)


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x):
        y = self.lin(x)
        torch._dynamo.graph_break()          # line 21: found while compiling, before the hang
        maybe_hang()                         # line 22: calling a disabled function breaks too
        return y.relu()


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(2, 8),)
"""


def test_breaks_found_before_a_compile_times_out_are_kept(write_model):
    from core.run.runner import JobRunner

    path = write_model(HANG_AFTER_BREAK_MODEL, "hang.py")
    result = JobRunner().run(make_spec(path, warmup=2, timeout_s=20))
    assert result.status == "failed" and "timed out" in result.failure_reason, result.failure_reason
    assert result.compile is None  # the first compiled call never ended
    assert [(g.gb_code, g.line) for g in result.graph_breaks] == [("GB0025", 21), ("GB0098", 22)]
    assert result.summary()["graph_break_sites"] == 2


def test_a_break_reached_through_nested_calls_is_logged_three_times_but_passed_once(write_model, torch_log):
    path = write_model(
        """\
        import torch


        def inner(y):
            return y + y.sum().item()            # line 5


        def outer(y):
            return inner(y * 2)


        class M(torch.nn.Module):
            def forward(self, x):
                return outer(x.relu()).cos()


        def get_model():
            return M()


        def get_example_inputs():
            return (torch.randn(4, 8),)
        """,
        "deep.py",
    )
    _, result, events = run(make_spec(path, iters=2, warmup=1))
    # dynamo restarts forward's and outer's analysis and logs the break each time
    assert torch_log.sites == [(path, 5)] * 3
    (gb,) = result.graph_breaks
    assert (gb.line, gb.logged, gb.per_call, gb.frame_skipped) == (5, 3, 1, False)
    assert len([e for e in events if isinstance(e, ev.GraphBreakFound)]) == 3  # each sent when logged
    s = result.summary()
    assert (s["graph_break_sites"], s["graph_break_per_call"]) == (1, 1)
    assert "graph_break_count" not in s


def test_the_same_break_on_two_paths_counts_twice_per_call(write_model):
    path = write_model(
        """\
        import torch


        def helper(y):
            return y + y.sum().item()            # line 5


        class M(torch.nn.Module):
            def forward(self, x):
                a = helper(x)
                b = helper(x * 2)
                return a + b


        def get_model():
            return M()


        def get_example_inputs():
            return (torch.randn(4, 8),)
        """,
        "twice.py",
    )
    _, result, _ = run(make_spec(path, iters=2, warmup=1))
    (gb,) = result.graph_breaks
    assert gb.line == 5 and gb.per_call == 2 and gb.logged >= 2
    assert result.summary()["graph_break_per_call"] == 2


def test_lstm_skip_is_counted_once_per_call_though_torch_logs_it_twice(write_model, torch_log):
    path = write_model(LSTM_MODEL, "lstm.py")
    _, result, _ = run(make_spec(path, iters=2, warmup=1))
    (skip,) = result.graph_breaks
    assert skip.frame_skipped and skip.gb_code == "GB0014"
    assert len(torch_log.sites) == 2  # attempt 0 and dynamo's restart of the frame
    assert (skip.logged, skip.per_call) == (2, 1)
    assert (skip.file, skip.line) == torch_log.sites[0]  # where torch says it failed
    assert skip.eager_function.startswith("inner (torch/_dynamo/external_utils.py:")


DECORATED_MODEL = """\
import functools

import torch


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)
    return wrapper


class M(torch.nn.Module):
    @traced
    def forward(self, x):
        for _ in range(2):
            x = x + x.sum().item()       # line 17
        return x


def get_model():
    return M()


def get_example_inputs():
    return (torch.randn(4, 8),)
"""


def test_a_skipped_frame_names_the_failing_line_and_the_function_that_ran_eagerly(write_model):
    path = write_model(DECORATED_MODEL, "deco.py")
    _, result, _ = run(make_spec(path, iters=2, warmup=1))
    (skip,) = skipped(result)
    assert (skip.file, skip.line, skip.source) == (path, 17, "x = x + x.sum().item()       # line 17")
    # the def line, not the decorator line a code object starts at
    assert skip.eager_function == "forward (deco.py:15)"


LIBRARY_BREAK_MODEL = """\
import torch
from torchvision.ops import boxes


class M(torch.nn.Module):
    def forward(self, b):
        keep = boxes.remove_small_boxes(b, 0.5)    # line 7
        return b[keep].sum()


def get_model():
    return M()


def get_example_inputs():
    return (torch.tensor([[0.0, 0.0, 2.0, 2.0], [0.0, 0.0, 0.1, 0.1]]),)
"""


def test_a_break_in_a_library_names_the_users_call_site(write_model, torch_log):
    path = write_model(LIBRARY_BREAK_MODEL, "lib.py")
    _, result, _ = run(make_spec(path, iters=2, warmup=1))
    (gb,) = result.graph_breaks
    assert gb.gb_code == "GB0036" and gb.line == torch_log.sites[0][1]
    assert gb.file.endswith(os.path.join("torchvision", "ops", "boxes.py")) and os.path.isabs(gb.file)
    assert paths.display_path(gb.file) == "torchvision/ops/boxes.py"
    assert (gb.user_file, gb.user_line) == (path, 7)
    # the source around the line, read while profiling
    assert gb.context_start == gb.line - 5 and len(gb.context) == 11
    assert gb.context[5].strip() == gb.source


def test_context_and_compile_ids(write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    _, result, _ = run(make_spec(path, iters=2, warmup=1))
    by_line = {g.line: g for g in result.graph_breaks}
    branch = by_line[13]
    assert branch.context_start == 8 and branch.context[5].startswith("        if y.sum() > 0:")
    assert branch.user_file == "" and branch.user_line == 0  # the break is in user code already
    assert [by_line[n].compile_id for n in (13, 17, 19)] == ["0/0", "1/0", "2/0"]


def test_fullgraph_reports_the_offending_line_not_the_def_line(write_model):
    path = write_model(BREAKS_MODEL, "breaks.py")
    _, result, _ = run(make_spec(path, config=CompileConfig(backend="eager", fullgraph=True)))
    assert result.status == "failed" and "fullgraph=True" in result.failure_reason
    (gb,) = result.graph_breaks
    assert (gb.file, gb.line, gb.gb_code) == (path, 13, "GB0170")  # `def forward` is line 11
    assert not gb.frame_skipped  # nothing ran eagerly: the compile failed


def test_odd_characters_in_the_model_path_keep_every_location(tmp_path):
    folder = tmp_path / "odd\nname: with colon"
    folder.mkdir()
    path = folder / "breaks.py"
    path.write_text(BREAKS_MODEL)
    _, result, _ = run(make_spec(str(path), iters=2, warmup=1))
    assert result.status == "completed", result.failure_detail
    assert sorted((g.file, g.line) for g in result.graph_breaks) == [(str(path), n) for n in (13, 17, 19)]
    assert all(g.source for g in result.graph_breaks)


def test_parse_graph_break_text_fallback_keeps_an_odd_path():
    text = (
        "Graph break in user code at /tmp/odd\nname/m.py:13\n"
        "Graph Break Reason: Data-dependent branching\n"
        "  Explanation: Detected data-dependent branching.\n"
        "  Hint: Use `torch.cond` to express dynamic control flow.\n"
        "\n  Developer debug context: attempted to jump with TensorVariable()\n\n"
        " For more details about this graph break, please visit: "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html\n"
    )
    gb = break_records.parse_graph_break(text)
    assert (gb.file, gb.line, gb.reason, gb.gb_code) == (
        "/tmp/odd\nname/m.py",
        13,
        "Data-dependent branching",
        "GB0170",
    )


def test_torch_folder_test_compares_whole_path_components():
    import torch

    torch_dir = os.path.dirname(torch.__file__)
    vision = torch_dir + "vision" + os.sep + "ops" + os.sep + "boxes.py"  # .../site-packages/torchvision/...
    assert vision.startswith(torch_dir)  # what the old prefix test saw
    assert not paths.is_under(vision, torch_dir)
    assert paths.is_under(os.path.join(torch_dir, "nn", "modules", "module.py"), torch_dir)
    assert paths.is_library(vision) and not paths.is_user_code(vision)


def test_display_path():
    assert (
        paths.display_path("/x/lib/python3.11/site-packages/transformers/models/bert/modeling_bert.py")
        == "transformers/models/bert/modeling_bert.py"
    )
    assert paths.display_path("/usr/lib/python3/dist-packages/torchvision/ops/boxes.py") == "torchvision/ops/boxes.py"
    assert paths.display_path(os.path.join(os.getcwd(), "models", "m.py")) == os.path.join("models", "m.py")
    assert paths.display_path("/somewhere/else/m.py") == "m.py"
    assert paths.display_path("") == ""
