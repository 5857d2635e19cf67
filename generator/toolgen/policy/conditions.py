"""Kernel `conditions`: the CEL expression of a conditional approval (``approval: {when: EXPR}``).

Input: the expression text (CEL, https://github.com/google/cel-spec/blob/master/doc/langdef.md) and,
to check it, the tool's input schema. Output: `check` returns the problems of an expression (syntax
and type errors, each at a line and column of the expression), `Condition.holds` evaluates it on a
call's canonical arguments and its caller.

The expression sees two variables: ``args``, the validated, canonical arguments of the call (the
values the request is built from: an integral ``6e4`` or ``60000.0`` is the integer ``60000``, and
each number is typed by its schema, ``integer`` as a CEL ``int``, ``number`` as a ``double``), and
``caller``, ``{id: string, scopes: list(string)}``. It must be of type ``bool``.

The checker types what the language offers over those variables: literals, ``!``, ``-``, ``&&``,
``||``, ``?:``, comparisons (numbers compare across ``int``, ``uint`` and ``double``; other types
with their own), arithmetic of one numeric type, ``+`` of strings and lists, ``in`` of a list or
map, members of ``args`` (a property the schema does not declare is an error) and ``caller``,
indexes, the macros ``has``, ``all``, ``exists``, ``exists_one``, ``map``, ``filter`` and the
functions ``size``, ``int``, ``uint``, ``double``, ``string``, ``startsWith``, ``endsWith``,
``contains``, ``matches``. Anything else is refused at build, so what the runtime evaluates is what
the build checked.

Evaluation never raises: `Condition.holds` answers True (approval required) when the expression
fails (an optional argument absent, a division by zero, an overflow) or yields no boolean: a
condition that cannot be decided asks for approval (fail closed). So does one whose evaluation would
be too long, without evaluating it: the caller sizes the arguments, so more than `MAX_VALUES`
values, or macros that would visit more than `MAX_VISITS` elements, ask at once.

The implementation is cel-python (``celpy``, a maintained pure-Python CEL: its parser gives every
node a line and column, which the checker reports), imported when a condition is first used.
"""

from __future__ import annotations

import ast
import functools
import sys
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "CALLER_TYPE",
    "Condition",
    "ConditionProblem",
    "check",
    "compile_condition",
    "implies",
    "schema_type",
]

#: The most argument values a condition is evaluated on (converting each to CEL takes about 15 us).
MAX_VALUES = 20_000
#: The most elements its macros may visit, estimated as the values to the power of how deep its
#: comprehension macros nest (cel-python takes about 0.5 ms per visit).
MAX_VISITS = 2_000
_COMPREHENSIONS = frozenset({"all", "exists", "exists_one", "map", "filter"})

#: The CEL type of ``caller``.
CALLER_TYPE: dict[str, Any] = {"id": "string", "scopes": ("list", "string")}

#: A CEL type as the checker writes it: a name (``int``, ``double``, ``uint``, ``string``, ``bool``,
#: ``bytes``, ``null``, ``dyn``), ``("list", T)``, ``("map", T)`` or a dict (an object of known
#: members: ``args``, ``caller``, an object argument).
CelType = Any

_NUMERIC = frozenset({"int", "uint", "double"})
_MACROS_BOOL = frozenset({"all", "exists", "exists_one"})
_STRING_METHODS = {"startsWith": "bool", "endsWith": "bool", "contains": "bool", "matches": "bool"}
_CONVERSIONS = {"int": "int", "uint": "uint", "double": "double", "string": "string"}


@dataclass(frozen=True)
class ConditionProblem:
    """One problem of an expression: `message`, at 1-based `line` and `column` of its text."""

    message: str
    line: int
    column: int


def schema_type(schema: Any, depth: int = 0) -> CelType:
    """The CEL type of a JSON Schema's values: ``integer`` -> int, ``number`` -> double, ``string``,
    ``boolean`` -> bool, ``array`` -> list of its ``items``, ``object`` with ``properties`` -> an
    object of those members, else ``dyn`` (several types, no type, a reference)."""
    if not isinstance(schema, dict) or depth > 16:
        return "dyn"
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "integer":
        return "int"
    if kind == "number":
        return "double"
    if kind == "string":
        return "string"
    if kind == "boolean":
        return "bool"
    if kind == "array":
        return ("list", schema_type(schema.get("items"), depth + 1))
    if kind == "object" and isinstance(schema.get("properties"), dict):
        return {str(k): schema_type(v, depth + 1) for k, v in schema["properties"].items()}
    return "dyn"


