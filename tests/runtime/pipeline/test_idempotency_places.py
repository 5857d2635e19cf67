"""Idempotency keys where the API takes them: a request-body member (Square's ``idempotency_key``),
a header or a query parameter (docs/runtime.md "Idempotency and receipts").

Over a hand-written slice modelled on Square's public Payments and Customers APIs
(tests/fixtures/idempotency/square.yaml: CreatePayment with a required body key of at most 45
characters, CreateCustomer with an optional one), drafted by `toolgen init` and built as drafted,
against a real loopback HTTP server that records every request it receives:

- `toolgen init` drafts ``send_as: body:idempotency_key`` with ``honoured_by_api: true``, and the
  draft passes ``toolgen lint --strict``;
- the model never sees the member: neither the preview's nor the record's input schema has it, and
  an argument naming it is ``invalid_arguments``;
- preview -> approve -> record sends exactly the previewed request, the member filled with the
  record's key (no ``preview_mismatch``), and the preview shows where the key goes;
- an outcome the API leaves unknown (a 500 after it read the request) is re-sent with the same key,
  and so is an attempt the runtime retries on its own (a 503);
- the header and query variants hide and fill their parameter the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.build import REPO, run
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, Approval, CallResult, MemoryReceiptStore, Registry, StaticCredentials

SQUARE = REPO / "tests" / "fixtures" / "idempotency" / "square.yaml"
PAYER = Actor.of("payer", ["PAYMENTS_WRITE", "PAYMENTS_READ", "CUSTOMERS_WRITE", "CUSTOMERS_READ"])
PAYMENT = {
    "source_id": "cnon:card-nonce-ok",
    "amount_money": {"amount": 100, "currency": "USD"},
    "note": "tea",
}
CUSTOMER = {"given_name": "Ada", "email_address": "ada@example.com"}
CASES = [("create_payment", PAYMENT), ("create_customer", CUSTOMER)]


@pytest.fixture(scope="module")
def square(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The slice drafted by `toolgen init` and built as drafted; the folder of the draft."""
    folder = tmp_path_factory.mktemp("square")
    (folder / "square.yaml").write_text(SQUARE.read_text(encoding="utf-8"), encoding="utf-8")
    drafted = run(
        "init",
        str(folder / "square.yaml"),
        "--out",
        str(folder / "square.map.yaml"),
        "--name",
        "square",
        "--no-project",
    )
    assert drafted.exit_code == 0, drafted.output
    built = run("build", str(folder / "square.map.yaml"), "--out", str(folder / "out"), "-q")
    assert built.exit_code == 0, built.output
    return folder


@pytest.fixture
def server() -> Any:
    with RecordingServer() as srv:
        srv.reply("POST", r"^/v2/payments$", 200, {"payment": {"id": "pay-1", "status": "COMPLETED"}})
        srv.reply("POST", r"^/v2/customers$", 200, {"customer": {"id": "cus-1", "given_name": "Ada"}})
        yield srv


def _registry(out: Path, server: RecordingServer) -> Registry:
    return Registry.from_dir(
        out,
        base_url=server.base_url,
        credentials=StaticCredentials({"SQUARE_TOKEN": "sq-t"}),
        receipts=MemoryReceiptStore(),
    )


