"""An approval given in the protocol covers only what the human was shown (``--approvals elicit``).

The form used to cut the request at 8,000 characters: a long model-filled ``description`` pushed a
payout's ``destination`` past the cut, and the human approved a request whose destination they
never saw. Now every step, header and member of a body stays visible with its value: when the
whole request does not fit, long strings are elided in the middle with their length and SHA-256,
and a request that does not fit even then is not asked about (``approval_required`` naming
``toolgen approve``). A text body is quoted as one JSON string, so it cannot imitate the form's
own lines.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.runtime.serving.test_elicit import _answer, _client
from tests.support.build import build
from tests.support.http_serving import http_server
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.token_files import TOKENS, write_token_file

from toolgen.runtime import Actor, MemoryReceiptStore, Registry
from toolgen.runtime.serving.elicit import (
    ELIDE_OVER,
    ELIDED_HEAD,
    MAX_SHOWN,
    approval_input_required,
    shown_request,
)
from toolgen.runtime.serving.mcp_http import load_token_file
from toolgen.shown_text import terminal_safe

SPEC = """openapi: 3.0.3
info: {title: payouts, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /payouts:
    post:
      operationId: createPayout
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              required: [amount, destination]
              properties:
                description: {type: string, maxLength: 100000}
                amount: {type: integer}
                destination: {type: string}
                lines: {type: array, items: {type: object, properties: {n: {type: string}}}}
      responses:
        '201': {description: created, content: {application/json: {schema: {type: object}}}}
  /notes:
    post:
      operationId: postNote
      requestBody:
        required: true
        content: {text/plain: {schema: {type: string, maxLength: 100000}}}
      responses:
        '201': {description: created}
"""
INTENTS = """tools:
  payout:
    operation: createPayout
    description: Pay out money to a destination account.
    effect: write
    approval: required
    permission: [ticket:write]
    idempotency: {key: action_id, send_as: none}
  note:
    operation: postNote
    description: Post a plain-text note.
    effect: write
    approval: required
    permission: [ticket:write]
    idempotency: {key: action_id, send_as: none}
"""
WRITER = Actor.of("writer", ["ticket:read", "ticket:write"])
ATTACKER = "acct_ATTACKER_0042"


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("elicit-form")
    spec = tmp / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    return build(tmp, spec, INTENTS, name="payouts", emit="mcp,policy").out


@pytest.fixture
def registry(package: Path) -> Iterator[Registry]:
    with RecordingServer() as srv:
        reg = Registry.from_dir(
            package,
            base_url=srv.base_url,
            receipts=MemoryReceiptStore(),
            cursor_key=b"k" * 32,
            approvals="issued",
        )
        yield reg
        reg.close()


def _form(reg: Registry, tool: str, args: Any) -> str | None:
    shown = reg.call(f"preview_{tool}", args, actor=WRITER)
    assert shown.ok and shown.result is not None, shown.to_json()
    ask = approval_input_required(
        reg, f"record_{tool}", {"preview_id": shown.result["preview_id"], "action_id": "a-1"}, WRITER
    )
    return None if ask is None else str(ask.input_requests["toolgen/approval"].params.message)


def test_a_long_description_never_hides_the_destination(registry: Registry) -> None:
    description = "Refund for order 1234. " * 600  # 13,800 characters, filled in by the model
    message = _form(registry, "payout", {"description": description, "amount": 5000, "destination": ATTACKER})
    assert message is not None
    assert f'"destination": "{ATTACKER}"' in message and '"amount": 5000' in message, message[-600:]
    assert (
        hashlib.sha256(description.encode()).hexdigest() in message
        and f"{len(description)} in all" in message
    )
    assert len(message) < MAX_SHOWN + 300


def test_a_request_too_large_to_show_is_not_asked_about(registry: Registry) -> None:
    lines = [{"n": f"line {i}"} for i in range(2000)]
    assert _form(registry, "payout", {"amount": 1, "destination": ATTACKER, "lines": lines}) is None


def test_a_text_body_cannot_imitate_the_forms_own_lines(registry: Registry) -> None:
    forged = (
        "hello\n\nApprove this write? record_note will send exactly this request, once:\n\n"
        "POST https://api.example.com/notes\n  Content-Type: text/plain\n\nbody (text, 5 characters, quoted as "
        'one JSON string):\n"hi"'
    )
    message = _form(registry, "note", {"body": forged})
    assert message is not None
    assert message.count("\nApprove this write?") == 0 and message.startswith("Approve this write?")
    assert terminal_safe(json.dumps(forged, ensure_ascii=False)) in message
    assert message.splitlines()[-1] == terminal_safe(json.dumps(forged, ensure_ascii=False)), message


@pytest.mark.anyio
async def test_over_mcp_a_request_too_large_to_show_is_approval_required_naming_toolgen_approve(
    package: Path, tmp_path: Path
) -> None:
    tokens = load_token_file(write_token_file(tmp_path / "tokens.yaml"))[0]
    with RecordingServer() as srv:
        reg = Registry.from_dir(
            package,
            base_url=srv.base_url,
            receipts=MemoryReceiptStore(),
            cursor_key=b"k" * 32,
            approvals="issued",
        )
        callback, seen = _answer(True)
        lines = [{"n": f"line {i}"} for i in range(2000)]
        async with http_server(reg, verifier=tokens, elicit=True) as url:
            http, client = _client(url, TOKENS["writer"][0], elicitation_callback=callback)
            async with http, client:
                shown = await client.call_tool(
                    "preview_payout", {"amount": 1, "destination": ATTACKER, "lines": lines}
                )
                pid = shown.structured_content["preview_id"]
                done = await client.call_tool("record_payout", {"preview_id": pid, "action_id": "p-1"})
        reg.close()
        assert not seen, "a form was shown that could not hold the whole request"
        assert done.is_error is True and not srv.requests, done
        error = json.loads(done.content[0].text)["error"]
        assert error["code"] == "approval_required" and "toolgen approve" in error["next_step"], error


# --------------------------------------------------------------------------------------------------
# the property: every leaf of the request and every step is in the form, or no form is shown

_KEY = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
_LEAF = st.one_of(
    st.text(st.characters(codec="utf-8"), max_size=40),
    st.text(st.characters(codec="utf-8"), min_size=200, max_size=3000),
    st.integers(),
    st.booleans(),
    st.none(),
)
_BODY = st.recursive(
    _LEAF,
    lambda inner: st.one_of(st.lists(inner, max_size=6), st.dictionaries(_KEY, inner, max_size=6)),
    max_leaves=40,
)


def _leaves(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], Any]]:
    if isinstance(value, dict) and value:
        for k, v in value.items():
            yield from _leaves(v, (*path, k))
    elif isinstance(value, list) and value:
        for n, v in enumerate(value):
            yield from _leaves(v, (*path, n))
    else:
        yield path, value


def _visible(message: str, value: Any) -> bool:
    """A leaf is shown with its value: whole, or elided with its start, length and SHA-256."""
    whole = terminal_safe(json.dumps(value, ensure_ascii=False))
    if whole in message:
        return True
    if not isinstance(value, str) or len(value) <= ELIDE_OVER:
        return False
    head = terminal_safe(json.dumps(value[:ELIDED_HEAD], ensure_ascii=False))
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{head} … [" in message and f"{len(value)} in all, sha256 {digest}]" in message


_REQUEST = st.builds(
    lambda body, text: {
        "method": "POST",
        "url": "https://api.example.com/x",
        "headers": {"Content-Type": "application/json"},
        "body": text if text is not None else body,
    },
    _BODY,
    st.one_of(st.none(), st.text(max_size=9000)),
)
_PLAN = st.lists(
    st.tuples(st.text(st.characters(codec="utf-8"), min_size=1, max_size=10), _REQUEST, st.booleans()),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(300), deadline=None)
@given(plan=_PLAN, composite=st.booleans())
def test_every_leaf_and_every_step_is_shown_or_no_form_is(
    plan: list[tuple[str, dict[str, Any], bool]], composite: bool
) -> None:
    if composite:
        steps: list[dict[str, Any]] = [
            {"step": sid, "request": req}
            if known
            else {"step": sid, "known_after": "a", "arguments": req["body"]}
            for sid, req, known in plan
        ]
        request: dict[str, Any] = {"requests": steps}
    else:
        request, steps = plan[0][1], []
    message = shown_request(request)
    if message is None:
        return
    assert len(message) <= MAX_SHOWN
    for n, step in enumerate(steps, 1):
        assert f"{n}. step {terminal_safe(step['step'])}" in message
    bodies = [s.get("request", {}).get("body") if "request" in s else s["arguments"] for s in steps] or [
        request["body"]
    ]
    for body in bodies:
        if body is None:  # a request without a body: nothing is sent, so there is nothing to show
            continue
        for path, leaf in _leaves(body):
            for key in (k for k in path if isinstance(k, str)):
                assert terminal_safe(json.dumps(key, ensure_ascii=False)) + ": " in message, (key, path)
            assert _visible(message, leaf), (path, str(leaf)[:80])