def _shown(kind: CelType) -> str:
    if isinstance(kind, dict):
        return "object"
    if isinstance(kind, tuple):
        return f"{kind[0]}({_shown(kind[1])})"
    return str(kind)


def _position(node: Any) -> tuple[int, int]:
    """The 1-based line and column where `node` (a lark tree or token) starts."""
    for _ in range(64):
        if getattr(node, "line", None):
            return int(node.line), int(node.column or 1)
        meta = getattr(node, "meta", None)
        if meta is not None and not getattr(meta, "empty", True):
            return int(meta.line), int(meta.column)
        children = [c for c in getattr(node, "children", ()) if c is not None]
        if not children:
            break
        node = children[0]
    return 1, 1


class _Refused(Exception):
    def __init__(self, message: str, node: Any) -> None:
        super().__init__(message)
        self.line, self.column = _position(node)


@dataclass
class _Checker:
    """Types a celpy parse tree (see the module docstring); raises `_Refused` at the first error."""

    names: dict[str, CelType] = field(default_factory=dict)

    def type_of(self, node: Any) -> CelType:
        method = getattr(self, "_" + str(node.data), None)
        if method is None:
            raise _Refused(f"{node.data} is not supported in an approval condition", node)
        result: CelType = method(node)
        return result

    def _pass(self, node: Any) -> CelType:
        return self.type_of(node.children[-1])

    _primary = _paren_expr = _pass

    def _expr(self, node: Any) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        self._want(node.children[0], "bool", "the condition of ?:")
        then, other = self.type_of(node.children[1]), self.type_of(node.children[2])
        return then if then == other or other == "null" else other if then == "null" else "dyn"

    def _logic(self, node: Any, word: str) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        self._want(node.children[0], "bool", f"the left side of {word}")
        self._want(node.children[1], "bool", f"the right side of {word}")
        return "bool"

    def _conditionalor(self, node: Any) -> CelType:
        return self._logic(node, "||")

    def _conditionaland(self, node: Any) -> CelType:
        return self._logic(node, "&&")

    def _want(self, node: Any, wanted: str, what: str) -> None:
        got = self.type_of(node)
        if got not in (wanted, "dyn"):
            raise _Refused(f"{what} is {_shown(got)}, not {wanted}", node)

    def _relation(self, node: Any) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        operator, right_node = node.children
        left, right = self.type_of(operator.children[0]), self.type_of(right_node)
        op = str(operator.data)
        if op == "relation_in":
            return self._in(left, right, right_node)
        if "dyn" in (left, right) or (left == right and not isinstance(left, dict)):
            return "bool"
        if left in _NUMERIC and right in _NUMERIC:
            return "bool"
        if op in ("relation_eq", "relation_ne") and "null" in (left, right):
            return "bool"
        sign = {
            "relation_lt": "<",
            "relation_le": "<=",
            "relation_gt": ">",
            "relation_ge": ">=",
            "relation_eq": "==",
            "relation_ne": "!=",
        }[op]
        raise _Refused(
            f"{_shown(left)} {sign} {_shown(right)} compares values of different types "
            "(numbers compare with numbers, strings with strings)",
            node,
        )

    def _in(self, left: CelType, right: CelType, where: Any) -> CelType:
        if right == "dyn":
            return "bool"
        if isinstance(right, tuple):
            inner = right[1]
            if "dyn" in (left, inner) or left == inner or {left, inner} <= _NUMERIC:
                return "bool"
            raise _Refused(f"a {_shown(left)} is never in a {_shown(right)}", where)
        raise _Refused(f"`in` needs a list or a map on its right, not {_shown(right)}", where)

    def _addition(self, node: Any) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        operator, right_node = node.children
        left, right = self.type_of(operator.children[0]), self.type_of(right_node)
        if "dyn" in (left, right):
            return "dyn"
        if left == right and (
            left in _NUMERIC
            or (operator.data == "addition_add" and (left in ("string", "bytes") or isinstance(left, tuple)))
        ):
            return left
        if left in _NUMERIC and right in _NUMERIC:
            raise _Refused(
                f"{_shown(left)} and {_shown(right)} do not mix in arithmetic: convert one "
                "(double(x), int(x)) or write the literal as the other (50000.0)",
                node,
            )
        raise _Refused(f"no arithmetic of {_shown(left)} and {_shown(right)}", node)

    def _multiplication(self, node: Any) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        operator, right_node = node.children
        left, right = self.type_of(operator.children[0]), self.type_of(right_node)
        if "dyn" in (left, right):
            return "dyn"
        if (
            left == right
            and left in _NUMERIC
            and not (operator.data == "multiplication_mod" and left == "double")
        ):
            return left
        raise _Refused(
            f"no {str(operator.data).split('_')[1]} of {_shown(left)} and {_shown(right)}"
            + (": convert one (double(x), int(x))" if {left, right} <= _NUMERIC else ""),
            node,
        )

    def _unary(self, node: Any) -> CelType:
        if len(node.children) == 1:
            return self.type_of(node.children[0])
        operator, operand = node.children
        if operator.data == "unary_not":
            self._want(operand, "bool", "the operand of !")
            return "bool"
        kind = self.type_of(operand)
        if kind in ("int", "double", "dyn"):
            return kind
        raise _Refused(f"no negation of {_shown(kind)}", node)

    def _member(self, node: Any) -> CelType:
        return self.type_of(node.children[0])

    def _member_dot(self, node: Any) -> CelType:
        target, name = node.children
        return self._field(self.type_of(target), str(name), node, target)

    def _field(self, kind: CelType, name: str, node: Any, target: Any) -> CelType:
        if isinstance(kind, dict):
            if name not in kind:
                known = ", ".join(sorted(kind)) or "none"
                raise _Refused(
                    f"{_source(target)} has no member {name!r} (its members: {known})",
                    node.children[1] if len(getattr(node, "children", ())) > 1 else node,
                )
            return kind[name]
        if kind == "dyn" or (isinstance(kind, tuple) and kind[0] == "map"):
            return "dyn" if kind == "dyn" else kind[1]
        raise _Refused(f"a {_shown(kind)} has no members (.{name})", node)

    def _member_index(self, node: Any) -> CelType:
        target, index = node.children
        kind, key = self.type_of(target), self.type_of(index)
        if kind == "dyn":
            return "dyn"
        if isinstance(kind, tuple) and kind[0] == "list":
            if key not in ("int", "uint", "dyn"):
                raise _Refused(f"a list is indexed by an int, not {_shown(key)}", index)
            return kind[1]
        if isinstance(kind, tuple) and kind[0] == "map":
            return kind[1]
        if isinstance(kind, dict):  # args["in"]: a member whose name CEL reserves, by a string literal
            literal = _unwrap(index)
            if literal is not None and literal.data == "literal" and literal.children[0].type == "STRING_LIT":
                return self._field(
                    kind, str(ast.literal_eval(str(literal.children[0]).lstrip("rR"))), node, target
                )
            if key in ("string", "dyn"):
                return "dyn"
        raise _Refused(f"a {_shown(kind)} cannot be indexed by {_shown(key)}", node)

    def _member_dot_arg(self, node: Any) -> CelType:
        target, name = node.children[0], str(node.children[1])
        params = (
            list(node.children[2].children) if len(node.children) > 2 and node.children[2] is not None else []
        )
        kind = self.type_of(target)
        if name in _MACROS_BOOL | {"map", "filter"}:
            return self._macro(name, kind, params, node)
        if name == "size" and not params:
            return self._size(kind, node)
        if name in _STRING_METHODS and len(params) == 1:
            if kind not in ("string", "dyn"):
                raise _Refused(f"{name} is a method of strings, not of {_shown(kind)}", node)
            self._want(params[0], "string", f"the argument of {name}")
            return _STRING_METHODS[name]
        raise _Refused(f"unknown method {name}() with {len(params)} argument(s)", node)

    def _macro(self, name: str, kind: CelType, params: list[Any], node: Any) -> CelType:
        if len(params) != 2 or _identifier(params[0]) is None:
            raise _Refused(f"{name}(x, predicate) takes a variable name and an expression", node)
        if kind == "dyn":
            inner: CelType = "dyn"
        elif isinstance(kind, tuple):
            inner = kind[1] if kind[0] == "list" else "string" if kind[1] == "dyn" else "dyn"
        else:
            raise _Refused(f"{name}() runs over a list or a map, not {_shown(kind)}", node)
        variable = _identifier(params[0])
        assert variable is not None
        inner_checker = _Checker({**self.names, variable: inner})
        body = inner_checker.type_of(params[1])
        if name == "map":
            return ("list", body)
        if body not in ("bool", "dyn"):
            raise _Refused(f"the predicate of {name}() is {_shown(body)}, not bool", params[1])
        return kind if name == "filter" else "bool"

    def _size(self, kind: CelType, node: Any) -> CelType:
        if kind in ("string", "bytes", "dyn") or isinstance(kind, tuple):
            return "int"
        raise _Refused(f"size() of a {_shown(kind)}", node)

    def _ident_arg(self, node: Any) -> CelType:
        name = str(node.children[0])
        params = (
            list(node.children[1].children) if len(node.children) > 1 and node.children[1] is not None else []
        )
        if name == "has" and len(params) == 1:
            inner = _unwrap(params[0])
            if inner is None or inner.data != "member_dot":
                raise _Refused("has() takes a member, e.g. has(args.amount)", node)
            self.type_of(inner)
            return "bool"
        if name == "size" and len(params) == 1:
            return self._size(self.type_of(params[0]), node)
        if name in _CONVERSIONS and len(params) == 1:
            kind = self.type_of(params[0])
            if kind not in _NUMERIC | {"string", "dyn"}:
                raise _Refused(f"{name}() converts a number or a string, not {_shown(kind)}", node)
            return _CONVERSIONS[name]
        raise _Refused(f"unknown function {name}() with {len(params)} argument(s)", node)

    def _ident(self, node: Any) -> CelType:
        name = str(node.children[0])
        if name not in self.names:
            raise _Refused(
                f"unknown name {name!r}: the condition reads args.<argument>, caller.id and caller.scopes",
                node,
            )
        return self.names[name]

    def _literal(self, node: Any) -> CelType:
        token = node.children[0]
        return {
            "INT_LIT": "int",
            "UINT_LIT": "uint",
            "FLOAT_LIT": "double",
            "STRING_LIT": "string",
            "MLSTRING_LIT": "string",
            "BYTES_LIT": "bytes",
            "BOOL_LIT": "bool",
            "NULL_LIT": "null",
        }.get(str(token.type), "dyn")

    def _list_lit(self, node: Any) -> CelType:
        items = (
            [self.type_of(c) for c in node.children[0].children] if node.children and node.children[0] else []
        )
        return ("list", items[0] if items and all(i == items[0] for i in items) else "dyn")

    def _map_lit(self, node: Any) -> CelType:
        if node.children and node.children[0] is not None:
            for child in node.children[0].children:
                self.type_of(child)
        return ("map", "dyn")


