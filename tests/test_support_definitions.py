"""The test support modules define each public function once: a helper two modules need lives in
one of them (or in `tests/support/runtime_env.py` for the runtime's packages) and the other imports
it, so a fix to it reaches every test."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SUPPORT = Path(__file__).resolve().parent / "support"


def test_no_public_function_is_defined_in_two_support_modules() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SUPPORT.glob("*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                where[node.name].append(path.name)
    twice = {name: files for name, files in where.items() if len(files) > 1}
    assert twice == {}, f"defined in more than one module of tests/support: {twice}"


def test_one_support_function_reads_a_committed_package() -> None:
    # a package's policy.json and mcp.json are read as a Registry takes them in one place
    # (`runtime_env.load_package`), so what every runtime test loads is read the same way
    readers: list[str] = []
    for path in sorted(SUPPORT.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                body = ast.get_source_segment(text, node) or ""
                if '"policy.json"' in body and '"mcp.json"' in body:
                    readers.append(f"{path.name}::{node.name}")
    assert readers == ["runtime_env.py::load_package"], readers
