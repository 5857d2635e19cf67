"""Stage `lower`, argument narrowing: is a narrowed argument schema a subset of the canonical one?

Input: a narrowed schema written in the intent map (``tools.<key>.args.<name>.schema``, JSON Schema
2020-12, self-contained: no ``$ref``) and the argument's canonical schema as the spec defines it
(its local ``#/$defs/...`` references resolve inside it). Output: `subset_problems(narrow, canonical)`
-> a list of `SubsetProblem` (JSON pointer inside the narrowed schema, what fails, what to do); an
empty list means toolgen proved that every value the narrowed schema accepts is valid under the
canonical one.

The check is sound and conservative: it answers "proved" only by rules that hold for every value,
and reports everything it cannot prove as a problem. The rules, per node (narrowed N, canonical C):

* finite N (``enum`` / ``const``): each value N accepts is validated against C itself (exact);
* N's ``anyOf``/``oneOf``: every branch is a subset of C; N's ``allOf``: one member is;
* C's ``allOf`` (and ``$ref`` with siblings): N is a subset of every part; C's ``anyOf``: each type
  N admits is a subset of some branch; C's ``oneOf``: of one branch, with N's types disjoint from
  every other branch's;
* types: each type N admits is one C admits (``integer`` within ``number``);
* strings: length bounds within C's, the same ``pattern`` and ``format`` where C has them;
* numbers: bounds within C's (exclusive ones included), ``multipleOf`` a multiple of C's;
* arrays: item-count bounds within C's, ``uniqueItems`` kept, ``items`` recursively;
* objects: ``required`` a superset of C's, every property (declared or additional) recursively a
  subset of what C says for that name, property-count bounds within C's;
* any other assertion keyword of C (``not``, ``if``, ``patternProperties``, ``prefixItems``, ...) is
  not proved: the problem says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..pointer import PointerError, escape_token, ref_to_pointer, resolve_pointer
from .schema.satisfiable import json_type_of

JSON = Any

#: Keywords that never change what a schema accepts (2020-12 meta-data, content and format-annotation
#: vocabularies as toolgen's runtime reads them, OpenAPI decorations).
ANNOTATION_KEYS: frozenset[str] = frozenset(
    {
        "$schema",
        "$id",
        "$comment",
        "$anchor",
        "$dynamicAnchor",
        "$vocabulary",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "example",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "discriminator",
        "xml",
        "externalDocs",
        "nullable",  # OpenAPI 3.0: only ever widens, so ignoring it in C is sound
    }
)
STRING_KEYS = frozenset({"minLength", "maxLength", "pattern", "format"})
NUMBER_KEYS = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"})
ARRAY_KEYS = frozenset(
    {
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedItems",
    }
)
OBJECT_KEYS = frozenset(
    {
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
        "patternProperties",
        "propertyNames",
        "dependentRequired",
        "dependentSchemas",
        "unevaluatedProperties",
    }
)
#: Keywords of C this module knows how to prove N against.
_PROVABLE = frozenset(
    {
        "type",
        "enum",
        "const",
        "anyOf",
        "oneOf",
        "allOf",
        "$ref",
        "minLength",
        "maxLength",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "items",
        "minItems",
        "maxItems",
        "uniqueItems",
        "properties",
        "required",
        "additionalProperties",
        "minProperties",
        "maxProperties",
    }
)
_MAX_DEPTH = 64


@dataclass(frozen=True)
class SubsetProblem:
    """Why a narrowed schema is not (provably) a subset: `pointer` inside the narrowed schema
    (``""`` = its root), `message`, and `hint` (what to do)."""

    pointer: str
    message: str
    hint: str


class _Fail(Exception):
    def __init__(self, pointer: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.problem = SubsetProblem(pointer, message, hint)


def subset_problems(narrow: JSON, canonical: JSON) -> list[SubsetProblem]:
    """Problems that stop toolgen from proving ``{x | narrow(x)} ⊆ {x | canonical(x)}`` (JSON Schema
    2020-12 semantics, formats asserted as the runtime does). `narrow` must not use ``$ref``;
    `canonical`'s local refs resolve inside `canonical`. Empty list = proved. Never raises on input."""
    checker = _Checker(canonical)
    try:
        checker.sub(narrow, canonical, "", 0)
    except _Fail as fail:
        return [fail.problem]
    except RecursionError:
        return [SubsetProblem("", "the schemas nest too deeply to compare", "narrow with a shallower schema")]
    return []


