"""A contract suite derived from any generated package: the runtime's promises, checked per tool.

`derive_cases(registry)` reads the policy table (typed, `toolgen.policy.format.from_json`) and the
MCP catalog and produces, for every tool
where it applies:

- ``missing_required``: drop a required argument → ``invalid_arguments`` pointing at it, nothing sent;
- ``wrong_type``: give an argument a value of another JSON type → ``invalid_arguments``, nothing sent;
- ``no_scope``: valid arguments, an actor without the row's scopes → ``permission_denied``, nothing sent;
- ``no_approval``: a record tool with ``approval: required`` called without one → ``approval_required``;
- ``replay``: preview → approve → record twice with one key → one request on the wire, second replayed;
- ``conflict``: the same key with other arguments → ``idempotency_conflict``, no second request.

Composite tools (rows with a ``composite`` plan and no operation, docs/composites.md) get no cases
here: each of their steps runs under a step row the runtime enforces like a tool's, and their cases
(per step) belong with the runtime that executes plans.

A record tool that executes a stored preview (policy ``record.arguments: preview``) takes only the
``preview_id`` and the key: its ``no_approval``, ``replay`` and ``conflict`` cases synthesise the
arguments of its preview tool, preview them as the recording actor and record that ``preview_id``.

Valid arguments are synthesised from the input schema (enum, const, formats, patterns via a small
regex generator, bounds), with per-argument overrides (`arg_examples`, e.g. an id that exists on the
target server). A case whose arguments cannot be synthesised is reported as skipped, never passed.

`run_case(registry, case, wire_count)` executes a case; `wire_count()` returns how many requests the
target server has received so far (a recording stub or a real test server).
"""

from __future__ import annotations

import copy
import importlib
import re
import sys
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..policy.format import PolicyRow
from ..runtime.call.nulls import resolve_local_ref
from ..runtime.serving.registry import Actor, Approval, Registry

# the stdlib regex parser (re._parser since Python 3.11; sre_parse before)
_sre_parse: Any = importlib.import_module("re._parser" if sys.version_info >= (3, 11) else "sre_parse")


class ContractFailure(AssertionError):
    """A contract case did not hold."""


class CannotSynthesise(Exception):
    """No valid arguments could be produced for a tool (the case is skipped)."""


# -------------------------------------------------------------------------------------------------
# value synthesis


_FORMAT_EXAMPLES = {
    "date-time": "2025-01-02T03:04:05Z",
    "date": "2025-01-02",
    "time": "03:04:05Z",
    "email": "someone@example.com",
    "idn-email": "someone@example.com",
    "uri": "https://example.com/x",
    "url": "https://example.com/x",
    "uri-reference": "https://example.com/x",
    "iri": "https://example.com/x",
    "uuid": "123e4567-e89b-42d3-a456-426614174000",
    "hostname": "example.com",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
    "duration": "P1D",
}


def string_for_pattern(pattern: str) -> str:
    """A string matching the regular expression `pattern` (best effort: literals, classes,
    categories, repeats at their minimum (at least once for ``+``), the first branch of an
    alternation; anchors are ignored)."""
    parsed = _sre_parse.parse(pattern)
    return _emit(list(parsed))


def _emit(items: list[Any]) -> str:
    out: list[str] = []
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            out.append(chr(av))
        elif name == "NOT_LITERAL":
            out.append("a" if chr(av) != "a" else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_from_class(av))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            lo, hi, sub = av
            count = max(lo, 1) if hi != 0 else 0
            if hi is not None and not isinstance(hi, int):
                count = max(lo, 1)
            out.append(_emit(list(sub)) * count)
        elif name == "SUBPATTERN":
            out.append(_emit(list(av[-1])))
        elif name == "ATOMIC_GROUP":
            out.append(_emit(list(av)))
        elif name == "BRANCH":
            out.append(_emit(list(av[1][0])))
        elif name == "CATEGORY":
            out.append(_from_category(str(av)))
        # AT (anchors), GROUPREF, ASSERT...: contribute nothing
    return "".join(out)


