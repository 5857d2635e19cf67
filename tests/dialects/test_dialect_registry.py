"""The dialect registry (`toolgen.dialects`) is the one place dialects are named: the project file's
`emit`, the build, the report, the lint preflight, the output-folder guard and the CLI's `--dialect`
choices all come from it, and no module outside `toolgen.dialects` spells a list of dialect names
(the runtime, which must not import `toolgen.dialects`, keeps its own list in its registry module)."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from toolgen.builder.output_files import OWNED_NAMES
from toolgen.builder.project import ALL_ARTIFACTS, load_project
from toolgen.cli.call import call_command
from toolgen.cli.catalog import CATALOGS, catalog_command
from toolgen.diagnostics import DiagnosticError
from toolgen.dialects import catalog_files, names, registry, reshaping
from toolgen.review.lint.preflight import ALL_DIALECTS

PACKAGE = Path(__file__).resolve().parents[2] / "generator" / "toolgen"
NAME = "|".join(re.escape(n) for n in ("openai", "anthropic", "gemini", "mcp"))
#: two dialect names next to each other in a tuple or list literal
LISTED = re.compile(rf"""["']({NAME})["']\s*,\s*["']({NAME})["']""")
#: the runtime may not import toolgen.dialects (import contract "runtime"); its one list is in calls.py
RUNTIME_LIST = PACKAGE / "runtime" / "calls.py"


def _choices(command: click.Command, option: str) -> tuple[str, ...]:
    found = next(p for p in command.params if p.name == option)
    assert isinstance(found.type, click.Choice)
    return tuple(found.type.choices)


def test_every_part_takes_its_dialects_from_the_registry() -> None:
    assert names() == tuple(registry()) == ("openai", "anthropic", "mcp", "gemini")
    assert ALL_ARTIFACTS[: len(names())] == names() and names() == ALL_DIALECTS
    assert {d.file for d in registry().values()} <= set(catalog_files()) <= OWNED_NAMES
    assert "openai.responses.json" in catalog_files()
    assert _choices(call_command, "dialect") == names()
    assert (
        set(_choices(catalog_command, "dialect"))
        == {f.removesuffix(".json") for f in catalog_files()}
        == set(CATALOGS)
    )
    assert [d.name for d in reshaping()] == ["openai", "gemini"]
    assert all(d.title for d in registry().values())


def test_no_module_outside_the_dialects_lists_dialect_names() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if PACKAGE / "dialects" in path.parents or path == RUNTIME_LIST:
            continue
        if PACKAGE / "evals" in path.parents or path in (
            PACKAGE / "cli" / "eval.py",
            PACKAGE / "testing" / "scripted.py",
        ):
            continue  # model providers of `toolgen eval` (openai-compatible included), not catalog dialects
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if LISTED.search(line):
                offenders.append(f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}")
    assert not offenders, "ask toolgen.dialects.names() instead:\n" + "\n".join(offenders)


def test_an_unknown_artifact_names_the_registry_choices(tmp_path: Path) -> None:
    project = tmp_path / "toolgen.yaml"
    project.write_text("toolgen: 1\napis: []\nemit: [openai, palm]\n", encoding="utf-8")
    with pytest.raises(DiagnosticError) as caught:
        load_project(project, {})
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.location is not None and diagnostic.location.pointer == "/emit/1"
    assert diagnostic.location.line == 3
    assert diagnostic.message == (
        "emit.1: Input should be one of 'openai', 'anthropic', 'mcp', 'gemini', "
        "'policy', 'report', 'python', 'registry'"
    )