def _types(node: JSON) -> frozenset[str] | None:
    """The types a node's `type` keyword admits (integer expanded into number's), None when absent."""
    t = node.get("type") if isinstance(node, dict) else None
    if t is None:
        return None
    names = [t] if isinstance(t, str) else [x for x in t if isinstance(x, str)] if isinstance(t, list) else []
    return frozenset(names)


def _admits(types: frozenset[str] | None, t: str) -> bool:
    """Whether a `type` set admits every value of JSON type `t` (integer within number)."""
    if types is None:
        return True
    return t in types or (t == "integer" and "number" in types)


def _family(t: str) -> str:
    return "number" if t == "integer" else t


def _trivial(node: JSON) -> bool:
    """A schema that accepts everything (``true``, ``{}``, annotations only)."""
    if node is True:
        return True
    return isinstance(node, dict) and all(k in ANNOTATION_KEYS for k in node)


def _num(value: JSON) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        return Fraction(str(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError):
        return None


def _comparable(n: JSON, c: JSON, ptr: str) -> None:
    """Raise `_Fail` unless N and C are both schemas `_Checker.sub` can compare: C accepts something
    and is an object, N is an object without ``$ref``."""
    if c is False:
        raise _Fail(ptr, "the canonical schema accepts nothing here", "hide the argument instead")
    if not isinstance(c, dict):
        raise _Fail(ptr, "the canonical schema is not a JSON Schema here", "leave this argument canonical")
    if n is True or not isinstance(n, dict):
        raise _Fail(
            ptr,
            "the narrowed schema accepts any value here",
            "give a `type` (or an `enum`) that the canonical schema accepts",
        )
    if "$ref" in n:
        raise _Fail(ptr + "/$ref", "a narrowed schema cannot use $ref", "write the schema inline")


def _one_branch_only(branches: list[JSON], hit: int, n_types: frozenset[str], ptr: str) -> None:
    """Raise `_Fail` when a branch of C's ``oneOf`` other than `hit` may match a value of N's types too
    (the value would then be refused: oneOf wants exactly one)."""
    for i, other in enumerate(branches):
        if i == hit:
            continue
        other_types = _types(other) if isinstance(other, dict) else None
        if other is not False and (
            other_types is None or any(_family(t) in {_family(o) for o in other_types} for t in n_types)
        ):
            raise _Fail(
                ptr,
                f"a value may match more than one branch of the canonical oneOf (branch {i} too)",
                "narrow to an enum, or to a type only one branch admits",
            )


class _Checker:
    def __init__(self, root: JSON) -> None:
        self.root = root
        self._validators: dict[int, Any] = {}
        self._enum_sets: dict[int, set[str]] = {}
        self._keep: list[JSON] = []

    # -- finite sets: exact ----------------------------------------------------------------------

    def canonical_accepts(self, value: JSON, canonical: JSON) -> bool:
        """Whether `canonical` (its refs resolving in the root's ``$defs``) accepts `value`; False when
        the schema cannot be evaluated (that proves nothing)."""
        from jsonschema import Draft202012Validator

        from .schema.bounded import bounded_validator  # spec patterns in bounded time

        key = id(canonical)
        if key not in self._validators:
            root = self.root
            schema = canonical
            if isinstance(root, dict) and isinstance(schema, dict) and schema is not root:
                defs = {k: root[k] for k in ("$defs", "definitions") if k in root}
                schema = {**defs, **schema}
            try:
                self._validators[key] = bounded_validator()(
                    schema, format_checker=Draft202012Validator.FORMAT_CHECKER
                )
            except Exception:  # noqa: BLE001 - a canonical schema jsonschema cannot load proves nothing
                self._validators[key] = None
            self._keep.append(canonical)  # ids stay unique while the validator is cached
        validator = self._validators[key]
        if validator is None:
            return False
        try:
            return bool(validator.is_valid(value))
        except Exception:  # noqa: BLE001 - a canonical schema jsonschema cannot evaluate proves nothing
            return False

    def canonical_accepts_fast(self, value: JSON, canonical: JSON) -> bool:
        """`canonical_accepts`, with a set lookup for a canonical node that is an enumeration and its
        type only (large enums would otherwise cost a scan per value)."""
        if (
            isinstance(canonical, dict)
            and isinstance(canonical.get("enum"), list)
            and all(k in ("enum", "type") or k in ANNOTATION_KEYS for k in canonical)
        ):
            key = id(canonical)
            if key not in self._enum_sets:
                self._enum_sets[key] = {_enum_key(v) for v in canonical["enum"]}
                self._keep.append(canonical)
            return (
                _admits(_types(canonical), json_type_of(value)) and _enum_key(value) in self._enum_sets[key]
            )
        return self.canonical_accepts(value, canonical)

    @staticmethod
    def narrow_validator(narrow: JSON) -> Any:
        """A validator of the narrowed schema, or None when it cannot be loaded (then every listed
        value counts as accepted, and the canonical schema must accept it)."""
        from jsonschema import Draft202012Validator

        from .schema.bounded import bounded_validator  # spec patterns in bounded time

        try:
            return bounded_validator()(narrow, format_checker=Draft202012Validator.FORMAT_CHECKER)
        except Exception:  # noqa: BLE001 - see above
            return None

    # -- the structural rules --------------------------------------------------------------------

    def resolve(self, node: JSON, ptr: str) -> JSON:
        ref = node["$ref"]
        target = ref_to_pointer(ref) if isinstance(ref, str) else None
        if target is None or (target and not target.startswith("/")):
            raise _Fail(
                ptr,
                f"the canonical schema's $ref {ref!r} is not a local JSON pointer",
                "narrow with an enum, whose values toolgen validates directly",
            )
        try:
            return resolve_pointer(self.root, target)
        except PointerError:
            raise _Fail(
                ptr,
                f"the canonical schema's $ref {ref!r} does not resolve",
                "narrow with an enum, whose values toolgen validates directly",
            ) from None

    def sub(self, n: JSON, c: JSON, ptr: str, depth: int) -> None:
        """Prove n ⊆ c or raise `_Fail` located at `ptr` (a pointer into the narrowed schema): a finite
        N value by value; N's combinators way by way; C's ``$ref`` and ``allOf`` part by part; C's
        ``anyOf``/``oneOf`` by the branch that holds N; else keyword by keyword (`plain`)."""
        if depth > _MAX_DEPTH:
            raise _Fail(ptr, "the schemas nest too deeply to compare", "narrow with a shallower schema")
        if n is False or _trivial(c):
            return
        _comparable(n, c, ptr)
        if "const" in n or isinstance(n.get("enum"), list):
            self.finite(n, c, ptr)
        elif not self.narrowed_ways(n, c, ptr, depth) and not self.canonical_parts(n, c, ptr, depth):
            n_types = _types(n)
            if n_types is None:
                raise _Fail(
                    ptr,
                    "the narrowed schema does not say its `type`",
                    "add a `type` (or an `enum`) that the canonical schema accepts",
                )
            if not self.canonical_branches(n, c, n_types, ptr, depth):
                self.plain(n, c, n_types, ptr, depth)

    def finite(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str) -> None:
        """A finite N (``const`` or ``enum``): each value it accepts checked against C, exactly."""
        values = [n["const"]] if "const" in n else list(n["enum"])
        rest = {k: v for k, v in n.items() if k not in ("enum", "const")}  # a listed value passes those
        narrow_validator = self.narrow_validator(rest)
        for i, value in enumerate(values):
            if _accepts(narrow_validator, value) and not self.canonical_accepts_fast(value, c):
                where = ptr + ("/const" if "const" in n else f"/enum/{i}")
                raise _Fail(
                    where,
                    f"{_show(value)} is not valid under the canonical schema",
                    "keep only values the operation accepts",
                )

    def narrowed_ways(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str, depth: int) -> bool:
        """N's own combinators: each way N can accept (an ``anyOf``/``oneOf`` branch) must be inside C,
        and for ``allOf`` one of its parts (or N without it) must be. False when N has none."""
        for key in ("anyOf", "oneOf"):
            if isinstance(n.get(key), list):
                for i, branch in enumerate(n[key]):
                    self.sub(_with_siblings(branch, n, key), c, f"{ptr}/{key}/{i}", depth + 1)
                return True
        if not isinstance(n.get("allOf"), list):
            return False
        rest = {k: v for k, v in n.items() if k != "allOf"}
        first: _Fail | None = None
        for candidate in [rest, *n["allOf"]]:
            try:
                self.sub(candidate, c, ptr, depth + 1)
                return True
            except _Fail as fail:
                first = first or fail
        assert first is not None
        raise first

    def canonical_parts(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str, depth: int) -> bool:
        """C's ``$ref`` (its target and its siblings) and ``allOf`` (each part and the rest): N must be
        inside each. False when C has neither."""
        if "$ref" in c:
            target = self.resolve(c, ptr)
            self.sub(n, target, ptr, depth + 1)
            self.sub(n, {k: v for k, v in c.items() if k != "$ref"}, ptr, depth + 1)
            return True
        if isinstance(c.get("allOf"), list):
            for part in c["allOf"]:
                self.sub(n, part, ptr, depth + 1)
            self.sub(n, {k: v for k, v in c.items() if k != "allOf"}, ptr, depth + 1)
            return True
        return False

    def canonical_branches(
        self, n: dict[str, JSON], c: dict[str, JSON], n_types: frozenset[str], ptr: str, depth: int
    ) -> bool:
        """C's ``anyOf``/``oneOf``: N of several types type by type; else N inside C's other keywords
        and inside one branch (for ``oneOf``, a branch no other may also match). False when C has
        neither."""
        branches_of = [key for key in ("anyOf", "oneOf") if isinstance(c.get(key), list)]
        if not branches_of:
            return False
        if len(n_types) > 1:
            for t in sorted(n_types):
                self.sub({**n, "type": t}, c, ptr, depth + 1)
            return True
        key = branches_of[0]
        self.sub(n, {k: v for k, v in c.items() if k != key}, ptr, depth + 1)
        hit = self.some_branch(n, c[key], ptr, depth, key)
        if key == "oneOf":
            _one_branch_only(c["oneOf"], hit, n_types, ptr)
        return True

    def some_branch(self, n: dict[str, JSON], branches: list[JSON], ptr: str, depth: int, key: str) -> int:
        first: _Fail | None = None
        for i, branch in enumerate(branches):
            try:
                self.sub(n, branch, ptr, depth + 1)
                return i
            except _Fail as fail:
                first = first or fail
        detail = f": {first.problem.message}" if first is not None else ""
        raise _Fail(
            first.problem.pointer if first is not None else ptr,
            f"not inside any branch of the canonical {key}{detail}",
            first.problem.hint if first is not None else "narrow to one branch's type",
        )

    def plain(
        self, n: dict[str, JSON], c: dict[str, JSON], n_types: frozenset[str], ptr: str, depth: int
    ) -> None:
        unknown = sorted(k for k in c if k not in _PROVABLE and k not in ANNOTATION_KEYS)
        relevant = [k for k in unknown if _applies(k, n_types)]
        if relevant:
            raise _Fail(
                ptr,
                f"toolgen cannot prove the canonical keyword `{relevant[0]}` holds",
                "narrow with an enum (validated value by value), or leave this argument canonical",
            )
        if "const" in c or "enum" in c:
            raise _Fail(
                ptr,
                "the canonical schema is an enumeration here; an open type is wider",
                "narrow with an `enum` of canonical values",
            )
        c_types = _types(c)
        for t in sorted(n_types):
            if not _admits(c_types, t):
                allowed = ", ".join(sorted(c_types or ()))
                raise _Fail(
                    ptr + "/type",
                    f"type {t!r} is not accepted by the canonical schema ({allowed})",
                    f"use one of: {allowed}",
                )
        if "string" in n_types:
            self.strings(n, c, ptr)
        if n_types & {"number", "integer"}:
            self.numbers(n, c, ptr, only_integers="number" not in n_types)
        if "array" in n_types:
            self.arrays(n, c, ptr, depth)
        if "object" in n_types:
            self.objects(n, c, ptr, depth)

    def strings(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str) -> None:
        _lower(n, c, "minLength", ptr)
        _upper(n, c, "maxLength", ptr)
        for key in ("pattern", "format"):
            if key in c and n.get(key) != c[key]:
                raise _Fail(
                    ptr,
                    f"the canonical schema requires {key} {c[key]!r}; the narrowed schema does not",
                    f"repeat `{key}: {c[key]}` in the narrowed schema",
                )

    def numbers(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str, *, only_integers: bool) -> None:
        for lower, (inclusive, exclusive) in (
            (True, ("minimum", "exclusiveMinimum")),
            (False, ("maximum", "exclusiveMaximum")),
        ):
            bound, bound_excl = _bound(n, inclusive, exclusive, lower=lower)
            for key, excl in ((inclusive, False), (exclusive, True)):
                limit = _num(c.get(key)) if key in c else None
                if key in c and limit is None:
                    raise _Fail(ptr, f"the canonical {key} is not a number", "leave this argument canonical")
                if limit is None:
                    continue
                inside = bound is not None and ((bound > limit) if lower else (bound < limit))
                if not (inside or (bound == limit and (bound_excl or not excl))):
                    raise _Fail(
                        ptr,
                        f"the canonical schema requires {key} {c[key]}; the narrowed bound is "
                        f"{'lower' if lower else 'higher'} or absent",
                        f"add `{key}: {c[key]}` (or a tighter bound)",
                    )
        if "multipleOf" in c:
            m_c = _num(c["multipleOf"])
            m_n = _num(n.get("multipleOf"))
            proved = (
                m_c is not None
                and m_c > 0
                and (
                    (m_n is not None and m_n > 0 and (m_n / m_c).denominator == 1)
                    or (only_integers and (1 / m_c).denominator == 1)
                )
            )
            if not proved:
                raise _Fail(
                    ptr,
                    f"the canonical schema requires multipleOf {c['multipleOf']}",
                    f"add `multipleOf: {c['multipleOf']}` (or a multiple of it)",
                )

    def arrays(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str, depth: int) -> None:
        _lower(n, c, "minItems", ptr)
        _upper(n, c, "maxItems", ptr)
        if c.get("uniqueItems") is True and n.get("uniqueItems") is not True:
            raise _Fail(ptr, "the canonical schema requires uniqueItems", "add `uniqueItems: true`")
        if "items" in c:
            if "prefixItems" in n:
                raise _Fail(
                    ptr + "/prefixItems",
                    "toolgen cannot prove prefixItems against the canonical items",
                    "use `items` alone",
                )
            self.sub(n.get("items", True), c["items"], ptr + "/items", depth + 1)

    def objects(self, n: dict[str, JSON], c: dict[str, JSON], ptr: str, depth: int) -> None:
        n_required: list[JSON] = n["required"] if isinstance(n.get("required"), list) else []
        c_required: list[JSON] = c["required"] if isinstance(c.get("required"), list) else []
        missing = [r for r in c_required if r not in n_required]
        if missing:
            raise _Fail(
                ptr + "/required",
                f"the canonical schema requires property {missing[0]!r}",
                f"add {missing[0]!r} to `required`",
            )
        _lower(n, c, "minProperties", ptr)
        _upper(n, c, "maxProperties", ptr)
        if "patternProperties" in n:
            raise _Fail(
                ptr + "/patternProperties",
                "toolgen cannot prove patternProperties in a narrowed schema",
                "declare the properties by name",
            )
        n_props: dict[str, JSON] = n["properties"] if isinstance(n.get("properties"), dict) else {}
        c_props: dict[str, JSON] = c["properties"] if isinstance(c.get("properties"), dict) else {}
        n_extra = n.get("additionalProperties", True)
        c_extra = c.get("additionalProperties", True)
        for name, sub in n_props.items():
            target = c_props.get(name, c_extra)
            self.sub(sub, target, f"{ptr}/properties/{escape_token(name)}", depth + 1)
        for name, target in c_props.items():
            if name not in n_props:
                self.sub(n_extra, target, ptr + "/additionalProperties", depth + 1)
        self.sub(n_extra, c_extra, ptr + "/additionalProperties", depth + 1)


def _enum_key(value: JSON) -> str:
    """A key equal for JSON values JSON Schema calls equal (1 and 1.0 alike; true and 1 not)."""

    def norm(v: JSON) -> JSON:
        if isinstance(v, bool) or v is None or isinstance(v, str):
            return v
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {str(k): norm(x) for k, x in v.items()}
        return v

    import json

    try:
        return json.dumps(norm(value), sort_keys=True, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError):
        return repr(value)


def _accepts(validator: Any, value: JSON) -> bool:
    if validator is None:
        return True
    try:
        return bool(validator.is_valid(value))
    except Exception:  # noqa: BLE001 - a value the narrowed schema cannot judge counts as accepted
        return True


def _with_siblings(branch: JSON, parent: dict[str, JSON], key: str) -> JSON:
    """A branch of N's anyOf/oneOf: N's `type` applies to it too when the branch has none."""
    if isinstance(branch, dict) and "type" not in branch and "type" in parent:
        return {**branch, "type": parent["type"]}
    return branch


def _applies(key: str, types: frozenset[str]) -> bool:
    """Whether C's keyword `key` constrains values of the given types."""
    if key in STRING_KEYS:
        return "string" in types
    if key in NUMBER_KEYS:
        return bool(types & {"number", "integer"})
    if key in ARRAY_KEYS:
        return "array" in types
    if key in OBJECT_KEYS:
        return "object" in types
    return True


def _bound(
    n: dict[str, JSON], inclusive: str, exclusive: str, *, lower: bool
) -> tuple[Fraction | None, bool]:
    """N's tightest bound (value, exclusive?) from its inclusive and exclusive keywords."""
    best: tuple[Fraction | None, bool] = (None, False)
    for key, excl in ((inclusive, False), (exclusive, True)):
        value = _num(n.get(key)) if key in n else None
        if value is None:
            continue
        cur, cur_excl = best
        tighter = (
            cur is None or (value > cur if lower else value < cur) or (value == cur and excl and not cur_excl)
        )
        if tighter:
            best = (value, excl)
    return best


def _lower(n: dict[str, JSON], c: dict[str, JSON], key: str, ptr: str) -> None:
    if key not in c:
        return
    limit = _num(c[key])
    have = _num(n.get(key)) if key in n else Fraction(0)
    if limit is None or have is None or have < limit:
        raise _Fail(ptr, f"the canonical schema requires {key} {c[key]}", f"add `{key}: {c[key]}` (or more)")


def _upper(n: dict[str, JSON], c: dict[str, JSON], key: str, ptr: str) -> None:
    if key not in c:
        return
    limit = _num(c[key])
    have = _num(n.get(key)) if key in n else None
    if limit is None or have is None or have > limit:
        raise _Fail(ptr, f"the canonical schema requires {key} {c[key]}", f"add `{key}: {c[key]}` (or less)")


def _show(value: JSON) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:59] + "\u2026"


def narrowed_schema_problem(schema: JSON) -> SubsetProblem | None:
    """A narrowed schema that is not a valid, self-contained JSON Schema 2020-12 object: its first
    problem (``$ref`` anywhere, or a meta-schema violation), else None."""
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    if not isinstance(schema, dict):
        return SubsetProblem(
            "", "a narrowed schema must be a JSON Schema object", "write e.g. `{type: string}`"
        )
    stack: list[tuple[str, JSON]] = [("", schema)]
    while stack:
        ptr, node = stack.pop()
        if isinstance(node, dict):
            if "$ref" in node or "$dynamicRef" in node:
                return SubsetProblem(ptr, "a narrowed schema cannot use $ref", "write the schema inline")
            stack.extend((f"{ptr}/{escape_token(str(k))}", v) for k, v in node.items())
        elif isinstance(node, list):
            stack.extend((f"{ptr}/{i}", v) for i, v in enumerate(node))
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        where = "".join("/" + escape_token(str(p)) for p in exc.absolute_path)
        return SubsetProblem(
            where,
            f"not a valid JSON Schema 2020-12: {exc.message}",
            "fix the schema (https://json-schema.org/draft/2020-12)",
        )
    return None
