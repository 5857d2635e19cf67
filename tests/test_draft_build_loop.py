"""The build loop on the intent map a person starts from: `toolgen init`'s draft, with its findings.

A build whose inputs did not change answers from the manifest (`toolgen.builder.incremental.fresh`) without
parsing the intent map (the facts its key reads are kept by the map's bytes) or linting, and prints
the findings of the build it recorded; a rebuild after one tool's edit lints again only what that tool
touches (its toolset's near-synonym pairs) and prints what a build without the cache prints, in the
same order; every file equals a `--no-cache` build's byte for byte. On a small spec written here
(56 findings) and, in the slow suite, on the draft of GitHub's REST API (1,807 tools)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.build import REAL, run
from tests.support.profiles import examples

GITHUB = REAL / "github-api.github.com.json"


def draft_spec() -> dict[str, Any]:
    """Two tags of eight operations whose summaries differ by one word (near-synonym toolsets), each
    answering a schema of 120 described properties (unprojected large outputs), lists without paging."""
    props = {
        f"field_{i}": {
            "type": "string",
            "description": f"The item's field number {i}, as recorded when it was last saved.",
        }
        for i in range(120)
    }
    big = {"$ref": "#/components/schemas/Big"}
    paths: dict[str, Any] = {}
    for noun in ("widget", "gadget"):
        for kind in ("", "version", "revision", "label"):
            what = f"{noun} {kind}" if kind else noun
            params = (
                [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}] if kind else []
            )
            words = "items of a project in an organization, newest first, paged by cursor"
            paths[f"/{noun}s" + (f"/{{id}}/{kind}s" if kind else "")] = {
                "get": {
                    "operationId": f"list_{noun}_{kind or 'all'}",
                    "tags": [noun],
                    "parameters": params,
                    "summary": f"List the {what} {words}",
                    "responses": {
                        "200": {
                            "description": "ok",
                            "content": {"application/json": {"schema": {"type": "array", "items": big}}},
                        }
                    },
                },
                "post": {
                    "operationId": f"create_{noun}_{kind or 'all'}",
                    "tags": [noun],
                    "parameters": params,
                    "summary": f"Create the {what} {words}",
                    "requestBody": {
                        "content": {
                            "application/json": {
                                "schema": {"type": "object", "properties": {"name": {"type": "string"}}}
                            }
                        }
                    },
                    "responses": {
                        "201": {"description": "ok", "content": {"application/json": {"schema": big}}}
                    },
                },
            }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Widgets", "version": "1"},
        "paths": paths,
        "components": {"schemas": {"Big": {"type": "object", "properties": props}}},
    }


def _drafted(folder: Path, spec_text: str, name: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`toolgen init` of the spec in `folder` (a project of one API); returns the draft's path."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "spec.json").write_text(spec_text, encoding="utf-8")
    monkeypatch.chdir(folder)
    result = run("init", "spec.json", "--name", name)
    assert result.exit_code == 0, result.output
    return folder / "intent_maps" / f"{name}.yaml"


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _cold(folder: Path) -> tuple[str, dict[str, bytes]]:
    """The findings and files of a build without the cache, in a copy of the project."""
    copy = folder.parent / f"{folder.name}-cold"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("generated"))
    result = run("build", "-q", "--no-cache", "--project", str(copy / "toolgen.yaml"))
    assert result.exit_code == 0, result.output
    return result.output, _tree(copy / "generated")


def _describe_first_tool(intent: Path, text: str) -> None:
    """Add a ``description:`` to the draft's first tool (the edit a person makes first)."""
    draft = intent.read_text(encoding="utf-8")
    lines = draft.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith("    operation: "))
    if lines[at + 1].startswith("    description: "):
        del lines[at + 1]
    lines.insert(at + 1, f"    description: {json.dumps(text)}\n")
    intent.write_text("".join(lines), encoding="utf-8")


def _first_toolset(intent: Path) -> str:
    return next(
        line.split(":", 1)[1].strip()
        for line in intent.read_text(encoding="utf-8").splitlines()
        if line.startswith("    toolset: ")
    )


