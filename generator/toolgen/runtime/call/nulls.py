"""Argument objects seen through their input schema: nulls that mean "omit" (`normalise_nulls`)
and members a closed nested object does not declare (`undeclared_member`).

Input: validated-to-be arguments and the tool's input schema (JSON Schema 2020-12, local ``$ref``s
into its ``$defs``). Output: new values; nothing here raises on caller input. Null handling:
`normalise_nulls` removes a null from every *optional* property before validation, recursively
through body objects (null means "omit"); a required property, or a top-level binding with
``"null": "send"``, keeps its null and is sent as JSON ``null``. Inside a union the branch the
value belongs to decides (`_branch_of`), chosen once per subtree and schema in a call (`_Memo`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...pointer import PointerError, ref_to_pointer, resolve_pointer

__all__ = ["normalise_nulls", "resolve_local_ref", "undeclared_member"]


def resolve_local_ref(node: Any, root: Mapping[str, Any]) -> Any:
    """Follow local ``$ref``s (``#/$defs/...``) of `node` inside the schema `root` (at most 32 hops);
    an unresolvable reference gives ``{}`` (accept anything)."""
    hops = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and hops < 32:
        pointer = ref_to_pointer(node["$ref"])
        if pointer is None:
            return {}
        try:
            node = resolve_pointer(root, pointer)
        except PointerError:
            return {}
        hops += 1
    return node


def _object_view(node: Any, root: Mapping[str, Any]) -> tuple[set[str], dict[str, Any], Any]:
    """(required names, property schemas, additionalProperties schema) of an object schema, merging
    ``allOf`` members and the first object-typed ``anyOf``/``oneOf`` branch."""
    node = resolve_local_ref(node, root)
    required: set[str] = set()
    props: dict[str, Any] = {}
    extra: Any = None
    if not isinstance(node, dict):
        return required, props, extra
    required.update(r for r in node.get("required", []) if isinstance(r, str))
    if isinstance(node.get("properties"), dict):
        props.update(node["properties"])
    if "additionalProperties" in node:
        extra = node["additionalProperties"]
    for member in node.get("allOf", []) or []:
        r, p, e = _object_view(member, root)
        required |= r
        for k, v in p.items():
            props.setdefault(k, v)
        extra = extra if extra is not None else e
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, []) or []:
            b = resolve_local_ref(branch, root)
            if isinstance(b, dict) and (b.get("type") == "object" or "properties" in b):
                r, p, e = _object_view(b, root)
                required |= r
                for k, v in p.items():
                    props.setdefault(k, v)
                break
    return required, props, extra


def _items_schema(node: Any, root: Mapping[str, Any]) -> Any:
    node = resolve_local_ref(node, root)
    if not isinstance(node, dict):
        return None
    if "items" in node:
        return node["items"]
    for key in ("anyOf", "oneOf"):
        for branch in node.get(key, []) or []:
            b = resolve_local_ref(branch, root)
            if isinstance(b, dict) and (b.get("type") == "array" or "items" in b):
                return b.get("items")
    return None


class _Memo:
    """What one `normalise_nulls` call has worked out, keyed by object identity: the stripped form
    of a value under a schema, whether a branch accepts a value, a branch's compiled validator. A
    union's branch choice strips the value under every branch, and each of those strips chooses
    again below; without it a recursive two-branch union costs 3^depth (12 levels of nulls: 33 s).
    Every keyed object is kept alive here, so an id is never reused within the call."""

    def __init__(self) -> None:
        self.stripped: dict[tuple[int, int, int], Any] = {}
        self.accepts: dict[tuple[int, int], bool] = {}
        self.validators: dict[int, Any] = {}
        self.alive: list[Any] = []


def _strip(value: Any, schema: Any, root: Mapping[str, Any], depth: int, memo: _Memo) -> Any:
    if depth > 64 or not isinstance(value, (dict, list)):
        return value
    key = (id(value), id(schema), depth)
    if key in memo.stripped:
        return memo.stripped[key]
    out: Any
    if isinstance(value, dict):
        required, props, extra = _object_view(_branch_of(schema, value, root, depth, memo), root)
        out = {}
        for name, item in value.items():
            if item is None and name not in required:
                continue
            child = props.get(name, extra if isinstance(extra, dict) else None)
            out[name] = _strip(item, child, root, depth + 1, memo)
    else:
        items = _items_schema(schema, root)
        out = [_strip(v, items, root, depth + 1, memo) for v in value]
    memo.alive.append((value, schema, out))
    memo.stripped[key] = out
    return out


def _branch_of(schema: Any, value: dict[str, Any], root: Mapping[str, Any], depth: int, memo: _Memo) -> Any:
    """`schema` with its ``anyOf``/``oneOf`` replaced by the one object branch `value` belongs to,
    as the JSON Schema validator judges it, so nulls are dropped by that branch's ``required``
    (never by another branch's, which would send another value: ``{"b": null}`` of a branch
    requiring ``b`` is not the ``{}`` of a branch without it). The branch: the first that accepts
    `value` as sent and keeps all of it, else one that accepts it as sent, else one that accepts
    `value` with that branch's optional nulls dropped — among equals the one keeping the most
    members, then the first. `schema` unchanged when it has no
    union, `value` holds no null member, or no branch fits (validation then reports the value)."""
    node = resolve_local_ref(schema, root)
    if not isinstance(node, dict) or not any(v is None for v in value.values()):
        return schema
    branches = [
        b
        for key in ("anyOf", "oneOf")
        for b in (node.get(key) or [])
        if isinstance(resolve_local_ref(b, root), dict)
    ]
    if not branches:
        return schema
    # no reference left in the view either: what `_strip` gets at this level has no union to choose in
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf", "allOf", "$ref")}
    candidates: list[tuple[int, int, Any]] = []
    for branch in branches:
        try:
            sent_fits = _accepts(branch, value, root, memo)
            view = {**rest, "allOf": [*(node.get("allOf") or []), branch]}
            stripped = _strip(value, view, root, depth, memo)
            strip_fits = sent_fits or _accepts(branch, stripped, root, memo)
        except ValueError:  # a branch the validator cannot compile: leave the choice to validation
            return schema
        rank = 0 if sent_fits and stripped == value else 1 if sent_fits else 2 if strip_fits else 3
        candidates.append((rank, -len(stripped), branch))
    rank, _, chosen = min(candidates, key=lambda c: c[:2])
    if rank == 3:
        return schema
    return {**rest, "allOf": [*(node.get("allOf") or []), chosen]}


def _accepts(branch: Any, value: Any, root: Mapping[str, Any], memo: _Memo) -> bool:
    """Whether the JSON Schema 2020-12 validator accepts `value` under `branch` (local ``$ref``s
    resolve against `root`'s ``$defs``/``definitions``). Raises `ValueError` for a schema it
    cannot compile."""
    import jsonschema_rs

    key = (id(branch), id(value))
    if key in memo.accepts:
        return memo.accepts[key]
    validator = memo.validators.get(id(branch))
    if validator is None:
        schema: dict[str, Any] = {
            k: root[k] for k in ("$defs", "definitions") if isinstance(root.get(k), dict)
        }
        schema["allOf"] = [branch]
        validator = memo.validators[id(branch)] = jsonschema_rs.Draft202012Validator(
            schema, validate_formats=True
        )
    accepted = memo.accepts[key] = bool(validator.is_valid(value))
    memo.alive.append((branch, value))
    return accepted


def _branches_view(node: Any, root: Mapping[str, Any]) -> tuple[set[str], bool]:
    """(declared property names, closed?) of an object schema, over ``allOf`` members and *every*
    object branch of ``anyOf``/``oneOf``. Closed: some properties are declared and nothing says
    more are allowed (no ``additionalProperties``/``patternProperties`` anywhere in the view)."""
    node = resolve_local_ref(node, root)
    if not isinstance(node, dict):
        return set(), False
    names: set[str] = set(node.get("properties") or {}) if isinstance(node.get("properties"), dict) else set()
    closed = bool(names) and "additionalProperties" not in node and "patternProperties" not in node
    if node.get("additionalProperties") is False:
        closed = True
    open_member = False
    for member in node.get("allOf", []) or []:
        n, c = _branches_view(member, root)
        names |= n
        open_member = open_member or (bool(n) and not c)
    object_branches = [
        b
        for key in ("anyOf", "oneOf")
        for b in (node.get(key) or [])
        if isinstance(resolve_local_ref(b, root), dict)
        and (resolve_local_ref(b, root).get("type") == "object" or "properties" in resolve_local_ref(b, root))
    ]
    if object_branches:
        views = [_branches_view(b, root) for b in object_branches]
        for n, _ in views:
            names |= n
        closed = (closed or not node.get("properties")) and all(c for _, c in views)
    return names, closed and not open_member


def undeclared_member(
    args: Mapping[str, Any], input_schema: Mapping[str, Any]
) -> tuple[str | int, ...] | None:
    """The path of the first member of a *nested* argument object that its schema does not declare,
    where the schema declares properties and allows no others by omission (an OpenAPI object with
    ``properties`` and no ``additionalProperties`` is open in JSON Schema, but a tool's input is
    closed: the strict dialect views say so, and an undeclared member would reach the API
    unreviewed, e.g. Stripe's ``created[evil][deep]=1``). ``None`` when every member is declared."""
    _, props, extra = _object_view(input_schema, input_schema)
    for key, value in args.items():
        child = props.get(key, extra if isinstance(extra, dict) else None)
        found = _first_undeclared(value, child, input_schema, (key,))
        if found is not None:
            return found
    return None


def _first_undeclared(
    value: Any, schema: Any, root: Mapping[str, Any], path: tuple[str | int, ...]
) -> tuple[str | int, ...] | None:
    if len(path) > 64 or schema is None:
        return None
    if isinstance(value, dict):
        names, closed = _branches_view(schema, root)
        _, props, extra = _object_view(schema, root)
        for key, item in value.items():
            if closed and key not in names:
                return (*path, key)
            found = _first_undeclared(
                item, props.get(key, extra if isinstance(extra, dict) else None), root, (*path, key)
            )
            if found is not None:
                return found
    elif isinstance(value, list):
        items = _items_schema(schema, root)
        for index, item in enumerate(value):
            found = _first_undeclared(item, items, root, (*path, index))
            if found is not None:
                return found
    return None


def normalise_nulls(
    args: Mapping[str, Any], input_schema: Mapping[str, Any], send_null: Iterable[str] = ()
) -> dict[str, Any]:
    """Remove nulls that mean "omit" from the arguments (a new dict; the input is not modified).

    A null member is dropped when its property is not listed in ``required`` of the (resolved)
    object schema it belongs to, at every depth. Top-level arguments named in `send_null` (bindings
    with ``"null": "send"``) keep their null. Required nulls are kept for the validator to judge
    (a required nullable property accepts it; a required non-nullable one is rejected).
    """
    keep = set(send_null)
    required, props, extra = _object_view(input_schema, input_schema)
    memo = _Memo()
    out: dict[str, Any] = {}
    for key, item in args.items():
        if item is None and key not in required and key not in keep:
            continue
        child = props.get(key, extra if isinstance(extra, dict) else None)
        out[key] = _strip(item, child, input_schema, 1, memo)
    return out