def _preview(registry: Registry, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    shown = registry.call("preview_" + tool, args, actor=PAYER)
    assert shown.ok, shown.error
    assert isinstance(shown.result, dict)
    return shown.result


def _record(registry: Registry, tool: str, preview_id: str, key: str) -> CallResult:
    return registry.call(
        "record_" + tool,
        {"preview_id": preview_id, "action_id": key},
        actor=PAYER,
        approval=Approval(preview_id),
    )


def _tool(out: Path, name: str) -> dict[str, Any]:
    return next(t for t in json.loads((out / "mcp.json").read_text(encoding="utf-8")) if t["name"] == name)


def test_init_drafts_the_body_key_honoured_and_the_draft_passes_strict_lint(square: Path) -> None:
    text = (square / "square.map.yaml").read_text(encoding="utf-8")
    assert "takes no idempotency key" not in text
    intents = yaml.safe_load(text)["tools"]
    for tool in ("create_payment", "create_customer"):
        assert intents[tool]["idempotency"] == {
            "key": "action_id",
            "send_as": "body:idempotency_key",
            "honoured_by_api": True,
        }
    linted = run("lint", "--strict", str(square / "square.map.yaml"))
    assert linted.exit_code == 0, linted.output


@pytest.mark.parametrize("tool", ["create_payment", "create_customer"])
def test_the_model_never_sees_the_key_member(square: Path, tool: str) -> None:
    preview = _tool(square / "out", "preview_" + tool)["inputSchema"]
    record = _tool(square / "out", "record_" + tool)["inputSchema"]
    assert not [p for p in preview["properties"] if "idempotency" in p]
    assert sorted(record["properties"]) == ["action_id", "preview_id"]
    assert "idempotency_key" not in preview.get("required", [])


def test_the_record_key_takes_the_apis_own_length_bound(square: Path) -> None:
    record = _tool(square / "out", "record_create_payment")["inputSchema"]
    assert record["properties"]["action_id"]["maxLength"] == 45  # CreatePayment's idempotency_key
    assert (
        _tool(square / "out", "record_create_customer")["inputSchema"]["properties"]["action_id"]["maxLength"]
        == 255
    )


@pytest.mark.parametrize(("tool", "args"), CASES)
def test_preview_approve_record_sends_exactly_the_previewed_request_with_the_key(
    square: Path, server: RecordingServer, tool: str, args: dict[str, Any]
) -> None:
    registry = _registry(square / "out", server)
    shown = _preview(registry, tool, args)
    placeholder = f"<action_id of record_{tool}>"
    assert shown["request"]["body"] == {**args, "idempotency_key": placeholder}  # where the key goes
    assert server.requests == []  # a preview sends nothing
    done = _record(registry, tool, shown["preview_id"], "key-" + tool)
    assert done.ok, done.error
    sent = server.last
    assert sent.json() == {**args, "idempotency_key": "key-" + tool}
    # the executed request is the previewed one, member for member, with the key filled in
    assert done.request is not None
    assert done.request["body"] == {**shown["request"]["body"], "idempotency_key": "key-" + tool}
    assert {k: v for k, v in done.request.items() if k != "body"} == {
        k: v for k, v in shown["request"].items() if k != "body"
    }


def test_an_optional_key_alone_is_still_sent(square: Path, server: RecordingServer) -> None:
    """CreateCustomer with no member but the key: the preview's body is ``{}`` plus the key's place."""
    registry = _registry(square / "out", server)
    shown = _preview(registry, "create_customer", {})
    assert shown["request"]["body"] == {"idempotency_key": "<action_id of record_create_customer>"}
    done = _record(registry, "create_customer", shown["preview_id"], "only-the-key")
    assert done.ok, done.error
    assert server.last.json() == {"idempotency_key": "only-the-key"}


@pytest.mark.parametrize(("tool", "args"), CASES)
def test_an_argument_naming_the_hidden_member_is_refused(
    square: Path, server: RecordingServer, tool: str, args: dict[str, Any]
) -> None:
    registry = _registry(square / "out", server)
    for name in ("idempotency_key", "body_idempotency_key"):
        refused = registry.call("preview_" + tool, {**args, name: "mine"}, actor=PAYER)
        assert refused.error is not None and refused.error.code == "invalid_arguments", refused
    shown = _preview(registry, tool, args)
    refused = registry.call(
        "record_" + tool,
        {"preview_id": shown["preview_id"], "action_id": "k", "idempotency_key": "mine"},
        actor=PAYER,
        approval=Approval(shown["preview_id"]),
    )
    assert refused.error is not None and refused.error.code == "invalid_arguments"
    assert server.requests == []


def test_an_unknown_outcome_is_resent_with_the_same_key(square: Path, server: RecordingServer) -> None:
    registry = _registry(square / "out", server)
    server.reply("POST", r"^/v2/payments$", 500, {"errors": [{"category": "API_ERROR", "code": "INTERNAL"}]})
    shown = _preview(registry, "create_payment", PAYMENT)
    first = _record(registry, "create_payment", shown["preview_id"], "pay-once")
    assert first.error is not None and first.error.code == "result_unknown", first
    assert first.error.result_known is False
    server.reply("POST", r"^/v2/payments$", 200, {"payment": {"id": "pay-1", "status": "COMPLETED"}})
    again = _record(registry, "create_payment", shown["preview_id"], "pay-once")
    assert again.ok, again.error
    bodies = [r.json() for r in server.requests]
    assert len(bodies) == 2 and bodies[0] == bodies[1] == {**PAYMENT, "idempotency_key": "pay-once"}


def test_a_retried_attempt_sends_the_same_key(square: Path, server: RecordingServer) -> None:
    """A 503 the runtime retries on its own (the API honours the key): every attempt carries it."""
    registry = _registry(square / "out", server)
    shown = _preview(registry, "create_payment", PAYMENT)
    server.reply("POST", r"^/v2/payments$", 503, {"errors": []})
    failed = _record(registry, "create_payment", shown["preview_id"], "pay-retried")
    assert failed.error is not None
    keys = [r.json()["idempotency_key"] for r in server.requests]
    assert len(keys) >= 2 and set(keys) == {"pay-retried"}


def test_a_key_longer_than_the_api_allows_is_refused_before_sending(
    square: Path, server: RecordingServer
) -> None:
    registry = _registry(square / "out", server)
    shown = _preview(registry, "create_payment", PAYMENT)
    refused = _record(registry, "create_payment", shown["preview_id"], "k" * 46)
    assert refused.error is not None and refused.error.code == "invalid_arguments"
    assert server.requests == []


@settings(max_examples=examples(60), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.text(min_size=1, max_size=45), member=st.sampled_from(["idempotency_key", "body_idempotency_key"])
)
def test_any_accepted_key_is_the_member_sent_and_the_model_cannot_set_it(
    square: Path, key: str, member: str
) -> None:
    with RecordingServer() as srv:
        srv.reply("POST", r"^/v2/payments$", 200, {"payment": {"id": "pay-1"}})
        registry = _registry(square / "out", srv)
        smuggled = registry.call("preview_create_payment", {**PAYMENT, member: key}, actor=PAYER)
        assert smuggled.error is not None and smuggled.error.code == "invalid_arguments"
        shown = _preview(registry, "create_payment", PAYMENT)
        done = _record(registry, "create_payment", shown["preview_id"], key)
        if done.ok:
            assert srv.last.json() == {**PAYMENT, "idempotency_key": key}
            assert len(srv.requests) == 1
        else:  # refused before sending (a blank key, the reserved `tgs-` form, a NUL or a lone
            # surrogate, which no receipt store can hold): nothing reached the API
            assert done.error is not None and done.error.code == "invalid_arguments", done.error
            assert (
                not key.strip()
                or key.lower().startswith("tgs-")
                or "\x00" in key
                or any("\ud800" <= c <= "\udfff" for c in key)
            )
            assert srv.requests == []


# --- the header and query variants --------------------------------------------------------------


def _optional_body_spec(folder: Path) -> Path:
    """An optional JSON body of optional members, one of them the key (``clientToken``, whose
    description says it deduplicates)."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "summary": "Create an order.",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "properties": {
                                        "item": {"type": "string"},
                                        "clientToken": {
                                            "type": "string",
                                            "maxLength": 64,
                                            "description": "A unique, case-sensitive "
                                            "identifier that you provide to ensure the idempotency of the request.",
                                        },
                                    },
                                }
                            }
                        }
                    },
                    "responses": {"201": {"description": "Created"}},
                }
            }
        },
    }
    path = folder / "orders.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


def _drafted(spec: Path, folder: Path) -> dict[str, Any]:
    """`toolgen init`'s draft of `spec` (`folder/o.yaml`, API `orders`), built into `folder/out`: the
    drafted `create_order` intent."""
    drafted = run("init", str(spec), "--out", str(folder / "o.yaml"), "--name", "orders", "--no-project")
    assert drafted.exit_code == 0, drafted.output
    built = run("build", str(folder / "o.yaml"), "--out", str(folder / "out"), "-q")
    assert built.exit_code == 0, built.output
    intent: dict[str, Any] = yaml.safe_load((folder / "o.yaml").read_text(encoding="utf-8"))["tools"][
        "create_order"
    ]
    return intent


def test_an_optional_body_of_the_key_alone_executes_its_preview(tmp_path: Path) -> None:
    """The preview sends no body; the record sends the key alone: the same request less the key."""
    spec = _optional_body_spec(tmp_path)
    intent = _drafted(spec, tmp_path)
    assert intent["idempotency"]["send_as"] == "body:clientToken"
    with RecordingServer() as srv:
        srv.reply("POST", r"^/orders$", 201, None)
        registry = Registry.from_dir(tmp_path / "out", base_url=srv.base_url, receipts=MemoryReceiptStore())
        actor = Actor.of("bot", ["orders:write"])
        for args, sent in (
            ({}, {"clientToken": "k-1"}),
            ({"item": "tea"}, {"item": "tea", "clientToken": "k-2"}),
        ):
            shown = registry.call("preview_create_order", args, actor=actor)
            assert shown.ok and isinstance(shown.result, dict), shown.error
            assert shown.result["request"]["body"] == {
                **args,
                "clientToken": "<action_id of record_create_order>",
            }
            done = registry.call(
                "record_create_order",
                {"preview_id": shown.result["preview_id"], "action_id": sent["clientToken"]},
                actor=actor,
                approval=Approval(shown.result["preview_id"]),
            )
            assert done.ok, done.error
            assert srv.last.json() == sent


def _variant_spec(folder: Path, where: str, name: str) -> Path:
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "summary": "Create an order.",
                    "parameters": [
                        {
                            "name": name,
                            "in": where,
                            "required": where == "header",
                            "schema": {"type": "string"},
                            "description": "Makes a retried request safe.",
                        }
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["item"],
                                    "properties": {"item": {"type": "string"}},
                                }
                            }
                        },
                    },
                    "responses": {
                        "201": {
                            "description": "Created",
                            "content": {
                                "application/json": {
                                    "schema": {"type": "object", "properties": {"id": {"type": "string"}}}
                                }
                            },
                        }
                    },
                }
            }
        },
    }
    path = folder / "orders.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


@pytest.mark.parametrize(("where", "name"), [("header", "X-Idempotency-Key"), ("query", "idempotencyKey")])
def test_header_and_query_keys_are_drafted_hidden_shown_and_filled(
    tmp_path: Path, where: str, name: str
) -> None:
    spec = _variant_spec(tmp_path, where, name)
    drafted = run(
        "init", str(spec), "--out", str(tmp_path / "orders.map.yaml"), "--name", "orders", "--no-project"
    )
    assert drafted.exit_code == 0, drafted.output
    intent = yaml.safe_load((tmp_path / "orders.map.yaml").read_text(encoding="utf-8"))["tools"][
        "create_order"
    ]
    assert intent["idempotency"] == {
        "key": "action_id",
        "send_as": f"{where}:{name}",
        "honoured_by_api": True,
    }
    built = run("build", str(tmp_path / "orders.map.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert built.exit_code == 0, built.output
    assert sorted(_tool(tmp_path / "out", "preview_create_order")["inputSchema"]["properties"]) == ["item"]
    with RecordingServer() as srv:
        srv.reply("POST", r"^/orders$", 201, {"id": "o-1"})
        registry = Registry.from_dir(tmp_path / "out", base_url=srv.base_url, receipts=MemoryReceiptStore())
        actor = Actor.of("bot", ["orders:write"])
        shown = registry.call("preview_create_order", {"item": "tea"}, actor=actor)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        placeholder = "<action_id of record_create_order>"
        if where == "header":
            assert shown.result["request"]["headers"][name] == placeholder
        else:
            assert shown.result["request"]["url"].endswith(
                f"?{name}=%3Caction_id%20of%20record_create_order%3E"
            )
        done = registry.call(
            "record_create_order",
            {"preview_id": shown.result["preview_id"], "action_id": "o-key"},
            actor=actor,
            approval=Approval(shown.result["preview_id"]),
        )
        assert done.ok, done.error
        sent = srv.last
        assert sent.json() == {"item": "tea"}
        assert (sent.header(name) if where == "header" else dict(sent.query).get(name)) == "o-key"


# --- a composite whose write step takes its key in the body --------------------------------------

COMPOSITE_MAP = """toolgen: 1
spec: square.yaml
api: {name: square}
auth:
  oauth2: {secret: SQUARE_TOKEN}
tools:
  get_customer:
    operation: RetrieveCustomer
    effect: read
    permission: CUSTOMERS_READ
    description: Read one customer. Not for payments.
  create_payment:
    operation: CreatePayment
    effect: write
    permission: PAYMENTS_WRITE
    approval: required
    idempotency: {key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}
    description: Charge a card once. Not for refunds.
composites:
  charge_customer:
    pattern: pipeline
    inputs: {amount: {type: integer, minimum: 1}}
    description: Charge a customer's card once, the payment tied to the customer read first. Not for refunds.
    steps:
      - id: customer
        operation: RetrieveCustomer
        args: {customer_id: $input/customer_id}
      - id: payment
        operation: CreatePayment
        args:
          source_id: $input/source_id
          customer_id: $customer/customer/id
          amount_money: {amount: $input/amount, currency: USD}
    output:
      payment: $payment/payment
"""


def test_a_composite_write_step_sends_its_step_key_in_the_body(tmp_path: Path) -> None:
    from toolgen.runtime.pipeline.idempotency import step_key

    (tmp_path / "square.yaml").write_text(SQUARE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "map.yaml").write_text(COMPOSITE_MAP, encoding="utf-8")
    built = run("build", str(tmp_path / "map.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert built.exit_code == 0, built.output
    with RecordingServer() as srv:
        srv.reply("GET", r"^/v2/customers/cus-9$", 200, {"customer": {"id": "cus-9"}})
        srv.reply("POST", r"^/v2/payments$", 200, {"payment": {"id": "pay-9", "status": "COMPLETED"}})
        registry = _registry(tmp_path / "out", srv)
        args = {"customer_id": "cus-9", "source_id": "cnon:ok", "amount": 250}
        shown = registry.call("preview_charge_customer", args, actor=PAYER)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        [step] = shown.result["requests"]
        assert step["request"]["body"]["idempotency_key"].startswith("tgs-x")  # the step key's place
        done = registry.call(
            "record_charge_customer",
            {"preview_id": shown.result["preview_id"], "action_id": "c-1"},
            actor=PAYER,
            approval=Approval(shown.result["preview_id"]),
        )
        assert done.ok, done.error
        [paid] = [r for r in srv.requests if r.method == "POST"]
        key = step_key("record_charge_customer", "c-1", "payment")  # 36 characters: within the API's 45
        assert paid.json() == {
            "source_id": "cnon:ok",
            "customer_id": "cus-9",
            "amount_money": {"amount": 250, "currency": "USD"},
            "idempotency_key": key,
        }
        assert {k: v for k, v in step["request"]["body"].items() if k != "idempotency_key"} == {
            k: v for k, v in paid.json().items() if k != "idempotency_key"
        }


def test_a_full_argument_record_and_the_earlier_hide_workaround(tmp_path: Path) -> None:
    """`record.arguments: full` (no approval) takes the write's arguments and the key, never the
    member; a map that also hides the member (the earlier workaround for optional keys) builds alike."""
    (tmp_path / "square.yaml").write_text(SQUARE.read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "map.yaml").write_text(
        "toolgen: 1\nspec: square.yaml\napi: {name: square}\nauth:\n  oauth2: {secret: SQUARE_TOKEN}\ntools:\n"
        "  create_customer:\n    operation: CreateCustomer\n    effect: write\n    permission: CUSTOMERS_WRITE\n"
        "    approval: never\n    preview: false\n    record: {arguments: full}\n    hide: [idempotency_key]\n"
        '    idempotency: {key: action_id, send_as: "body:idempotency_key", honoured_by_api: true}\n'
        "    description: Create one customer. Not for updates.\n",
        encoding="utf-8",
    )
    built = run("build", str(tmp_path / "map.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert built.exit_code == 0, built.output
    schema = _tool(tmp_path / "out", "record_create_customer")["inputSchema"]
    assert "action_id" in schema["required"] and not [p for p in schema["properties"] if "idempotency" in p]
    with RecordingServer() as srv:
        srv.reply("POST", r"^/v2/customers$", 200, {"customer": {"id": "cus-1"}})
        registry = _registry(tmp_path / "out", srv)
        done = registry.call("record_create_customer", {**CUSTOMER, "action_id": "full-1"}, actor=PAYER)
        assert done.ok, done.error
        assert srv.last.json() == {**CUSTOMER, "idempotency_key": "full-1"}


# --- a member named like a key that the spec says is not one --------------------------------------

LABEL = "Not an idempotency key: a reference printed on the customer's receipt, sent as given."


def test_a_member_the_spec_says_is_not_a_key_stays_the_models_argument(tmp_path: Path) -> None:
    """A body member named ``idempotency_key`` whose own description says it is no idempotency key:
    `toolgen init` drafts no key there, so the member is the model's argument, sent as the human
    saw it in the preview, never overwritten with the record's key (nor trusted to deduplicate)."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "summary": "Create an order.",
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["item"],
                                    "properties": {
                                        "item": {"type": "string"},
                                        "idempotency_key": {"type": "string", "description": LABEL},
                                    },
                                }
                            }
                        },
                    },
                    "responses": {"201": {"description": "Created"}},
                }
            }
        },
    }
    (tmp_path / "orders.json").write_text(json.dumps(spec), encoding="utf-8")
    intent = _drafted(tmp_path / "orders.json", tmp_path)
    assert (intent.get("idempotency") or {}).get("send_as", "none") == "none"
    assert "idempotency_key" in _tool(tmp_path / "out", "preview_create_order")["inputSchema"]["properties"]
    with RecordingServer() as srv:
        srv.reply("POST", r"^/orders$", 201, None)
        registry = Registry.from_dir(tmp_path / "out", base_url=srv.base_url, receipts=MemoryReceiptStore())
        actor = Actor.of("bot", ["orders:write"])
        args = {"item": "tea", "idempotency_key": "RECEIPT-7"}
        shown = registry.call("preview_create_order", args, actor=actor)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        assert shown.result["request"]["body"] == args
        done = registry.call(
            "record_create_order",
            {"preview_id": shown.result["preview_id"], "action_id": "k-1"},
            actor=actor,
            approval=Approval(shown.result["preview_id"]),
        )
        assert done.ok, done.error
        assert srv.last.json() == args