#: the rules of CEL's grammar that wrap a single child: a chain of them is one node
_WRAPPERS = frozenset(
    (
        "expr",
        "conditionalor",
        "conditionaland",
        "relation",
        "addition",
        "multiplication",
        "unary",
        "member",
        "primary",
    )
)
_WRAPPERS_AND_PARENTHESES = _WRAPPERS | {"paren_expr"}


def _unwrap(node: Any) -> Any:
    """The single innermost node of a chain of one-child wrappers (expr, relation, ..., member)."""
    while hasattr(node, "data") and node.data in _WRAPPERS and len(node.children) == 1:
        node = node.children[0]
    return node if hasattr(node, "data") else None


def _identifier(node: Any) -> str | None:
    inner = _unwrap(node)
    return str(inner.children[0]) if inner is not None and inner.data == "ident" else None


def _source(node: Any) -> str:
    inner = _unwrap(node)
    if inner is not None and inner.data == "ident":
        return str(inner.children[0])
    if inner is not None and inner.data == "member_dot":
        return f"{_source(inner.children[0])}.{inner.children[1]}"
    return "the value"


@functools.cache
def _environment() -> Any:
    """celpy's environment. Making one sets the process's recursion limit to 2,500 (celpy's own
    choice, for its recursive parser), which would change what every later reader in the process
    follows (how deep a YAML file may nest before it is refused, `toolgen.compile.load`); the limit is
    put back, and an expression nested past what the parser then follows is refused (`check`)."""
    import celpy

    limit = sys.getrecursionlimit()
    try:
        return celpy.Environment()
    finally:
        sys.setrecursionlimit(limit)


