"""The spec's operations as plain records, and finding them by operationId or `METHOD /path`.

Input: a loaded `SpecDocument`. Output: `Operation` records in document order (paths, then methods
in the order OpenAPI lists them). `webhooks` (OpenAPI 3.1) are not callable operations and are
not listed. Path items that are `$ref`s are followed, along a chain; one whose `$ref` cannot be
followed (missing, not an object, external, looping) is a located error, never an empty path item.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Any

from ..diagnostics import DiagnosticError
from ..naming import snake_case
from ..pointer import (
    PointerError,
    join_pointer,
    resolve_pointer,
)
from .load import SpecDocument
from .schema.refs import local_ref_target

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True)
class Operation:
    """One operation of the spec. `path` is the path key as written (it may carry a `#fragment`,
    as in Box's spec); `url_path` is the part that goes on the wire."""

    method: str  # upper case
    path: str
    operation_id: str | None
    pointer: str
    node: dict[str, Any]
    path_item: dict[str, Any]
    path_item_pointer: str

    @property
    def url_path(self) -> str:
        return self.path.split("#", 1)[0]

    @property
    def key(self) -> str:
        """``METHOD /path`` as written in the spec."""
        return f"{self.method} {self.path}"

    @property
    def tags(self) -> tuple[str, ...]:
        tags = self.node.get("tags") or ()
        return tuple(str(t) for t in tags if isinstance(t, (str, int)))

    @property
    def synthetic_id(self) -> str:
        """operationId, or one derived from method and path when the spec has none."""
        if self.operation_id:
            return self.operation_id
        return snake_case(f"{self.method.lower()} {self.path}") or self.method.lower()


def list_operations(doc: SpecDocument) -> list[Operation]:
    """Every operation under `paths`, in document order. A path item that is a ``$ref`` is read at
    its target (`resolve_path_item`); one whose ``$ref`` cannot be followed raises `DiagnosticError`
    located at that ``$ref``, never lists no operations."""
    out: list[Operation] = []
    paths = doc.data.get("paths") or {}
    if not isinstance(paths, dict):
        return out
    for path, written in paths.items():
        item, item_pointer = resolve_path_item(doc, written, join_pointer("/paths", path))
        if not isinstance(item, dict):
            continue
        for method in METHODS:
            node = item.get(method)
            if not isinstance(node, dict):
                continue
            op_id = node.get("operationId")
            out.append(
                Operation(
                    method=method.upper(),
                    path=str(path),
                    operation_id=str(op_id) if isinstance(op_id, (str, int)) and str(op_id) else None,
                    pointer=join_pointer(item_pointer, method),
                    node=node,
                    path_item=item,
                    path_item_pointer=item_pointer,
                )
            )
    return out


def resolve_path_item(doc: SpecDocument, item: Any, pointer: str) -> tuple[Any, str]:
    """The Path Item Object a path item at `pointer` stands for, and its pointer: `item` itself, or
    the target of its ``$ref`` (OpenAPI 3.x Path Item Object: "the referenced structure MUST be in
    the form of a Path Item Object"), followed along a chain of such references.

    Raises `DiagnosticError` located at the ``$ref`` that cannot be followed: ``ref-invalid`` (not a
    string, or not a local RFC 6901 JSON pointer fragment), ``ref-external`` (another document or a
    URL: bundle it first), ``ref-missing`` (nothing at the pointer) and ``ref-not-path-item`` (the
    target is not an object, or the chain comes back to itself). Before this, such a path item was
    read as an empty one and its operations vanished without a word."""
    seen = [pointer]
    while isinstance(item, dict) and "$ref" in item:
        at = join_pointer(pointer, "$ref")
        target = _path_item_target(doc, item["$ref"], at)
        if target in seen:
            chain = " -> ".join("#" + doc.source_pointer(p) for p in [*seen, target])
            raise _not_a_path_item(doc, at, f"its $ref chain loops back to itself: {chain}")
        try:
            item = resolve_pointer(doc.data, target)
        except PointerError as exc:
            found = (
                f"; the longest existing prefix is #{doc.source_pointer(exc.pointer)}" if exc.pointer else ""
            )
            raise DiagnosticError.one(
                "ref-missing",
                f"path item $ref target #{doc.source_pointer(target)} does not exist{found}: the "
                f"operations of this path would be lost",
                doc.locate_now(at),
                "point the $ref at a Path Item Object (e.g. '#/components/pathItems/Name', OpenAPI "
                "3.1) or write the path's operations here",
            ) from None
        if not isinstance(item, dict):
            raise _not_a_path_item(
                doc, at, f"its $ref target #{doc.source_pointer(target)} is a {_kind(item)}, not an object"
            )
        seen.append(target)
        pointer = target
    return item, pointer


def _path_item_target(doc: SpecDocument, ref: Any, at: str) -> str:
    """The decoded JSON pointer of a path item's ``$ref`` value `ref` written at `at`
    (`toolgen.compile.schema.refs.local_ref_target`, which every ``$ref`` of the spec goes through;
    errors: see `resolve_path_item`)."""
    target = local_ref_target(ref, doc.locate_now(at), example="'#/components/pathItems/Name'")
    if target == "":
        raise _not_a_path_item(doc, at, f"$ref {ref!r} names the whole document")
    return target


def _not_a_path_item(doc: SpecDocument, at: str, why: str) -> DiagnosticError:
    return DiagnosticError.one(
        "ref-not-path-item",
        f"a path item's $ref names no Path Item Object: {why}",
        doc.locate_now(at),
        "point the $ref at a Path Item Object (an object of operations, e.g. "
        "'#/components/pathItems/Name', OpenAPI 3.1) or write the path's operations here",
    )


def _kind(value: Any) -> str:
    return (
        "null" if value is None else {list: "list", str: "string", bool: "boolean"}.get(type(value), "number")
    )


class OperationIndex:
    """The operations of a spec by operationId, by ``(METHOD, path)`` and by synthetic id (for
    operations without an operationId): `find_operation` in constant time. The first operation
    wins on a duplicate key, as a scan in document order would."""

    def __init__(self, operations: list[Operation]):
        self.by_id: dict[str, Operation] = {}
        self.by_route: dict[tuple[str, str], Operation] = {}
        self.by_synthetic: dict[str, Operation] = {}
        for op in operations:
            if op.operation_id is not None:
                self.by_id.setdefault(op.operation_id, op)
            else:
                self.by_synthetic.setdefault(op.synthetic_id, op)
            self.by_route.setdefault((op.method, op.path), op)

    def find(self, ref: str) -> Operation | None:
        op = self.by_id.get(ref)
        if op is not None:
            return op
        parts = ref.strip().split(None, 1)
        if len(parts) == 2:
            op = self.by_route.get((parts[0].upper(), parts[1].strip()))
            if op is not None:
                return op
        return self.by_synthetic.get(ref)


def find_operation(operations: list[Operation] | OperationIndex, ref: str) -> Operation | None:
    """Find by operationId, else by ``METHOD /path`` (method case-insensitive), else by synthetic id.
    Pass an `OperationIndex` when looking up many references (a list is indexed on each call)."""
    index = operations if isinstance(operations, OperationIndex) else OperationIndex(operations)
    return index.find(ref)


def operation_matches(op: Operation, pattern: str) -> bool:
    """Glob match on operationId, on ``METHOD /path``, or ``tag:NAME``."""
    if pattern.startswith("tag:"):
        wanted = pattern[4:]
        return any(fnmatch.fnmatchcase(t, wanted) for t in op.tags)
    if fnmatch.fnmatchcase(op.key, pattern) or fnmatch.fnmatchcase(f"{op.method} {op.url_path}", pattern):
        return True
    return fnmatch.fnmatchcase(op.synthetic_id, pattern)


def suggest_operations(operations: list[Operation], ref: str, n: int = 3) -> list[str]:
    import difflib

    names = [op.operation_id for op in operations if op.operation_id] + [op.key for op in operations]
    return difflib.get_close_matches(ref, names, n=n, cutoff=0.5)


# ---------------------------------------------------------------------------------------------
# what an operation declares: security requirements, OAuth scopes (its idempotency key:
# `toolgen.compile.lower.idempotency_key`)


def _requirements(value: Any) -> list[dict[str, Any]]:
    return [r for r in value if isinstance(r, dict)] if isinstance(value, list) else []


def declared_oauth_scopes(doc: SpecDocument) -> dict[str, set[str]]:
    """OAuth2 security scheme name -> the scopes its flows declare (`components.securitySchemes`)."""
    schemes = (doc.data.get("components") or {}).get("securitySchemes") or {}
    declared: dict[str, set[str]] = {}
    if isinstance(schemes, dict):
        for name, scheme in schemes.items():
            if not isinstance(scheme, dict) or scheme.get("type") != "oauth2":
                continue
            scopes: set[str] = set()
            flows = scheme.get("flows")
            for flow in flows.values() if isinstance(flows, dict) else ():
                if isinstance(flow, dict) and isinstance(flow.get("scopes"), dict):
                    scopes.update(str(s) for s in flow["scopes"])
            declared[str(name)] = scopes
    return declared


def used_scopes(doc: SpecDocument, operations: list[Operation]) -> set[str]:
    """Every scope a security requirement of the spec names (global or per operation)."""
    used: set[str] = set()
    for value in [doc.data.get("security")] + [op.node.get("security") for op in operations]:
        for req in _requirements(value):
            for scopes in req.values():
                if isinstance(scopes, list):
                    used.update(str(s) for s in scopes)
    return used


def operation_requirements(doc: SpecDocument, op: Operation) -> list[dict[str, Any]]:
    """The security requirements in force for `op` (its own, else the document's)."""
    return _requirements(op.node.get("security", doc.data.get("security")))