# --- an operation that takes its key in two places -----------------------------------------------


def _two_places_spec(folder: Path, second: str, *, required: bool = False) -> Path:
    """A header ``Idempotency-Key`` and a second key place: a body member or a query parameter."""
    params: list[dict[str, Any]] = [{"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}]
    members: dict[str, Any] = {"item": {"type": "string"}}
    if second == "body":
        members["idempotency_key"] = {"type": "string"}
    else:
        params.append(
            {"name": "idempotency_key", "in": "query", "required": required, "schema": {"type": "string"}}
        )
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders": {
                "post": {
                    "operationId": "createOrder",
                    "summary": "Create an order.",
                    "parameters": params,
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {
                                    "type": "object",
                                    "required": ["item"]
                                    + (["idempotency_key"] if required and second == "body" else []),
                                    "properties": members,
                                }
                            }
                        },
                    },
                    "responses": {"201": {"description": "Created"}},
                }
            }
        },
    }
    path = folder / "orders.json"
    path.write_text(json.dumps(spec), encoding="utf-8")
    return path


@pytest.mark.parametrize("second", ["body", "query"])
def test_a_second_key_place_is_never_the_models(tmp_path: Path, second: str) -> None:
    """The record fills the header; the body member or query parameter that also takes a key is no
    argument: the model cannot pin one API key on two different approved writes through it."""
    spec = _two_places_spec(tmp_path, second)
    intent = _drafted(spec, tmp_path)
    assert intent["idempotency"]["send_as"] == "header:Idempotency-Key"
    assert sorted(_tool(tmp_path / "out", "preview_create_order")["inputSchema"]["properties"]) == ["item"]
    with RecordingServer() as srv:
        srv.reply("POST", r"^/orders", 201, None)
        registry = Registry.from_dir(tmp_path / "out", base_url=srv.base_url, receipts=MemoryReceiptStore())
        actor = Actor.of("bot", ["orders:write"])
        refused = registry.call(
            "preview_create_order", {"item": "tea", "idempotency_key": "pinned"}, actor=actor
        )
        assert refused.error is not None and refused.error.code == "invalid_arguments", refused
        for n, item in enumerate(("tea", "coffee")):
            shown = registry.call("preview_create_order", {"item": item}, actor=actor)
            assert shown.ok and isinstance(shown.result, dict), shown.error
            done = registry.call(
                "record_create_order",
                {"preview_id": shown.result["preview_id"], "action_id": f"k-{n}"},
                actor=actor,
                approval=Approval(shown.result["preview_id"]),
            )
            assert done.ok, done.error
        sent = srv.requests
        assert [r.header("Idempotency-Key") for r in sent] == ["k-0", "k-1"]
        assert [r.json() for r in sent] == [{"item": "tea"}, {"item": "coffee"}]
        assert all("idempotency_key" not in dict(r.query) for r in sent)