def _from_category(cat: str) -> str:
    if "NOT_DIGIT" in cat:
        return "a"
    if "DIGIT" in cat:
        return "1"
    if "NOT_WORD" in cat:
        return "-"
    if "WORD" in cat:
        return "a"
    if "NOT_SPACE" in cat:
        return "a"
    if "SPACE" in cat:
        return " "
    return "a"


def _from_class(items: list[Any]) -> str:
    negate = any(str(op) == "NEGATE" for op, _ in items)
    if negate:
        excluded: set[str] = set()
        for op, av in items:
            if str(op) == "LITERAL":
                excluded.add(chr(av))
        for candidate in "aZ1_-x":
            if candidate not in excluded:
                return candidate
        return "q"
    for op, av in items:
        name = str(op)
        if name == "LITERAL":
            return chr(av)
        if name == "RANGE":
            return chr(av[0])
        if name == "CATEGORY":
            return _from_category(str(av))
    return "a"


def synthesise(
    schema: Any,
    root: Mapping[str, Any],
    *,
    arg_examples: Mapping[str, Any] | None = None,
    name: str | None = None,
    depth: int = 0,
) -> Any:
    """A value valid for `schema` (best effort; the caller validates). `arg_examples` overrides by
    property name at any depth. In order: the example given for `name`; the schema's own value
    (``const``, the first non-null ``enum`` member, ``default``, the first of ``examples``); the
    first non-null branch of ``anyOf``/``oneOf``; the members of ``allOf`` merged; else a value of
    the schema's type (`_typed_value`). Raises `CannotSynthesise` past 12 levels."""
    if arg_examples and name is not None and name in arg_examples:
        return copy.deepcopy(arg_examples[name])
    if depth > 12:
        raise CannotSynthesise("schema too deep")
    schema = resolve_local_ref(schema, root)
    if not isinstance(schema, dict) or not schema:
        return "x"
    stated = _stated_value(schema)
    if stated is not _NO_VALUE:
        return stated
    for key in ("anyOf", "oneOf"):
        if key in schema:
            branches = [b for b in schema[key] if resolve_local_ref(b, root).get("type") != "null"]
            if branches:
                return synthesise(branches[0], root, arg_examples=arg_examples, name=name, depth=depth + 1)
    if "allOf" in schema:
        merged = _merged_all_of(schema, root)
        return synthesise(merged, root, arg_examples=arg_examples, name=name, depth=depth + 1)
    return _typed_value(schema, root, arg_examples, depth)


#: `_stated_value` of a schema that states none
_NO_VALUE: Any = object()


def _stated_value(schema: dict[str, Any]) -> Any:
    """The value `schema` states (``const``, the first non-null ``enum`` member or None, a non-null
    ``default``, the first of ``examples``), a copy; `_NO_VALUE` when it states none."""
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        values = [v for v in schema["enum"] if v is not None]
        return values[0] if values else None
    if "default" in schema and schema["default"] is not None:
        return copy.deepcopy(schema["default"])
    if "examples" in schema and isinstance(schema["examples"], list) and schema["examples"]:
        return copy.deepcopy(schema["examples"][0])
    return _NO_VALUE


