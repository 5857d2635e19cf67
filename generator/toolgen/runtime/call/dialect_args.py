"""Dialect-shaped arguments → canonical arguments, before they are validated.

A dialect's catalog may reshape what strict mode or a provider's schema subset cannot express (see
docs/dialects.md): a typed map is sent as ``[{"key": k, "value": v}, ...]``, a free-form object (or
a subtree below a depth limit) as a JSON-encoded string, an integer enum as its string form, an
argument name a provider refuses under another name. The policy row lists each reshaping as a
*rewrite record* per dialect (``row["dialect_rewrites"][dialect]``); this module undoes them.

Input: plain JSON arguments (`toolgen.runtime.call.arguments.plain_arguments`) and the records. Output:
the canonical arguments (a new value; the input is not changed), or a `ToolError`
``invalid_arguments`` whose ``details.pointer`` names the value *as the model sent it* (e.g.
``/metadata/2/value``). Nothing else is raised.

Records: ``{"path": [steps], "kind": ..., ...}``. Steps are property names (a name starting with one
of ``[{|~`` is written with a leading ``~``), ``[]`` (every array item), ``{}`` (every value of a
map) and ``|i`` (branch i of an ``anyOf``; records below a branch are applied only where the value
has the reshaped form). A record with ``def`` applies inside that recursive ``$defs`` entry; a
``ref`` record at a path says the value there follows the ``$defs`` entry ``target`` (``#``: the
root). Kinds:

- ``json_string`` (``expect``: object, array or any; ``lenient``; ``keep_strings``): a string is
  parsed as JSON; a malformed one (also one naming a member twice in an object: refused, never
  merged, like a repeated map key) is refused unless ``lenient`` (then it stays as sent); with
  ``keep_strings`` (the canonical schema admits strings there) only objects and arrays are taken;
- ``map_entries``: an array of ``{key, value}`` objects becomes an object (a repeated key is refused);
- ``enum_strings`` (``values``: string form → canonical value): a listed string becomes its value;
- ``rename`` (``names``: dialect name → canonical name): the object's members are renamed;
- ``ref``: see above.

Values already in canonical form pass through unchanged, so decoding is safe to apply to arguments
that were never reshaped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import ToolError
from .arguments import invalid_argument, plain_arguments, strict_json

ITEMS_STEP = "[]"
MAP_VALUES_STEP = "{}"
_KIND_ORDER = {"ref": 0, "rename": 1, "json_string": 2, "map_entries": 3, "enum_strings": 4}


@dataclass
class _Node:
    records: list[Mapping[str, Any]] = field(default_factory=list)
    children: dict[str, _Node] = field(default_factory=dict)


@dataclass
class Rewrites:
    """The rewrite records of one tool in one dialect, as a tree per path (`compile_rewrites`)."""

    root: _Node
    defs: dict[str, _Node]

    @property
    def empty(self) -> bool:
        return not self.root.records and not self.root.children


def _step_name(step: str) -> str:
    return step.removeprefix("~")


def compile_rewrites(records: Sequence[Mapping[str, Any]] | None) -> Rewrites:
    """The records as trees (malformed records are skipped: the policy table is generated)."""
    out = Rewrites(_Node(), {})
    for record in records or ():
        if not isinstance(record, Mapping) or not isinstance(record.get("path"), list):
            continue
        owner = record.get("def")
        node = out.root if owner is None else out.defs.setdefault(str(owner), _Node())
        for step in record["path"]:
            node = node.children.setdefault(str(step), _Node())
        node.records.append(record)
    for tree in (out.root, *out.defs.values()):
        _sort(tree)
    return out


def _sort(node: _Node) -> None:
    node.records.sort(key=lambda r: _KIND_ORDER.get(str(r.get("kind")), 9))
    for child in node.children.values():
        _sort(child)


def decode_arguments(args: dict[str, Any], rewrites: Rewrites) -> dict[str, Any]:
    """`args` as canonical arguments; raises `ToolError` ``invalid_arguments``."""
    if rewrites.empty:
        return args
    value = _Decoder(rewrites).decode(args, rewrites.root, (), False)
    if not isinstance(value, dict):  # the root is never reshaped
        raise invalid_argument((), "arguments must be a JSON object")
    return value


class _Decoder:
    def __init__(self, rewrites: Rewrites) -> None:
        self.rewrites = rewrites

    def decode(self, value: Any, node: _Node, sent: tuple[str | int, ...], in_branch: bool) -> Any:
        for record in node.records:
            kind = record.get("kind")
            if kind == "ref":
                target = str(record.get("target", "#"))
                tree = self.rewrites.root if target == "#" else self.rewrites.defs.get(target)
                if tree is not None and tree is not node:
                    value = self.decode(value, tree, sent, in_branch)
            elif kind == "rename" and isinstance(value, dict):
                names = record.get("names") or {}
                value = {str(names.get(k, k)): v for k, v in value.items()}
            elif kind == "json_string" and isinstance(value, str):
                return self.json_string(value, record, sent, in_branch)
            elif kind == "map_entries" and isinstance(value, list):
                mapped = self.map_entries(value, node, sent, in_branch)
                if mapped is not None:
                    return mapped
            elif kind == "enum_strings" and isinstance(value, str):
                values = record.get("values") or {}
                if value in values:
                    return values[value]
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                child = node.children.get(("~" + key) if key[:1] in ("[", "{", "|", "~") else key)
                out[key] = item if child is None else self.decode(item, child, (*sent, key), in_branch)
            value = out
        elif isinstance(value, list):
            child = node.children.get(ITEMS_STEP)
            if child is not None:
                value = [self.decode(item, child, (*sent, i), in_branch) for i, item in enumerate(value)]
        for step, child in node.children.items():
            if step.startswith("|"):
                value = self.decode(value, child, sent, True)
        return value

    @staticmethod
    def json_string(
        text: str, record: Mapping[str, Any], sent: tuple[str | int, ...], in_branch: bool
    ) -> Any:
        lenient = bool(record.get("lenient")) or in_branch
        expect = record.get("expect", "any")
        try:
            parsed = strict_json(
                text, unique_keys=True
            )  # a repeated member is refused, as a repeated map key
        except (ValueError, RecursionError) as exc:
            if lenient:
                return text
            raise invalid_argument(
                sent, f"expected JSON text ({_what(expect)}), which does not parse: {str(exc)[:120]}"
            ) from None
        if record.get("keep_strings") and not isinstance(parsed, (dict, list)):
            return text  # a plain string is a canonical value here
        if (expect == "object" and not isinstance(parsed, dict)) or (
            expect == "array" and not isinstance(parsed, list)
        ):
            if lenient:
                return text
            raise invalid_argument(
                sent, f"expected JSON text of {_what(expect)}, got {type(parsed).__name__}"
            )
        try:
            return plain_arguments({"v": parsed})["v"]  # depth and size limits, as for any argument
        except ToolError as exc:
            raise invalid_argument(sent, f"the JSON text is refused: {exc.message}") from None

    def map_entries(
        self, entries: list[Any], node: _Node, sent: tuple[str | int, ...], in_branch: bool
    ) -> dict[str, Any] | None:
        shaped = all(
            isinstance(e, dict) and set(e) == {"key", "value"} and isinstance(e["key"], str) for e in entries
        )
        if not shaped:
            if in_branch:
                return None
            for i, e in enumerate(entries):
                if not (isinstance(e, dict) and set(e) == {"key", "value"} and isinstance(e["key"], str)):
                    raise invalid_argument((*sent, i), 'each entry must be {"key": <string>, "value": ...}')
        out: dict[str, Any] = {}
        child = node.children.get(MAP_VALUES_STEP)
        for i, entry in enumerate(entries):
            key = entry["key"]
            if key in out:
                raise invalid_argument((*sent, i, "key"), f"key {key[:80]!r} appears twice")
            out[key] = (
                entry["value"]
                if child is None
                else self.decode(entry["value"], child, (*sent, i, "value"), in_branch)
            )
        return out


def _what(expect: Any) -> str:
    return {"object": "a JSON object", "array": "a JSON array"}.get(str(expect), "a JSON value")


def step_name(step: str) -> str:
    """A property step's name (without the ``~`` escape)."""
    return _step_name(step)


__all__ = ["Rewrites", "compile_rewrites", "decode_arguments", "step_name"]
