"""The mapping language of a composite plan, evaluated: references and literals (docs/composites.md
"The mapping language"; policy.json ``composite.steps[].args`` and ``composite.output``).

A node is a reference ``{"$ref": "input", "pointer": P}`` (into the composite's arguments) or
``{"$ref": "step", "step": ID, "pointer": P}`` (into that step's answer body), or a literal
``{"$literal": V}`` whose objects and arrays may hold references in turn (resolved recursively; an
object ``{"$literal": X}`` inside is X itself, unread: the escape for data that looks like a
reference). Nothing is executed. Pure.

`resolve` raises: `Absent` for an input reference to an argument the caller left out (the step
argument, or the member of a literal, is then omitted: the step's own validation says whether it
was required), `Pending` for a reference to a step whose answer is not known yet (a preview shows
it as "known after step X"), `MissingMember` for a step answer without the member
(``composite_reference_missing``).

`sketch_args` is a step's arguments as far as they are known before the steps they read have
answered: each reference to such a step stands as ``{"known_after": <step id>, "pointer": P}`` (a
preview shows a later write so, and its ``preview_id`` binds it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ....pointer import PointerError, resolve_pointer

__all__ = ["Absent", "MissingMember", "Pending", "references", "resolve", "resolve_args", "sketch_args"]


class Absent(Exception):
    """An input reference whose argument the caller did not give."""

    def __init__(self, pointer: str) -> None:
        super().__init__(pointer)
        self.pointer = pointer


class Pending(Exception):
    """A reference to a step that has not answered (yet)."""

    def __init__(self, step: str) -> None:
        super().__init__(step)
        self.step = step


class MissingMember(Exception):
    """A reference to a member a step's answer does not have."""

    def __init__(self, step: str, pointer: str) -> None:
        super().__init__(step, pointer)
        self.step = step
        self.pointer = pointer


def _is_ref(node: Any) -> bool:
    return isinstance(node, dict) and node.get("$ref") in ("input", "step")


def _deref(node: Mapping[str, Any], inputs: Mapping[str, Any], answers: Mapping[str, Any]) -> Any:
    pointer = str(node.get("pointer") or "")
    if node["$ref"] == "input":
        try:
            return resolve_pointer(inputs, pointer)
        except PointerError:
            raise Absent(pointer) from None
    step = str(node.get("step"))
    if step not in answers:
        raise Pending(step)
    try:
        return resolve_pointer(answers[step], pointer)
    except PointerError:
        raise MissingMember(step, pointer) from None


def _deref_or_mark(
    node: Mapping[str, Any], inputs: Mapping[str, Any], answers: Mapping[str, Any], sketch: bool
) -> Any:
    try:
        return _deref(node, inputs, answers)
    except Pending as pending:
        if not sketch:
            raise
        return {"known_after": pending.step, "pointer": str(node.get("pointer") or "")}


def _walk(value: Any, inputs: Mapping[str, Any], answers: Mapping[str, Any], sketch: bool = False) -> Any:
    """A literal's value with its references resolved; members whose input is absent left out."""
    if _is_ref(value):
        return _deref_or_mark(value, inputs, answers, sketch)
    if isinstance(value, dict):
        if set(value) == {"$literal"}:
            return value["$literal"]
        out: dict[str, Any] = {}
        for key, member in value.items():
            try:
                out[key] = _walk(member, inputs, answers, sketch)
            except Absent:
                continue
        return out
    if isinstance(value, list):
        items = []
        for member in value:
            try:
                items.append(_walk(member, inputs, answers, sketch))
            except Absent:
                continue
        return items
    return value


def resolve(node: Any, inputs: Mapping[str, Any], answers: Mapping[str, Any], *, sketch: bool = False) -> Any:
    """The value of one plan node (see the module docstring); raises `Absent`, `Pending` (not with
    `sketch`: the reference is marked instead), `MissingMember`."""
    if _is_ref(node):
        return _deref_or_mark(node, inputs, answers, sketch)
    if isinstance(node, dict) and "$literal" in node:
        return _walk(node["$literal"], inputs, answers, sketch)
    return _walk(node, inputs, answers, sketch)


def resolve_args(
    args: Mapping[str, Any], inputs: Mapping[str, Any], answers: Mapping[str, Any]
) -> dict[str, Any]:
    """A step's arguments: each node resolved, those whose input is absent left out. Raises
    `Pending`, `MissingMember`."""
    out: dict[str, Any] = {}
    for name, node in args.items():
        try:
            out[name] = resolve(node, inputs, answers)
        except Absent:
            continue
    return out


def sketch_args(
    args: Mapping[str, Any], inputs: Mapping[str, Any], answers: Mapping[str, Any]
) -> dict[str, Any]:
    """A step's arguments as far as they are known (see the module docstring): as `resolve_args`,
    with each reference to a step not in `answers` marked. Raises `MissingMember`."""
    out: dict[str, Any] = {}
    for name, node in args.items():
        try:
            out[name] = resolve(node, inputs, answers, sketch=True)
        except Absent:
            continue
    return out


def references(node: Any) -> list[Mapping[str, Any]]:
    """Every reference in a plan node (a literal's, recursively), in document order."""
    if _is_ref(node):
        return [node]
    if isinstance(node, dict):
        if set(node) == {"$literal"} and not isinstance(node["$literal"], (dict, list)):
            return []
        return [r for member in node.values() for r in references(member)]
    if isinstance(node, list):
        return [r for member in node for r in references(member)]
    return []
