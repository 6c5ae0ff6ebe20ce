"""Reading dataclasses back from JSON with every value's type checked.

A report is input like any other: a hand-edited or crafted report.json may hold a string
where a latency belongs or a number where a backend name belongs. `build(cls, data, where)`
checks each field against the dataclass's own annotations and raises `SchemaError` naming
the field's path ("jobs[0].compile.compile_time_s must be a number, not 'fast'"), so the app
and the CLI can say exactly what is wrong instead of failing somewhere later.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from typing import Any


class SchemaError(ValueError):
    """A value of the wrong type or shape; the message names its path in the document."""


@functools.lru_cache(maxsize=None)
def _hints(cls) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _describe(tp) -> str:
    if tp is str:
        return "text"
    if tp is bool:
        return "true or false"
    if tp is int:
        return "a whole number"
    if tp is float:
        return "a number"
    if tp is dict:
        return "an object"
    origin = typing.get_origin(tp)
    if origin in (tuple, list):
        return "a list"
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) if a is not type(None) else "null" for a in typing.get_args(tp))
    return getattr(tp, "__name__", str(tp))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def check(tp, value: Any, where: str) -> Any:
    """`value` converted to `tp` (lists to tuples, ints to floats), or SchemaError."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if type(None) in args and (value is None or (isinstance(value, float) and value != value)):
            return None  # NaN where a figure may be missing: missing (an error of inf - inf, say)
        for arg in args:
            if arg is type(None):
                continue
            try:
                return check(arg, value, where)
            except SchemaError:
                continue
        raise SchemaError(f"{where} must be {_describe(tp)}, not {_short(value)}")
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            raise SchemaError(f"{where} must be a list, not {_short(value)}")
        args = typing.get_args(tp)
        item = args[0] if args else Any
        return tuple(check(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin is dict or tp is dict:
        if not isinstance(value, dict):
            raise SchemaError(f"{where} must be an object, not {_short(value)}")
        return value
    if tp is Any:
        return value
    if dataclasses.is_dataclass(tp):
        return build(tp, value, where)
    if tp is bool:
        if not isinstance(value, bool):
            raise SchemaError(f"{where} must be true or false, not {_short(value)}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SchemaError(f"{where} must be a whole number, not {_short(value)}")
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SchemaError(f"{where} must be a number, not {_short(value)}")
        if value != value:  # NaN where a figure is required (one that may be missing reads as None)
            raise SchemaError(f"{where} must be a number, not NaN")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise SchemaError(f"{where} must be text, not {_short(value)}")
        return value
    return value


def build(cls, data: Any, where: str, **given):
    """An instance of dataclass `cls` from a dict, every field type-checked; unknown keys
    are ignored (a newer report may add some), missing fields take their defaults; fields
    in `given` are passed as they are (already built by the caller)."""
    if not isinstance(data, dict):
        raise SchemaError(f"{where} must be an object, not {_short(data)}")
    hints = _hints(cls)
    kwargs = dict(given)
    for f in dataclasses.fields(cls):
        if f.name in given or not f.init:
            continue
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise SchemaError(f"{where}.{f.name} is missing")
            continue
        kwargs[f.name] = check(hints[f.name], data[f.name], f"{where}.{f.name}")
    return cls(**kwargs)
