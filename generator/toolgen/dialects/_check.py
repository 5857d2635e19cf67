"""The conformance machinery the dialects share: a `Violation` per broken rule, and the checks every
provider makes (names, arrays with `items`, resolving `$ref`s, JSON Schema 2020-12, no ``nullable``).

Every dialect re-checks its emitted catalog (a list of tool objects) against its provider's rules
on the *output*, independently of how its view transform built it, so a transform bug shows up as a
violation rather than as a provider's HTTP 400 at run time. A `Violation` names the dialect, the
tool, a JSON pointer into the tool object, a short rule id that cites the section of
``docs/provider-rules.md`` (``A.2-additionalProperties``, ``D.1-ref-resolves``...) and a message.
Nothing here raises on bad input: malformed tools are violations.

Input: one dialect's catalog (a list of tool objects). Output: `Violation`s (none: it conforms).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..naming import TOOL_NAME_RE
from ..pointer import PointerError, escape_token
from ._memo import memo_table
from ._walk import (
    SCHEMA_KEYS,
    SCHEMA_LIST_KEYS,
    SCHEMA_MAP_KEYS,
    child_nodes,
    is_array_schema,
    iter_nodes,
    iter_schemas,
    resolve_local_ref,
    types_of,
    unresolved_refs,
)

_rs_meta: Any
try:  # optional accelerator; jsonschema remains the reference and gives the messages
    from jsonschema_rs import meta as _rs_meta
except ImportError:  # pragma: no cover - depends on the environment
    _rs_meta = None


JSON = Any

_DRAFT_2020_12 = "https://json-schema.org/draft/2020-12/schema"


@dataclass(frozen=True)
class Violation:
    """One broken rule: `rule` is a short id citing provider-rules.md (e.g. ``A.2-required``);
    `pointer` is a JSON pointer into the tool object (``/function/parameters/properties/x``)."""

    dialect: str
    tool: str
    pointer: str
    rule: str
    message: str

    def render(self) -> str:
        return f"{self.dialect}:{self.tool}#{self.pointer}: [{self.rule}] {self.message}"


class Report:
    def __init__(self, dialect: str):
        self.dialect = dialect
        self.items: list[Violation] = []

    def add(self, tool: str, pointer: str, rule: str, message: str) -> None:
        self.items.append(Violation(self.dialect, tool, pointer, rule, message))


def tool_label(value: JSON, index: int) -> str:
    return value if isinstance(value, str) and value else f"#{index}"


def check_names(report: Report, names: list[tuple[str, str, JSON]], rule_prefix: str) -> None:
    """Names ``^[a-zA-Z0-9_-]{1,64}$`` (A.1, B.1, D.2 "toolgen should") and unique in the catalog."""
    seen: dict[str, str] = {}
    for label, pointer, name in names:
        if not isinstance(name, str) or not TOOL_NAME_RE.fullmatch(name):
            report.add(
                label, pointer, f"{rule_prefix}-name", f"name {name!r} does not match ^[a-zA-Z0-9_-]{{1,64}}$"
            )
            continue
        if name in seen:
            report.add(label, pointer, f"{rule_prefix}-name-unique", f"name {name!r} is used twice")
        seen[name] = label


Walk = Callable[[JSON], Iterator[tuple[str, JSON]]]


def _last_token_walk(schema: JSON) -> Iterator[tuple[str, JSON]]:
    """`iter_schemas` (same nodes, same order) with only the *last* token of each pointer, as
    ``"/token"``: enough for the checks to decide, much cheaper than full pointers. `checked` runs a
    check with it first and walks again with full pointers only when the check found something."""
    stack: list[tuple[str, JSON]] = [("", schema)]
    while stack:
        token, node = stack.pop()
        yield token, node
        if not isinstance(node, dict):
            continue
        children: list[tuple[str, JSON]] = []
        for key, value in node.items():
            if key in _MAP_KEYS:
                if isinstance(value, dict):
                    children.extend(
                        ("/" + (escape_token(name) if "/" in name or "~" in name else name), sub)
                        for name, sub in value.items()
                    )
            elif key in _LIST_KEYS:
                if isinstance(value, list):
                    children.extend(("/" + str(i), sub) for i, sub in enumerate(value))
            elif key in _ONE_KEYS:
                if isinstance(value, list):
                    if key == "items":
                        children.extend(("/" + str(i), sub) for i, sub in enumerate(value))
                elif isinstance(value, (dict, bool)):
                    children.append(("/" + key, value))
        children.reverse()
        stack.extend(children)


# the applicator keys of `_walk`, as sets for the walk's membership tests
_MAP_KEYS = frozenset(SCHEMA_MAP_KEYS)
_LIST_KEYS = frozenset(SCHEMA_LIST_KEYS)
_ONE_KEYS = frozenset(SCHEMA_KEYS)


def checked(check: Callable[..., None], report: Report, *args: Any) -> None:
    """Run `check(report, *args, walk=...)` cheaply: first over `_last_token_walk` into a scratch
    report; only if that finds a problem, again over `iter_schemas` into `report` (full pointers)."""
    scratch = Report(report.dialect)
    check(scratch, *args, walk=_last_token_walk)
    if scratch.items:
        check(report, *args, walk=iter_schemas)


class Summary:
    """What one walk over a schema found, so each check walks again (with pointers, to report) only
    when there is something to report: arrays without `items`, `$ref` values, `nullable` keys,
    the formats named and the regular expressions to compile."""

    __slots__ = ("array_without_items", "formats", "nullable", "patterns", "refs")

    def __init__(self, schema: JSON) -> None:
        self.array_without_items = self.nullable = False
        self.formats: set[str] = set()
        self.refs: set[Any] = set()
        self.patterns: list[str] = []
        memo = memo_table("summary")
        if memo is not None:  # the catalog's tools share subtrees: each is summarised once
            try:
                facts = _facts(schema, memo)
            except RecursionError:  # nested past the stack: the flat walk below
                pass
            else:
                self.array_without_items, self.nullable = facts[0], facts[1]
                self.formats, self.refs, self.patterns = set(facts[2]), set(facts[3]), list(facts[4])
                return
        for node in iter_nodes(schema):
            if not isinstance(node, dict):
                continue
            if "items" not in node and is_array_schema(node):
                self.array_without_items = True
            if "$ref" in node:
                ref = node["$ref"]
                self.refs.add(ref if isinstance(ref, str) else None)
            if "nullable" in node:
                self.nullable = True
            if isinstance(node.get("format"), str):
                self.formats.add(node["format"])
            if "pattern" in node and isinstance(node["pattern"], str):
                self.patterns.append(node["pattern"])
            if "patternProperties" in node and isinstance(node["patternProperties"], dict):
                self.patterns.extend(node["patternProperties"])

    def refs_resolve(self, schema: JSON) -> bool:
        if None in self.refs:
            return False
        try:
            for ref in self.refs:
                resolve_local_ref(schema, ref)
        except PointerError:
            return False
        return True


#: What `Summary` finds in a subtree: array without items, nullable, formats, refs, patterns.
_Facts = tuple[bool, bool, frozenset[str], frozenset[Any], tuple[str, ...]]
_NO_FACTS: _Facts = (False, False, frozenset(), frozenset(), ())


def _facts(node: JSON, memo: dict[int, tuple[Any, ...]]) -> _Facts:
    """`Summary`'s findings over the subtree `node` (the nodes `iter_nodes` yields), once per
    subtree object in a `toolgen.dialects._memo.shared_views` scope (`memo`)."""
    if not isinstance(node, dict):
        return _NO_FACTS
    hit = memo.get(id(node))
    if hit is not None:
        return hit[1]  # type: ignore[no-any-return]
    array = "items" not in node and is_array_schema(node)
    nullable = "nullable" in node
    formats: frozenset[str] = (
        frozenset((node["format"],)) if isinstance(node.get("format"), str) else frozenset()
    )
    refs: frozenset[Any] = frozenset()
    if "$ref" in node:
        ref = node["$ref"]
        refs = frozenset((ref if isinstance(ref, str) else None,))
    patterns: tuple[str, ...] = ()
    if "pattern" in node and isinstance(node["pattern"], str):
        patterns = (node["pattern"],)
    if "patternProperties" in node and isinstance(node["patternProperties"], dict):
        patterns = (*patterns, *node["patternProperties"])
    for child in child_nodes(node):
        sub = _facts(child, memo)
        if sub is _NO_FACTS:
            continue
        array = array or sub[0]
        nullable = nullable or sub[1]
        if sub[2]:
            formats = formats | sub[2]
        if sub[3]:
            refs = refs | sub[3]
        if sub[4]:
            patterns = (*patterns, *sub[4])
    facts: _Facts = (array, nullable, formats, refs, patterns)
    if facts == _NO_FACTS:
        facts = _NO_FACTS
    memo[id(node)] = (node, facts)  # `node` kept alive: its id stays its own
    return facts


def check_items_and_refs(
    report: Report, tool: str, base: str, schema: JSON, prefix: str, summary: Summary | None = None
) -> None:
    """Every array has `items` (A.2 "Array keywords", E point 4); every `$ref` resolves (D.1, case 21)."""
    summary = summary or Summary(schema)
    if summary.array_without_items:
        checked(_check_items, report, tool, base, schema)
    if not summary.refs or summary.refs_resolve(schema):
        return
    for ptr, ref in unresolved_refs(schema):
        report.add(tool, base + ptr, f"{prefix}-ref-resolves", f"$ref {ref!r} does not resolve in the schema")


def _check_items(report: Report, tool: str, base: str, schema: JSON, *, walk: Walk) -> None:
    for ptr, node in walk(schema):
        if isinstance(node, dict) and is_array_schema(node) and "items" not in node:
            report.add(tool, base + ptr, "E.4-array-items", "array schema without items")


def _fast_meta_valid(schema: JSON, summary: Summary | None = None) -> bool:
    """True when the (optional, much faster) jsonschema_rs meta-validator accepts `schema` as 2020-12
    and every `pattern` compiles; False means "ask jsonschema", which also yields the message."""
    if _rs_meta is None or not isinstance(schema, dict):
        return False
    probe = schema if "$schema" in schema else {**schema, "$schema": _DRAFT_2020_12}
    try:
        if not _rs_meta.is_valid(probe):
            return False
    except Exception:  # noqa: BLE001 - unknown $schema, registry problems: let jsonschema decide and explain
        return False
    for pattern in (summary or Summary(schema)).patterns:
        try:
            re.compile(pattern)
        except re.error:
            return False
    return True


def check_2020_12(
    report: Report, tool: str, base: str, schema: JSON, rule: str, summary: Summary | None = None
) -> None:
    """Valid under the JSON Schema 2020-12 meta-schema (B.1 `input_schema`, D.1)."""
    if _fast_meta_valid(schema, summary):
        return
    from jsonschema import Draft202012Validator  # the reference, and its message: rarely needed
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        path = "".join(f"/{p}" for p in exc.path)
        report.add(tool, base + path, rule, f"not valid JSON Schema 2020-12: {exc.message}")


def check_no_nullable(
    report: Report, tool: str, base: str, schema: JSON, rule: str, summary: Summary | None = None
) -> None:
    """OpenAPI 3.0 `nullable` means nothing to JSON Schema (case 08)."""
    if (summary or Summary(schema)).nullable:
        checked(_check_nullable_nodes, report, tool, base, schema, rule)


def _check_nullable_nodes(
    report: Report, tool: str, base: str, schema: JSON, rule: str, *, walk: Walk
) -> None:
    for ptr, node in walk(schema):
        if isinstance(node, dict) and "nullable" in node:
            report.add(tool, base + ptr, rule, "OpenAPI `nullable` keyword; use a null type instead")


def object_root(report: Report, tool: str, pointer: str, schema: JSON, rule: str, what: str) -> bool:
    if not isinstance(schema, dict) or types_of(schema) != ["object"]:
        report.add(tool, pointer, rule, f'{what} must be a schema with type "object"')
        return False
    return True
