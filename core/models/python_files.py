"""Python model files: get_model(), get_example_inputs(), optionally get_input_variants();
FILE.py:NAME picks another factory. Every failure, sys.exit() included, names the file and line."""

from __future__ import annotations

import importlib.util
import os
import sys
import traceback

from core.models import TORCHSCRIPT_NOTE, LoadedModel, ModelLoadError, error_line_in, exit_error, short_error

SYNTAX_CHECK_MAX_BYTES = 20 * 1024 * 1024  # a model file larger than this is left to the job to read


def check_syntax(path: str) -> None:
    """A .py model file that cannot be parsed, refused before any job starts (a job ran for
    4 s, wrote a report of the failure and then blocked the same --out). Compiled to bytecode
    only, never run; ModelLoadError with the line as the job would give it."""
    if not path.endswith(".py") or not os.path.isfile(path) or os.path.getsize(path) > SYNTAX_CHECK_MAX_BYTES:
        return
    try:
        with open(path, "rb") as fh:
            compile(fh.read(), path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise ModelLoadError(f"syntax error: {exc.msg}", file=path, line=exc.lineno or 0) from None
    except (OSError, ValueError):  # unreadable, or a NUL byte: the job says so with its own message
        return


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


def check_functions(path: str, factory: str = "get_model") -> None:
    """A .py model file with no `factory` or get_example_inputs() at its top level, refused
    before any job starts (a job ran, failed and wrote a report of it, where a syntax error is
    refused at once). Read as text (ast), never run; a file that may bind names in ways the text
    does not show (`from x import *`, a module __getattr__, globals()) is left to the job."""
    import ast

    if not path.endswith(".py") or not os.path.isfile(path) or os.path.getsize(path) > SYNTAX_CHECK_MAX_BYTES:
        return
    try:
        with open(path, "rb") as fh:
            source = fh.read()
        tree = ast.parse(source, path)
    except (OSError, ValueError, SyntaxError):
        return  # check_syntax or the job says so
    if b"globals()" in source or b"__getattr__" in source:
        return
    bound: set[str] = set()

    def visit(statements) -> bool:
        """Collect the names the statements bind at module level; False where it cannot tell."""
        for node in statements:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for alias in node.names:
                    if alias.name == "*":
                        return False
                    bound.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    bound.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
            elif isinstance(node, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                blocks = [getattr(node, k, []) for k in ("body", "orelse", "finalbody")]
                blocks += [h.body for h in getattr(node, "handlers", [])]
                if not all(visit(block) for block in blocks):
                    return False
            elif isinstance(node, ast.expr) or isinstance(node, ast.Expr):
                bound.update(n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
        return True

    if not visit(tree.body):
        return
    for fn_name in (factory, "get_example_inputs"):
        if fn_name not in bound:
            raise missing_function(fn_name, path)


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
