"""A GET that acts is never drafted as a read: the effect comes from every signal the spec gives (the
path's sub-resource verb, the summary, the description, `x-` hints), not only the operationId's verb;
where the signals disagree the draft says so (`# decide`), and lint flags a read whose words act.

The shapes are those of real APIs: Kubernetes' ``connect_core_v1_get_namespaced_pod_exec`` (runs a
command in a container; ``x-kubernetes-action: connect``), ``GET /access-tokens/{accessTokens}/invalidate``,
``GET /users/resendWelcomeSms``, Microsoft Graph's ``x-ms-docs-operation-type``. The ordinary reads
next to them (a resend's status, a list of triggers) stay reads."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.compile.operations import Operation
from toolgen.compile.verb_words import SUBRESOURCE_VERBS
from toolgen.compile.verbs import changes_named, guess_effect
from toolgen.review.lint import LintSettings, LintTarget, lint_target


def _op(method: str, path: str, operation_id: str | None = None, **node: Any) -> Operation:
    body: dict[str, Any] = dict(node)
    if operation_id:
        body["operationId"] = operation_id
    return Operation(method, path, operation_id, f"/paths/x/{method.lower()}", body, {}, "/paths/x")


_K8S_EXEC = _op(
    "GET",
    "/api/v1/namespaces/{namespace}/pods/{name}/exec",
    "connect_core_v1_get_namespaced_pod_exec",
    description="connect GET requests to exec of Pod",
    **{"x-kubernetes-action": "connect"},
)


@pytest.mark.parametrize(
    ("op", "effect", "doubtful"),
    [
        # the operationId says get, the path's sub-resource and the x- hint say it acts: a write, in doubt
        (_K8S_EXEC, "write", True),
        (
            _op(
                "GET",
                "/api/v1/namespaces/{namespace}/pods/{name}/exec",
                "connect_core_v1_get_namespaced_pod_exec",
                description="connect GET requests to exec of Pod",
            ),
            "write",
            True,
        ),
        (
            _op(
                "GET",
                "/api/v1/namespaces/{namespace}/pods/{name}/attach",
                "connect_core_v1_get_namespaced_pod_attach",
            ),
            "write",
            True,
        ),
        (_op("GET", "/access-tokens/{accessTokens}/invalidate"), "write", False),
        (_op("GET", "/access-tokens/{accessTokens}/invalidate", "getAccessTokenInvalidate"), "write", True),
        (_op("GET", "/users/resendWelcomeSms"), "write", False),
        (_op("GET", "/webhooks/{id}/redeliver", summary="Redeliver a webhook"), "write", False),
        (_op("GET", "/keys/{id}/revoke"), "write", False),
        # the summary is a read, the description's first sentence acts
        (
            _op(
                "GET",
                "/things/{id}/ping",
                "thingPing",
                summary="Thing ping",
                description="Sends a notification to every subscriber of the thing.",
            ),
            "write",
            True,
        ),
        (
            _op("GET", "/x", summary="x", description="Runs the load test with the given parameters"),
            "write",
            True,
        ),
        # descriptions say more than what the call does: read strictly
        (
            _op("GET", "/x", "getX", summary="Get x", description="Enables an authenticated app to find x."),
            "read",
            False,
        ),
        (_op("GET", "/x", "getX", summary="Get x", description="Write-only property."), "read", False),
        (
            _op("GET", "/x", "getX", summary="Get x", description="The install state of the app."),
            "read",
            False,
        ),
        (
            _op("GET", "/x", "getX", summary="Get x", description="Generate Default Gateway Config"),
            "read",
            False,
        ),
        (
            _op(
                "PUT",
                "/x/labels",
                "setLabels",
                summary="Set labels",
                description="Removes any previous labels and sets the new ones.",
            ),
            "write",
            False,
        ),
        (_op("GET", "/exec/{id}/json", "ExecInspect", summary="Inspect an exec instance"), "read", False),
        (_op("GET", "/trainings/{id}/startUrl", "getStartUrl"), "read", False),
        # x- hints: Microsoft Graph's action/function, OpenAI's isConsequential, Linode's grant
        (_op("GET", "/x", "x", **{"x-ms-docs-operation-type": "action"}), "write", False),
        (_op("GET", "/x", "x", **{"x-openai-isConsequential": True}), "write", False),
        (_op("GET", "/x", "getX", **{"x-linode-grant": "read_write"}), "write", True),
        (_op("GET", "/api/user/logout", "getUserLogout"), "write", True),  # ends the session
        (_op("GET", "/logout"), "write", False),
        (
            _op("POST", "/members/{name}/regenerateApiKeys", "BlockchainMembers_ListRegenerateApiKeys"),
            "write",
            False,
        ),
        # ordinary reads next to them stay reads
        (_op("GET", "/indexes/books/settings/stop-words", "getStopWords"), "read", False),
        (
            _op("GET", "/baselines/{id}/rebootAnalyticsMetrics", "baselines_GetRebootAnalyticsMetrics"),
            "read",
            False,
        ),
        (
            _op("GET", "/messages/{id}/resend-status", "getResendStatus", summary="Get the resend status"),
            "read",
            False,
        ),
        (_op("GET", "/messages/{id}/resend/status", summary="Get the resend status"), "read", False),
        (_op("GET", "/functions/{id}/triggers", "listTriggers", summary="List triggers"), "read", False),
        (_op("GET", "/invalidations", "listInvalidations"), "read", False),
        (_op("GET", "/x", "x", **{"x-ms-docs-operation-type": "function"}), "read", False),
        (_op("GET", "/x", "getX", **{"x-linode-grant": "read_only"}), "read", False),
        (_op("GET", "/exec-logs", "getExecLogs"), "read", False),
        (
            _op(
                "GET",
                "/things/{id}",
                "getThing",
                summary="Get a thing",
                description="Returns the thing. Deleted things are not returned.",
            ),
            "read",
            False,
        ),
    ],
)
def test_every_signal_counts(op: Operation, effect: str, doubtful: bool) -> None:
    guess = guess_effect(op)
    assert (guess.effect, guess.doubtful) == (effect, doubtful), guess.why
    assert bool(changes_named(op)) == (effect != "read") or op.method == "POST"


@settings(max_examples=examples(60))
@given(
    verb=st.sampled_from(sorted(SUBRESOURCE_VERBS)),
    noun=st.sampled_from(["pods", "tokens", "users", "jobs"]),
    tail=st.sampled_from(["", "/{id}", ".json"]),
)
def test_a_side_effecting_subresource_is_never_read_on_get(verb: str, noun: str, tail: str) -> None:
    """Property: ``GET /<things>/{id}/<verb>`` for every well-known side-effecting sub-resource verb is
    drafted a write or destructive, whatever the operationId says, and lint's check sees it; its
    status (``/<verb>/status``, ``/<verb>-status``) is a read."""
    for operation_id in (None, f"get_{noun}_{verb}", f"read{noun.capitalize()}"):
        op = _op("GET", f"/{noun}/{{id}}/{verb}{tail}", operation_id)
        assert guess_effect(op).effect != "read", (op.path, operation_id)
        assert changes_named(op)
    for path in (f"/{noun}/{{id}}/{verb}/status", f"/{noun}/{{id}}/{verb}-status"):
        assert guess_effect(_op("GET", path, f"get_{noun}_status")).effect == "read", path


_SPEC: dict[str, Any] = {
    "openapi": "3.0.3",
    "info": {"title": "Acting GETs", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "paths": {
        "/api/v1/namespaces/{namespace}/pods/{name}/exec": {
            "parameters": [
                {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}},
                {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
            ],
            "get": {
                "operationId": "connect_core_v1_get_namespaced_pod_exec",
                "description": "connect GET requests to exec of Pod",
                "x-kubernetes-action": "connect",
                "parameters": [{"name": "command", "in": "query", "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {"application/json": {"schema": {"type": "string"}}},
                    }
                },
            },
        },
        "/access-tokens/{accessTokens}/invalidate": {
            "get": {
                "parameters": [
                    {"name": "accessTokens", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"204": {"description": "Invalidated"}},
            }
        },
        "/users/resendWelcomeSms": {
            "get": {
                "parameters": [
                    {"name": "user", "in": "query", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {"204": {"description": "Sent"}},
            }
        },
        "/messages/{id}/resend-status": {
            "get": {
                "operationId": "getResendStatus",
                "summary": "Get the resend status",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"state": {"type": "string"}}}
                            }
                        },
                    }
                },
            }
        },
        "/functions/{id}/triggers": {
            "get": {
                "operationId": "listTriggers",
                "summary": "List triggers",
                "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "responses": {
                    "200": {
                        "description": "OK",
                        "content": {
                            "application/json": {"schema": {"type": "array", "items": {"type": "object"}}}
                        },
                    }
                },
            }
        },
    },
}


def test_init_drafts_acting_gets_as_writes_with_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli: Callable[..., Any]
) -> None:
    """init: each acting GET is a write with approval (never a read); the one whose signals disagree
    carries a `# decide [effect-undecided]` mark naming both; the ordinary reads stay reads."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "acting.json").write_text(json.dumps(_SPEC), encoding="utf-8")
    result = cli("init", "acting.json", "--out", "draft.yaml", "--no-project")
    assert result.exit_code == 0, result.stderr
    text = (tmp_path / "draft.yaml").read_text(encoding="utf-8")
    by_op = {t["operation"]: t for t in yaml.safe_load(text)["tools"].values()}
    for op in (
        "connect_core_v1_get_namespaced_pod_exec",
        "GET /access-tokens/{accessTokens}/invalidate",
        "GET /users/resendWelcomeSms",
    ):
        assert (by_op[op]["effect"], by_op[op].get("approval")) == ("write", "required"), op
    assert by_op["getResendStatus"]["effect"] == "read" and by_op["listTriggers"]["effect"] == "read"
    decide = [line for line in text.splitlines() if "# decide [effect-undecided]" in line]
    assert len(decide) == 1 and "exec" in decide[0] and "`get`" in decide[0], decide


