"""Which links a report may open: only https pages of the PyTorch documentation."""
from __future__ import annotations

import pytest

from core.safety import as_html, is_documentation_url


@pytest.mark.parametrize("url", [
    "https://docs.pytorch.org/docs/stable/torch.compiler_troubleshooting.html",
    "https://pytorch.org/docs/stable/generated/torch.compile.html",
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0170.html",  # what torch 2.14 links GB codes to
    "HTTPS://Docs.PyTorch.org/docs/",
])
def test_documentation_links_open(url):
    assert is_documentation_url(url)


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "javascript:alert(1)", "http://docs.pytorch.org/docs/", "ftp://pytorch.org/",
    "https://pytorch.org.evil.example/", "https://evil.example/pytorch.org", "https://docs.pytorch.org@evil.example/",
    "https://user:pw@pytorch.org/", "https://pytorch.org:8443/", "https://evil.example/gb/gb0170.html",
    "https://meta-pytorch.github.io/other-site/", "https://meta-pytorch.github.io/compile-graph-break-site/../x",
    "https://pytorch.org/ docs", "https://pytorch.org/\ndocs", "https://pytorch.org\\@evil.example/", "", None, 42,
    "https://[::1/",
])
def test_anything_else_does_not(url):
    assert not is_documentation_url(url)


def test_as_html_shows_the_text_itself():
    assert as_html("<img src='x'> & <a href=\"y\">\nz") == \
        "&lt;img src=&#x27;x&#x27;&gt; &amp; &lt;a href=&quot;y&quot;&gt;<br>z"
    assert as_html(None) == ""
