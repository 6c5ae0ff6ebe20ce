"""Python model files: get_model(), get_example_inputs(), optionally get_input_variants();
FILE.py:NAME picks another factory. Every failure, sys.exit() included, names the file and line."""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback

from core.models.base import TORCHSCRIPT_NOTE, LoadedModel, ModelLoadError, error_line_in, exit_error, short_error

SYNTAX_CHECK_MAX_BYTES = 20 * 1024 * 1024  # a model file larger than this is left to the job to read


def check_file(path: str, factory: str = "get_model") -> None:
    """A .py model file refused before any job starts, read once and never run: one that cannot
    be parsed (a job ran for 4 s, wrote a report of the failure and then blocked the same --out),
    or one with no `factory` or get_example_inputs() at its top level (a job ran and failed).
    ModelLoadError with the line as the job would give it. Parsed to an AST and compiled from it
    (the symbol-table errors too); a file that may bind names in ways its text does not show
    (`from x import *`, a module __getattr__, globals()) is left to the job."""
    import ast

    if not path.endswith(".py") or not os.path.isfile(path) or os.path.getsize(path) > SYNTAX_CHECK_MAX_BYTES:
        return
    try:
        with open(path, "rb") as fh:
            source = fh.read()
        tree = ast.parse(source, path)
        compile(tree, path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ModelLoadError(f"syntax error: {exc.msg}", file=path, line=exc.lineno or 0) from None
    except (OSError, ValueError):  # unreadable, or a NUL byte: the job says so with its own message
        return
    if b"globals()" in source or b"__getattr__" in source:
        return
    bound = _module_names(tree.body)
    if bound is None:
        return
    for fn_name in (factory, "get_example_inputs"):
        if fn_name not in bound:
            raise missing_function(fn_name, path)


def _module_names(statements) -> set[str] | None:
    """The names `statements` bind at module level, in any block that is not a function or a
    class (if, try, with, for, match...); None where the text cannot tell (a star import)."""
    import ast

    bound: set[str] = set()
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if any(alias.name == "*" for alias in node.names):
                return None
            bound.update(alias.asname or alias.name.split(".")[0] for alias in node.names)
            continue
        # assignments, walrus, for/with targets: every name stored at this level
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                bound.update(n.id for n in ast.walk(child) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        blocks = [getattr(node, k, []) for k in ("body", "orelse", "finalbody")]
        blocks += [part.body for part in getattr(node, "handlers", []) + getattr(node, "cases", [])]
        for block in blocks:
            inner = _module_names(block)
            if inner is None:
                return None
            bound |= inner
    return bound


def import_model_file(path: str):
    """Run a model file as a fresh module; ModelLoadError with the line on any failure."""
    name = f"_profiled_model_{abs(hash(path))}"
    try:
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise ModelLoadError(
            f"syntax error: {exc.msg}", file=path, line=exc.lineno or 0, detail=traceback.format_exc()
        ) from None
    except Exception as exc:
        raise ModelLoadError(
            f"running the file failed: {short_error(exc)}",
            file=path,
            line=error_line_in(path, exc),
            detail=traceback.format_exc(),
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() at import time, typically script code
        raise exit_error(
            exc,
            "running the file",
            'define get_model() and get_example_inputs() (put script code under `if __name__ == "__main__":`)',
            path,
            error_line_in(path, exc),
        ) from None
    return module


def missing_function(fn_name: str, path: str) -> ModelLoadError:
    return ModelLoadError(
        f"the file defines no {fn_name}() function; a model file needs "
        "get_model() and get_example_inputs() (see docs/model-sources.md); FILE.py:NAME picks "
        "another model factory.",
        file=path,
    )


def call_file_function(module, path: str, fn_name: str):
    fn = getattr(module, fn_name, None)
    if fn is None or not callable(fn):
        raise missing_function(fn_name, path)
    try:
        return fn()
    except Exception as exc:
        line = error_line_in(path, exc) or fn.__code__.co_firstlineno
        raise ModelLoadError(
            f"{fn_name}() raised {short_error(exc)}", file=path, line=line, detail=traceback.format_exc()
        ) from None
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # sys.exit() and the like: a ModelLoadError with the line
        line = error_line_in(path, exc) or fn.__code__.co_firstlineno
        raise exit_error(exc, f"{fn_name}()", _FUNCTION_MUST.get(fn_name, "return a model"), path, line) from None


_FUNCTION_MUST = {
    "get_example_inputs": "return a tuple of inputs from get_example_inputs()",
    "get_input_variants": "return a list of input tuples from get_input_variants()",
}


def _as_input_tuple(value, path: str, what: str, line: int) -> tuple:
    import torch

    if isinstance(value, torch.Tensor):
        return (value,)
    if isinstance(value, list):
        value = tuple(value)
    if not isinstance(value, tuple):
        raise ModelLoadError(f"{what} must return a tuple of inputs, not {type(value).__name__}.", file=path, line=line)
    return value


def load(path: str, factory: str = "get_model") -> LoadedModel:
    import torch

    module = import_model_file(path)
    model = call_file_function(module, path, factory)
    get_model_line = getattr(module, factory).__code__.co_firstlineno
    if not (isinstance(model, torch.nn.Module) or callable(model)):
        raise ModelLoadError(
            f"{factory}() must return an nn.Module or a callable, not {type(model).__name__}.",
            file=path,
            line=get_model_line,
        )
    if isinstance(model, torch.jit.ScriptModule):
        return LoadedModel(
            model,
            _as_input_tuple(call_file_function(module, path, "get_example_inputs"), path, "get_example_inputs()", 0),
            "python",
            os.path.basename(path),
            False,
            TORCHSCRIPT_NOTE,
        )
    raw_inputs = call_file_function(module, path, "get_example_inputs")
    inputs = _as_input_tuple(
        raw_inputs, path, "get_example_inputs()", module.get_example_inputs.__code__.co_firstlineno
    )
    variants: list[tuple] = []
    if hasattr(module, "get_input_variants"):
        raw = call_file_function(module, path, "get_input_variants")
        line = module.get_input_variants.__code__.co_firstlineno
        if not isinstance(raw, (list, tuple)):
            raise ModelLoadError("get_input_variants() must return a list of input tuples.", file=path, line=line)
        variants = [_as_input_tuple(v, path, "each entry of get_input_variants()", line) for v in raw]
    doc = (module.__doc__ or "").strip().splitlines()
    name = os.path.basename(path) + ("" if factory == "get_model" else f":{factory}")
    description = name + (f": {doc[0]}" if doc else "")
    return LoadedModel(model, inputs, "python", description, variants=variants)
