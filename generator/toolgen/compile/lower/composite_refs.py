"""Stage `lower`, composites: the mapping language (docs/composites.md, "The mapping language").

Input: a YAML value of a composite's `args` or `output`. Output: a mapping value of the policy format:
a reference (`InputRef` for ``$input/<argument>...``, `StepRef` for ``$<step id>[/<JSON pointer>]``)
or a `LiteralValue` whose members may be references (``$$`` starts a literal ``$``). Nothing is
executed. A malformed reference is a located error (``composite-reference-invalid``). Also: the
cycle through a step's references, for ``composite-cycle``.
"""

from __future__ import annotations

import re
from typing import Any

from ...diagnostics import DiagnosticSink, SourceLocation
from ...naming import ARG_NAME_RE
from ...pointer import PointerError, parse_pointer
from ...policy.format import InputRef, LiteralValue, MappingValue, Reference, StepRef

#: the step id references use for the composite's own arguments
INPUT = "input"


def parse_value(raw: Any, where: SourceLocation, sink: DiagnosticSink) -> MappingValue | None:
    """A YAML value of `args` / `output` -> a mapping value (docs/composites.md, "The mapping
    language"); a malformed reference is a located error (None)."""
    if isinstance(raw, str) and raw.startswith("$") and not raw.startswith("$$"):
        return parse_ref(raw, where, sink)
    ok = True

    def walk(node: Any) -> Any:
        nonlocal ok
        if isinstance(node, str):
            if node.startswith("$$"):
                return node[1:]
            if node.startswith("$"):
                ref = parse_ref(node, where, sink)
                if ref is None:
                    ok = False
                return ref
            return node
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    value = walk(raw)
    return LiteralValue(value) if ok else None


#: a `~` not starting an RFC 6901 escape (`~0`, `~1`)
_BAD_ESCAPE = re.compile(r"~(?![01])")


def parse_ref(text: str, where: SourceLocation, sink: DiagnosticSink) -> Reference | None:
    head, _, rest = text[1:].partition("/")
    pointer = "/" + rest if _ else ""
    hint = (
        "write `$input/<argument>` or `$<step id>/<JSON pointer into its answer>`, e.g. $customer/id; "
        "`$$` starts a literal `$`"
    )
    if not head or not all(c.isalnum() or c == "_" for c in head) or not head[0].isalpha():
        sink.error("composite-reference-invalid", f"{text!r} is not a reference", where, hint)
        return None
    try:
        tokens = parse_pointer(pointer)
    except PointerError:
        tokens = None
    if tokens is None or _BAD_ESCAPE.search(pointer):  # RFC 6901 §3: `~` only as `~0` or `~1`
        sink.error(
            "composite-reference-invalid",
            f"{text!r}: {pointer!r} is not a JSON pointer",
            where,
            hint + "; inside a pointer `~0` is `~` and `~1` is `/`",
        )
        return None
    if head == INPUT:
        if not pointer:
            sink.error(
                "composite-reference-invalid",
                f"{text!r} names the whole input; name one argument",
                where,
                "write `$input/<argument>`",
            )
            return None
        if not ARG_NAME_RE.fullmatch(tokens[0]):  # the name becomes an argument of every dialect's catalog
            sink.error(
                "composite-reference-invalid",
                f"{text!r} names argument {tokens[0]!r}, which is not an argument name",
                where,
                "name the argument with letters, digits and '_' (at most 64, "
                "not starting with a digit): `$input/<argument>`",
            )
            return None
        return InputRef(pointer)
    return StepRef(head, pointer)


def in_cycle(start: str, needs: dict[str, set[str]]) -> bool:
    return bool(cycle_path(start, needs))


def cycle_path(start: str, needs: dict[str, set[str]]) -> list[str]:
    """`start`, the steps it reads through, and `start` again; [] when no cycle passes through it."""
    stack: list[tuple[str, list[str]]] = [(n, [start, n]) for n in sorted(needs.get(start, ()))]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        if node == start:
            return path
        if node in seen:
            continue
        seen.add(node)
        stack.extend((n, [*path, n]) for n in sorted(needs.get(node, ())))
    return []
