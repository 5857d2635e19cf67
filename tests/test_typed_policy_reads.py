"""No step of the call path reads a policy row by string key: every step reads the typed
`toolgen.policy.format.PolicyRow` the runtime loaded with the build's reader (docs/runtime.md,
"Loading"), so a member the reader did not check cannot reach a decision.

The check walks the syntax tree of every module of ``runtime/pipeline/`` and of the modules the
steps read rows through (tool loading, request building, credentials, identity, issued approvals),
and refuses ``row["..."]``, ``row.get("...")``, ``<x>.row["..."]`` and ``<x>.row.get("...")`` (any
name ending in ``row``), and a ``json.loads`` of a policy table in the registry. It is shown to
catch each form on a sample before it is trusted on the tree.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "generator" / "toolgen"
RUNTIME = PACKAGE / "runtime"
CHECKED = sorted(
    [
        *(RUNTIME / "pipeline").rglob("*.py"),
        *(
            RUNTIME / name
            for name in (
                "call/toolspec.py",
                "serving/registry.py",
                "call/request.py",
                "call/credentials.py",
                "identity.py",
                "serving/issuing.py",
                "call/stored_previews.py",
                "serving/search_tools.py",
            )
        ),
    ]
)


def _row_like(node: ast.expr) -> bool:
    """A name or attribute that holds a policy row (`row`, `record_row`, `spec.row`...)."""
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name == "row" or name.endswith("_row")


def string_key_reads(source: str) -> list[str]:
    """``line: text`` of every string-key read of a row in `source`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        keyed = (
            isinstance(node, ast.Subscript)
            and _row_like(node.value)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        )
        got = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _row_like(node.func.value)
        )
        if keyed or got:
            found.append(f"{getattr(node, 'lineno', 0)}: {ast.unparse(node)}")
    return found


@pytest.mark.parametrize(
    "sample",
    [
        'row["approval"]',
        'row.get("approval")',
        'spec.row.get("mode", "read")',
        'spec.row["idempotency"]["arg"]',
        'record_row.get("record")',
    ],
)
def test_the_check_catches_each_form(sample: str) -> None:
    assert string_key_reads(sample), sample


def test_the_check_lets_typed_reads_and_database_rows_pass() -> None:
    assert (
        string_key_reads("spec.row.approval == 'required'\nrow[0]\nrows.get('x')\nspec.row.output.fields")
        == []
    )


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: str(p.relative_to(RUNTIME)))
def test_no_step_reads_a_policy_row_by_string_key(path: Path) -> None:
    assert string_key_reads(path.read_text(encoding="utf-8")) == []


def test_the_registry_reads_the_table_with_the_typed_reader() -> None:
    source = (RUNTIME / "serving" / "registry.py").read_text(encoding="utf-8")
    assert "read_policy(" in source and "from_json(" in source
    loads = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and ast.unparse(n.func) == "json.loads" and "policy" in ast.unparse(n)
    ]
    assert loads == []
