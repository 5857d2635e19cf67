"""`strict: false` in the intent map: the one way a tool is sent non-strict by choice.

The Stripe slice with `update_customer` marked `strict: false` (its full body: free-form maps,
`anyOf` unions, untyped values) and `create_customer` left strict. OpenAI gets `strict: false` and the
natural schema (no argument rewrites, every value typed as OpenAI demands outside strict mode too),
Anthropic never selects it as strict, POLICY.md and REPORT.md name it as the intent map's choice,
lint reports `strict-disabled`, and the runtime takes natural arguments for it with
``dialect="openai"`` without decoding anything. The conformance checker still refuses what OpenAI
refuses outside strict mode (an untyped `items`).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module
from tests.support.build import CASES, REAL, REPO, Built, build, run
from tests.support.profiles import examples
from tests.support.recording_server import RecordingServer
from tests.support.schema_strategies import obj

from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import DialectSchema, check_catalog
from toolgen.dialects._loose import _value_positions
from toolgen.dialects.openai import check_openai_catalog, openai_loose_parameters, openai_tool
from toolgen.runtime import Actor, Registry
from toolgen.runtime.call.credentials import StaticCredentials
from toolgen.runtime.stores import MemoryReceiptStore

STRIPE_SPEC = REPO / "specs" / "stripe.slice.json"

INTENTS = """\
auth:
  bearerAuth: {secret: STRIPE_SECRET_KEY}
tools:
  update_customer:
    operation: PostCustomersCustomer
    effect: write
    permission: customers:write
    approval: required
    strict: false
    idempotency: {key: idempotency_key, send_as: "header:Idempotency-Key", honoured_by_api: true}
  create_customer:
    operation: PostCustomers
    effect: write
    permission: customers:write
    approval: never
    preview: false
    idempotency: {key: idempotency_key, send_as: "header:Idempotency-Key", honoured_by_api: true}
    hide: [expand, cash_balance, invoice_settings, next_invoice_sequence, payment_method, preferred_locales,
           shipping, source, tax, tax_exempt, tax_id_data, test_clock, coupon, promotion_code,
           invoice_prefix, balance, address, phone]
  list_charges:
    operation: GetCharges
    effect: read
    permission: charges:read
    strict: false
