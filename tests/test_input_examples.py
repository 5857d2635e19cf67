"""Input examples in anthropic.json (``input_examples``): taken from the spec's examples (each request
body example with the parameters' examples), or from the intent map's ``input_examples``; only on read
and preview tools; each valid under the tool's input schema, never naming a secret-like member or an
argument the model does not see, at most three; a spec example that breaks the schema is a located
warning, an intent map's a located error; ``dialects.anthropic.input_examples: false`` sends none.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.builder.build import ApiBuild, build_api
from toolgen.compile.lower.input_examples import MAX_INPUT_EXAMPLES, example_problem, secret_name
from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import DialectOptions, check_catalog

NOTE_SCHEMA = {
    "type": "object",
    "required": ["text"],
    "additionalProperties": False,
    "properties": {
        "text": {"type": "string", "maxLength": 50},
        "visibility": {"type": "string", "enum": ["public", "internal"]},
        "password": {"type": "string"},
    },
}


def _spec(body_examples: dict[str, Any] | None = None, param_example: Any = "T-1") -> dict[str, Any]:
    """One GET and one POST on /notes/{id}: `id` has the example `param_example` (None: none), the POST's
    body the named `body_examples`."""
    param: dict[str, Any] = {
        "name": "id",
        "in": "path",
        "required": True,
        "schema": {"type": "string", "pattern": "^T-[0-9]+$"},
    }
    if param_example is not None:
        param["example"] = param_example
    media: dict[str, Any] = {"schema": NOTE_SCHEMA}
    if body_examples is not None:
        media["examples"] = {name: {"value": value} for name, value in body_examples.items()}
    ok = {"200": {"description": "ok", "content": {"application/json": {"schema": {"type": "object"}}}}}
    return {
        "openapi": "3.0.3",
        "info": {"title": "notes", "version": "1"},
        "paths": {
            "/notes/{id}": {
                "parameters": [param],
                "get": {"operationId": "getNote", "responses": ok},
                "post": {
                    "operationId": "addNote",
                    "requestBody": {"required": True, "content": {"application/json": media}},
                    "responses": ok,
                },
            }
        },
    }


INTENTS = """\
tools:
  get_note: {operation: getNote, effect: read, permission: "n:read"}
  add_note:
    operation: addNote
    effect: write
    permission: "n:write"
    approval: required
    idempotency: {key: action_id, send_as: none}