class _Counted:
    """Counts the calls of the lint stage's near-synonym comparison, by the toolset's first member."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from toolgen.review.lint import catalog_checks
        from toolgen.review.lint.toolset_rules import near_synonyms as real

        self.groups: list[list[str]] = []

        def counted(members: Any) -> Any:
            self.groups.append([m.key for m in members])
            return real(members)

        monkeypatch.setattr(catalog_checks, "near_synonyms", counted)


@pytest.fixture
def no_parse(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Parsing an intent map's YAML, building or linting fails the test (what a build the manifest
    answers must never do); `toolgen.yaml` is still read."""
    import toolgen.cli.build_cmd as cli_build
    from toolgen.builder import build
    from toolgen.compile import intent

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("parsed, built or linted although nothing changed")

    monkeypatch.setattr(intent, "_parse_intent_map", refused)
    monkeypatch.setattr(intent, "_LAST_LOADED", {})
    monkeypatch.setattr(build, "lint_api", refused)
    monkeypatch.setattr(cli_build, "build_api", refused)
    yield


def test_a_warm_build_of_a_draft_prints_the_cold_findings_without_parsing_or_linting(
    cache_on: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    project = tmp_path / "widgets"
    _drafted(project, json.dumps(draft_spec(), indent=2), "widgets", monkeypatch)
    cold, cold_files = _cold(project)
    assert cold.count("warning[toolset-near-synonym]") >= 20 and "warning[output-unprojected-large]" in cold
    first = run("build", "-q")
    assert (first.exit_code, first.output) == (0, cold)
    assert _tree(project / "generated") == cold_files
    request.getfixturevalue("no_parse")
    for args in (("build", "-q", "--check"), ("build", "-q")):
        warm = run(*args)
        assert (warm.exit_code, warm.output) == (0, cold), args
    assert _tree(project / "generated") == cold_files


def test_one_description_edit_relints_its_toolset_and_prints_the_cold_findings(
    cache_on: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "widgets"
    intent = _drafted(project, json.dumps(draft_spec(), indent=2), "widgets", monkeypatch)
    assert run("build", "-q").exit_code == 0
    counted = _Counted(monkeypatch)
    for round_ in range(2):
        _describe_first_tool(intent, f"Use this first, round {round_}; not for gadgets.")
        cold, cold_files = _cold(project)
        counted.groups.clear()
        cached = run("build", "-q")
        assert (cached.exit_code, cached.output) == (0, cold)
        assert _tree(project / "generated") == cold_files
        # the edited tool's toolset alone is compared again: the other's pairs are remembered
        assert len(counted.groups) == 1, counted.groups
        assert _first_toolset(intent) in counted.groups[0][0]
        check = run("build", "-q", "--check")
        assert (check.exit_code, check.output) == (0, cold)


@pytest.mark.slow
@pytest.mark.long
@pytest.mark.skipif(not GITHUB.is_file(), reason="../shared/specs/real is not available")
def test_the_github_draft_prints_the_cold_findings_warm_and_after_one_edit(
    cache_on: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "github"
    intent = _drafted(project, GITHUB.read_text(encoding="utf-8"), "github", monkeypatch)
    cold, cold_files = _cold(project)
    assert cold.count("warning[") > 400
    assert run("build", "-q").output == cold
    warm = run("build", "-q", "--check")
    assert (warm.exit_code, warm.output) == (0, cold)
    _describe_first_tool(intent, "Read the cache retention limit; not for repositories.")
    cold, cold_files = _cold(project)
    edited = run("build", "-q")
    assert (edited.exit_code, edited.output) == (0, cold)
    assert _tree(project / "generated") == cold_files


@settings(max_examples=examples(400), deadline=None)
@given(
    text=st.text(st.characters(max_codepoint=0x2100)) | st.text(st.characters(max_codepoint=0x7F)),
    keep=st.booleans(),
)
def test_printing_a_finding_escapes_what_the_per_character_rule_escapes(text: str, keep: bool) -> None:
    """`terminal_safe` returns printable ASCII as it is (findings are printed by the hundred): the
    same text the rule of `toolgen.shown_text` gives character by character."""
    import unicodedata

    from toolgen.shown_text import _UNSAFE_CATEGORIES, _escape, terminal_safe

    rule = "".join(
        _escape(c) if unicodedata.category(c) in _UNSAFE_CATEGORIES and not (keep and c == "\n") else c
        for c in text
    )
    assert terminal_safe(text, keep_newlines=keep) == rule
