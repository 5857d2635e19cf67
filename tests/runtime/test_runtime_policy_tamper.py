"""A tampered ``policy.json`` is refused at load, never read with a default that allows more
(docs/generated-format.md, "policy.json"; docs/runtime.md, "Loading").

The runtime reads the policy table with the build's typed reader (`toolgen.policy.format.from_json`).
Over every member of a row that grants or withholds an effect, a typo of its value, the member
removed, an unknown member beside it and another format version are each a `PolicyFormatError` from
`Registry.from_dir` naming the file and the member's JSON pointer; `toolgen call` and `toolgen serve`
exit 2 with that message. A property mutates the committed ``generated/*/policy.json`` of the
repository's APIs: a member removed or added (outside the plan's own maps) is refused at load or
reads back to a table equal to the original; a value replaced by one the published schema refuses
(an enum value's typo, another JSON type, a bound crossed) is refused; and whatever the reader
accepts the schema accepts. (A value replaced by another the schema admits, such as another scope
name, is a different policy rather than a malformed one: the review of ``generated/`` catches it, not
the reader.) Every committed ``policy.json`` conforms to the published JSON Schema
(``docs/policy.schema.json``), which is what `toolgen.policy.schema` generates.
"""

from __future__ import annotations

import copy
import json
import shutil
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.cli import main
from toolgen.policy.format import FORMAT_VERSION, PolicyFormatError, from_json
from toolgen.policy.schema import policy_schema, schema_text
from toolgen.runtime import Registry

REPO = Path(__file__).resolve().parents[2]
COMMITTED = sorted((REPO / "generated").glob("*/policy.json"))
SCHEMA_FILE = REPO / "docs" / "policy.schema.json"


def _policy(api: str = "tickets") -> dict[str, Any]:
    value: dict[str, Any] = json.loads((REPO / "generated" / api / "policy.json").read_text(encoding="utf-8"))
    return value


def _index(policy: dict[str, Any], tool: str) -> int:
    return next(i for i, r in enumerate(policy["tools"]) if r["tool"] == tool)


RECORD = "record_ticket_followup"
#: (name, tool (``<api>/<tool>`` outside tickets), path of the member inside the row, a typo of its
#: value: what a hand edit could write)
FIELDS: list[tuple[str, str, tuple[str | int, ...], Any]] = [
    ("approval", RECORD, ("approval",), "Required"),
    ("permission", RECORD, ("permission",), "ticket:write"),
    ("effect", RECORD, ("effect",), "Write"),
    ("mode", RECORD, ("mode",), "Record"),
    ("idempotency", RECORD, ("idempotency",), "action_id"),
    ("idempotency.arg", RECORD, ("idempotency", "arg"), None),
    ("idempotency.in", RECORD, ("idempotency", "in"), "Header"),
    ("idempotency.honoured_by_api", RECORD, ("idempotency", "honoured_by_api"), "false"),
    ("record", RECORD, ("record",), "preview"),
    ("record.arguments", RECORD, ("record", "arguments"), "Preview"),
    ("record.preview_ttl_s", RECORD, ("record", "preview_ttl_s"), 0),
    ("request.fixed", "list_tickets", ("request", "fixed"), {}),
    ("request.bindings", RECORD, ("request", "bindings"), None),
    ("request.max_body_bytes", RECORD, ("request", "max_body_bytes"), 0),
    ("auth", RECORD, ("auth",), {}),
    ("auth.in", RECORD, ("auth", 0, "in"), "Header"),
    ("output.fields", "get_ticket", ("output", "fields"), "id,status"),
    ("output.redact", "get_ticket", ("output", "redact"), "requester.phone"),
    ("output.max_bytes", "get_ticket", ("output", "max_bytes"), -1),
    ("output.schema_mode", "get_ticket", ("output", "schema_mode"), "Strict"),
    ("narrowed.hidden", "github/get_issue", ("narrowed", 0, "hidden"), "yes"),
    ("narrowed.schema", "github/get_issue", ("narrowed", 0, "schema"), "string"),
    ("request.fixed.in", "github/get_issue", ("request", "fixed", 0, "in"), "Header"),
    ("timeout_ms", "get_ticket_history", ("timeout_ms",), 0),
    ("retry.max_attempts", "get_ticket", ("retry", "max_attempts"), 0),
    ("retry.on", "get_ticket", ("retry", "on"), ["Timeout"]),
    ("retry.deadline_ms", "get_ticket", ("retry", "deadline_ms"), "15s"),
    ("pagination.max_page_size", "list_tickets", ("pagination", "max_page_size"), "50"),
    ("loading", "get_ticket", ("loading",), "Deferred"),
    (
        "composite.step.approval",
        "record_escalate_ticket",
        ("composite", "steps", 1, "row", "approval"),
        "none",
    ),
    (
        "composite.step.idempotency",
        "record_escalate_ticket",
        ("composite", "steps", 1, "row", "idempotency"),
        "",
    ),
    (
        "composite.step.permission",
        "record_escalate_ticket",
        ("composite", "steps", 1, "row", "permission"),
        None,
    ),
]
IDS = [f[0] for f in FIELDS]


