"""Which source lines each inductor kernel computes, from torch's own records.

inductor's provenance (`torch._inductor.config.trace.provenance_tracking_level = 1`) puts the
artifact `inductor_provenance_tracking_node_mappings` in the structured trace: `cppCodeToPost`
(kernel, e.g. "cpp_fused_add_relu_0:2" or "extern_kernels.addmm:1" → the post-grad FX nodes it
computes) and `postToPre` (post-grad node → the nodes of the graph dynamo made). The FX graph
cache stores the artifact with the graph and torch emits it again on a cache hit.

The lines come from *this* compile's dynamo graph (the `dynamo_output_graph` record: each group
of nodes follows a `# File: PATH:LINE in FUNCTION, code: ...` comment), not from the stack
traces inductor stored with its kernels: a cache hit from another model file with the same graph
would name that file's lines. Read by core.capture.graphs per compile id; used by
core.measure.line_profile.
"""

from __future__ import annotations

import json
import re

NODE_MAPPINGS_ARTIFACT = "inductor_provenance_tracking_node_mappings"
_FILE = re.compile(r"^\s*# File: (.*?):(\d+) in ")
_NODE = re.compile(r"^\s+(\w+)(?:: \"[^\"]*\")? = ")


def node_lines(graph_code: str) -> dict[str, tuple[str, int]]:
    """Node name → (file, line) of the source that made it, from a dynamo graph's readable code."""
    out: dict[str, tuple[str, int]] = {}
    where: tuple[str, int] | None = None
    for text in (graph_code or "").splitlines():
        m = _FILE.match(text)
        if m:
            where = (m.group(1), int(m.group(2)))
            continue
        m = _NODE.match(text)
        if m and where is not None:
            out.setdefault(m.group(1), where)
    return out


def read_node_mappings(payload: str | None) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(kernel → post-grad nodes, post-grad node → dynamo graph nodes) of the artifact; ({}, {})
    for anything else."""
    try:
        value = json.loads(payload or "{}")
    except ValueError:
        return {}, {}
    if not isinstance(value, dict):
        return {}, {}

    def table(key: str) -> dict[str, list[str]]:
        raw = value.get(key)
        if not isinstance(raw, dict):
            return {}
        return {str(k): [str(n) for n in v] for k, v in raw.items() if isinstance(v, list)}

    return table("cppCodeToPost") or table("tritonCodeToPost"), table("postToPre")


def kernel_lines(
    kernels: dict[str, list[str]], post_to_pre: dict[str, list[str]], graph_code: str
) -> dict[str, list[tuple[str, int]]]:
    """Kernel → the distinct source lines of the dynamo graph nodes it computes (in graph order)."""
    lines_of = node_lines(graph_code)
    out: dict[str, list[tuple[str, int]]] = {}
    for kernel, posts in kernels.items():
        lines: list[tuple[str, int]] = []
        for post in posts:
            for pre in post_to_pre.get(post, [post]):
                where = lines_of.get(pre)
                if where is not None and where not in lines:
                    lines.append(where)
        if lines:
            out[kernel] = lines
    return out
