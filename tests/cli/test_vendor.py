"""Spec slices (`toolgen vendor`, `toolgen.compile.slice`): a slice keeps exactly what its operations
reach, records where it came from, builds the same tools as the full document, and the committed
slices of this repository still match their upstream sources (checked when ../shared is there)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from toolgen.builder.build import build_api
from toolgen.cli import main
from toolgen.cli.vendor import slice_bytes
from toolgen.compile.slice import PROVENANCE_KEY, SliceError, document_sha256, slice_document

REPO = Path(__file__).resolve().parents[2]
REAL = REPO.parent / "shared" / "specs" / "real"
UPSTREAM = {"github": "github-api.github.com.json", "stripe": "stripe.json"}


def _doc() -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "T", "version": "7"},
        "servers": [{"url": "https://api.test"}],
        "security": [{"key": []}],
        "tags": [{"name": "a", "description": "A things"}, {"name": "b"}],
        "paths": {
            "/a/{id}": {
                "parameters": [{"$ref": "#/components/parameters/Id"}],
                "get": {
                    "operationId": "getA",
                    "tags": ["a"],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/A"}}},
                        }
                    },
                },
                "delete": {"operationId": "deleteA", "responses": {"204": {"description": "gone"}}},
            },
            "/b": {
                "get": {
                    "operationId": "getB",
                    "tags": ["b"],
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"$ref": "#/components/schemas/B"}}},
                        }
                    },
                }
            },
        },
        "components": {
            "parameters": {
                "Id": {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}
            },
            "schemas": {
                "A": {
                    "type": "object",
                    "properties": {
                        "child": {"$ref": "#/components/schemas/Child"},
                        "pick": {"$ref": "#/components/schemas/List/items/1"},
                    },
                },
                "Child": {"type": "object", "properties": {"again": {"$ref": "#/components/schemas/A"}}},
                "List": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
                "B": {"type": "string"},
                "Unused": {"type": "boolean"},
            },
            "securitySchemes": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        },
    }


def test_slice_keeps_the_ref_closure_and_nothing_else() -> None:
    doc = _doc()
    out = slice_document(doc, ["/paths/~1a~1{id}/get"], source="t.json", sha256="abc")
    assert list(out["paths"]) == ["/a/{id}"]
    assert set(out["paths"]["/a/{id}"]) == {"parameters", "get"}  # the DELETE is not kept
    assert set(out["components"]["schemas"]) == {"A", "Child", "List"}  # a cycle, and a ref into an array
    # a $ref into an array keeps the whole array, so indexes do not move (and only what is referenced)
    assert out["components"]["schemas"]["List"] == {"items": doc["components"]["schemas"]["List"]["items"]}
    assert out["components"]["parameters"] == doc["components"]["parameters"]
    assert out["components"]["securitySchemes"] == doc["components"]["securitySchemes"]
    assert out["security"] == doc["security"] and out["servers"] == doc["servers"]
    assert out["tags"] == [{"name": "a", "description": "A things"}]
    assert out[PROVENANCE_KEY] == {"source": "t.json", "version": "7", "sha256": "abc", "operations": 1}
    assert list(out)[:3] == ["openapi", "info", "servers"]  # the source's key order
    assert doc == _doc()  # the input is not modified


@pytest.mark.parametrize(
    "ref, message",
    [("other.json#/A", "outside the document"), ("#/components/schemas/Missing", "does not resolve")],
)
def test_slice_refuses_refs_it_cannot_follow(ref: str, message: str) -> None:
    doc = _doc()
    doc["components"]["schemas"]["B"] = {"$ref": ref}
    with pytest.raises(SliceError, match=message) as info:
        slice_document(doc, ["/paths/~1b/get"], source="t.json", sha256="abc")
    assert info.value.pointer == "/components/schemas/B/$ref"


def test_slice_refuses_a_pointer_that_is_not_an_operation() -> None:
    with pytest.raises(ValueError, match="not an operation pointer"):
        slice_document(_doc(), ["/components/schemas/A"], source="t.json", sha256="abc")


def test_vendor_writes_checks_and_detects_drift(tmp_path: Path) -> None:
    spec = tmp_path / "full.json"
    spec.write_text(json.dumps(_doc()), encoding="utf-8")
    intent = tmp_path / "api.yaml"
    intent.write_text(
        "toolgen: 1\nspec: slice.json\napi: {name: t}\ntools:\n"
        "  get_a: {operation: getA, effect: read, permission: a:read}\n",
        encoding="utf-8",
    )
    runner = CliRunner()
    missing = runner.invoke(main, ["vendor", str(intent), "--from", str(spec), "--check"])
    assert missing.exit_code == 1
    wrote = runner.invoke(main, ["vendor", str(intent), "--from", str(spec)])
    assert wrote.exit_code == 0, wrote.output
    sliced = json.loads((tmp_path / "slice.json").read_text(encoding="utf-8"))
    assert sliced[PROVENANCE_KEY]["sha256"] == document_sha256(spec.read_bytes())
    assert list(sliced["paths"]) == ["/a/{id}"]
    assert runner.invoke(main, ["vendor", str(intent), "--from", str(spec), "--check"]).exit_code == 0
    # the map now needs another operation: the committed slice is stale
    intent.write_text(
        intent.read_text(encoding="utf-8") + "  get_b: {operation: getB, effect: read}\n", encoding="utf-8"
    )
    stale = runner.invoke(main, ["vendor", str(intent), "--from", str(spec), "--check"])
    assert stale.exit_code == 1 and "stale" in stale.output
    refused = runner.invoke(main, ["vendor", str(intent), "--from", str(spec), "--out", str(spec)])
    assert refused.exit_code == 2 and "overwrite its source" in refused.output


@pytest.mark.parametrize("api", sorted(UPSTREAM))
def test_committed_slice_matches_its_source_and_builds_the_same_tools(api: str, tmp_path: Path) -> None:
    source = REAL / UPSTREAM[api]
    if not source.exists():
        pytest.skip(f"needs the upstream spec {source.name} in ../shared/specs/real")
    intent = REPO / "intent_maps" / f"{api}.yaml"
    committed = REPO / "specs" / f"{api}.slice.json"
    assert slice_bytes(intent, source) == committed.read_bytes(), "run `toolgen vendor` (see README, Specs)"
    full = build_api(intent, tmp_path / "full", spec=source)
    part = build_api(intent, tmp_path / "part", spec=committed)
    differing = sorted(n for n in set(full.files) | set(part.files) if full.files.get(n) != part.files.get(n))
    assert differing == ["REPORT.md"]  # only the coverage of "operations in the spec" differs
    assert json.loads(committed.read_bytes())[PROVENANCE_KEY]["sha256"] == document_sha256(
        source.read_bytes()
    )


def test_slice_of_a_yaml_source(tmp_path: Path) -> None:
    yaml = pytest.importorskip("yaml")
    spec = tmp_path / "full.yaml"
    spec.write_text(yaml.safe_dump(_doc(), sort_keys=False), encoding="utf-8")
    intent = tmp_path / "api.yaml"
    intent.write_text(
        "toolgen: 1\nspec: slice.json\napi: {name: t}\ntools:\n  get_b: {operation: getB, effect: read}\n",
        encoding="utf-8",
    )
    out = json.loads(slice_bytes(intent, spec))
    assert list(out["paths"]) == ["/b"] and set(out["components"]["schemas"]) == {"B"}


def test_slice_of_a_swagger2_source_is_openapi_3_and_builds_the_same_tools(tmp_path: Path) -> None:
    spec = tmp_path / "full.json"
    spec.write_text(
        json.dumps(
            {
                "swagger": "2.0",
                "info": {"title": "T", "version": "7"},
                "host": "api.test",
                "paths": {
                    "/a/{id}": {
                        "get": {
                            "operationId": "getA",
                            "parameters": [{"name": "id", "in": "path", "required": True, "type": "string"}],
                            "responses": {
                                "200": {"description": "ok", "schema": {"$ref": "#/definitions/A"}}
                            },
                        }
                    },
                    "/b": {"get": {"operationId": "getB", "responses": {"200": {"description": "ok"}}}},
                },
                "definitions": {
                    "A": {"type": "object", "properties": {"n": {"type": "integer"}}},
                    "B": {"type": "string"},
                },
            }
        ),
        encoding="utf-8",
    )
    intent = tmp_path / "api.yaml"
    intent.write_text(
        "toolgen: 1\nspec: slice.json\napi: {name: t}\ntools:\n  get_a: {operation: getA, effect: read}\n",
        encoding="utf-8",
    )
    sliced = slice_bytes(intent, spec)
    out = json.loads(sliced)
    assert out["openapi"] == "3.0.3" and list(out["paths"]) == ["/a/{id}"]
    assert set(out["components"]["schemas"]) == {"A"}
    assert out[PROVENANCE_KEY]["sha256"] == document_sha256(spec.read_bytes())
    (tmp_path / "slice.json").write_bytes(sliced)
    full = build_api(intent, tmp_path / "full", spec=spec)
    part = build_api(intent, tmp_path / "part", spec=tmp_path / "slice.json")
    assert (
        full.files["policy.json"] == part.files["policy.json"]
        and full.files["mcp.json"] == part.files["mcp.json"]
    )


def _vendor_case(tmp_path: Path) -> tuple[Path, Path]:
    spec = tmp_path / "full.json"
    spec.write_text(json.dumps(_doc()), encoding="utf-8")
    intent = tmp_path / "api.yaml"
    intent.write_text(
        "toolgen: 1\nspec: slice.json\napi: {name: t}\ntools:\n"
        "  get_a: {operation: getA, effect: read, permission: a:read}\n",
        encoding="utf-8",
    )
    return intent, spec


def test_vendor_flushes_the_slice_to_disk_before_renaming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent, spec = _vendor_case(tmp_path)
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:  # the real fsync, noting which file it flushed
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("no /proc to name a file descriptor's file")
    monkeypatch.setattr(os, "fsync", fsync)
    wrote = CliRunner().invoke(main, ["vendor", str(intent), "--from", str(spec)])
    assert wrote.exit_code == 0, wrote.output
    # the new file, in the slice's folder, then the folder itself once it holds the renamed slice
    assert [Path(p).parent for p in synced[:1]] == [tmp_path] and synced[1:] == [str(tmp_path)], synced
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.yaml", "full.json", "slice.json"]
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE((tmp_path / "slice.json").stat().st_mode) == 0o666 & ~umask


def test_vendor_leaves_no_new_file_behind_when_the_rename_fails(tmp_path: Path) -> None:
    intent, spec = _vendor_case(tmp_path)
    (tmp_path / "slice.json").mkdir()  # a folder in the way: the rename over it fails
    (tmp_path / "slice.json" / "kept").write_text("x", encoding="utf-8")
    failed = CliRunner().invoke(main, ["vendor", str(intent), "--from", str(spec)])
    assert failed.exit_code != 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["api.yaml", "full.json", "slice.json"]
