"""The README and the manual in docs/: every link and image points at a file that exists (and an
anchor at a heading there), and every project path written in backquotes exists."""

from __future__ import annotations

import os
import re

from core import PROJECT_ROOT as ROOT

LINK = re.compile(r"\]\(([^)\s]+)\)")
PATH = re.compile(r"`((?:core|gui|tests|docs|resources)/[\w./-]+?\.(?:py|md|png))`")
MODULE = re.compile(r"(?<![\w.])((?:core|gui)(?:\.[a-z_]+)+)")
MADE_UP = ("tests/test_architecture.py", "tests/test_docs.py")  # they name made-up modules on purpose


def documents() -> list[str]:
    docs = os.path.join(ROOT, "docs")
    return [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(docs, n) for n in os.listdir(docs) if n.endswith(".md")
    )


def anchors(path: str) -> set[str]:
    """GitHub's anchors of a Markdown file's headings."""
    found = set()
    for line in open(path, encoding="utf-8"):
        if line.startswith("#"):
            text = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", text).replace(" ", "-"))
    return found


def broken(path: str) -> list[str]:
    out = []
    text = open(path, encoding="utf-8").read()
    here = os.path.dirname(path)
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        file, _, anchor = target.partition("#")
        full = os.path.normpath(os.path.join(here, file)) if file else path
        if not os.path.exists(full):
            out.append(f"{os.path.relpath(path, ROOT)}: link to {target}: no such file")
        elif anchor and full.endswith(".md") and anchor not in anchors(full):
            out.append(f"{os.path.relpath(path, ROOT)}: link to {target}: no such heading")
    for rel in PATH.findall(text):
        if not os.path.exists(os.path.join(ROOT, rel)):
            out.append(f"{os.path.relpath(path, ROOT)}: names {rel}, which does not exist")
    for dotted in MODULE.findall(text):
        if not _module_exists(dotted):
            out.append(f"{os.path.relpath(path, ROOT)}: names {dotted}, which is no module of the project")
    return out


def _module_exists(dotted: str) -> bool:
    """`core.decide.compare` or `core.decide.compare.compare_reports`: a module (or a package),
    possibly followed by one of its names."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        base = os.path.join(ROOT, *parts[:n])
        if os.path.isfile(base + ".py") or os.path.isfile(os.path.join(base, "__init__.py")):
            return n >= max(2, len(parts) - 2)  # a module of a package, then at most a name and its attribute
    return False


def test_every_link_and_path_in_the_documents_exists():
    assert [b for d in documents() for b in broken(d)] == []


def test_the_readme_is_the_front_door():
    text = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    assert len(text) < 9000 and "python3 main.py test" in text and "## Quick start" in text


def test_the_benchmarks_page_holds_the_current_figures_only():
    """docs/BENCHMARKS.md keeps each benchmark's newest figures, not a log of sessions (their
    history is in git): at most 40 kB."""
    assert os.path.getsize(os.path.join(ROOT, "docs", "BENCHMARKS.md")) <= 40_960


def test_a_broken_link_is_seen(tmp_path):
    doc = tmp_path / "x.md"
    doc.write_text("# Title\n[a](missing.md) [b](#title) [c](#nowhere) `core/nowhere.py` core.nowhere.x\n")
    found = broken(str(doc))
    assert len(found) == 4 and any("missing.md" in f for f in found) and any("#nowhere" in f for f in found)


def test_every_module_the_code_names_exists():
    """Docstrings and comments that name a module (`core.capture.live`, `gui.window.layout`)
    name one that exists: a stale path is a comment that contradicts the code."""
    stale = []
    for top in ("core", "gui", "tests"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                path = os.path.join(folder, name)
                if name.endswith(".py") and os.path.relpath(path, ROOT) not in MADE_UP:
                    for i, line in enumerate(open(path, encoding="utf-8"), 1):
                        stale += [
                            f"{os.path.relpath(path, ROOT)}:{i}: {d}"
                            for d in MODULE.findall(line)
                            if not _module_exists(d)
                        ]
    assert stale == []
