"""One written call order, the code's: the order `toolgen.runtime.pipeline.run` takes its steps in,
read from its source, is the order its docstring, README.md and docs/runtime.md ("The call path":
the arrow line and the numbered steps) state. A step moved in `run`, or in one of the texts, fails
here; and the behaviour the order promises is checked on a real call (permission before validate)."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest
from tests.support.build import REPO

from toolgen.runtime import Actor, Registry

#: the module (the package exports its function `run` under the same name)
run_module = importlib.import_module("toolgen.runtime.pipeline.run")

#: what each step function `run` and `_held` call is a step of (None: not a step of its own: the
#: composite path, the audit record of a permission already checked)
STEP_OF: dict[str, str | None] = {
    "find": "find",
    "admit": "permission",
    "validate_arguments": "validate",
    "canonical_request": "validate",
    "audit": None,
    "check": "approval",
    "bound": "timeout",
    "is_preview": "preview",
    "preview": "preview",
    "credentials": "credentials",
    "wire_request": "credentials",
    "begin": "idempotency",
    "spend": None,
    "Taken": None,
    "acquire": "limits",
    "release": None,
    "attempts": "send",
    "follow": "redirect",
    "judge": "outcome",
    "shape": "output",
    "is_composite": None,
    "run_composite": None,
}


def _step_functions(tree: ast.Module) -> set[str]:
    """The functions `run.py` imports from the step modules of its package (``from .x import f``,
    and ``from . import x`` whose ``x.f`` it calls); not the call state's classes (``.state``)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module not in ("state", "effects"):
            names.update(a.asname or a.name for a in node.names)
    return names


def code_order() -> list[str]:
    """The steps in the order `run` (then `_held`, which it hands over to) first calls them."""
    tree = ast.parse(Path(str(run_module.__file__)).read_text(encoding="utf-8"))
    imported = _step_functions(tree)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    order: list[str] = []
    for name in ("run", "_held"):
        calls = sorted(
            (n for n in ast.walk(functions[name]) if isinstance(n, ast.Call)),
            key=lambda n: (n.lineno, n.col_offset),
        )
        for call in calls:
            func = call.func
            if isinstance(func, ast.Name) and func.id in imported:
                callee = func.id
            elif (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in imported
            ):
                callee = func.attr
            else:
                continue
            assert callee in STEP_OF, f"run.py calls step function {callee!r}: name its step in STEP_OF"
            step = STEP_OF[callee]
            if step is not None and step not in order:
                order.append(step)
    return order


def stated_orders(text: str) -> list[list[str]]:
    """Every arrow chain in `text` that starts at ``find``: its step names in order (a step's words
    in parentheses, and a bracketed ``[...]`` check, are not step names; a step named again keeps
    its first place). A chain ends at a full stop, comma, colon or semicolon outside brackets, or at
    the end of its paragraph."""
    chains = []
    paragraphs = [" ".join(p.replace("`", "").split()) for p in re.split(r"\n\s*\n", text)]
    for flat, match in ((p, m) for p in paragraphs for m in re.finditer(r"\bfind (?:tool )?→", p)):
        depth, items, current = 0, [], ""
        for ch in flat[match.start() :]:
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in ".,:;":
                break
            if depth == 0 and ch == "→":
                items.append(current)
                current = ""
            else:
                current += ch
        items.append(current)
        names: list[str] = []
        for item in items:
            name = re.sub(r"\[[^\]]*\]|\([^)]*\)", "", item).strip()
            if name and name not in names:
                names.append(name)
        chains.append(names)
    return chains


def numbered_steps(markdown: str) -> list[str]:
    """The bold names of the numbered list in docs/runtime.md's "The call path" section."""
    section = markdown.split("## The call path", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"(?m)^\d+\. \*\*([a-z ]+)\*\*", section)


def test_the_code_has_the_order_the_texts_state() -> None:
    order = code_order()
    assert order[:3] == ["find", "permission", "validate"], order
    texts = {
        "run.py": run_module.__doc__ or "",
        "README.md": (REPO / "README.md").read_text(encoding="utf-8"),
        "docs/runtime.md": (REPO / "docs" / "runtime.md").read_text(encoding="utf-8"),
    }
    for name, text in texts.items():
        chains = stated_orders(text)
        assert chains, f"{name} states no call order (an arrow chain from `find`)"
        for chain in chains:
            assert chain == order, f"{name} states {' → '.join(chain)}; run.py takes {' → '.join(order)}"
    assert numbered_steps(texts["docs/runtime.md"]) == order


@pytest.mark.parametrize(
    "text, expected",
    [
        ("in order: find → a (x. y) → b [c → d] → c, then", ["find", "a", "b", "c"]),
        ("find → a → b → a.", ["find", "a", "b"]),
    ],
)
def test_the_reader_of_stated_orders(text: str, expected: list[str]) -> None:
    assert stated_orders(text) == [expected]


def test_a_moved_step_is_caught() -> None:
    """The comparison fails for the order the README stated before (validate before permission)."""
    old = stated_orders("find → validate → permission → approval → timeout → idempotency")[0]
    assert old != code_order()[: len(old)]
    assert stated_orders("find tool → validate input → permission") == [
        ["find tool", "validate input", "permission"]
    ]


def test_permission_is_checked_before_the_arguments_are_read(registry: Registry) -> None:
    """The order on a real call: an actor without the scope, with arguments that are invalid too,
    is refused for the permission (step 2), never for the arguments (step 3)."""
    result = registry.call(
        "get_ticket", {"ticket_id": 12345, "unknown": True}, actor=Actor("nobody", frozenset())
    )
    assert result.error is not None and result.error.code == "permission_denied"
    allowed = registry.call(
        "get_ticket", {"ticket_id": 12345, "unknown": True}, actor=Actor("reader", frozenset({"ticket:read"}))
    )
    assert allowed.error is not None and allowed.error.code == "invalid_arguments"
