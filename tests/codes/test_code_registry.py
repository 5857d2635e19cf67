"""The registry of diagnostic codes (`toolgen.codes.table`): one row per code, read-only, and no
diagnostic without one.

Three ways in which an unregistered code could slip through, each closed: a diagnostic made at run
time (`Diagnostic` refuses the code, so any test that reaches it fails), a code written in the
package's source (walked here, every place that makes or raises a diagnostic), and a code a test
expects to see (its text, golden files and comparisons walked here). The other way round, a row no
source writes is dead and fails too."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolgen.builder.cache import Cache, canonical
from toolgen.builder.incremental import fresh, remember
from toolgen.codes import CODES, STAGES, UnregisteredCode, code_info, is_registered, table
from toolgen.codes.rows import Rows
from toolgen.diagnostics import Diagnostic, DiagnosticSink, SourceLocation

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "generator" / "toolgen"
REGISTRY = PACKAGE / "codes"  # the registry's modules (`toolgen.codes.table` and its rows)
KEBAB = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")

#: what makes or raises a diagnostic from a code given as its first argument (or `code=`): the
#: value type, a sink's methods, a lowering's `Skip`, and the helpers of the Swagger 2.0
#: conversion (`warn`), the eval task reader (`fail`) and the policy reader (`diagnostic`)
CONSTRUCTORS = {"Diagnostic", "Skip", "DiagnosticError.one"}
METHODS = {"error", "warning", "info", "warn", "fail", "diagnostic"}


def _literals(node: ast.expr) -> list[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.IfExp):
        body, orelse = _literals(node.body), _literals(node.orelse)
        return None if body is None or orelse is None else body + orelse
    return None


def _emitted(path: Path) -> Iterator[tuple[str, int, str, bool]]:
    """(code, line, callee, strict) for each literal code given to a constructor or method of a
    diagnostic in `path`; `strict` when any literal there must be a code (a constructor's)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "DiagnosticError"
        ):
            name = f"DiagnosticError.{func.attr}"
        if name not in CONSTRUCTORS and name not in METHODS:
            continue
        arg = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "code"), None)
        for value in (_literals(arg) or []) if arg is not None else []:
            yield value, node.lineno, name, name in CONSTRUCTORS


def test_every_code_the_package_emits_is_registered() -> None:
    found: dict[str, str] = {}
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for value, line, callee, strict in _emitted(path):
            if not (strict or KEBAB.fullmatch(value)):
                continue  # a message given to a logger's or another object's `error`
            where = f"{path.relative_to(REPO)}:{line} {callee}({value!r})"
            found.setdefault(value, where)
            if not is_registered(value):
                wrong.append(where)
    assert not wrong, f"unregistered codes (add them to their stage's module of toolgen/codes): {wrong}"
    # the walk sees every kind of place that emits: a sink, the value type, Skip and each helper
    for code in (
        "spec-invalid",
        "ref-external",
        "composite-cycle",
        "hide-required",
        "eval-field",
        "swagger2-dropped",
        "swagger2-invalid",
        "diff-input-invalid",
        "schema-cycle",
    ):
        assert code in found, code
    assert len(found) >= 120, len(found)


def test_every_registered_code_is_written_in_the_package() -> None:
    """A row whose code no module outside the registry writes is dead (the lint rules are written
    in `toolgen.review.lint.rules`, the rest where they are emitted)."""
    text = "\n".join(
        path.read_text(encoding="utf-8") for path in sorted(PACKAGE.rglob("*.py")) if path.parent != REGISTRY
    )
    dead = [code for code in CODES if f'"{code}"' not in text]
    assert not dead, dead


def _expected_by_tests() -> dict[str, str]:
    """Each diagnostic code the tests expect, with where: ``severity[code]`` in any test or golden
    file, ``"code"``/``"ruleId"`` members of golden JSON, and literals compared with a `.code`."""
    shown = re.compile(r"\b(?:error|warning|info)\[([a-z][a-z0-9-]*)\]")
    member = re.compile(r'"(?:code|ruleId)": "([a-z][a-z0-9-]*)"')
    found: dict[str, str] = {}
    here = Path(__file__).resolve()
    for path in sorted((REPO / "tests").rglob("*")):
        if (
            not path.is_file()
            or path.resolve() == here
            or path.suffix not in {".py", ".txt", ".json", ".sarif"}
        ):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        where = str(path.relative_to(REPO))
        for match in (*shown.finditer(text), *member.finditer(text)):
            found.setdefault(match.group(1), where)
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.Compare):
                    sides = [node.left, *node.comparators]
                    if any(isinstance(s, ast.Attribute) and s.attr == "code" for s in sides) or any(
                        isinstance(s, ast.SetComp)
                        and isinstance(s.elt, ast.Attribute)
                        and s.elt.attr == "code"
                        for s in sides
                    ):
                        for side in sides:
                            for const in ast.walk(side):
                                if isinstance(const, ast.Constant) and isinstance(const.value, str):
                                    found.setdefault(const.value, f"{where}:{node.lineno}")
    return {code: where for code, where in found.items() if KEBAB.fullmatch(code)}


