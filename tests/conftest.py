"""Test-wide setup: Qt renders offscreen (no display needed), before any test imports Qt."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
