#!/usr/bin/env python3
"""compile-profiler: does compiling my model pay off, at what cost, and why does it break?

    python3 main.py [MODEL] [--backend B ...] [--run] [--screenshot PNG]   the desktop app
    python3 main.py profile MODEL [options] --out DIR                      headless profile
    python3 main.py run SCRIPT.py [--out DIR] [-- SCRIPT_ARGS]             your own script, compiled vs eager
    python3 main.py tune MODEL [--budget MIN] [--calls N] --out DIR        find the best settings
    python3 main.py compare BASELINE NEW [--threshold PCT] [--out DIR]     compare two reports
    python3 main.py zoo MODEL... [--executor local|ray] [--resume] --out DIR  many models x configs
    python3 main.py bundle REPORT [--config LABEL] [--out FILE.zip]        a reproducer to hand over
    python3 main.py localize REPORT [--config LABEL]                       where outputs diverge
    python3 main.py cache [--clear [LABEL ...]]                            the configs' compile caches
    python3 main.py test [pytest arguments]                                the test suite
    python3 main.py bench [NAME] [options]                                 the benchmarks (python -m tests.bench)

On first use this creates a virtual environment in .venv/ next to this file, installs the
dependencies from pyproject.toml into it, and re-runs itself with that interpreter.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
VENV = os.path.join(ROOT, ".venv")
VENV_PYTHON = os.path.join(VENV, "bin", "python")


def _requirements() -> list[str]:
    import tomllib

    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as fh:
        project = tomllib.load(fh)["project"]
    return list(project["dependencies"]) + list(project["optional-dependencies"]["test"])


def ensure_environment() -> None:
    """Make sure .venv/ holds the dependencies, then continue inside it (re-exec)."""
    if os.path.realpath(sys.prefix) == os.path.realpath(VENV):
        return
    if sys.version_info < (3, 11):
        sys.exit(f"compile-profiler needs Python 3.11 or newer; this is {sys.version.split()[0]}.")
    deps = _requirements()
    stamp = hashlib.sha256("\n".join(deps).encode()).hexdigest()[:16]
    marker = os.path.join(VENV, f".installed-{stamp}")
    if not os.path.exists(marker):
        print(
            "First run: installing the dependencies into .venv/ (a few minutes, once)...", file=sys.stderr, flush=True
        )
        try:
            if not os.path.exists(VENV_PYTHON):
                subprocess.check_call([sys.executable, "-m", "venv", VENV])
            subprocess.check_call(
                [VENV_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "off", *deps]
            )
        except (subprocess.CalledProcessError, OSError) as exc:
            sys.exit(
                f"Setting up .venv/ failed ({exc}). Fix the error above and run the command again; "
                "delete .venv/ to start over."
            )
        for name in os.listdir(VENV):
            if name.startswith(".installed-"):
                os.unlink(os.path.join(VENV, name))
        open(marker, "w").close()
    os.execv(VENV_PYTHON, [VENV_PYTHON, os.path.abspath(__file__), *sys.argv[1:]])


# Each headless command's module (its `main(argv)`), imported only when that command runs.
HEADLESS_COMMANDS = {
    "profile": "core.cli.profile",
    "run": "core.cli.run_script",
    "tune": "core.cli.tune",
    "zoo": "core.cli.zoo",
    "compare": "core.cli.compare",
    "bundle": "core.cli.bundle",
    "localize": "core.cli.localize",
    "cache": "core.cli.cache",
    "bench": "tests.bench.__main__",  # the benchmarks, as `python -m tests.bench ARGS` runs them
}


def main(argv: list[str]) -> int:
    if argv[:1] == ["test"]:
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        return subprocess.call([sys.executable, "-m", "pytest", *argv[1:]], cwd=ROOT)
    if argv[:1] and argv[0] in HEADLESS_COMMANDS:
        import importlib

        return importlib.import_module(HEADLESS_COMMANDS[argv[0]]).main(argv[1:])
    word = argv[0] if argv else ""
    if word and not word.startswith("-") and os.sep not in word and "." not in word and not os.path.exists(word):
        from core.cli.args import close_command

        command = close_command(word)
        if command:  # read as a model name, `profil resnet18` failed on "resnet18" with no word of why
            print(
                f"error: {word!r} is not a command; did you mean {command!r}? (python3 main.py --help lists them)",
                file=sys.stderr,
            )
            return 2
    from gui.app import main as gui_main

    return gui_main(argv)


def entry(argv: list[str]) -> int:
    """The command line's exit code: `main` inside .venv/. Ctrl+C before a command could take it
    over (while Python loaded its modules) is a message and 130, not the traceback of an import."""
    try:
        ensure_environment()
        sys.path.insert(0, ROOT)
        return main(argv)
    except KeyboardInterrupt:
        print("\ninterrupted (Ctrl+C) before the command had started: nothing was run.", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(entry(sys.argv[1:]))
