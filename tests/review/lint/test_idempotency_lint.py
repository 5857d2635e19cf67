"""Lint's ``idempotency-key-unsent``: an operation takes an idempotency key as a query parameter or a
request-body member (the reading `toolgen init` drafts from, `toolgen.compile.lower.idempotency_key`),
and the map does not send its key there. Located at the intent's `idempotency` in the intent map,
with the `send_as` to write; near misses: the key sent there, a `request_id` whose description says
nothing of deduplication. Also the reading itself, over the spellings APIs use."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolgen.compile.load import load_spec
from toolgen.compile.lower.idempotency_key import idempotency_place
from toolgen.compile.operations import list_operations
from toolgen.compile.schema import SchemaConverter
from toolgen.diagnostics import DiagnosticSink
from toolgen.review.lint import LintSettings, LintTarget, lint_target

REPO = Path(__file__).resolve().parents[3]
SQUARE = REPO / "tests" / "fixtures" / "idempotency" / "square.yaml"


def _map(folder: Path, spec: Path, idempotency: str) -> Path:
    text = SQUARE.read_text(encoding="utf-8") if spec == SQUARE else spec.read_text(encoding="utf-8")
    (folder / spec.name).write_text(text, encoding="utf-8")
    path = folder / "map.yaml"
    path.write_text(
        f"toolgen: 1\nspec: {spec.name}\napi: {{name: square}}\ntools:\n"
        "  create_payment:\n    operation: CreatePayment\n    effect: write\n    permission: PAYMENTS_WRITE\n"
        "    approval: required\n"
        f"    idempotency: {idempotency}\n"
        "    description: Charge a card once. Not for refunds.\n",
        encoding="utf-8",
    )
    return path


def _findings(path: Path, code: str) -> list[Any]:
    result = lint_target(LintTarget(path), LintSettings())
    return [d for d in result.findings if d.code == code]


def test_a_body_key_the_map_does_not_send_is_an_error_at_the_intent(tmp_path: Path) -> None:
    path = _map(tmp_path, SQUARE, "{key: action_id, send_as: none}")
    [found] = _findings(path, "idempotency-key-unsent")
    assert found.severity == "error"
    assert "request-body member `idempotency_key`" in found.message and "send_as: none" in found.message
    assert found.location is not None and found.location.file.endswith("map.yaml")
    assert found.location.line == 10  # the intent's `idempotency:` line
    assert found.hint is not None and 'send_as: "body:idempotency_key", honoured_by_api: true' in found.hint


def test_a_missing_idempotency_is_the_same_finding(tmp_path: Path) -> None:
    path = _map(tmp_path, SQUARE, "null")
    assert len(_findings(path, "idempotency-key-unsent")) == 1
    assert _findings(path, "idempotency-key-missing") == []  # the sharper finding says it


def test_near_miss_the_key_sent_in_the_body(tmp_path: Path) -> None:
    path = _map(tmp_path, SQUARE, '{key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}')
    assert _findings(path, "idempotency-key-unsent") == []


def test_near_miss_a_request_id_that_only_traces(tmp_path: Path) -> None:
    spec = json.loads(
        json.dumps(_plain_spec({"request_id": {"type": "string", "description": "Echoed in logs."}}))
    )
    source = tmp_path / "src.json"
    source.write_text(json.dumps(spec), encoding="utf-8")
    path = _map(tmp_path, source, "{key: action_id, send_as: none}")
    assert _findings(path, "idempotency-key-unsent") == []


def _plain_spec(members: dict[str, Any], parameters: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "openapi": "3.0.3",
        "info": {"title": "t", "version": "1"},
        "paths": {
            "/v2/payments": {
                "post": {
                    "operationId": "CreatePayment",
                    "summary": "Create a payment.",
                    "parameters": parameters or [],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {"amount": {"type": "integer"}, **members},
                                }
                            }
                        },
                    },
                    "responses": {"200": {"description": "ok"}},
                }
            }
        },
    }


DEDUP = "Unique token so that a retried request is not processed twice; ensures idempotency."
PLACES = [
    ({"idempotency_key": {"type": "string"}}, None, "body:idempotency_key"),
    ({"idempotencyKey": {"type": "string"}}, None, "body:idempotencyKey"),
    ({"IdempotencyToken": {"type": "string"}}, None, "body:IdempotencyToken"),
    ({"ClientToken": {"type": "string", "description": DEDUP}}, None, "body:ClientToken"),
    (
        {"client_request_id": {"type": "string", "description": "Used to deduplicate requests."}},
        None,
        "body:client_request_id",
    ),
    ({"client_request_id": {"type": "string", "description": "Shown in the dashboard."}}, None, None),
    ({"request_id": {"type": "string"}}, None, None),
    ({"idempotency_key": {"type": "integer"}}, None, None),  # not a key the runtime fills with a string
    # the spec's own word that a member named like a key is not one
    (
        {
            "idempotency_key": {
                "type": "string",
                "description": "Not an idempotency key: a label on the receipt.",
            }
        },
        None,
        None,
    ),
    (
        {},
        [
            {
                "name": "Idempotency-Key",
                "in": "header",
                "description": "Not used for deduplication (traced only).",
                "schema": {"type": "string"},
            }
        ],
        None,
    ),
    ({"deDuplicationId": {"type": "string", "nullable": True}}, None, "body:deDuplicationId"),
    ({"MessageDeduplicationId": {"type": "string"}}, None, "body:MessageDeduplicationId"),
    (
        {},
        [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}],
        "header:Idempotency-Key",
    ),
    (
        {},
        [{"name": "x-idempotency-key", "in": "header", "schema": {"type": "string"}}],
        "header:x-idempotency-key",
    ),
    (
        {},
        [
            {
                "name": "X-Request-Id",
                "in": "header",
                "description": "Deduplicates retries.",
                "schema": {"type": "string"},
            }
        ],
        "header:X-Request-Id",
    ),
    ({}, [{"name": "idempotency_key", "in": "query", "schema": {"type": "string"}}], "query:idempotency_key"),
    # a header wins over a body member with the same meaning
    (
        {"idempotency_key": {"type": "string"}},
        [{"name": "Idempotency-Key", "in": "header"}],
        "header:Idempotency-Key",
    ),
]


@pytest.mark.parametrize(("members", "parameters", "expected"), PLACES)
def test_the_place_read_from_the_spec(
    tmp_path: Path, members: dict[str, Any], parameters: Any, expected: str | None
) -> None:
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(_plain_spec(members, parameters)), encoding="utf-8")
    doc = load_spec(path)
    [op] = list_operations(doc)
    place = idempotency_place(doc, SchemaConverter(doc, DiagnosticSink()), op)
    assert (place.send_as if place else None) == expected


def test_a_key_the_spec_says_is_not_honoured_yet_is_sent_but_not_honoured(tmp_path: Path) -> None:
    """AWS Billing Conductor's X-Amzn-Client-Token: "Idempotency isn't currently supported"."""
    text = "The token that is needed to support idempotency. Idempotency isn't currently supported."
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            _plain_spec(
                {},
                [
                    {
                        "name": "X-Amzn-Client-Token",
                        "in": "header",
                        "description": text,
                        "schema": {"type": "string"},
                    }
                ],
            )
        ),
        encoding="utf-8",
    )
    doc = load_spec(path)
    [op] = list_operations(doc)
    place = idempotency_place(doc, SchemaConverter(doc, DiagnosticSink()), op)
    assert place is not None and place.send_as == "header:X-Amzn-Client-Token" and place.honoured is False


@pytest.mark.parametrize(
    "text",
    [
        "Deprecated: idempotency is no longer supported; the key is ignored.",
        "Idempotency keys are no longer honoured by this endpoint.",
    ],
)
def test_a_key_the_spec_says_is_no_longer_honoured_is_not_honoured(tmp_path: Path, text: str) -> None:
    path = tmp_path / "spec.json"
    path.write_text(
        json.dumps(
            _plain_spec(
                {},
                [
                    {
                        "name": "Idempotency-Key",
                        "in": "header",
                        "description": text,
                        "schema": {"type": "string"},
                    }
                ],
            )
        ),
        encoding="utf-8",
    )
    doc = load_spec(path)
    [op] = list_operations(doc)
    place = idempotency_place(doc, SchemaConverter(doc, DiagnosticSink()), op)
    assert place is not None and place.send_as == "header:Idempotency-Key" and place.honoured is False
