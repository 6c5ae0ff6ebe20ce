"""The detail pane of a graph break (gui.panels.graph_breaks): torch's reason, explanation and
hints, where it broke and the user's own line, the source around it from the report's own record
(no file is read), the per-call counts and cost, the links to the graphs either side and to the
PyTorch documentation. Every text of the report is escaped. GUI thread only.
"""

from __future__ import annotations

from core.report.safety import is_documentation_url
from core.vocab.formatting import fmt_ms
from gui.widgets.safe_text import markup
from gui.widgets.theme import is_dark

GRAPH_LINK = "cp-graph"  # the details' links to the graphs on either side of a break (Graphs tab)


def cost_text(cost) -> str:
    """A break's cost per compiled call (core's BreakCost), or – when it was not measured."""
    return "–" if cost is None else fmt_ms(cost.cost_ms_per_call)


EXCERPT_AROUND = 3  # source lines shown either side of the break line in the detail pane


def source_excerpt(gb) -> list[tuple[int, str, bool]]:
    """(line number, text, is the break line) around the break, from the report's own
    `context` (recorded while profiling); else the one line torch reported. No file is read."""
    if gb.context:
        start = gb.context_start or max(1, gb.line)
        lines = [(start + i, text, start + i == gb.line) for i, text in enumerate(gb.context)]
        while lines and not lines[-1][1].strip() and not lines[-1][2]:  # blank lines past the end
            lines.pop()
        while lines and not lines[0][1].strip() and not lines[0][2]:
            lines.pop(0)
        return lines
    return [(gb.line, gb.source, True)] if gb.source else []


def detail_html(gb, cost=None, counted: bool = True) -> str:
    """The detail view's HTML for one break: every text of the report escaped; a link only
    to the PyTorch documentation, and (with its `cost`, core's BreakCost) links to the graphs
    on either side of it: "cp-graph:before:N" / "cp-graph:after:N", N indexing
    `cost.graphs_before` / `graphs_after` (no report text in a link)."""
    esc = markup
    highlight = "#5c4b00" if is_dark() else "#fff2a8"
    parts = [
        f"<h3 style='margin:0'>{esc(gb.reason)}"
        + (f" <small>({esc(gb.gb_code)})</small>" if gb.gb_code else "")
        + "</h3>"
    ]
    # torch's explanation names what broke (`print`, a data-dependent branch): first, where the
    # pane shows it without scrolling (at 1400x900 it was below the source lines)
    if gb.explanation and gb.explanation != gb.reason:
        parts.append("<p style='margin:2px 0'>" + esc(gb.explanation) + "</p>")
    if gb.compile_failed:
        parts.append("<p><b>The compile failed here: torch raised and the job ended; nothing ran eagerly.</b></p>")
    if gb.frame_skipped:
        parts.append(
            "<p><b>Dynamo skipped this whole frame: it ran eagerly.</b>"
            + (f"<br>ran eagerly: <code>{esc(gb.eager_function)}</code>" if gb.eager_function else "")
            + "</p>"
        )
    where = []
    if gb.file:
        where.append(f"<code>{esc(gb.file)}:{gb.line}</code>")
    if gb.user_file:
        where.append(f"your code: <code>{esc(gb.user_file)}:{gb.user_line}</code>")
    source = "" if counted or gb.frame_skipped or gb.compile_failed else " (from the compile alone: no op profile)"
    counts = f"{gb.per_call}× per compiled call{source} · " if not gb.compile_failed else ""
    counts += f"logged {gb.logged}× while compiling (dynamo restarts after a break)"
    if gb.compile_id:
        counts += f" · compile id {esc(gb.compile_id)}"
    if cost is not None:
        counts += f"<br>costs <b>{cost_text(cost)}</b> per compiled call (eager time between the graphs it splits)"
        sides = [
            f"{word}: " + ", ".join(f"<a href='{GRAPH_LINK}:{key}:{i}'>{esc(g)}</a>" for i, g in enumerate(graphs))
            for word, key, graphs in (
                ("graph before", "before", cost.graphs_before),
                ("graph after", "after", cost.graphs_after),
            )
            if graphs
        ]
        if sides:
            counts += "<br>" + " · ".join(sides) + " <small>(opens the Graphs tab)</small>"
    if where:  # where it broke, then the line itself: both before the counts (in view at 1400x900)
        parts.append("<p style='margin:2px 0'>" + "<br>".join(where) + "</p>")
    excerpt = source_excerpt(gb)
    hit = next((i for i, (_, _, is_hit) in enumerate(excerpt) if is_hit), None)
    if hit is not None:  # the break line with 3 lines either side: the line stays in view
        excerpt = excerpt[max(0, hit - EXCERPT_AROUND) : hit + EXCERPT_AROUND + 1]
    if excerpt:
        width = len(str(excerpt[-1][0]))
        rows = []
        for n, text, is_hit in excerpt:
            number, body = f"{n:>{width}}", "  " + markup(text).replace("<br>", " ")
            rows.append(
                f"<span style='background:{highlight}; font-weight:bold'>{number}{body}</span>"
                if is_hit
                else f"<span style='color:gray'>{number}</span>{body}"
            )
        parts.append("<pre style='margin:4px 0'>" + "\n".join(rows) + "</pre>")
    parts.append("<p>" + counts + "</p>")
    if gb.hints:
        parts.append("<p><b>Hints</b></p><ul>" + "".join(f"<li>{esc(h)}</li>" for h in gb.hints) + "</ul>")
    if gb.doc_url:
        if is_documentation_url(gb.doc_url):
            parts.append(f"<p>Documentation: <a href='{esc(gb.doc_url)}'>{esc(gb.doc_url)}</a></p>")
        else:
            parts.append(
                f"<p>Documentation (not a PyTorch documentation link, so not opened): "
                f"<code>{esc(gb.doc_url)}</code></p>"
            )
    return "".join(parts)
