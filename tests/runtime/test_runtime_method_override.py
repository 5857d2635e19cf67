"""A method-override header is never a model's argument.

Amadeus declares ``X-HTTP-Method-Override`` as a required string header of its POST searches
(``default: GET``, no enum): it became a tool argument, so a model could send ``DELETE`` through a
read tool, and Rails, Google APIs and Amadeus run the method the header names. The build now sends
the value the spec states for a required one (else the operation's own method), never an optional
one, and the runtime refuses a policy that still binds one to an argument (nothing is sent).
"""

from __future__ import annotations

from pathlib import Path

from tests.support.build import build
from tests.support.recording_server import RecordingServer

from toolgen.runtime import Actor, Registry

SPEC = """openapi: 3.0.3
info: {title: flights, version: '1'}
servers: [{url: 'https://api.example.com'}]
components:
  parameters:
    getOverride:
      {name: X-HTTP-Method-Override, in: header, required: true, schema: {type: string, default: GET}}
paths:
  /shopping/availability:
    post:
      operationId: searchAvailability
      parameters: [{$ref: '#/components/parameters/getOverride'}]
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {origin: {type: string}}}}}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object, properties: {n: {type: integer}}}}}}
  /offers:
    get:
      operationId: listOffers
      parameters:
        - {name: X-Method-Override, in: header, schema: {type: string}}
        - {name: x-http-method, in: header, required: true, schema: {type: string}}
      responses:
        '200': {description: ok, content: {application/json: {schema: {type: object, properties: {n: {type: integer}}}}}}
"""

INTENTS = """tools:
  search_availability: {operation: searchAvailability, effect: read, permission: [f:read], description: Search.}
  list_offers: {operation: listOffers, effect: read, permission: [f:read], description: List offers.}
"""
READER = Actor.of("f", ["f:read"])


