"""Kernel `policy_nodes`: reading a JSON value member by member, each failure located.

Input: a JSON value (a parsed ``policy.json``) and the display path of its file. Output: `Node`s whose
getters return typed members or raise `PolicyFormatError` naming the member's JSON pointer (RFC 6901)
and what to do. `toolgen.policy.format` reads the policy table with them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, get_args

from ..diagnostics import Diagnostic, SourceLocation
from ..pointer import escape_token

JSON = Any  # a JSON value: dict/list/str/int/float/bool/None


class PolicyFormatError(ValueError):
    """A ``policy.json`` that is not of this format: `pointer` is the JSON pointer of the offending
    member (``""``: the whole document), `hint` what to do, `file` the display path read."""

    def __init__(self, message: str, pointer: str, hint: str, file: str = "policy.json"):
        self.message, self.pointer, self.hint, self.file = message, pointer, hint, file
        super().__init__(f"{file}#{pointer}: {message} (hint: {hint})")

    def diagnostic(self, code: str = "policy-format-invalid") -> Diagnostic:
        """The error as a located `Diagnostic` (severity error)."""
        return Diagnostic(
            code, "error", self.message, SourceLocation(self.file, pointer=self.pointer), self.hint
        )


#: the hint of a malformed member: policy.json is generated
REBUILD = "rebuild the API with `toolgen build` (policy.json is generated; do not edit it)"
MISSING = object()
T = TypeVar("T")


class Node:
    """A JSON value at a pointer; the getters raise `PolicyFormatError` located at the member."""

    def __init__(self, value: JSON, pointer: str, file: str):
        self.value, self.pointer, self.file = value, pointer, file

    def fail(self, message: str, key: str | int | None = None, hint: str = REBUILD) -> PolicyFormatError:
        where = self.pointer if key is None else f"{self.pointer}/{escape_token(str(key))}"
        return PolicyFormatError(message, where, hint, self.file)

    def obj(self) -> dict[str, JSON]:
        if not isinstance(self.value, dict):
            raise self.fail(f"expected an object, found {kind_of(self.value)}")
        return self.value

    def exactly(self, names: tuple[str, ...]) -> dict[str, JSON]:
        """The object, refused (located at the member) when it holds a member not in `names` (a typo,
        or a member of another format) or lacks one of them: every member is written on every object
        (`toolgen.policy.members`), so neither is read as a default."""
        members = self.obj()
        for key in members:
            if key not in names:
                raise self.fail(f"unknown member {key!r}; this object's members are {', '.join(names)}", key)
        for key in names:
            if key not in members:
                raise self.fail(f"required member {key!r} is missing", key)
        return members

    def child(self, key: str | int, value: JSON) -> Node:
        return Node(value, f"{self.pointer}/{escape_token(str(key))}", self.file)

    def get(self, key: str, default: JSON = MISSING) -> Node:
        members = self.obj()
        if key not in members:
            if default is MISSING:
                raise self.fail(f"required member {key!r} is missing", key)
            return self.child(key, default)
        return self.child(key, members[key])

    def text(self) -> str:
        if not isinstance(self.value, str):
            raise self.fail(f"expected a string, found {kind_of(self.value)}")
        return self.value

    def opt_text(self) -> str | None:
        return None if self.value is None else self.text()

    def integer(self) -> int:
        if isinstance(self.value, bool) or not isinstance(self.value, int):
            raise self.fail(f"expected an integer, found {kind_of(self.value)}")
        return self.value

    def opt_integer(self) -> int | None:
        return None if self.value is None else self.integer()

    def at_least(self, minimum: int) -> int:
        """An integer no less than `minimum` (a bound the runtime relies on, e.g. a timeout of 1 ms)."""
        value = self.integer()
        if value < minimum:
            raise self.fail(f"{shown(value)} is below the least value {minimum}")
        return value

    def between(self, minimum: int, maximum: int) -> int:
        """An integer from `minimum` to `maximum`: the bounds the build itself writes within (a
        lifetime or a wait the runtime computes with must stay a finite, representable time)."""
        value = self.at_least(minimum)
        if value > maximum:
            raise self.fail(f"{shown(value)} is above the greatest value {maximum}")
        return value

    def flag(self) -> bool:
        if not isinstance(self.value, bool):
            raise self.fail(f"expected true or false, found {kind_of(self.value)}")
        return self.value

    def opt_flag(self) -> bool | None:
        return None if self.value is None else self.flag()

    def choice(self, kind: Any) -> Any:
        allowed: tuple[str, ...] = get_args(kind)
        if self.value not in allowed:
            raise self.fail(f"{shown(self.value)} is not one of {', '.join(allowed)}")
        return self.value

    def items(self) -> list[Node]:
        if not isinstance(self.value, list):
            raise self.fail(f"expected an array, found {kind_of(self.value)}")
        return [self.child(i, v) for i, v in enumerate(self.value)]

    def tuple_of(self, read: Callable[[Node], T]) -> tuple[T, ...]:
        return tuple(read(n) for n in self.items())


def shown(value: JSON, limit: int = 80) -> str:
    """`value` as an error names it: its repr, cut to `limit` characters; an integer too long to
    write out (Python refuses past 4300 digits) by its sign and size alone."""
    try:
        text = repr(value)
    except ValueError:
        return (
            f"{'-' if value < 0 else ''}an integer of about {int(abs(value).bit_length() * 0.30103)} digits"
        )
    return text if len(text) <= limit else text[: limit - 1] + "…"


def kind_of(value: JSON) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return (
        "an array"
        if isinstance(value, list)
        else "an object"
        if isinstance(value, dict)
        else type(value).__name__
    )


def one_of_each(pairs: list[tuple[str, JSON]]) -> dict[str, JSON]:
    """An object of the file, refused when it names a member twice: readers differ on which of the two
    counts (this one kept the last, a reviewer or another tool may read the first), and the build
    never writes one twice."""
    members: dict[str, JSON] = {}
    for key, value in pairs:
        if key in members:
            raise ValueError(f"member {key!r} appears twice in one object")
        members[key] = value
    return members


def no_constant(name: str) -> JSON:
    """``NaN``, ``Infinity`` and ``-Infinity`` are no JSON (RFC 8259): refused, never read as a number."""
    raise ValueError(f"{name} is not a JSON number")


__all__ = [
    "JSON",
    "MISSING",
    "REBUILD",
    "Node",
    "PolicyFormatError",
    "kind_of",
    "no_constant",
    "one_of_each",
    "shown",
]