def _parent(row: dict[str, Any], path: tuple[str | int, ...]) -> Any:
    node: Any = row
    for key in path[:-1]:
        node = node[key]
    return node


def _pointer(index: int, path: tuple[str | int, ...]) -> str:
    return f"/tools/{index}/" + "/".join(str(p) for p in path)


def _target(tool: str) -> tuple[str, str]:
    """(api, tool) of a `FIELDS` tool."""
    api, _, name = tool.rpartition("/")
    return api or "tickets", name


def _refused(tmp_path: Path, policy: dict[str, Any], api: str = "tickets") -> PolicyFormatError:
    """`Registry.from_dir` of the `api` package with `policy` as its policy.json: the refusal."""
    folder = tmp_path / api
    shutil.copytree(REPO / "generated" / api, folder, dirs_exist_ok=True)
    (folder / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_dir(folder)
    assert str(folder / "policy.json") in str(caught.value)
    return caught.value


@pytest.mark.parametrize(("name", "tool", "path", "typo"), FIELDS, ids=IDS)
def test_a_typo_of_a_field_is_refused_at_load(
    tmp_path: Path, name: str, tool: str, path: tuple[str | int, ...], typo: Any
) -> None:
    api, tool = _target(tool)
    policy = _policy(api)
    index = _index(policy, tool)
    parent = _parent(policy["tools"][index], path)
    assert parent[path[-1]] != typo, name
    parent[path[-1]] = typo
    error = _refused(tmp_path, policy, api)
    assert error.pointer.startswith(_pointer(index, path)), (name, error)


@pytest.mark.parametrize(("name", "tool", "path", "typo"), FIELDS, ids=IDS)
def test_a_missing_field_is_refused_at_load(
    tmp_path: Path, name: str, tool: str, path: tuple[str | int, ...], typo: Any
) -> None:
    api, tool = _target(tool)
    policy = _policy(api)
    index = _index(policy, tool)
    parent = _parent(policy["tools"][index], path)
    if isinstance(parent, list):  # an item of an array: remove the whole array's member instead
        path = path[:-1]
        parent = _parent(policy["tools"][index], path)
    del parent[path[-1]]
    error = _refused(tmp_path, policy, api)
    assert error.pointer == _pointer(index, path) and "missing" in error.message, (name, error)


@pytest.mark.parametrize(("name", "tool", "path", "typo"), FIELDS, ids=IDS)
def test_an_unknown_member_beside_a_field_is_refused_at_load(
    tmp_path: Path, name: str, tool: str, path: tuple[str | int, ...], typo: Any
) -> None:
    api, tool = _target(tool)
    policy = _policy(api)
    index = _index(policy, tool)
    parent = _parent(policy["tools"][index], path)
    if isinstance(parent, list):
        path = path[:-1]
        parent = _parent(policy["tools"][index], path)
    unknown = f"{path[-1]}_override"
    parent[unknown] = parent[path[-1]]
    error = _refused(tmp_path, policy, api)
    assert error.pointer == _pointer(index, (*path[:-1], unknown)) and "unknown member" in error.message, (
        name,
        error,
    )


@pytest.mark.parametrize("version", [FORMAT_VERSION - 1, FORMAT_VERSION + 1, str(FORMAT_VERSION), None, True])
def test_another_format_version_is_refused_at_load(tmp_path: Path, version: Any) -> None:
    policy = _policy()
    policy["format"] = version
    error = _refused(tmp_path, policy)
    assert error.pointer == "/format" and "toolgen build" in error.hint


def test_the_unknown_approval_value_of_the_report_is_refused_not_read_as_never(tmp_path: Path) -> None:
    """The reported case: ``"approval": "Required"`` once made ``record_*`` write without approval."""
    policy = _policy()
    index = _index(policy, RECORD)
    policy["tools"][index]["approval"] = "Required"
    error = _refused(tmp_path, policy)
    assert error.pointer == f"/tools/{index}/approval"
    assert "'Required' is not one of never, required" in error.message


def test_a_package_module_with_a_tampered_policy_is_refused_naming_its_file(tmp_path: Path) -> None:
    policy = _policy()
    index = _index(policy, RECORD)
    policy["tools"][index]["idempotency"]["in"] = "Header"
    module = types.ModuleType("tickets")
    module.__file__ = str(tmp_path / "tickets" / "__init__.py")
    module.__dict__.update(
        POLICY=policy, MCP_TOOLS=json.loads((REPO / "generated" / "tickets" / "mcp.json").read_bytes())
    )
    with pytest.raises(PolicyFormatError) as caught:
        Registry.from_package(module)
    assert caught.value.file == str(tmp_path / "tickets" / "policy.json")
    assert caught.value.pointer == f"/tools/{index}/idempotency/in"


@pytest.mark.parametrize("command", ["call", "serve"])
def test_call_and_serve_exit_2_naming_the_member(tmp_path: Path, command: str) -> None:
    folder = tmp_path / "tickets"
    shutil.copytree(REPO / "generated" / "tickets", folder)
    policy = _policy()
    index = _index(policy, RECORD)
    del policy["tools"][index]["approval"]
    (folder / "policy.json").write_text(json.dumps(policy), encoding="utf-8")
    args = (
        ["call", str(folder), RECORD, "--args", "{}", "--scopes", "ticket:write"]
        if command == "call"
        else ["serve", str(folder), "--scopes", "ticket:write"]
    )
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"policy.json#/tools/{index}/approval: required member 'approval' is missing" in result.output


# -- the published schema ---------------------------------------------------------------------------


def test_the_published_schema_is_the_generated_one() -> None:
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text(), (
        "docs/policy.schema.json is stale: run `python -m toolgen.policy.schema > docs/policy.schema.json`"
    )


@pytest.mark.skipif(not COMMITTED, reason="no generated/ in this tree (run `toolgen build`)")
@pytest.mark.parametrize("path", COMMITTED, ids=lambda p: p.parent.name)
def test_every_committed_policy_conforms_to_the_schema(path: Path) -> None:
    validator = jsonschema_rs.Draft202012Validator(policy_schema())
    errors = [
        f"{e.instance_path}: {e.message}"[:200] for e in validator.iter_errors(json.loads(path.read_bytes()))
    ]
    assert errors == []


# -- the property: a mutation is refused, or changes nothing ----------------------------------------

#: members whose value is free JSON the reader keeps as it is (a schema, a fixed value, a literal):
#: a mutation inside them is a legitimate other value, not a tampering of the format
FREE = frozenset(
    {"input_schema", "output_schema", "schema", "value", "$literal", "dialect_rewrites", "fixed"}
)
#: values that no member of the format may take where another type is expected
ODD: list[Any] = [None, True, 0, -1, "", "Required", [], {}, 1.5]


def _members(node: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every path to a member or item of the format (not inside `FREE` values)."""
    out: list[tuple[str | int, ...]] = []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        out.append((*path, key))
        if key not in FREE:
            out.extend(_members(child, (*path, key)))
    return out


def _at(doc: Any, path: tuple[str | int, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


Mutation = Callable[[Any, tuple[str | int, ...]], bool]


def _delete(doc: Any, path: tuple[str | int, ...]) -> bool:
    parent = _at(doc, path[:-1])
    if not isinstance(parent, dict):
        return False
    del parent[path[-1]]
    return True


def _add(doc: Any, path: tuple[str | int, ...]) -> bool:
    parent = _at(doc, path[:-1])
    if not isinstance(parent, dict):
        return False
    parent[f"{path[-1]}_"] = parent[path[-1]]
    return True


def _typo(doc: Any, path: tuple[str | int, ...]) -> bool:
    parent, key = _at(doc, path[:-1]), path[-1]
    value = parent[key]
    if not isinstance(value, str) or not value or value.swapcase() == value:
        return False
    parent[key] = value.swapcase()
    return True


def _odd(index: int) -> Mutation:
    def replace(doc: Any, path: tuple[str | int, ...]) -> bool:
        parent, key = _at(doc, path[:-1]), path[-1]
        if parent[key] == ODD[index] and type(parent[key]) is type(ODD[index]):
            return False
        parent[key] = copy.deepcopy(ODD[index])
        return True

    return replace


MUTATIONS: list[Mutation] = [_delete, _add, _typo, *(_odd(i) for i in range(len(ODD)))]
ORIGINALS = {p.parent.name: json.loads(p.read_bytes()) for p in COMMITTED}
TABLES = {api: from_json(value) for api, value in ORIGINALS.items()}
PATHS = {api: _members(value) for api, value in ORIGINALS.items()}
VALIDATOR = jsonschema_rs.Draft202012Validator(policy_schema())


def _in_a_map(path: tuple[str | int, ...]) -> bool:
    """Whether `path` names an entry of a map whose keys are the plan's own (a step's ``args``, a
    composite's ``output``): removing or adding one is another plan, not a tampering of the format."""
    return len(path) >= 2 and (
        path[-2] == "args" or (path[-2] == "output" and len(path) >= 3 and path[-3] == "composite")
    )


@pytest.mark.skipif(not COMMITTED, reason="no generated/ in this tree (run `toolgen build`)")
@settings(max_examples=examples(600), deadline=None)
@given(api=st.sampled_from(sorted(ORIGINALS) or ["none"]), data=st.data())
def test_a_mutated_policy_is_refused_or_reads_as_the_original(api: str, data: st.DataObject) -> None:
    """A member removed or added is refused (or, where the reader ignores nothing, changes nothing);
    a value replaced by one the schema refuses (an enum's typo, another JSON type, a bound crossed)
    is refused; whatever the reader accepts, the schema accepts."""
    doc = copy.deepcopy(ORIGINALS[api])
    path = data.draw(st.sampled_from(PATHS[api]), label="path")
    mutation = data.draw(st.sampled_from(MUTATIONS), label="mutation")
    structural = mutation in (_delete, _add)
    if (structural and _in_a_map(path)) or not mutation(doc, path):
        return
    try:
        read = from_json(doc, f"generated/{api}/policy.json")
    except PolicyFormatError as error:
        assert error.file == f"generated/{api}/policy.json" and error.hint
        return
    assert VALIDATOR.is_valid(doc), (path, mutation.__name__)  # the reader is never looser than the schema
    if structural:
        assert read == TABLES[api], (path, mutation.__name__)