def test_a_method_override_header_is_the_specs_value_never_an_argument(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    built = build(tmp_path, spec, INTENTS, name="flights", emit="mcp,policy")
    for tool in ("search_availability", "list_offers"):
        names = set(built.tool("mcp", tool)["inputSchema"].get("properties") or {})
        assert not any("method" in n for n in names), f"{tool} takes {sorted(names)}"
    with RecordingServer() as srv:
        reg = Registry.from_dir(built.out, base_url=srv.base_url)
        smuggled = reg.call(
            "search_availability", {"origin": "NCE", "x_http_method_override": "DELETE"}, actor=READER
        )
        assert smuggled.error is not None and smuggled.error.code == "invalid_arguments", smuggled.to_json()
        assert srv.requests == []
        res = reg.call("search_availability", {"origin": "NCE"}, actor=READER)
        assert res.ok, res.to_json()
        assert srv.last.method == "POST" and srv.last.header("X-HTTP-Method-Override") == "GET"
        res = reg.call("list_offers", {}, actor=READER)
        assert res.ok, res.to_json()
        assert srv.last.header("X-Method-Override") is None
        assert srv.last.header("x-http-method") == "GET"  # required, no stated value: the operation's own
        reg.close()


def test_a_policy_that_binds_a_method_override_to_an_argument_sends_nothing(tmp_path: Path) -> None:
    spec = tmp_path / "openapi.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    built = build(tmp_path, spec, INTENTS, name="flights", emit="mcp,policy")
    policy, catalog = built.json("policy.json"), built.json("mcp.json")
    row = next(r for r in policy["tools"] if r["tool"] == "search_availability")
    row["request"]["fixed"] = [f for f in row["request"]["fixed"] if f["name"] != "X-HTTP-Method-Override"]
    row["request"]["bindings"].append(
        {
            "arg": "override",
            "in": "header",
            "name": "X-HTTP-Method-Override",
            "required": False,
            "null": "omit",
            "style": None,
            "explode": None,
            "content_type": None,
            "reserved": [],
        }
    )
    entry = next(t for t in catalog if t["name"] == "search_availability")
    entry["inputSchema"]["properties"]["override"] = {"type": "string"}
    with RecordingServer() as srv:
        reg = Registry(policy, catalog, base_url=srv.base_url)
        res = reg.call("search_availability", {"origin": "NCE", "override": "DELETE"}, actor=READER)
        assert res.error is not None and res.error.code == "internal_error", res.to_json()
        assert srv.requests == []
        reg.close()


PARAM_SPEC = """openapi: 3.0.3
info: {title: orders, version: '1'}
servers: [{url: 'https://api.example.com'}]
paths:
  /orders:
    post:
      operationId: createOrder
      parameters:
        - {name: _method, in: query, schema: {type: string}}
        - {name: Idempotency-Key, in: header, schema: {type: string}}
      requestBody:
        required: true
        content: {application/json: {schema: {type: object, properties: {item: {type: string}, _method: {type: string}}}}}
      responses:
        '201': {description: ok, content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}
  /forms:
    post:
      operationId: createForm
      requestBody:
        required: true
        content:
          application/x-www-form-urlencoded:
            schema: {type: object, required: [_method], properties: {item: {type: string}, _method: {type: string}}}
      responses:
        '201': {description: ok, content: {application/json: {schema: {type: object, properties: {id: {type: string}}}}}}
"""

PARAM_INTENTS = """tools:
  create_order:
    operation: createOrder
    effect: write
    permission: [o:write]
    approval: required
    idempotency: {key: action_id, send_as: "header:Idempotency-Key", honoured_by_api: true}
    description: Create one order. Not for updates.
  create_form:
    operation: createForm
    effect: write
    permission: [o:write]
    approval: required
    idempotency: {key: action_id, send_as: none}
    description: Create one form. Not for updates.
"""


def test_a_declared_method_parameter_or_member_is_never_an_argument(tmp_path: Path) -> None:
    """A ``_method`` query parameter or body member (Laravel, Symfony and Rack run the method it
    names on a POST; Laravel reads a JSON body's too): never the model's to set, so an approved POST
    never runs as a DELETE. An optional one is not sent; a required one sends the operation's method."""
    from toolgen.runtime import Approval, MemoryReceiptStore

    spec = tmp_path / "openapi.yaml"
    spec.write_text(PARAM_SPEC, encoding="utf-8")
    built = build(tmp_path, spec, PARAM_INTENTS, name="orders", emit="mcp,policy")
    for tool in ("preview_create_order", "preview_create_form"):
        names = set(built.tool("mcp", tool)["inputSchema"].get("properties") or {})
        assert not any("method" in n for n in names), f"{tool} takes {sorted(names)}"
    writer = Actor.of("w", ["o:write"])
    with RecordingServer() as srv:
        srv.reply("POST", r"^/(orders|forms)", 201, {"id": "o-1"})
        reg = Registry.from_dir(built.out, base_url=srv.base_url, receipts=MemoryReceiptStore())
        for tool in ("create_order", "create_form"):
            smuggled = reg.call("preview_" + tool, {"item": "tea", "_method": "DELETE"}, actor=writer)
            assert smuggled.error is not None and smuggled.error.code == "invalid_arguments", (
                smuggled.to_json()
            )
            shown = reg.call("preview_" + tool, {"item": "tea"}, actor=writer)
            assert shown.ok and isinstance(shown.result, dict), shown.to_json()
            pid = shown.result["preview_id"]
            done = reg.call(
                "record_" + tool,
                {"preview_id": pid, "action_id": "k-" + tool},
                actor=writer,
                approval=Approval(pid),
            )
            assert done.ok, done.to_json()
        order, form = srv.requests
        assert order.json() == {"item": "tea"} and "_method" not in dict(order.query)
        assert dict(form.form()) == {"item": "tea", "_method": "POST"}  # required: the operation's own method
        reg.close()
