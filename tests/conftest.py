"""Shared by every test: the Hypothesis profile (`tests/support/profiles.py`), loaded before any test
module is imported so that every `@settings(...)` starts from it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.profiles import ENV, register

PROFILE = register()


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (set {ENV}=dev|ci|thorough)"