def _merged_all_of(schema: dict[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """One schema for ``allOf`` and its siblings: the members' properties and required lists joined,
    their other keywords the first member's; the siblings' keywords win over the members'."""
    merged: dict[str, Any] = {}
    for member in schema["allOf"]:
        m = resolve_local_ref(member, root)
        if isinstance(m, dict):
            for k, v in m.items():
                if k == "properties":
                    merged.setdefault("properties", {}).update(v)
                elif k == "required":
                    merged.setdefault("required", []).extend(v)
                else:
                    merged.setdefault(k, v)
    rest = {k: v for k, v in schema.items() if k != "allOf"}
    merged.update({k: v for k, v in rest.items() if k not in ("properties", "required")})
    if "properties" in rest:
        merged.setdefault("properties", {}).update(rest["properties"])
    return merged


def _typed_value(
    schema: dict[str, Any], root: Mapping[str, Any], arg_examples: Mapping[str, Any] | None, depth: int
) -> Any:
    """A value of the schema's ``type`` (its first non-null one; an object when it has ``properties``,
    else a string): an object of its required properties, an array of ``minItems`` items, a string
    or number within its bounds, true, null."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if kinds else "null"
    if kind is None:
        kind = "object" if "properties" in schema else "string"
    if kind == "object":
        props = schema.get("properties") or {}
        return {
            req: synthesise(props.get(req, {}), root, arg_examples=arg_examples, name=req, depth=depth + 1)
            for req in schema.get("required") or []
        }
    if kind == "array":
        count = int(schema.get("minItems") or 0)
        return [
            synthesise(schema.get("items", {}), root, arg_examples=arg_examples, depth=depth + 1)
            for _ in range(count)
        ]
    if kind == "string":
        return _string_value(schema)
    if kind in ("integer", "number"):
        return _number_value(schema, kind)
    if kind == "boolean":
        return True
    return None if kind == "null" else "x"


def _string_value(schema: dict[str, Any]) -> str:
    """A string matching the schema's ``pattern``, or an example of its ``format``, else "example";
    padded or cut to its ``minLength``/``maxLength``."""
    if "pattern" in schema:
        value = string_for_pattern(schema["pattern"])
    elif schema.get("format") in _FORMAT_EXAMPLES:
        value = _FORMAT_EXAMPLES[schema["format"]]
    else:
        value = "example"
    lo = int(schema.get("minLength") or 0)
    hi = schema.get("maxLength")
    if len(value) < lo:
        value = value + "x" * (lo - len(value))
    if isinstance(hi, int) and len(value) > hi:
        value = value[:hi]
    return value


def _number_value(schema: dict[str, Any], kind: str) -> float:
    """1, raised to the schema's ``minimum`` (or past its ``exclusiveMinimum``), lowered to its
    ``maximum``, then a multiple of its ``multipleOf``; an int for ``integer``."""
    value_n: float = 1
    minimum = schema.get("minimum")
    if isinstance(minimum, (int, float)) and minimum > value_n:
        value_n = minimum
    if "exclusiveMinimum" in schema and isinstance(schema["exclusiveMinimum"], (int, float)):
        value_n = max(value_n, schema["exclusiveMinimum"] + 1)
    if "maximum" in schema and value_n > schema["maximum"]:
        value_n = schema["maximum"]
    if "multipleOf" in schema:
        m = schema["multipleOf"]
        value_n = m * max(1, round(value_n / m))
    return int(value_n) if kind == "integer" else value_n


def valid_args(
    registry: Registry, tool: str, arg_examples: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Arguments that pass `tool`'s input validation, or raise `CannotSynthesise`."""
    spec = registry.specs[tool]
    schema = spec.input_schema
    try:
        args = synthesise(schema, schema, arg_examples=arg_examples)
    except (CannotSynthesise, RecursionError, ValueError, re.error) as exc:
        raise CannotSynthesise(f"{tool}: {exc}") from None
    if not isinstance(args, dict) or not spec.input_validator.is_valid(args):
        errors = (
            []
            if not isinstance(args, dict)
            else [e.message for e in spec.input_validator.iter_errors(args)][:2]
        )
        raise CannotSynthesise(f"{tool}: synthesised arguments are not valid ({'; '.join(errors)})")
    return args


# -------------------------------------------------------------------------------------------------
# cases


@dataclass
class ContractCase:
    """One derived case: `id` is ``<tool>:<kind>``; `check` runs it (raises `ContractFailure`)."""

    id: str
    tool: str
    kind: str
    check: Callable[[Registry, Callable[[], int]], None] = field(repr=False)


def _expect(cond: bool, message: str) -> None:
    if not cond:
        raise ContractFailure(message)


def _error_code(result: Any) -> str | None:
    return result.error.code if result.error is not None else None


def _wrong_value(schema: Any, root: Mapping[str, Any]) -> Any:
    """A value of a JSON type `schema` does not admit (``_NO_WRONG`` when it admits every type)."""
    schema = resolve_local_ref(schema, root)
    if not isinstance(schema, dict):
        return _NO_WRONG
    kinds = schema.get("type")
    if kinds is None:
        if "enum" in schema:
            return {"not": "in enum"}
        return _NO_WRONG
    kinds = set(kinds if isinstance(kinds, list) else [kinds])
    for candidate, kind in (
        ({"unexpected": "object"}, "object"),
        (12345, "integer"),
        ("not-a-number", "string"),
        ([1, 2], "array"),
        (True, "boolean"),
    ):
        admitted = kind in kinds or (kind == "integer" and "number" in kinds)
        if not admitted:
            return candidate
    return _NO_WRONG


_NO_WRONG = object()


_ROWS: weakref.WeakKeyDictionary[Registry, dict[str, PolicyRow]] = weakref.WeakKeyDictionary()


def _row(reg: Registry, tool: str) -> PolicyRow:
    """The typed policy row of `tool` (`toolgen.policy.format`), from the table the registry loaded
    (and refused, at load, when it was not of the current format)."""
    rows = _ROWS.get(reg)
    if rows is None:
        rows = _ROWS[reg] = reg.table.rows()
    return rows[tool]


def _actor(reg: Registry, tool: str, actor_id: str = "c") -> Actor:
    """An actor holding exactly the scopes `tool` needs."""
    return Actor.of(actor_id, _row(reg, tool).permission)


def derive_cases(registry: Registry, *, arg_examples: Mapping[str, Any] | None = None) -> list[ContractCase]:
    """All contract cases for the tools of `registry` (see the module docstring). Raises
    `toolgen.policy.format.PolicyFormatError` when its policy table is malformed."""
    cases: list[ContractCase] = []
    for tool in (name for name in registry.tool_names() if _row(registry, name).composite is None):
        spec = registry.specs[tool]
        row = _row(registry, tool)
        schema = spec.input_schema
        required = [r for r in schema.get("required", []) if isinstance(r, str)]
        props = schema.get("properties") or {}
        scopes = row.permission
        privileged = Actor.of("contract-privileged", scopes)
        idem = row.idempotency if row.mode == "record" else None

        if required:

            def missing_required(
                reg: Registry, wire: Callable[[], int], *, _tool: str = tool, _req: str = required[0]
            ) -> None:
                args = valid_args(reg, _tool, arg_examples)
                args.pop(_req, None)
                before = wire()
                res = reg.call(_tool, args, actor=_actor(reg, _tool))
                _expect(
                    _error_code(res) == "invalid_arguments",
                    f"expected invalid_arguments, got {res.to_json()}",
                )
                assert res.error is not None
                _expect(
                    res.error.details.get("pointer") == "/" + _req,
                    f"pointer {res.error.details.get('pointer')!r} != /{_req}",
                )
                _expect(res.error.retryable is False, "invalid_arguments must not be retryable")
                _expect(wire() == before, "a request reached the server")

            cases.append(ContractCase(f"{tool}:missing_required", tool, "missing_required", missing_required))

        wrong_target = next(
            (
                (name, _wrong_value(sub, schema))
                for name, sub in props.items()
                if _wrong_value(sub, schema) is not _NO_WRONG
            ),
            None,
        )
        if wrong_target is not None:

            def wrong_type(
                reg: Registry,
                wire: Callable[[], int],
                *,
                _tool: str = tool,
                _target: tuple[str, Any] = wrong_target,
            ) -> None:
                args = valid_args(reg, _tool, arg_examples)
                args[_target[0]] = _target[1]
                before = wire()
                res = reg.call(_tool, args, actor=_actor(reg, _tool))
                _expect(
                    _error_code(res) == "invalid_arguments",
                    f"expected invalid_arguments, got {res.to_json()}",
                )
                assert res.error is not None
                _expect(
                    str(res.error.details.get("pointer", "")).startswith("/" + _target[0]),
                    f"pointer {res.error.details.get('pointer')!r} does not name /{_target[0]}",
                )
                _expect(wire() == before, "a request reached the server")

            cases.append(ContractCase(f"{tool}:wrong_type", tool, "wrong_type", wrong_type))

        if scopes:

            def no_scope(reg: Registry, wire: Callable[[], int], *, _tool: str = tool) -> None:
                args = _full_args(reg, _tool, arg_examples)
                approval = _approval_for(reg, _tool, args)
                before = wire()
                res = reg.call(
                    _tool,
                    _record_args(reg, _tool, args, approval),
                    actor=Actor.of("contract-nobody", []),
                    approval=approval,
                )
                _expect(
                    _error_code(res) == "permission_denied",
                    f"expected permission_denied, got {res.to_json()}",
                )
                _expect(wire() == before, "a request reached the server")

            cases.append(ContractCase(f"{tool}:no_scope", tool, "no_scope", no_scope))

        if row.mode == "record" and row.approval == "required" and row.approval_when is None:
            # (a conditional approval is asked only on some arguments: its tests are the condition's own)
            def no_approval(
                reg: Registry, wire: Callable[[], int], *, _tool: str = tool, _actor: Actor = privileged
            ) -> None:
                args = _full_args(reg, _tool, arg_examples)
                approval = _approval_for(reg, _tool, args)  # a stored preview, never approved
                before = wire()
                res = reg.call(_tool, _record_args(reg, _tool, args, approval), actor=_actor)
                _expect(
                    _error_code(res) == "approval_required",
                    f"expected approval_required, got {res.to_json()}",
                )
                _expect(wire() == before, "a request reached the server")

            cases.append(ContractCase(f"{tool}:no_approval", tool, "no_approval", no_approval))

        if idem and idem.arg in props:
            cases += _idempotency_cases(tool, idem.arg, privileged, arg_examples)
    return cases


def _idempotency_cases(
    tool: str, key_arg: str, privileged: Actor, arg_examples: Mapping[str, Any] | None
) -> list[ContractCase]:
    """The cases of a record `tool` whose idempotency key is the argument `key_arg`: the same key and
    arguments twice is replayed (one request), the same key with another argument is
    ``idempotency_conflict`` (no request)."""

    def replay(
        reg: Registry,
        wire: Callable[[], int],
        *,
        _tool: str = tool,
        _key: str = key_arg,
        _actor: Actor = privileged,
    ) -> None:
        args = _full_args(reg, _tool, arg_examples)
        args[_key] = f"contract-replay-{_tool}"[:64]
        approval = _approval_for(reg, _tool, args)
        before = wire()
        first = reg.call(_tool, _record_args(reg, _tool, args, approval), actor=_actor, approval=approval)
        _expect(first.ok and not first.replayed, f"first call failed: {first.to_json()}")
        _expect(wire() == before + 1, f"expected 1 request, saw {wire() - before}")
        second = reg.call(_tool, _record_args(reg, _tool, args, approval), actor=_actor, approval=approval)
        _expect(second.ok and second.replayed, f"second call was not replayed: {second.to_json()}")
        _expect(second.result == first.result, "replayed result differs")
        _expect(wire() == before + 1, "the replay sent a request")

    replay_case = ContractCase(f"{tool}:replay", tool, "replay", replay)

    def conflict(
        reg: Registry,
        wire: Callable[[], int],
        *,
        _tool: str = tool,
        _key: str = key_arg,
        _actor: Actor = privileged,
    ) -> None:
        args = _full_args(reg, _tool, arg_examples)
        args[_key] = f"contract-conflict-{_tool}"[:64]
        approval = _approval_for(reg, _tool, args)
        first = reg.call(_tool, _record_args(reg, _tool, args, approval), actor=_actor, approval=approval)
        _expect(first.ok, f"first call failed: {first.to_json()}")
        changed = _change_one_argument(reg, _tool, args, _key)
        if changed is None:
            raise CannotSynthesise(f"{_tool}: no other valid value to vary for a conflict")
        before = wire()
        other = _approval_for(reg, _tool, changed)
        res = reg.call(_tool, _record_args(reg, _tool, changed, other), actor=_actor, approval=other)
        _expect(
            _error_code(res) == "idempotency_conflict", f"expected idempotency_conflict, got {res.to_json()}"
        )
        _expect(wire() == before, "the conflicting call sent a request")

    return [replay_case, ContractCase(f"{tool}:conflict", tool, "conflict", conflict)]


def _preview_tool(reg: Registry, tool: str) -> str | None:
    """The preview tool whose stored preview the record `tool` executes, or ``None`` (the record
    takes the full arguments)."""
    row = _row(reg, tool)
    if row.executes_preview and row.pair is not None and row.pair in reg.specs:
        return row.pair
    return None


def _full_args(reg: Registry, tool: str, arg_examples: Mapping[str, Any] | None) -> dict[str, Any]:
    """Valid full arguments of `tool`: its own, or for a record tool executing a stored preview, its
    preview tool's plus the idempotency key."""
    pair = _preview_tool(reg, tool)
    if pair is None:
        return valid_args(reg, tool, arg_examples)
    args = valid_args(reg, pair, arg_examples)
    idem = _row(reg, tool).idempotency
    if idem is not None and idem.arg:
        args[idem.arg] = valid_args(reg, tool, arg_examples).get(idem.arg, "contract-key")
    return args


def _record_args(reg: Registry, tool: str, args: dict[str, Any], approval: Approval | None) -> dict[str, Any]:
    """What `tool` is called with for the full arguments `args`: `args` itself, or for a record
    tool executing a stored preview, the previewed ``preview_id`` and the key."""
    if _preview_tool(reg, tool) is None or approval is None:
        return args
    idem = _row(reg, tool).idempotency
    out: dict[str, Any] = {"preview_id": approval.preview_id}
    if idem is not None and idem.arg in args:
        out[idem.arg] = args[idem.arg]
    return out


def _approval_for(reg: Registry, tool: str, args: dict[str, Any]) -> Approval | None:
    """Preview `args` with the pair of a record `tool` and return an approval of its preview_id
    (``None`` for tools that are not record tools)."""
    row = _row(reg, tool)
    pair = row.pair
    if row.mode != "record" or not pair or pair not in reg.specs:
        return None
    key_arg = row.idempotency.arg if row.idempotency is not None else None
    preview_args = {k: v for k, v in args.items() if k != key_arg}
    preview_actor = _actor(reg, pair, "contract-privileged")
    res = reg.call(pair, preview_args, actor=preview_actor)
    _expect(res.ok, f"{pair} failed on valid arguments: {res.to_json()}")
    assert res.result is not None
    return Approval(str(res.result["preview_id"]), approved_by="contract")


def _change_one_argument(
    reg: Registry, tool: str, args: dict[str, Any], key_arg: str
) -> dict[str, Any] | None:
    """A copy of `args` with one argument changed to another valid value, or ``None``. For a record
    tool executing a stored preview, the arguments of its preview tool are varied."""
    pair = _preview_tool(reg, tool)
    if pair is not None:
        changed = _change_one_argument(reg, pair, {k: v for k, v in args.items() if k != key_arg}, key_arg)
        return None if changed is None else dict(changed, **{k: v for k, v in args.items() if k == key_arg})
    spec = reg.specs[tool]
    props = spec.input_schema.get("properties") or {}
    candidates: list[tuple[str, Any]] = []
    for name, value in args.items():
        if name == key_arg:
            continue
        sub = resolve_local_ref(props.get(name, {}), spec.input_schema)
        if isinstance(sub, dict) and isinstance(sub.get("enum"), list):
            others = [v for v in sub["enum"] if v != value and v is not None]
            if others:
                candidates.append((name, others[0]))
        elif isinstance(value, str):
            candidates.append((name, value + "2"))
            candidates.append(
                (name, value[:-1] + ("2" if not value.endswith("2") else "3") if value else "2")
            )
        elif isinstance(value, bool):
            candidates.append((name, not value))
        elif isinstance(value, (int, float)):
            candidates.append((name, value + 1))
            candidates.append((name, value - 1))
    for name, new in candidates:
        changed = dict(args, **{name: new})
        if spec.input_validator.is_valid(changed):
            return changed
    return None


def run_case(registry: Registry, case: ContractCase, wire_count: Callable[[], int]) -> None:
    """Run one case; raises `ContractFailure` if the runtime broke its contract, `CannotSynthesise`
    if no valid arguments could be produced (report it as skipped)."""
    case.check(registry, wire_count)
