"""`torch._dynamo.config` overrides as the config panel's text field holds them
("allow_rnn=True, recompile_limit=16"), parsed with `core.vocab.config.parse_key_values` against
the installed torch's defaults. No Qt; any thread.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from core.vocab.config import CompileConfig, parse_key_values

WHAT = "torch._dynamo.config"


def split_items(text: str) -> list[str]:
    """KEY=VALUE items separated by commas or spaces; a comma or space inside brackets or
    quotes (a list or a string value) stays in its item."""
    items, current, depth, quote = [], [], 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif ch in ", \t\n" and depth == 0:
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(ch)
    if current:
        items.append("".join(current))
    # "key = value" typed with spaces: glue the pieces back together
    glued: list[str] = []
    for item in items:
        if glued and (item.startswith("=") or glued[-1].endswith("=")):
            glued[-1] += item
        else:
            glued.append(item)
    return glued


def parse(text: str | list[str], defaults: dict[str, Any] | None) -> tuple[tuple[str, Any], ...]:
    """The overrides of a field's text (or a list of KEY=VALUE items, as the command line
    gives them) as CompileConfig.dynamo_config (sorted pairs). Raises ConfigError.

    Without `defaults` (torch not loaded yet) keys are not checked and values are read as
    Python literals; the run is validated again once torch's defaults are known."""
    items = split_items(text) if isinstance(text, str) else list(text)
    if defaults is None:  # True/False in any case as torch's bool settings read them; else literals
        defaults = {
            key.strip(): (False if raw.strip().lower() in ("true", "false") else None)
            for key, _, raw in (item.partition("=") for item in items)
            if key.strip()
        }
    return parse_key_values(items, defaults, WHAT)


def as_text(pairs) -> str:
    return ", ".join(f"{key}={value}" for key, value in pairs)


def check(config: CompileConfig, defaults: dict[str, Any]) -> None:
    """Raise ConfigError when a config's overrides do not exist in this torch."""
    if config.dynamo_config:
        parse_key_values([f"{k}={v}" for k, v in config.dynamo_config], defaults, WHAT)


def with_override(config: CompileConfig, key: str, value: Any) -> CompileConfig:
    """`config` with `key` set to `value` among its dynamo overrides."""
    pairs = dict(config.dynamo_config)
    pairs[key] = value
    return dataclasses.replace(config, dynamo_config=tuple(sorted(pairs.items())))