def test_every_code_the_tests_expect_is_registered() -> None:
    expected = _expected_by_tests()
    assert {"schema-cycle", "operation-not-found", "spec-invalid"} <= set(expected)  # the walk sees them
    wrong = {code: where for code, where in expected.items() if not is_registered(code)}
    assert not wrong, f"tests expect codes the registry does not have: {wrong}"


def test_a_diagnostic_with_an_unregistered_code_cannot_be_made() -> None:
    with pytest.raises(UnregisteredCode, match="'schema-cycles' is not registered"):
        Diagnostic("schema-cycles", "info", "a recursive schema")
    sink = DiagnosticSink()
    for report in (sink.error, sink.warning, sink.info):
        with pytest.raises(UnregisteredCode):
            report("no-such-code", "message", SourceLocation("api.yaml", 1, 1), "hint")
    assert not sink.items
    with pytest.raises(
        ValueError, match="not registered"
    ):  # a ValueError: a cached record refused reads as a miss
        code_info("")
    sink.info("schema-cycle", "a recursive schema")
    assert [d.code for d in sink] == ["schema-cycle"]


def test_a_code_registered_twice_or_not_kebab_case_is_refused() -> None:
    """Within one module's group of rows and across the groups the registry assembles."""
    rows = Rows()
    rows.add("spec-invalid", "error", "spec", summary="s", fix="f")
    with pytest.raises(ValueError, match="registered twice"):
        rows.add("spec-invalid", "warning", "spec", summary="s", fix="f")
    for code in ("SpecInvalid", "spec", "spec_invalid"):
        with pytest.raises(ValueError, match="kebab-case"):
            rows.add(code, "error", "spec", summary="s", fix="f")
    with pytest.raises(ValueError, match="unknown severity"):
        rows.add("spec-broken", "fatal", "spec", summary="s", fix="f")  # type: ignore[arg-type]
    assert [row.doc for row in rows] == ["README.md#specs"]  # the stage's section by default
    other = Rows()
    other.add("spec-invalid", "error", "lower", summary="s", fix="f")
    with pytest.raises(ValueError, match="'spec-invalid' is registered twice"):
        table._registry(rows, other)
    assert list(table._registry(rows, Rows())) == ["spec-invalid"]


def test_the_registry_is_read_only_and_every_row_complete() -> None:
    with pytest.raises(TypeError):
        CODES["new-code"] = CODES["spec-invalid"]  # type: ignore[index]
    with pytest.raises(dataclasses.FrozenInstanceError):
        CODES["spec-invalid"].severity = "warning"  # type: ignore[misc]
    for code, row in CODES.items():
        assert row.code == code and KEBAB.fullmatch(code), code
        assert row.severity in ("error", "warning", "info") and row.stage in STAGES, code
        assert row.summary.strip() and row.fix.strip(), code
        assert re.fullmatch(r"(README\.md|docs/[a-z-]+\.md)#[a-z0-9-]+", row.doc), (code, row.doc)
        assert (row.stage == "lint") == (row.rule == "lint"), code  # lint's own checks, and only they


def test_a_cached_build_whose_findings_hold_an_unregistered_code_is_built_again(tmp_path: Path) -> None:
    """A build cache entry written when a code existed that no longer does is a miss (the build runs
    and reports today's codes), never a failure."""
    cache, out = Cache(tmp_path / "cache"), tmp_path / "out"
    out.mkdir()
    (out / "policy.json").write_bytes(b"{}")
    remember(
        cache, "key", "api", {"policy.json": b"{}"}, [Diagnostic("schema-cycle", "info", "a cycle")], 1, "key"
    )
    reused = fresh(cache, "key", out)
    assert reused is not None and [d.code for d in reused.diagnostics] == ["schema-cycle"]
    found = cache.get("manifest", "key")
    assert found is not None
    record = json.loads(found)
    record["diagnostics"][0]["code"] = "schema-cycles"
    cache.put("manifest", "key", canonical(record).encode("utf-8"))
    assert fresh(cache, "key", out) is None