def test_lint_flags_a_read_whose_path_or_hint_acts(tmp_path: Path) -> None:
    """`effect-read-names-change` on a declared read of an acting GET, located at its `effect:` line
    with the remedy; none on the ordinary reads."""
    (tmp_path / "acting.json").write_text(json.dumps(_SPEC), encoding="utf-8")
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: acting.json\napi: {name: acting}\ntools:\n"
        "  invalidate_token:\n    operation: GET /access-tokens/{accessTokens}/invalidate\n    effect: read\n"
        "    permission: tokens:read\n"
        "  pod_exec:\n    operation: connect_core_v1_get_namespaced_pod_exec\n    effect: read\n"
        "    permission: pods:read\n"
        "  resend_status:\n    operation: getResendStatus\n    effect: read\n    permission: messages:read\n"
        "  list_triggers:\n    operation: listTriggers\n    effect: read\n    permission: functions:read\n",
        encoding="utf-8",
    )
    findings = [
        d
        for d in lint_target(LintTarget(tmp_path / "map.yaml"), LintSettings()).findings
        if d.code == "effect-read-names-change"
    ]
    assert sorted((d.location.line or 0) if d.location else 0 for d in findings) == [7, 11]
    by_line = {(d.location.line or 0) if d.location else 0: d for d in findings}
    assert "path `invalidate` says `invalidate`" in by_line[7].message
    assert "x-kubernetes-action" in by_line[11].message or "path `exec`" in by_line[11].message
    assert all(d.hint and "set `effect: write` and `approval: required`" in d.hint for d in findings)
