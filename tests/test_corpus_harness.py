"""The corpus harness's pure parts (benchmarks/corpuslib.py, corpus_args.py): the development-half rule, the argument
generator, the classification of one call and the spec check of an answer, on canned inputs. The harness itself runs real specs
against Prism (`python benchmarks/corpus.py --ci`, a step of .ci/run)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.benchmarks import benchmark_module

lib = benchmark_module("corpuslib")
argen = benchmark_module("corpus_args")


# -- the development half --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rel", "dev"),
    [
        ("api/example.org/a.json", True),  # sha256 6d1f69b4...
        ("api/example.org/b.json", True),  # 7c1270df...
        ("api/example.org/c.json", False),  # b67166cb...
        ("api/example.org/d.json", False),  # 8585c334...
        ("api/example.org/f.json", True),  # 13e0a343...
    ],
)
def test_dev_half_is_the_first_hex_digit_0_to_7_of_the_salted_path(rel: str, dev: bool) -> None:
    assert lib.in_dev_half(rel) is dev


def test_dev_half_hashes_the_path_inside_the_package_without_its_prefix() -> None:
    # the tarball's member is package/api/..., the rule's text is api/...: a prefix changes the hash
    digest = hashlib.sha256(b"toolgen-corpus-33326:package/api/example.org/c.json").hexdigest()
    assert lib.in_dev_half("api/example.org/c.json") is False
    assert (digest[0] in "01234567") is lib.in_dev_half("package/api/example.org/c.json")


def test_only_json_files_under_api_are_specs() -> None:
    assert lib.is_spec_path("api/x.com/y.json")
    assert not lib.is_spec_path("api/_index.js")
    assert not lib.is_spec_path("README.md")


@given(
    st.lists(st.text(alphabet="abcdefgh/.", min_size=1, max_size=20), unique=True, max_size=30),
    st.integers(min_value=0, max_value=40),
)
def test_a_sample_is_a_deterministic_prefix_of_one_order(names: list[str], n: int) -> None:
    rels = [f"api/{x}.json" for x in names]
    got = lib.sample(rels, n)
    assert got == sorted(got) and len(got) == min(n, len(rels))
    assert set(got) <= set(lib.sample(rels, n + 1))  # a bigger sample keeps the smaller one
    assert lib.sample(list(reversed(rels)), n) == got  # the input order does not matter


# -- arguments -------------------------------------------------------------------------------------

SCHEMAS: list[dict[str, Any]] = [
    {
        "type": "object",
        "properties": {"id": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{2}$"}},
        "required": ["id"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "when": {"type": "string", "format": "date-time"},
            "mail": {"type": "string", "format": "email"},
            "n": {"type": "integer", "minimum": 10, "maximum": 12, "multipleOf": 4},
            "x": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        },
        "required": ["when", "mail", "n", "x"],
        "additionalProperties": False,
    },
    {
        "type": "object",
        "properties": {
            "kind": {"enum": ["a", "b"]},
            "tags": {"type": "array", "minItems": 2, "uniqueItems": True, "items": {"type": "string"}},
        },
        "required": ["kind", "tags"],
    },
    {
        "type": "object",
        "$defs": {
            "N": {
                "type": "object",
                "properties": {"v": {"type": "integer"}, "next": {"$ref": "#/$defs/N"}},
                "required": ["v"],
                "additionalProperties": False,
            }
        },
        "properties": {"root": {"$ref": "#/$defs/N"}},
        "required": ["root"],
    },
    {
        "type": "object",
        "properties": {
            "tags": {"type": "object", "minProperties": 2, "additionalProperties": {"type": "string"}},
            "ids": {"type": "array", "items": {"type": "integer"}, "maxItems": 3},
        },
        "required": ["tags", "ids"],
    },
    {
        "type": "object",
        "properties": {
            "p": {"anyOf": [{"type": "null"}, {"type": "string", "minLength": 30}]},
            "q": {
                "allOf": [
                    {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]},
                    {"properties": {"b": {"type": "boolean"}}, "required": ["b"]},
                ]
            },
        },
        "required": ["p", "q"],
    },
]


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("mode", ["required", "full"])
def test_generated_arguments_are_valid_and_the_same_every_time(schema: dict[str, Any], mode: str) -> None:
    args = argen.generate_args(schema, mode)
    assert argen.schema_errors(schema, args) == []
    assert argen.generate_args(schema, mode) == args


def test_maps_get_their_minimum_entries_and_required_lists_an_item() -> None:
    args = argen.generate_args(SCHEMAS[4])
    assert len(args["tags"]) == 2 and len(args["ids"]) == 1


def test_full_mode_fills_optional_properties_required_mode_does_not() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
        "required": ["a"],
    }
    assert set(argen.generate_args(schema, "required")) == {"a"}
    assert set(argen.generate_args(schema, "full")) == {"a", "b"}


def test_an_unsatisfiable_schema_is_an_argument_error() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string", "minLength": 5, "maxLength": 2}},
        "required": ["a"],
    }
    with pytest.raises(argen.ArgumentError):
        argen.generate_args(schema)


# -- catalogs with the provider SDKs ---------------------------------------------------------------


def test_catalog_checks_use_the_sdks_and_catch_unknown_keys() -> None:
    pytest.importorskip("openai")
    pytest.importorskip("anthropic")
    params = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    good: dict[str, Any] = {
        "type": "function",
        "function": {"name": "get_a", "description": "d", "parameters": params, "strict": True},
    }
    assert lib.check_catalog("openai", [good]).failures == []
    stray = {**good, "function": {**good["function"], "strict_mode": True}}
    assert lib.check_catalog("openai", [stray]).failures == [("get_a", "unknown keys /function/strict_mode")]
    assert lib.check_catalog("openai", [{"type": "function"}]).failures[0][0] == "?"
    # anthropic's input_schema is a JSON Schema: any keyword is allowed there, not beside it
    tool = {"name": "get_a", "description": "d", "input_schema": params}
    assert lib.check_catalog("anthropic", [tool]).failures == []
    assert (
        lib.check_catalog("anthropic", [{**tool, "parameters": {}}]).failures[0][1].startswith("unknown keys")
    )


def test_gemini_and_mcp_checks_refuse_what_their_models_refuse() -> None:
    pytest.importorskip("google.genai")
    pytest.importorskip("mcp")
    assert lib.check_catalog("gemini", [{"name": "f", "parameters": {"type": "OBJECT"}}]).failures == []
    assert lib.check_catalog("gemini", [{"name": "f", "parameters": {"type": "DICTIONARY"}}]).failures == [
        ("f", "DICTIONARY is not a valid Type")
    ]
    assert lib.check_catalog("gemini", [{"name": "f", "parameters": {"type": "OBJECT", "bogus": 1}}]).failures
    assert lib.check_catalog("mcp", [{"name": "f", "inputSchema": {"type": "object"}}]).failures == []
    assert lib.check_catalog("mcp", [{"name": "f"}]).failures


# -- outcomes --------------------------------------------------------------------------------------

OK = {"ok": True, "tool": "t", "result": {}, "replayed": False}
UNEXPECTED = "output /: Additional properties are not allowed ('a', 'b' were unexpected)"


def err(code: str, message: str = "m", **details: Any) -> dict[str, Any]:
    return {"ok": False, "tool": "t", "error": {"code": code, "message": message, "details": details}}


@pytest.mark.parametrize(
    ("obs", "outcome", "cause"),
    [
        (
            lib.Observation(argen_error="no string matches pattern 'x'"),
            "argen_failed",
            "argen: no string matches pattern …",
        ),
        (lib.Observation(exception="KeyError"), "raised", "raised KeyError"),
        (
            lib.Observation(result=err("internal_error", "t: the runtime failed (KeyError).")),
            "raised",
            "internal_error: t: the runtime failed (KeyError).",
        ),
        (lib.Observation(result=OK), "conforms", "ok"),  # a preview: nothing sent
        (
            lib.Observation(result=err("invalid_arguments", "bad", pointer="/items/3/id")),
            "input_refused",
            "invalid_arguments at /items/N/id: bad",
        ),
        (
            lib.Observation(
                result=err(
                    "upstream_unavailable",
                    "t could not reach the API at http://127.0.0.1:9/x (T): "
                    "connection refused: nothing listens at that address.",
                )
            ),
            "prism_limit",
            "Prism stopped listening (its process exited during the run)",
        ),
        (
            lib.Observation(result=err("upstream_unavailable", "t: the connection broke before an answer")),
            "input_refused",
            "upstream_unavailable: t: the connection broke before an answer",
        ),
        (lib.Observation(result=OK, status=200, body={"a": 1}), "conforms", "ok"),
        (
            lib.Observation(
                result=err("upstream_error"),
                status=500,
                body={
                    "type": "https://stoplight.io/prism/errors#UNKNOWN",
                    "title": "Cannot find serializer for */*",
                },
            ),
            "prism_limit",
            "prism UNKNOWN: Cannot find serializer for */*",
        ),
        (
            lib.Observation(
                result=err("upstream_error"),
                status=422,
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [
                        {
                            "location": ["query", "limit"],
                            "severity": "Error",
                            "message": "Request query parameter limit must be integer",
                        }
                    ],
                },
            ),
            "request_rejected",
            "prism 422 query.limit: Request query parameter limit must be integer",
        ),
        (
            lib.Observation(
                result=err("upstream_error"),
                status=400,
                body="",
                headers={"sl-violations": '[{"location":["request","body","a"],"message":"must be string"}]'},
            ),
            "request_rejected",
            "prism 400 request.body.a: must be string",
        ),
        (
            lib.Observation(
                result=err("upstream_not_found"),
                status=404,
                body={
                    "type": "https://stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR",
                    "title": "Route not resolved, no path matched",
                },
            ),
            "request_rejected",
            "prism 404 NO_PATH_MATCHED_ERROR: Route not resolved, no path matched",
        ),
        (
            lib.Observation(
                result=err("output_invalid", "not JSON"), status=200, body="<html>", body_conforms=None
            ),
            "output_refused",
            "output_invalid: not JSON",
        ),
        (
            lib.Observation(
                result=err("output_invalid", "bad"),
                status=200,
                body={"a": "x"},
                body_conforms=False,
                from_example=True,
            ),
            "spec_error",
            "the spec's own response example does not fit its schema",
        ),
        (
            lib.Observation(
                result={**OK, "warnings": ["output /c: 'string' does not match '^#[0-9a-f]{6}$'"]},
                status=200,
                body={"c": "string"},
                body_conforms=False,
                from_example=False,
            ),
            "prism_limit",
            "Prism's generated answer does not fit the spec's schema",
        ),
        (
            lib.Observation(
                result={**OK, "warnings": ["output /result: '[1]' is not of type 'array'"]},
                status=200,
                body="[1]",
                from_example=True,
                headers={"sl-violations": '[{"location":["response","body"],"message":"must be array"}]'},
            ),
            "spec_error",
            "the spec's own response example does not fit its schema",
        ),
        (
            lib.Observation(
                result=err("not_found"),
                status=404,
                route="/#X-Amz-Target=Svc.Op",
                body={"type": "https://stoplight.io/prism/errors#NO_PATH_MATCHED_ERROR", "title": "t"},
            ),
            "prism_limit",
            "the spec's path template holds '#' or '?': no HTTP request can match it",
        ),
        (
            lib.Observation(
                result={**OK, "warnings": [UNEXPECTED]}, status=201, body={"a": 1, "b": 2}, body_conforms=True
            ),
            "output_warned",
            "warning: output /: Additional properties are not allowed (… were unexpected)",
        ),
        (
            lib.Observation(
                result={**OK, "warnings": ["output /a: 'x' is not of type 'integer'"]},
                status=200,
                body={"a": "x"},
                body_conforms=True,
            ),
            "output_warned",
            "warning: output /a: … is not of type …",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=422,  # twinehealth: sent filter%5Bpatient%5D
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [
                        {
                            "location": ["query"],
                            "severity": "Error",
                            "message": "Request query must have required property 'filter%5bpatient%5d'",
                        }
                    ],
                },
            ),
            "prism_limit",
            "Prism cannot match a query parameter whose name holds '[' or ']' (prism#2017)",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=400,
                body="",  # apple: a declared 400, sl-violations
                headers={
                    "sl-violations": '[{"location":["request","query"],"message":'
                    "\"Request query must have required property 'filter[app]'\"}]"
                },
            ),
            "prism_limit",
            "Prism cannot match a query parameter whose name holds '[' or ']' (prism#2017)",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=422,  # one real violation besides: still rejected
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [
                        {
                            "location": ["query"],
                            "message": "Request query must have required property 'filter%5bapp%5d'",
                        },
                        {
                            "location": ["query"],
                            "message": "Request query must have required property 'limit'",
                        },
                    ],
                },
            ),
            "request_rejected",
            "prism 422 query: Request query must have required property 'filter%5bapp%5d'",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=422,
                sent_type="text/xml",  # cloudfront
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [{"location": ["body"], "message": "Request body must be object"}],
                },
            ),
            "prism_limit",
            "Prism parses no XML request body: any document is a string to it (prism#2050)",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=422,
                sent_type="application/json",  # JSON: a real miss
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [{"location": ["body"], "message": "Request body must be object"}],
                },
            ),
            "request_rejected",
            "prism 422 body: Request body must be object",
        ),
        (
            lib.Observation(
                result=err("upstream_rejected"),
                status=422,
                sent_type="application/x-www-form-urlencoded",
                body={
                    "type": "https://stoplight.io/prism/errors#UNPROCESSABLE_ENTITY",
                    "title": "Invalid request",
                    "validation": [{"location": ["body"], "message": "Request body must be string"}],
                },
            ),
            "prism_limit",
            "Prism decodes a form body into an object: a form body the spec declares as a string never fits",
        ),
        (
            lib.Observation(result=err("upstream_error"), status=409, body={"message": "conflict"}),
            "prism_limit",
            "prism answered HTTP 409 without a request violation (upstream_error)",
        ),
        # an answer the spec declares is toolgen's to handle: failing on it is toolgen's failure
        (
            lib.Observation(
                result=err("upstream_error", "unexpected HTTP 302"),
                status=302,
                declares_success=False,
                declared=("302",),
            ),
            "output_refused",
            "the runtime failed on HTTP 302, an answer the spec declares (upstream_error: unexpected HTTP …)",
        ),
        (
            lib.Observation(
                result=err("upstream_error", "unexpected HTTP 307"),
                status=307,
                declares_success=False,
                declared=("3XX", "default"),
            ),
            "output_refused",
            "the runtime failed on HTTP 307, an answer the spec declares (upstream_error: unexpected HTTP …)",
        ),
        (
            lib.Observation(
                result=err("upstream_error"), status=302, declares_success=False, declared=("default",)
            ),
            "prism_limit",
            "the operation declares no 2xx response; Prism answered HTTP 302",
        ),
        (
            lib.Observation(
                result=err("upstream_not_found"), status=404, declares_success=False, declared=("404",)
            ),
            "prism_limit",
            "the operation declares no 2xx response; Prism answered HTTP 404",
        ),
        # a write the API accepted (2xx) reported unknown is toolgen's failure, whatever the body: never excused
        (
            lib.Observation(
                result=err(
                    "result_unknown",
                    "createComponent answered HTTP 201 with a body that cannot be "
                    "read (application/json text where the tool's output is JSON).",
                ),
                status=201,
                body="Component created",
                body_conforms=False,
                from_example=True,
            ),
            "unknown_on_success",
            (
                "result_unknown: createComponent answered HTTP … with a body that cannot be read "
                "(application/json text where the tool…"
            ),
        ),
    ],
)
def test_classify(obs: Any, outcome: str, cause: str) -> None:
    assert lib.classify(obs) == (outcome, cause)
    assert outcome in lib.OUTCOMES
    # what a result file keeps of the call is enough to classify it again
    kept = json.loads(json.dumps(lib.observation_record(obs)))
    assert lib.classify(lib.observation_from(kept)) == (outcome, cause)


# -- the CI slice's assertions ---------------------------------------------------------------------


def test_ci_verdict_fails_only_on_raises_internal_errors_and_unlocated_refusals() -> None:
    done = {
        "path": "api/a.json",
        "stage": "done",
        "calls": [{"outcome": "request_rejected", "tool": "t", "cause": "c"}],
    }
    refused = {
        "path": "api/b.json",
        "stage": "start",
        "refused": {"stage": "build", "located": True, "reason": "specs/b.json:3:5: error[x]: y"},
    }
    assert lib.ci_verdict([done, refused]) == []  # call failures are reported, not asserted
    raised = {**done, "calls": [{"outcome": "raised", "tool": "get_x", "cause": "raised KeyError"}]}
    internal = {"path": "api/c.json", "stage": "init", "internal_error": {"stage": "build", "reason": "boom"}}
    unlocated = {**refused, "refused": {"stage": "init", "located": False, "reason": "error: no"}}
    timeout = {"path": "api/d.json", "stage": "timeout", "harness_error": "killed after 300 s"}
    assert [line.split(":")[0] for line in lib.ci_verdict([raised, internal, unlocated, timeout])] == [
        "api/a.json",
        "api/c.json",
        "api/b.json",
        "api/d.json",
    ]
    assert "get_x: raised KeyError" in lib.ci_verdict([raised])[0]
    unknown = {
        **done,
        "calls": [{"outcome": "unknown_on_success", "tool": "record_x", "cause": "result_unknown: …"}],
    }
    assert "1 writes the API accepted were reported unknown, e.g. record_x" in lib.ci_verdict([unknown])[0]
    assert "unknown_on_success" not in lib.EXCLUDED


def test_a_refusal_is_located_when_toolgen_names_file_line_and_column() -> None:
    out = (
        "specs/petstore.json:2:3 (#/openapi): error[spec-version-unsupported]: OpenAPI version '4.0.0' is not "
        "supported\n    hint: toolgen reads OpenAPI 3.0.x and 3.1.x\ntoolgen: 1 error; nothing was written.\n"
    )
    got = lib.refusal(out)
    assert got["located"] is True and got["code"] == "spec-version-unsupported"
    assert got["reason"].startswith("specs/petstore.json:2:3 (#/openapi): error[spec-version-unsupported]")
    bare = lib.refusal("toolgen: internal error: KeyError: 'x'\n")
    assert bare["located"] is False and bare["code"] is None


# -- the spec's own verdict on an answer ------------------------------------------------------------


def _corpus_calls_module() -> Any:
    return benchmark_module("corpus_calls")


def test_the_spec_check_asserts_formats_and_names_a_property_example() -> None:
    pytest.importorskip("openapi_schema_validator")
    corpus = _corpus_calls_module()
    when = {"type": "string", "format": "date-time", "example": "2018-04-03T02:00:00+0000"}
    spec = {
        "openapi": "3.0.0",
        "paths": {
            "/shows": {
                "get": {
                    "responses": {
                        "200": {
                            "content": {
                                "application/json": {
                                    "schema": {"type": "object", "properties": {"end": when}}
                                }
                            }
                        }
                    }
                }
            }
        },
    }
    row = {"operation": {"method": "GET", "path": "/shows"}}
    # RFC 3339 wants the offset with a colon: the spec's own property example does not fit its format
    fits, why, from_example = corpus.response_conformance(
        spec, row, 200, "application/json", {"end": "2018-04-03T02:00:00+0000"}
    )
    assert (fits, from_example) == (False, True) and why is not None and why.startswith("/end:")
    fits, why, from_example = corpus.response_conformance(
        spec, row, 200, "application/json", {"end": "2018-04-03T02:00:00+00:00"}
    )
    assert (fits, why, from_example) == (True, None, False)