@pytest.mark.parametrize("second", ["body", "query"])
def test_a_required_second_key_place_is_not_built(tmp_path: Path, second: str) -> None:
    spec = _two_places_spec(tmp_path, second, required=True)
    (tmp_path / "o.yaml").write_text(
        "toolgen: 1\nspec: orders.json\napi: {name: orders}\ntools:\n  create_order:\n    operation: createOrder\n"
        "    effect: write\n    permission: orders:write\n    approval: required\n"
        '    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}\n'
        "    description: Create one order. Not for updates.\n",
        encoding="utf-8",
    )
    assert spec.exists()
    built = run("build", str(tmp_path / "o.yaml"), "--out", str(tmp_path / "out"), "-q")
    assert "idempotency-key-unsent" in built.output and "idempotency_key" in built.output, built.output


def test_a_query_key_on_a_path_that_carries_a_query_string_is_sent_as_previewed(tmp_path: Path) -> None:
    """A spec path with its own query string (``/orders?mode=fast``, as some specs write an action
    selector): the key's query parameter is one more parameter of that query, as the preview shows
    it, never glued onto the last value (``mode=fast?idempotency_key=...``, which loses the key)."""
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "Orders", "version": "1"},
        "paths": {
            "/orders?mode=fast": {
                "post": {
                    "operationId": "createOrder",
                    "summary": "Create an order.",
                    "parameters": [
                        {"name": "idempotency_key", "in": "query", "schema": {"type": "string"}},
                        {"name": "note", "in": "query", "schema": {"type": "string"}},
                    ],
                    "requestBody": {
                        "required": True,
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"item": {"type": "string"}}}
                            }
                        },
                    },
                    "responses": {"201": {"description": "Created"}},
                }
            }
        },
    }
    (tmp_path / "orders.json").write_text(json.dumps(spec), encoding="utf-8")
    _drafted(tmp_path / "orders.json", tmp_path)
    with RecordingServer() as srv:
        srv.reply("POST", r"^/orders", 201, None)
        registry = Registry.from_dir(tmp_path / "out", base_url=srv.base_url, receipts=MemoryReceiptStore())
        actor = Actor.of("bot", ["orders:write"])
        shown = registry.call("preview_create_order", {"item": "tea", "note": "hot"}, actor=actor)
        assert shown.ok and isinstance(shown.result, dict), shown.error
        assert shown.result["request"]["url"].endswith(
            "/orders?mode=fast&note=hot&idempotency_key=%3Caction_id%20of%20record_create_order%3E"
        )
        done = registry.call(
            "record_create_order",
            {"preview_id": shown.result["preview_id"], "action_id": "k-1"},
            actor=actor,
            approval=Approval(shown.result["preview_id"]),
        )
        assert done.ok, done.error
        assert srv.last.query == [("mode", "fast"), ("note", "hot"), ("idempotency_key", "k-1")]