"""


def _build(
    tmp: Path, spec: dict[str, Any], intents: str = INTENTS, options: DialectOptions | None = None
) -> ApiBuild:
    (tmp / "spec.json").write_text(json.dumps(spec, indent=1), encoding="utf-8")
    intent = tmp / "notes.yaml"
    intent.write_text(f"toolgen: 1\nspec: spec.json\napi: {{name: notes}}\n{intents}", encoding="utf-8")
    return build_api(
        intent, tmp / "out", emit=("anthropic", "openai", "mcp", "policy"), base=tmp, dialect_options=options
    )


def _entry(built: ApiBuild, name: str) -> dict[str, Any]:
    return next(e for e in built.catalogs["anthropic"] if e["name"] == name)


def _codes(built: ApiBuild, code: str) -> list[Any]:
    return [d for d in built.diagnostics if d.code == code]


def test_spec_examples_become_argument_objects_on_read_and_preview_tools_only(tmp_path: Path) -> None:
    built = _build(
        tmp_path,
        _spec({"short": {"text": "Called back."}, "public": {"text": "Fixed.", "visibility": "public"}}),
    )
    preview = _entry(built, "preview_add_note")
    assert preview["input_examples"] == [
        {"id": "T-1", "text": "Called back."},
        {"id": "T-1", "text": "Fixed.", "visibility": "public"},
    ]
    assert _entry(built, "get_note")["input_examples"] == [{"id": "T-1"}]
    assert "input_examples" not in _entry(built, "record_add_note")  # it takes a preview_id no example knows
    for entry in built.catalogs["anthropic"]:
        for example in entry.get("input_examples", []):
            jsonschema.Draft202012Validator(entry["input_schema"]).validate(example)
    assert check_catalog("anthropic", built.catalogs["anthropic"]) == []
    assert _codes(built, "spec-example-invalid") == []


def test_the_catalog_with_examples_passes_the_sdk_type(tmp_path: Path) -> None:
    pytest.importorskip("anthropic")
    from anthropic.types import ToolParam
    from pydantic import TypeAdapter

    built = _build(tmp_path, _spec({"one": {"text": "Called back."}}))
    entry = _entry(built, "preview_add_note")
    assert list(TypeAdapter(ToolParam).validate_python(entry)["input_examples"]) == entry["input_examples"]


def test_a_spec_example_that_breaks_the_schema_is_a_located_warning_and_is_left_out(tmp_path: Path) -> None:
    built = _build(tmp_path, _spec({"bad": {"text": "x" * 60}, "good": {"text": "ok"}}))
    assert _entry(built, "preview_add_note")["input_examples"] == [{"id": "T-1", "text": "ok"}]
    [warning] = _codes(built, "spec-example-invalid")
    assert warning.severity == "warning" and warning.location is not None
    assert warning.location.file.endswith("spec.json") and warning.location.line is not None
    assert "/text" in warning.message and "examples/bad/value" in warning.message


def test_an_example_missing_a_required_argument_is_left_out_silently(tmp_path: Path) -> None:
    built = _build(tmp_path, _spec({"one": {"text": "ok"}}, param_example=None))  # no example of `id`
    assert "input_examples" not in _entry(built, "preview_add_note")
    assert "input_examples" not in _entry(built, "get_note")
    assert _codes(built, "spec-example-invalid") == []


def test_a_secret_like_member_is_never_shown(tmp_path: Path) -> None:
    built = _build(tmp_path, _spec({"leak": {"text": "hi", "password": "hunter2"}}))
    assert "input_examples" not in _entry(built, "preview_add_note")
    [warning] = _codes(built, "spec-example-invalid")
    assert "secret" in warning.message and "hunter2" not in warning.message
    assert "hunter2" not in json.dumps(built.catalogs["anthropic"])


def test_hidden_members_of_a_spec_example_are_left_out(tmp_path: Path) -> None:
    intents = INTENTS + "    hide: [visibility]\n"
    built = _build(tmp_path, _spec({"public": {"text": "Fixed.", "visibility": "public"}}), intents)
    assert _entry(built, "preview_add_note")["input_examples"] == [{"id": "T-1", "text": "Fixed."}]


def test_the_intent_maps_examples_replace_the_specs(tmp_path: Path) -> None:
    intents = INTENTS + "    input_examples:\n      - {id: T-7, text: Mine., visibility: internal}\n"
    built = _build(tmp_path, _spec({"one": {"text": "spec"}}), intents)
    assert _entry(built, "preview_add_note")["input_examples"] == [
        {"id": "T-7", "text": "Mine.", "visibility": "internal"}
    ]
    none = _build(tmp_path, _spec({"one": {"text": "spec"}}), INTENTS + "    input_examples: []\n")
    assert "input_examples" not in _entry(none, "preview_add_note")


@pytest.mark.parametrize(
    ("example", "says"),
    [
        ("{id: T-7, text: 5}", "/text"),  # wrong type
        ("{id: T-7}", '"text" is a required property'),  # incomplete: the author gives whole calls
        (
            "{id: T-7, text: x, visibility: internal, action_id: a}",
            "Additional properties",
        ),  # not an argument
        ("{id: T-7, text: x, password: p}", "secret"),
    ],
)
def test_an_intent_maps_example_that_fails_is_a_located_error(
    tmp_path: Path, example: str, says: str
) -> None:
    intents = INTENTS + f"    input_examples:\n      - {example}\n"
    with pytest.raises(DiagnosticError) as caught:
        _build(tmp_path, _spec(), intents)
    [error] = [d for d in caught.value.diagnostics if d.code == "input-example-invalid"]
    assert error.severity == "error" and says in error.message
    assert error.location is not None and error.location.file.endswith("notes.yaml")
    assert error.location.line == 13 and error.location.pointer == "/tools/add_note/input_examples/0"


def test_a_hidden_argument_in_an_intent_maps_example_is_refused(tmp_path: Path) -> None:
    intents = (
        INTENTS
        + "    hide: [visibility]\n    input_examples:\n      - {id: T-7, text: x, visibility: public}\n"
    )
    with pytest.raises(DiagnosticError) as caught:
        _build(tmp_path, _spec(), intents)
    assert [d.code for d in caught.value.diagnostics if d.severity == "error"] == ["input-example-invalid"]


def test_the_project_option_turns_them_off(tmp_path: Path) -> None:
    built = _build(
        tmp_path, _spec({"one": {"text": "ok"}}), options=DialectOptions(anthropic_input_examples=False)
    )
    assert all("input_examples" not in e for e in built.catalogs["anthropic"])


def test_at_most_three_spec_examples_are_kept(tmp_path: Path) -> None:
    built = _build(tmp_path, _spec({f"e{i}": {"text": f"note {i}"} for i in range(6)}))
    assert len(_entry(built, "preview_add_note")["input_examples"]) == MAX_INPUT_EXAMPLES


def test_the_conformance_check_refuses_an_example_the_schema_refuses() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": False,
    }
    tool = {"name": "t", "description": "d", "input_schema": schema}
    assert check_catalog("anthropic", [{**tool, "input_examples": [{"a": "x"}]}]) == []
    for bad in ([{"a": 1}], [{"b": "x"}], [{"a": "x", "api_key": "x"}], [], [{"a": "x"}] * 4, {"a": "x"}):
        found = check_catalog("anthropic", [{**tool, "input_examples": bad}])
        assert [v.rule for v in found] and {v.rule for v in found} == {"B.1-input-examples"}, bad


MEMBER = st.sampled_from(
    [
        "text",
        "visibility",
        "password",
        "api_key",
        "note",
        "id",
        "pin",
        "userPwd",
        "otp_code",
        "access_key",
        "jwt",
        "bearer",
        "pinned",
        "shipping",
    ]
)
VALUE = st.one_of(
    st.text(max_size=8), st.integers(), st.sampled_from(["public", "internal", "T-3"]), st.none()
)


@settings(
    max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bodies=st.lists(st.dictionaries(MEMBER, VALUE, max_size=4), max_size=5))
def test_every_example_shown_fits_the_schema_and_names_no_secret(
    tmp_path: Path, bodies: list[dict[str, Any]]
) -> None:
    """Whatever the spec's examples hold, what anthropic.json shows is valid under the tool's input
    schema, at most three, and holds no secret-like member; the rest are warned about or incomplete."""
    built = _build(tmp_path, _spec({f"e{i}": b for i, b in enumerate(bodies)}))
    for entry in built.catalogs["anthropic"]:
        shown = entry.get("input_examples", [])
        assert len(shown) <= MAX_INPUT_EXAMPLES
        for example in shown:
            assert example_problem(example, entry["input_schema"], complete_only=False) is None
            assert not any(secret_name(k) for k in example)
    assert check_catalog("anthropic", built.catalogs["anthropic"]) == []


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("password", True),
        ("api_key", True),
        ("pwd", True),
        ("userPwd", True),
        ("user_pwd", True),
        ("access_key", True),
        ("accessKey", True),
        ("AWSAccessKeyId", True),
        ("bearer", True),
        ("jwt", True),
        ("JWT", True),
        ("otp", True),
        ("otpCode", True),
        ("pin", True),
        ("pin_code", True),
        ("PIN", True),
        ("mfa_code", True),
        ("cardCvv", True),
        ("passcode", True),
        ("pinned", False),
        ("shipping", False),
        ("spinner", False),
        ("topping", False),
        ("option", False),
        ("mfactor", False),
        ("text", False),
        ("visibility", False),
        ("opinion", False),
    ],
)
def test_secret_names_are_told_by_their_words(name: str, secret: bool) -> None:
    """A secret's short names (``pwd``, ``pin``, ``otp``, ``jwt``) count as whole words of a member's
    name only, so ``pinned`` and ``shipping`` still get examples; the longer ones count anywhere."""
    assert secret_name(name) is secret


def test_a_pin_member_is_never_shown(tmp_path: Path) -> None:
    """A body example holding ``pin`` is left out; one holding ``pinned`` is shown."""
    spec = _spec({"e0": {"text": "hi", "pin": "0000"}, "e1": {"text": "ok", "pinned": True}})
    properties = {"text": {"type": "string"}, "pin": {"type": "string"}, "pinned": {"type": "boolean"}}
    schema = {"type": "object", "required": ["text"], "additionalProperties": False, "properties": properties}
    spec["paths"]["/notes/{id}"]["post"]["requestBody"]["content"]["application/json"]["schema"] = schema
    built = _build(tmp_path, spec)
    shown = [ex for entry in built.catalogs["anthropic"] for ex in entry.get("input_examples", [])]
    assert not any("pin" in ex for ex in shown)
    assert any(ex.get("pinned") is True for ex in shown)
