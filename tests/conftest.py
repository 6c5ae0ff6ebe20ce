"""Test-wide setup: Qt renders offscreen (no display needed), before any test imports Qt; the
product's caches (core.run.torch_info.cache_folder) go to a folder of this test session, never the
user's, removed when the session ends (one was left in /tmp per test run)."""

import atexit
import os
import shutil
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
if "COMPILE_PROFILER_CACHE" not in os.environ:
    _cache = tempfile.mkdtemp(prefix="compile-profiler-test-cache-")
    os.environ["COMPILE_PROFILER_CACHE"] = _cache
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)
