"""What a report may make the app do: which links it may open, and how its text is kept text.

A report.json can come from anyone (a colleague, a bug tracker, a download), so every string
in it is untrusted: the app shows it as plain text and never follows a path or a URL it
names, except documentation links that pass `is_documentation_url`. No Qt; any thread.
"""
from __future__ import annotations

import html
from urllib.parse import urlsplit

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
    if host in DOC_HOSTS:
        return True
    normalized = f"https://{host}{parts.path}"
    return any(normalized.startswith(prefix) and ".." not in parts.path for prefix in DOC_PREFIXES)


def as_html(text) -> str:
    """Untrusted text as HTML that shows exactly that text (tags, entities and all), line
    breaks kept: for the places that need our own markup around report text."""
    return html.escape("" if text is None else str(text), quote=True).replace("\n", "<br>")