def _parse(text: str) -> Any:
    """The celpy parse tree of `text`; raises `ConditionProblem` wrapped in `_Refused`."""
    from celpy.celparser import CELParseError

    try:
        return _environment().compile(text)
    except CELParseError as exc:
        line, column = int(exc.line or 1), int(exc.column or 1)
        lines = text.splitlines() or [""]
        rest = lines[line - 1][column - 1 :] if line <= len(lines) else ""
        found = f"at {rest[:20]!r}" if rest.strip() else "at the end of the expression"
        raise _Located(f"syntax error {found}: not a CEL expression", line, column) from None


class _Located(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.problem = ConditionProblem(message, line, column)


def check(text: str, input_schema: Any) -> list[ConditionProblem]:
    """The problems of the condition `text` over a tool whose arguments have `input_schema`: a
    syntax error, a type error (a member ``args`` does not declare, values of different types
    compared, a function the checker does not know) or a result that is not ``bool``; empty when it
    is sound. Each problem's line and column are within `text`."""
    if not isinstance(text, str) or not text.strip():
        return [
            ConditionProblem("an empty condition: write a CEL expression such as args.amount > 50000", 1, 1)
        ]
    try:
        tree = _parse(text)
        args = schema_type(input_schema)
        kind = _Checker({"args": args if isinstance(args, dict) else {}, "caller": CALLER_TYPE}).type_of(tree)
    except _Located as exc:
        return [exc.problem]
    except _Refused as exc:
        return [ConditionProblem(str(exc), exc.line, exc.column)]
    except RecursionError:  # parentheses or operators nested past what the parser and checker follow
        return [ConditionProblem("the condition nests too deeply: write it with fewer nested parts", 1, 1)]
    if kind not in ("bool", "dyn"):
        return [ConditionProblem(f"the condition is {_shown(kind)}, not bool", 1, 1)]
    return []


@dataclass(frozen=True)
class Condition:
    """A checked condition ready to evaluate: `text` and the CEL types of the arguments (`types`,
    by `schema_type` of the input schema), used to type each number as its schema says."""

    text: str
    types: CelType
    program: Any
    #: how deep its comprehension macros nest (0: none), for the budget (`MAX_VISITS`)
    depth: int = 0

    def holds(
        self, args: dict[str, Any], caller_id: str, scopes: list[str] | tuple[str, ...]
    ) -> tuple[bool, str]:
        """``(approval required, why)``: the expression's value on `args` (the canonical arguments)
        and the caller; ``(True, "evaluation failed: ...")`` when it fails or is not a bool (fail
        closed), or without evaluating when that would exceed `MAX_VALUES` or `MAX_VISITS`. Never
        raises."""
        values = _count_values(args, MAX_VALUES + 1)
        if values > MAX_VALUES or (self.depth and values**self.depth > MAX_VISITS):
            return True, f"evaluation failed (too large: {values} values, macros nested {self.depth} deep)"
        try:
            from celpy.adapter import json_to_cel

            activation = {
                "args": _typed(args, self.types),
                "caller": json_to_cel({"id": str(caller_id), "scopes": [str(s) for s in scopes]}),
            }
            value = self.program.evaluate(activation)
        except Exception as exc:  # noqa: BLE001 - any evaluation error requires approval (fail closed)
            return True, f"evaluation failed ({type(exc).__name__})"
        from celpy import celtypes

        if isinstance(value, (bool, celtypes.BoolType)):
            return bool(value), "true" if value else "false"
        return True, f"evaluation failed ({type(value).__name__}, not bool)"


def compile_condition(text: str, input_schema: Any) -> Condition:
    """The `Condition` of `text` for a tool of `input_schema`. Raises `ValueError` naming the first
    problem (`check`) when it is not sound."""
    problems = check(text, input_schema)
    if problems:
        first = problems[0]
        raise ValueError(
            f"approval condition {text!r}: {first.message} (line {first.line}, column {first.column})"
        )
    tree = _parse(text)
    return Condition(text, schema_type(input_schema), _environment().program(tree), _macro_depth(tree))


def _macro_depth(tree: Any) -> int:
    """How deep the comprehension macros of a parse tree nest: a macro inside another's predicate
    counts one more (its target does not: ``xs.map(...).filter(...)`` visits each element twice)."""
    deepest, stack = 0, [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        children = [c for c in getattr(node, "children", ()) if c is not None]
        if getattr(node, "data", None) == "member_dot_arg" and str(node.children[1]) in _COMPREHENSIONS:
            deepest = max(deepest, depth + 1)
            stack.append((node.children[0], depth))
            stack.extend((c, depth + 1) for c in children[2:])
        else:
            stack.extend((c, depth) for c in children)
    return deepest


def _count_values(value: Any, most: int) -> int:
    """The values in `value` (itself, each list item and map value, all the way down), counted up
    to `most`."""
    count, stack = 0, [value]
    while stack and count < most:
        item = stack.pop()
        count += 1
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return count


def _typed(value: Any, kind: CelType) -> Any:
    """`value` as a CEL value, each number typed as its schema says (``integer`` int, ``number``
    double), whatever JSON spelling it came in; other values as `celpy.json_to_cel` makes them."""
    from celpy import celtypes
    from celpy.adapter import json_to_cel

    if isinstance(value, bool) or value is None:
        return json_to_cel(value)
    if isinstance(value, (int, float)):
        if kind == "double":
            return celtypes.DoubleType(float(value))
        if kind == "int" and (isinstance(value, int) or float(value).is_integer()):
            return celtypes.IntType(int(value))
        return json_to_cel(value)
    if isinstance(value, dict):
        members = kind if isinstance(kind, dict) else {}
        return celtypes.MapType(
            {celtypes.StringType(str(k)): _typed(v, members.get(str(k), "dyn")) for k, v in value.items()}
        )
    if isinstance(value, list):
        inner = kind[1] if isinstance(kind, tuple) else "dyn"
        return celtypes.ListType([_typed(v, inner) for v in value])
    return json_to_cel(value)


def _parts(tree: Any, rule: str) -> list[Any]:
    """The operands of a chain of `rule` (``conditionalor``: the disjuncts, ``conditionaland``: the
    conjuncts) under `tree`, each with its one-child wrappers and parentheses taken off."""
    node = tree
    while hasattr(node, "data") and len(node.children) == 1 and node.data in _WRAPPERS_AND_PARENTHESES:
        node = node.children[0]
    if hasattr(node, "data") and node.data == rule:
        return _parts(node.children[0], rule) + _parts(node.children[1], rule)
    return [node]


def _plain(tree: Any) -> Any:
    """A parse tree without positions, for comparing two expressions whatever their spacing."""
    if hasattr(tree, "data"):
        return (str(tree.data), tuple(_plain(c) for c in tree.children))
    return None if tree is None else (getattr(tree, "type", ""), str(tree))


def implies(old: str, new: str) -> bool:
    """Whether condition `new` asks for approval at least whenever `old` does, by their form: a
    disjunct of `new` (or `new` whole) whose conjuncts are all conjuncts of `old` (``old`` itself,
    ``old || X``, ``A`` for ``A && B``), spacing and parentheses aside. CEL's ``&&`` and ``||`` absorb an error when another operand
    decides, so an error of `old` (which asks) leaves such a disjunct true or in error (which asks
    too). False when either does not parse, or the forms say nothing (a changed threshold)."""
    try:
        old_tree, new_tree = _parse(old), _parse(new)
    except _Located:
        return False
    conjuncts = {_plain(c) for c in _parts(old_tree, "conditionaland")}
    if {_plain(c) for c in _parts(new_tree, "conditionaland")} <= conjuncts:
        return True
    return any(
        {_plain(c) for c in _parts(d, "conditionaland")} <= conjuncts
        for d in _parts(new_tree, "conditionalor")
    )
