"""A large document is not an alias bomb: the alias bound counts the values aliases add beyond what
the text writes, scalars included, so a spec of a million written values (Microsoft Graph beta: 1.5
million) loads, while aliases that expand past the bound are still refused. The bound is lowered to
100 here (the same code path as the real 1,000,000)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolgen.compile import load
from toolgen.compile.load import load_spec
from toolgen.diagnostics import DiagnosticError, DiagnosticSink

HEAD = {"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {}}


@pytest.fixture
def bound(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(load, "MAX_ALIAS_EXPANSION", 100)
    return 100


@pytest.mark.parametrize("name", ["spec.json", "spec.yaml"])
def test_many_written_values_are_not_an_expansion(tmp_path: Path, bound: int, name: str) -> None:
    path = tmp_path / name
    doc = {**HEAD, "x-values": list(range(10 * bound)), "x-objects": [{"a": i} for i in range(bound)]}
    path.write_text(json.dumps(doc), encoding="utf-8")  # JSON is YAML too
    assert len(load_spec(path, name, sink=DiagnosticSink()).data["x-values"]) == 10 * bound


def test_aliases_past_the_bound_are_still_refused(tmp_path: Path, bound: int) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"
        "x-a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n"
        "x-b: [" + ", ".join(["*a"] * 11) + "]\n",
        encoding="utf-8",
    )  # 110 values added, 10 written
    with pytest.raises(DiagnosticError) as caught:
        load_spec(path, "spec.yaml", sink=DiagnosticSink())
    assert [d.code for d in caught.value.diagnostics] == ["spec-alias-expansion"]
