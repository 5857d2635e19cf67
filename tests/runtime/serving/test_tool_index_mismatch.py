"""A ``search.json`` that does not index its package's tools
(`toolgen.runtime.serving.tool_index.checked_search`):
most plainly one with no documents beside a package that has tools, which used to answer every
search, and every ``search_tools`` call, with nothing. The index now analyses the package instead (the
documents the build writes, so the same ranking) and says why in `ToolIndex.warnings`, which
`toolgen search` and `toolgen serve` print on stderr; a genuinely empty API (no tools, no documents)
still builds and loads without a warning."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.support.runtime_env import serve_closed

from toolgen.cli import main
from toolgen.runtime import Registry
from toolgen.runtime.serving.search_tools import index_warnings
from toolgen.runtime.serving.tool_index import SEARCH_FILE, ToolIndex, checked_search
from toolgen.search.text_index import SEARCH_FORMAT

REPO = Path(__file__).resolve().parents[3]
GITHUB = REPO / "generated" / "github"
QUERIES = ("merge the pull request", "lock the conversation", "who commented on the issue")


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    if not (GITHUB / SEARCH_FILE).is_file():
        pytest.skip("generated/github is not built")
    folder = tmp_path / "github"
    shutil.copytree(GITHUB, folder)
    return folder


def _ranked(index: ToolIndex) -> list[list[dict[str, object]]]:
    return [[h.to_json() for h in index.search(q, limit=5)] for q in QUERIES]


def _rewrite(folder: Path, edit: Any) -> None:
    path = folder / SEARCH_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    edit(data)
    path.write_text(json.dumps(data), encoding="utf-8")


def test_an_index_without_documents_is_not_taken_for_an_api_without_tools(package: Path) -> None:
    expected = _ranked(ToolIndex.from_dir(GITHUB))
    assert all(expected) and ToolIndex.from_dir(GITHUB).warnings == ()
    _rewrite(package, lambda data: data.update(documents=[]))
    for index in (ToolIndex.from_dir(package), ToolIndex.from_registry(Registry.from_dir(package))):
        assert _ranked(index) == expected  # the package analysed: search still answers
        [warning] = index.warnings
        assert warning.code == "search_index_mismatch" and warning.file == str(package / SEARCH_FILE)
        assert (
            "it has no documents, while the package has" in warning.message
            and "toolgen build" in warning.hint
        )


def test_an_index_of_other_tools_is_named(package: Path) -> None:
    def drop_one(data: dict[str, Any]) -> None:
        data["documents"] = [d for d in data["documents"] if d["intent"] != "lock_issue"]

    _rewrite(package, drop_one)
    [warning] = ToolIndex.from_dir(package).warnings
    assert warning.code == "search_index_mismatch" and "record_lock_issue" in warning.message
    assert [h.tool for h in ToolIndex.from_dir(package).search("lock the conversation", limit=1)] == [
        "record_lock_issue"
    ]


@pytest.mark.parametrize(
    "content", ["{not json", json.dumps({"format": 0, "documents": []}), json.dumps([1])]
)
def test_an_unreadable_index_is_named(package: Path, content: str) -> None:
    (package / SEARCH_FILE).write_text(content, encoding="utf-8")
    [warning] = ToolIndex.from_dir(package).warnings
    assert warning.code == "search_index_unreadable"


def test_an_absent_index_and_an_api_without_tools_give_no_warning(package: Path, tmp_path: Path) -> None:
    (package / SEARCH_FILE).unlink()
    assert ToolIndex.from_dir(package).warnings == ()
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"format": SEARCH_FORMAT, "documents": []}), encoding="utf-8")
    assert checked_search(empty, {"tools": []})[2] is None


def test_toolgen_search_prints_the_warning_and_still_answers(package: Path) -> None:
    _rewrite(package, lambda data: data.update(documents=[]))
    result = CliRunner().invoke(main, ["search", str(package), "merge the pull request", "--format", "json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)[0]["tool"] == "record_merge_pull_request"
    assert "warning: [search_index_mismatch]" in result.stderr and "no documents" in result.stderr


def test_toolgen_serve_says_it_at_start_up(package: Path, tmp_path: Path) -> None:
    """`toolgen serve` over stdio, its input closed at once: the start-up warnings are all it says."""
    _rewrite(package, lambda data: data.update(documents=[]))
    assert [w.code for w in index_warnings(Registry.from_dir(package))] == ["search_index_mismatch"]
    proc = serve_closed(package, tmp_path)
    assert "toolgen serve: warning: [search_index_mismatch]" in proc.stderr, proc.stderr
    never = serve_closed(package, tmp_path, "--search-tool", "never")
    assert "search_index" not in never.stderr  # no meta-tool served: its index is nobody's concern


def test_a_genuinely_empty_api_builds_and_loads_without_a_warning(tmp_path: Path) -> None:
    (tmp_path / "spec.json").write_text(
        json.dumps({"openapi": "3.0.3", "info": {"title": "Empty", "version": "1"}, "paths": {}}),
        encoding="utf-8",
    )
    (tmp_path / "empty.yaml").write_text(
        "toolgen: 1\nspec: spec.json\napi: {name: empty}\ntools: {}\n", encoding="utf-8"
    )
    result = CliRunner().invoke(
        main, ["build", str(tmp_path / "empty.yaml"), "--out", str(tmp_path / "out"), "-q"]
    )
    assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "out" / SEARCH_FILE).read_text(encoding="utf-8"))["documents"] == []
    index = ToolIndex.from_dir(tmp_path / "out")
    assert len(index) == 0 and index.warnings == ()


def _grant_all(data: dict[str, Any]) -> None:
    for document in data["documents"]:
        for pair in document["tools"]:
            pair[1] = []


def test_an_index_whose_permissions_are_not_the_policys_is_not_used(package: Path) -> None:
    """The documents name the package's tools but say no scope is needed for any (a stale or edited
    file): scope filtering reads the policy's permissions instead, so a search for a caller holding
    no scope finds nothing rather than the tools those scopes hide."""
    _rewrite(package, _grant_all)
    index = ToolIndex.from_dir(package)
    assert index.search("merge the pull request", scopes=[], limit=5) == []
    assert index.search(
        "merge the pull request", scopes=["pull_requests:write", "pull_requests:read"], limit=5
    )
    [warning] = index.warnings
    assert warning.code == "search_index_mismatch" and "permission" in warning.message


def test_an_index_that_names_a_tool_twice_is_not_used(package: Path) -> None:
    _rewrite(package, lambda data: data["documents"].append(data["documents"][0]))
    index = ToolIndex.from_dir(package)
    assert _ranked(index) == _ranked(ToolIndex.from_dir(GITHUB))
    [warning] = index.warnings
    assert warning.code == "search_index_mismatch" and "record_add_issue_labels" in warning.message


@pytest.mark.parametrize(
    "edit",
    [
        lambda data: data["documents"][0].update(actions=5),  # not a list: iterating it raised TypeError
        lambda data: data["documents"][0].update(fields={"name": {"a": 1}}),
        lambda data: data["documents"][0].update(intent=["a"]),
    ],
)
def test_an_index_whose_documents_are_malformed_is_named_not_raised(package: Path, edit: Any) -> None:
    _rewrite(package, edit)
    index = ToolIndex.from_dir(package)
    assert _ranked(index) == _ranked(ToolIndex.from_dir(GITHUB))
    assert [w.code for w in index.warnings] == ["search_index_unreadable"]


def test_an_index_nested_past_the_parser_is_named_not_raised(package: Path) -> None:
    (package / SEARCH_FILE).write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    index = ToolIndex.from_dir(package)
    assert [w.code for w in index.warnings] == ["search_index_unreadable"] and all(_ranked(index))
    result = CliRunner().invoke(main, ["search", str(package), "merge the pull request"])
    assert result.exit_code == 0 and "search_index_unreadable" in result.stderr
