"""The intent map's JSON Schema a project writes (``schema_out``) is remembered in the build cache under
the key of toolgen's code (`toolgen.builder.build.intent_map_schema`): the bytes a build without the
cache writes, and another code's schema once that key changes."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolgen.builder.build as build_module
from toolgen.builder.build import intent_map_schema
from toolgen.builder.cache import Cache
from toolgen.compile.intent import intent_map_json_schema
from toolgen.emit import json_bytes


@pytest.fixture
def cache(tmp_path: Path) -> Cache:
    return Cache(tmp_path / "cache")


def test_the_schema_is_the_bytes_a_build_without_the_cache_writes(cache: Cache) -> None:
    cold = json_bytes(intent_map_json_schema())
    assert intent_map_schema(None) == cold
    assert intent_map_schema(cache) == cold  # computed, and kept
    assert intent_map_schema(cache) == cold  # read back


def test_another_code_is_another_schema(cache: Cache, monkeypatch: pytest.MonkeyPatch) -> None:
    """The schema kept for one code (`environment_key`) is not read for another: after a change of
    the intent map's models, the build writes the new models' schema."""
    monkeypatch.setattr(build_module, "environment_key", lambda: "code before")
    before = intent_map_schema(cache)
    monkeypatch.setattr(build_module, "environment_key", lambda: "code after")
    monkeypatch.setattr(build_module, "intent_map_json_schema", lambda: {"title": "the models changed"})
    assert intent_map_schema(cache) == json_bytes({"title": "the models changed"}) != before
    monkeypatch.setattr(build_module, "environment_key", lambda: "code before")
    assert intent_map_schema(cache) == before


def test_a_damaged_entry_is_written_again(cache: Cache) -> None:
    cold = intent_map_schema(cache)
    for entry in (cache.root / "schema").rglob("*"):
        if entry.is_file():
            entry.write_bytes(entry.read_bytes()[:-5] + b"xxxxx")
    assert intent_map_schema(cache) == cold
