"""Suite-wide settings: the build cache (`toolgen.cache`) is off, so every test builds what it asks
for and a monkeypatched stage is never answered from an earlier build; `tests/test_cache.py` turns it
on in folders of its own."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _no_build_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLGEN_CACHE", "0")
