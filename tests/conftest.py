"""Test-wide setup: Qt renders offscreen (no display needed), before any test imports Qt; the
product's caches (core.run.torch_info.cache_folder) go to a folder of this test session, never the
user's."""

import os
import tempfile

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("COMPILE_PROFILER_CACHE", tempfile.mkdtemp(prefix="compile-profiler-test-cache-"))
