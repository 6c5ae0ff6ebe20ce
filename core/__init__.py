"""compile-profiler's engine: everything the app shows, computed without Qt.

The packages are layers; each may import the ones before it, never one after it (checked by
tests/test_architecture.py, function-level imports included):

    vocab     the shared vocabulary: events and records, settings and their limits, sample
              storage, report schema, where a job's files go, how source paths read
    analysis  what the figures mean: statistics, measurement quality, a job's folded result
              and summary, the time breakdown, sweep figures, number formatting
    models    building models and their inputs from every source (torchvision, timm, Hugging
              Face, model files, .pt2, TorchScript), the model catalog, the examples
    capture   what torch reports while it compiles: graph breaks, recompiles, compilation
              metrics, compiled graphs, the compile log
    measure   one job in its child process: the phases, timing, accuracy, the op profile,
              training steps, the environment
    run       running jobs from the parent: the runner's state machine, the child process,
              resource sampling, progress, what the installed torch offers
    decide    decisions from the figures: recommendation, suggestions, code, compare, tune
    report    the report folder: writing and reading it, artifact views, tlparse, safety
    zoo       many models × configs: rows and summaries, their files, the sweep, Ray
    cli       the command lines, one module per command

This package never imports PySide6, pyqtgraph or `gui` (tests/core/test_headless.py).
"""

import os

CORE_DIR = os.path.dirname(os.path.abspath(__file__))
"""This package's folder (our own code: never the user's)."""
PROJECT_ROOT = os.path.dirname(CORE_DIR)
"""The checkout: main.py, core/, gui/, resources/."""
