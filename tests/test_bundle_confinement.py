"""`allow_external_refs: true` bundles the spec's *sibling* files (compile/bundle.py): a `$ref` may
reach files in the root spec's folder and below it, never a file outside it. A spec is untrusted
input; a `$ref` such as ``../../home/ci/.docker/config.json#/auths`` must not copy a file of the
build machine into the catalogs a build writes (and commits, and sends to model providers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.support.build import build, spec_with_body_ref

CANARY = "ghp_canary_0123456789abcdef"
TOOLS = "allow_external_refs: true\ntools:\n  a: {operation: createA, effect: write, approval: never}\n"


def _secret(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        json.dumps(
            {"auths": {"type": "object", "properties": {"token": {"type": "string", "enum": [CANARY]}}}}
        ),
        encoding="utf-8",
    )


def _written(out: Path) -> str:
    return (
        "".join(p.read_text(encoding="utf-8", errors="replace") for p in out.rglob("*") if p.is_file())
        if out.exists()
        else ""
    )


@pytest.mark.parametrize("how", ["dotdot", "absolute", "nested-dotdot", "symlink"])
def test_a_ref_outside_the_specs_folder_is_refused(tmp_path: Path, how: str) -> None:
    secret = tmp_path / "home" / ".docker" / "config.json"
    _secret(secret)
    api = tmp_path / "project" / "api"
    if how == "dotdot":
        spec = spec_with_body_ref(api, "../../home/.docker/config.json#/auths")
    elif how == "absolute":
        spec = spec_with_body_ref(api, f"{secret}#/auths")
    elif how == "nested-dotdot":  # a sibling file that reaches out in turn
        (api / "common").mkdir(parents=True)
        (api / "common" / "models.yaml").write_text(
            "components:\n  schemas:\n    A: {$ref: '../../../home/.docker/config.json#/auths'}\n",
            encoding="utf-8",
        )
        spec = spec_with_body_ref(api, "common/models.yaml#/components/schemas/A")
    else:  # a link inside the folder that points out of it
        api.mkdir(parents=True)
        (api / "models.json").symlink_to(secret)
        spec = spec_with_body_ref(api, "models.json#/auths")
    built = build(tmp_path / "project", spec, TOOLS, expect=2)
    assert "ref-outside" in built.result.output, built.result.output
    assert "openapi.yaml" in built.result.output or "models.yaml" in built.result.output
    assert CANARY not in built.result.output and CANARY not in _written(built.out)


def test_siblings_and_subfolders_are_still_bundled(tmp_path: Path) -> None:
    api = tmp_path / "api"
    _secret(api / "shared" / "models.json")  # inside the spec's folder: bundled as before
    spec = spec_with_body_ref(api, "shared/models.json#/auths")
    built = build(tmp_path, spec, TOOLS)
    assert built.tool("mcp", "record_a")["inputSchema"]["properties"]["token"]["enum"] == [CANARY]


def test_a_sibling_ref_with_a_bad_tilde_escape_is_refused_not_read_as_text(tmp_path: Path) -> None:
    api = tmp_path / "api"
    (api / "shared").mkdir(parents=True)
    schema = {"type": "object", "properties": {"token": {"type": "string"}}}
    (api / "shared" / "models.json").write_text(json.dumps({"auths~2": schema}), encoding="utf-8")
    spec = spec_with_body_ref(api, "shared/models.json#/auths~2")  # RFC 6901: '~2' is no escape
    built = build(tmp_path, spec, TOOLS, expect=2)
    assert "ref-invalid" in built.result.output and "RFC 6901" in built.result.output, built.result.output
