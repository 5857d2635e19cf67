"""Shared by every test: the Hypothesis profile (`tests/support/profiles.py`), loaded before any test
module is imported so that every `@settings(...)` starts from it; the build cache (`toolgen.builder.cache`)
off, so every test builds what it asks for and a monkeypatched stage is never answered from an
earlier build (`tests/builder/test_cache.py` turns it on in folders of its own); the tests marked `long`
first; and, where the environment forbids writing bytecode, one bytecode prefix that every worker
and subprocess reads and writes (`tests/support/bytecode.py`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.support.bytecode import prepare as _prepare_bytecode
from tests.support.profiles import ENV, register

PROFILE = register()
if "PYTEST_XDIST_WORKER" not in os.environ:  # the controller, before it starts the workers
    _prepare_bytecode(REPO)


def pytest_report_header(config: pytest.Config) -> str:
    return f"hypothesis profile: {PROFILE} (set {ENV}=dev|ci|thorough)"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests marked `long` (many seconds, mostly waiting) run first, the rest in collection order.
    With ``-n`` the first quarter of the order goes to the first worker, which starts on them while the
    others take the rest (worksteal), so a long test never starts last and ends the run alone."""
    items.sort(key=lambda item: item.get_closest_marker("long") is None)


@pytest.fixture(autouse=True)
def _no_build_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_CACHE", "0")


@pytest.fixture
def cache_on(_no_build_cache: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The build cache turned on (the suite runs without it: `_no_build_cache`), in a folder of the
    test's own; returns that folder."""
    where = tmp_path / "cache"
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.setenv("TOOLGEN_CACHE_DIR", str(where))
    return where
