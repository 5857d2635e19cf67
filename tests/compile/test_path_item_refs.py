"""A path item that is a `$ref` (OpenAPI 3.x Path Item Object) is read at its target, along a chain;
one whose `$ref` cannot be followed is a located error at that `$ref`, never an empty path item whose
operations vanish (`toolgen.compile.operations.resolve_path_item`), and `toolgen init`, `build` and
`lint` all stop on it, naming the spec file, its line and the pointer, writing nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.schema_cases import codes, make_doc

from toolgen.cli import main
from toolgen.compile.operations import list_operations
from toolgen.diagnostics import DiagnosticError

GET = {"operationId": "getX", "responses": {"200": {"description": "ok"}}}
A = {"/a": {"get": {"operationId": "getA", "responses": {"200": {"description": "ok"}}}}}


def operations_of(tmp_path: Path, item: Any, extra: dict[str, Any] | None = None) -> list[str]:
    doc = make_doc(tmp_path, {}, version="3.1.0", paths={**A, "/x": item}, extra=extra)
    return [f"{op.key} {op.pointer}" for op in list_operations(doc)]


def test_a_path_item_ref_and_a_chain_of_them_are_followed(tmp_path: Path) -> None:
    extra = {
        "components": {
            "schemas": {},
            "pathItems": {"X": {"$ref": "#/components/pathItems/Y"}, "Y": {"get": GET}},
        }
    }
    assert operations_of(tmp_path, {"$ref": "#/components/pathItems/X"}, extra) == [
        "GET /a /paths/~1a/get",
        "GET /x /components/pathItems/Y/get",
    ]


REFUSED = [
    ({"$ref": "#/components/pathItems/missing"}, "ref-missing", "does not exist"),
    ({"$ref": "#/nowhere/at/all"}, "ref-missing", "does not exist"),
    ({"$ref": "#/x-items/S"}, "ref-not-path-item", "is a string, not an object"),
    ({"$ref": "#/x-items/L"}, "ref-not-path-item", "is a list, not an object"),
    ({"$ref": "#/x-items/N"}, "ref-not-path-item", "is a number, not an object"),
    ({"$ref": "#/x-items/Z"}, "ref-not-path-item", "is a null, not an object"),
    ({"$ref": "#"}, "ref-not-path-item", "the whole document"),
    ({"$ref": "#/x-items/Loop"}, "ref-not-path-item", "loops back to itself"),
    ({"$ref": "#components/pathItems/X"}, "ref-invalid", "not a JSON pointer"),
    ({"$ref": "other.yaml#/X"}, "ref-external", "external"),
]
ITEMS = {"S": "text", "L": [GET], "N": 3, "Z": None, "Loop": {"$ref": "#/x-items/Loop"}}


@pytest.mark.parametrize(("item", "code", "says"), REFUSED, ids=lambda v: repr(v)[:40])
def test_a_path_item_ref_that_cannot_be_followed_is_a_located_error(
    tmp_path: Path, item: dict[str, Any], code: str, says: str
) -> None:
    with pytest.raises(DiagnosticError) as exc:
        operations_of(tmp_path, item, {"x-items": ITEMS})
    assert codes(exc) == [code]
    diagnostic = exc.value.diagnostics[0]
    assert says in diagnostic.message, diagnostic.message
    location = diagnostic.location
    assert location is not None and location.pointer in ("/paths/~1x/$ref", "/x-items/Loop/$ref")
    assert location.file.endswith("spec.yaml") and location.line is not None and diagnostic.hint


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3))
def test_a_path_item_ref_to_any_absent_member_never_drops_the_operations(
    tmp_path: Path, tokens: list[str]
) -> None:
    """Whatever absent member the `$ref` names (escaped as RFC 6901 and percent-encoding ask), the
    listing raises ``ref-missing`` at it rather than listing `/a` alone."""
    from urllib.parse import quote

    pointer = "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in ["x-absent", *tokens])
    with pytest.raises(DiagnosticError) as exc:
        operations_of(tmp_path, {"$ref": "#" + quote(pointer, safe="/~")})
    assert codes(exc) == ["ref-missing"]
    assert exc.value.diagnostics[0].location.pointer == "/paths/~1x/$ref"  # type: ignore[union-attr]


def project(tmp_path: Path) -> Path:
    spec = {
        "openapi": "3.1.0",
        "info": {"title": "t", "version": "1"},
        "servers": [{"url": "https://api.example.com"}],
        "paths": {**A, "/x": {"$ref": "#/components/pathItems/Gone"}},
        "components": {"pathItems": {"Here": {"get": GET}}},
    }
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (tmp_path / "intent_maps").mkdir()
    (tmp_path / "intent_maps" / "t.yaml").write_text(
        "toolgen: 1\nspec: ../spec.yaml\napi: {name: t}\ntools:\n"
        "  get_a: {operation: getA, effect: read, permission: 't:read', description: Read A.}\n",
        encoding="utf-8",
    )
    (tmp_path / "toolgen.yaml").write_text(
        "toolgen: 1\napis:\n  - {name: t, intent_map: intent_maps/t.yaml, out: generated/t}\n",
        encoding="utf-8",
    )
    return tmp_path


@pytest.mark.parametrize(
    "command",
    [["init", "spec.yaml", "--out", "drafted.yaml", "--no-project"], ["build"], ["lint"]],
    ids=lambda c: c[0],
)
def test_init_build_and_lint_report_it_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    monkeypatch.chdir(project(tmp_path))
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 2, result.output
    assert re.search(r"spec\.yaml:\d+:\d+ \(#/paths/~1x/\$ref\): error\[ref-missing\]", result.output), (
        result.output
    )
    assert "#/components/pathItems/Gone does not exist" in result.output and "hint:" in result.output
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
