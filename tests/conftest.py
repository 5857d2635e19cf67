"""Shared by every test: the Hypothesis profile (`tests/support/profiles.py`), loaded before any test
module is imported so that every `@settings(...)` starts from it; and the build cache
(`toolgen.cache`) off, so every test builds what it asks for and a monkeypatched stage is never
answered from an earlier build (`tests/test_cache.py` turns it on in folders of its own)."""

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


@pytest.fixture(autouse=True)
def _no_build_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_CACHE", "0")