"""
LOOSE = ("preview_update_customer", "record_update_customer", "list_charges")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    return build(
        tmp_path_factory.mktemp("strict"),
        STRIPE_SPEC,
        INTENTS,
        name="stripe",
        emit="openai,anthropic,mcp,gemini,policy,report",
    )


def test_openai_sends_the_chosen_tools_non_strict_with_the_natural_schema(built: Built) -> None:
    preview = built.tool("openai", "preview_update_customer")["function"]
    assert preview["strict"] is False
    params = preview["parameters"]
    # natural values: metadata stays a map (or ""), not [{key, value}] entries or a JSON string
    metadata = params["properties"]["metadata"]
    assert "object" in json.dumps(metadata) and '"key"' not in json.dumps(metadata)
    assert "JSON-encoded" not in json.dumps(params)
    assert (
        params["properties"]["metadata"]
        != built.tool("openai", "record_create_customer")["function"]["parameters"]["properties"]["metadata"]
    )
    # optional stays optional: no required-and-nullable widening
    assert params.get("required") == ["customer"]
    for ptr, node, position in _value_positions(params):
        if position:
            assert isinstance(node, dict) and any(
                k in node for k in ("type", "$ref", "anyOf", "oneOf", "enum")
            ), ptr
    assert built.tool("openai", "record_update_customer")["function"]["strict"] is False
    assert built.tool("openai", "record_create_customer")["function"]["strict"] is True
    assert built.tool("openai", "list_charges")["function"]["strict"] is False  # a read tool too


def test_no_openai_rewrites_for_the_chosen_tools_and_the_others_keep_theirs(built: Built) -> None:
    for name in LOOSE:
        assert "openai" not in built.row(name)["dialect_rewrites"], name
    assert built.row("record_create_customer")["dialect_rewrites"]["openai"]  # metadata as entries


def test_anthropic_never_selects_them_and_every_catalog_conforms(built: Built) -> None:
    for name in LOOSE:
        assert built.tool("anthropic", name)["strict"] is False
    for dialect in ("openai", "anthropic", "mcp", "gemini"):
        assert check_catalog(dialect, built.json(f"{dialect}.json")) == [], dialect


def test_policy_and_report_name_the_choice_apart_from_provider_limits(built: Built) -> None:
    policy = (built.out / "POLICY.md").read_text(encoding="utf-8")
    section = policy[policy.index("## Non-strict tools") :]
    assert "`list_charges`, `preview_update_customer`, `record_update_customer`" in section
    assert "record_create_customer" not in section
    report = (built.out / "REPORT.md").read_text(encoding="utf-8")
    assert "OpenAI: 1 of 4 tools strict." in report
    assert (
        "Not strict by the intent map's choice (`strict: false`; natural schema, no reshaped arguments; "
        "never strict in Anthropic either): `list_charges`, `preview_update_customer`, "
        "`record_update_customer`."
    ) in report
    assert "because of a provider limit" not in report
    assert "| `record_update_customer` | not strict: the intent map asks for strict: false |" in report


def test_lint_reports_strict_disabled_at_the_key_and_suggests_removing_it(tmp_path: Path) -> None:
    intent = tmp_path / "stripe.yaml"
    intent.write_text(
        f"toolgen: 1\nspec: {json.dumps(str(STRIPE_SPEC))}\napi: {{name: stripe}}\n{INTENTS}",
        encoding="utf-8",
    )
    found = [
        d
        for d in json.loads(run("lint", str(intent), "--format", "json").output)["findings"]
        if d["code"] == "strict-disabled"
    ]
    assert [f["tool"] for f in found] == ["record_update_customer", "list_charges"], found
    finding = found[0]
    assert finding["severity"] == "info" and finding["tool"] == "record_update_customer"
    assert "`preview_update_customer`, `record_update_customer` are sent non-strict" in finding["message"]
    assert finding["location"]["line"] == 12  # the `strict:` key (3 header lines + 9)
    assert finding["hint"].startswith("remove `strict: false`")


@pytest.mark.parametrize("value", ['"no"', "0", "[false]", "null"])
def test_a_non_boolean_strict_is_a_located_error(tmp_path: Path, value: str) -> None:
    body = INTENTS.replace("strict: false", f"strict: {value}")
    result = build(tmp_path, STRIPE_SPEC, body, name="stripe", expect=2).result
    assert "tools.update_customer.strict" in result.output, result.output
    assert "stripe.yaml:12:" in result.output, result.output
    assert not (tmp_path / "out").exists()  # a failed build writes nothing


def test_the_checker_refuses_what_openai_refuses_outside_strict_mode() -> None:
    def catalog(params: dict[str, Any]) -> list[dict[str, Any]]:
        return [
            {
                "type": "function",
                "function": {"name": "t", "description": "d", "parameters": params, "strict": False},
            }
        ]

    natural = openai_loose_parameters(
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "rows": {"type": "array", "items": {}},
                "any": {},
                "m": {"type": "object", "additionalProperties": {}},
                "u": {"anyOf": [{"type": "string"}, {}]},
            },
        }
    )
    assert natural.strict is False and natural.rewrites == ()
    assert check_openai_catalog(catalog(natural.schema)) == []
    rules = {
        v.rule: v.pointer
        for v in check_openai_catalog(
            catalog(
                {
                    "type": "object",
                    "properties": {"rows": {"type": "array", "items": {}}, "x": {"description": "?"}},
                }
            )
        )
    }
    assert rules["A.1-type"] in (
        "/function/parameters/properties/rows/items",
        "/function/parameters/properties/x",
    )
    assert (
        len(
            [
                v
                for v in check_openai_catalog(
                    catalog(
                        {
                            "type": "object",
                            "properties": {"rows": {"type": "array", "items": {}}, "x": {"description": "?"}},
                        }
                    )
                )
                if v.rule == "A.1-type"
            ]
        )
        == 2
    )
    assert {v.rule for v in check_openai_catalog(catalog({"type": "object"}))} == {"A.1-object-properties"}
    assert {
        v.rule
        for v in check_openai_catalog(catalog({"type": "object", "properties": {"a": {"type": "array"}}}))
    } == {"E.4-array-items"}
    assert {
        v.rule
        for v in check_openai_catalog(
            catalog({"type": "object", "properties": {"a": {"type": "string", "nullable": True}}})
        )
    } == {"E.2-nullable"}


# --- through the runtime ------------------------------------------------------------------------------


@pytest.fixture
def recorder() -> Iterator[RecordingServer]:
    with RecordingServer() as srv:
        yield srv


def _registry(built: Built, recorder: RecordingServer) -> Registry:
    return Registry.from_dir(
        built.out,
        base_url=recorder.base_url,
        credentials=StaticCredentials({"STRIPE_SECRET_KEY": "sk_test_dummy"}),
        receipts=MemoryReceiptStore(),
        cursor_key=b"c" * 32,
    )


def test_the_runtime_takes_natural_arguments_in_the_openai_dialect(
    built: Built, recorder: RecordingServer
) -> None:
    natural = {"customer": "cus_1", "metadata": {"order": "7"}, "name": "Ada"}
    actor = Actor.of("t", ("customers:write",))
    with _registry(built, recorder) as reg:
        canonical = reg.call("preview_update_customer", natural, actor=actor)
        sent = reg.call("preview_update_customer", natural, actor=actor, dialect="openai")
        assert canonical.result is not None and sent.result is not None, sent.to_json()
        assert sent.result["request"] == canonical.result["request"]
        # nothing is decoded: the entries form strict mode would have needed is refused, not converted
        entries = reg.call(
            "preview_update_customer",
            {**natural, "metadata": [{"key": "order", "value": "7"}]},
            actor=actor,
            dialect="openai",
        )
        assert not entries.ok and entries.error is not None and entries.error.code == "invalid_arguments"
        # a strict tool of the same build still decodes its entries
        created = reg.call(
            "record_create_customer",
            {"email": "a@b.c", "metadata": [{"key": "k", "value": "v"}], "idempotency_key": "k-1"},
            actor=actor,
            dialect="openai",
        )
        assert created.ok, created.to_json()
    assert ("metadata[k]", "v") in recorder.last.form()


# --- every schema a user could mark strict: false -----------------------------------------------------

_UNTYPED: list[tuple[dict[str, Any], Any]] = [
    ({}, {"k": [1]}),
    ({"description": "anything"}, "s"),
    ({"type": "array", "items": {}}, [1, "a", None, {"x": 1}]),
    ({"type": "object", "additionalProperties": {}}, {"a": [1]}),
    ({"type": "object"}, {"a": 1}),
    ({"anyOf": [{"type": "string"}, {}]}, 3),
    ({"type": "array", "items": {"type": "object", "properties": {"v": {}}}}, [{"v": True}]),
]


@st.composite
def _with_untyped(draw: st.DrawFn) -> tuple[dict[str, Any], Any]:
    schema, instance = draw(obj())
    schema, instance = copy.deepcopy(schema), dict(instance)
    for i in draw(st.lists(st.integers(0, len(_UNTYPED) - 1), max_size=3)):
        sub, value = _UNTYPED[i]
        schema["properties"][f"u{i}"] = copy.deepcopy(sub)
        instance[f"u{i}"] = copy.deepcopy(value)
    return schema, instance


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_with_untyped())
def test_the_natural_view_accepts_natural_values_and_always_conforms(
    pair: tuple[dict[str, Any], Any],
) -> None:
    canonical, instance = pair
    before = copy.deepcopy(canonical)
    view = openai_loose_parameters(canonical)
    assert canonical == before  # pure
    assert view.strict is False and view.rewrites == ()
    # what the model sends is the canonical value itself: no null widening, no entries, no JSON text
    assert jsonschema.Draft202012Validator(view.schema).is_valid(instance), (view.schema, instance)
    jsonschema.Draft202012Validator.check_schema(view.schema)
    tool = openai_tool("t", "d", canonical, parameters=view)
    assert check_openai_catalog([tool]) == []


_REAL_SPECS = sorted(p for p in REAL.glob("*") if p.suffix in (".json", ".yaml")) if REAL.is_dir() else []


@pytest.mark.slow
@pytest.mark.skipif(not _REAL_SPECS, reason="../shared/specs/real is not available")
def test_every_real_and_fault_case_tool_conforms_when_marked_non_strict(tmp_path: Path) -> None:
    """Whatever tool a user marks `strict: false`, its natural view keeps OpenAI's non-strict rules:
    every input schema of include-everything builds of ../shared/specs/real and ../shared/cases."""

    sweep = benchmark_module("sweep")
    api_name, include_everything_map = sweep.api_name, sweep.include_everything_map

    from toolgen.builder.build import build_api

    specs = _REAL_SPECS + sorted(CASES.glob("*/spec.yaml"))
    checked = caught = 0
    for i, spec in enumerate(specs):
        folder = tmp_path / f"{i}-{spec.parent.name}-{spec.stem}"
        folder.mkdir()
        try:
            ir = build_api(
                include_everything_map(spec, folder, api_name(spec)),
                folder / "out",
                emit=("openai",),
                run_lint=False,
            ).ir
        except DiagnosticError:
            continue  # a fault case the build refuses (covered by the fault-case tests)
        tools = [
            openai_tool(
                t.name, t.description, t.input_schema, parameters=openai_loose_parameters(t.input_schema)
            )
            for t in ir.tools
        ]
        assert check_openai_catalog(tools, max_tools=None) == [], spec.name
        raw = [
            openai_tool(
                t.name, t.description, t.input_schema, parameters=DialectSchema(t.input_schema, (), False, ())
            )
            for t in ir.tools
        ]
        caught += sum(1 for v in check_openai_catalog(raw, max_tools=None) if v.rule == "A.1-type")
        checked += len(tools)
    assert checked > 4000
    assert caught > 0  # the canonical schemas as they are would break the rule: the view is what keeps it


def test_a_provider_limit_is_reported_apart_from_the_choice(tmp_path: Path) -> None:
    """1,001 enum values break OpenAI's 1,000 (A.2): that tool is non-strict because of the provider,
    the other because the intent map asks; REPORT.md says which is which, POLICY.md names only the choice."""
    spec = tmp_path / "spec.json"
    param = {
        "name": "code",
        "in": "query",
        "schema": {"type": "string", "enum": [f"c{i}" for i in range(1001)]},
    }
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    spec.write_text(
        json.dumps(
            {
                "openapi": "3.1.0",
                "info": {"title": "Codes", "version": "1"},
                "servers": [{"url": "https://x.test"}],
                "paths": {
                    "/codes": {"get": {"operationId": "getCodes", "parameters": [param], "responses": ok}},
                    "/names": {"get": {"operationId": "getNames", "responses": ok}},
                },
            }
        ),
        encoding="utf-8",
    )
    body = (
        "tools:\n  get_codes: {operation: getCodes, effect: read, permission: c:read}\n"
        "  get_names: {operation: getNames, effect: read, permission: c:read, strict: false}\n"
    )
    built = build(tmp_path, spec, body, name="codes")
    assert [t["function"]["strict"] for t in built.json("openai.json")] == [False, False]
    report = (built.out / "REPORT.md").read_text(encoding="utf-8")
    assert "Not strict because of a provider limit (see the warnings): `get_codes`." in report
    assert "never strict in Anthropic either): `get_names`." in report
    policy = (built.out / "POLICY.md").read_text(encoding="utf-8")
    assert policy[policy.index("## Non-strict tools") :].rstrip().endswith("`get_names`")
