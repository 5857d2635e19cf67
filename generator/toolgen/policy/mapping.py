"""Kernel `policy_mapping`: the values a composite plan maps (docs/composites.md, "The mapping language").

Input: nothing (values built by lowering or read by `toolgen.policy.format`). Output: `InputRef`
(the composite's argument at a JSON pointer), `StepRef` (an earlier step's answer body at a JSON
pointer) and `LiteralValue` (JSON whose members may be references), each with its ``policy.json``
form (`to_json`), and `mapping_references`, what a mapping value reads. `toolgen.policy.format`
re-exports them; the runtime resolves them (`toolgen.runtime.pipeline.composite`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

JSON = Any  # a JSON value: dict/list/str/int/float/bool/None

__all__ = ["InputRef", "LiteralValue", "MappingValue", "Reference", "StepRef", "mapping_references"]


@dataclass(frozen=True)
class InputRef:
    """The composite's argument value at `pointer` (RFC 6901; ``/customer``: the argument `customer`).
    JSON ``{"$ref": "input", "pointer": P}``."""

    pointer: str

    def to_json(self) -> dict[str, JSON]:
        return {"$ref": "input", "pointer": self.pointer}


@dataclass(frozen=True)
class StepRef:
    """The value at `pointer` in step `step`'s answer body (``""``: all of it).
    JSON ``{"$ref": "step", "step": ID, "pointer": P}``."""

    step: str
    pointer: str

    def to_json(self) -> dict[str, JSON]:
        return {"$ref": "step", "step": self.step, "pointer": self.pointer}


Reference = InputRef | StepRef


@dataclass(frozen=True)
class LiteralValue:
    """A literal argument or output value. `value` is JSON whose members (at any depth) may be
    `InputRef`/`StepRef` values, resolved at call time. JSON ``{"$literal": V}``: inside V a
    reference is its ``{"$ref": ...}`` object, and a literal object that itself has a ``$ref`` or
    ``$literal`` member is written ``{"$literal": {...}}`` so that it cannot be taken for one."""

    value: JSON

    def to_json(self) -> dict[str, JSON]:
        return {"$literal": _literal_json(self.value)}

    def references(self) -> tuple[Reference, ...]:
        """Every reference inside the literal, depth first in member order."""
        found: list[Reference] = []
        _collect_refs(self.value, found)
        return tuple(found)


MappingValue = InputRef | StepRef | LiteralValue


def _literal_json(value: JSON) -> JSON:
    if isinstance(value, (InputRef, StepRef)):
        return value.to_json()
    if isinstance(value, dict):
        inner = {k: _literal_json(v) for k, v in value.items()}
        return {"$literal": inner} if ("$ref" in value or "$literal" in value) else inner
    if isinstance(value, list):
        return [_literal_json(v) for v in value]
    return value


def _collect_refs(value: JSON, found: list[Reference]) -> None:
    if isinstance(value, (InputRef, StepRef)):
        found.append(value)
    for v in value.values() if isinstance(value, dict) else value if isinstance(value, list) else ():
        _collect_refs(v, found)


def mapping_references(value: MappingValue) -> tuple[Reference, ...]:
    """The references a mapping value reads: itself, or those inside a literal."""
    return value.references() if isinstance(value, LiteralValue) else (value,)
