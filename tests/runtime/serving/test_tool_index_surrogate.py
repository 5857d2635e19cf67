"""A ``search.json`` holding a lone UTF-16 surrogate (a hand edit: ``"\\ud800"`` escaped without its
pair, valid JSON that no UTF-8 text holds; the build never writes one) is not a tool-search index
the runtime reads (`toolgen.runtime.serving.tool_index.checked_search`): `toolgen search` and `toolgen
serve` say so naming the file, the JSON pointer of the string and "rebuild", and search answers from
the package itself, as for any other unreadable index. It used to fail the load with SQLite's
encoding error, naming only the package."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples
from tests.support.runtime_env import serve_closed

from toolgen.cli import main
from toolgen.pointer import lone_surrogate_pointer
from toolgen.runtime import Registry
from toolgen.runtime.serving.search_tools import index_warnings
from toolgen.runtime.serving.tool_index import SEARCH_FILE, ToolIndex

PACKAGE = Path(__file__).resolve().parents[3] / "generated" / "tickets"
QUERIES = ("list open tickets", "delete a ticket", "add a followup")

Edit = Callable[[dict[str, Any]], str]


def _field_value(data: dict[str, Any]) -> str:
    doc = data["documents"][0]
    name = min(doc["fields"])
    doc["fields"][name] = "ticket\ud800 word"
    return f"/documents/0/fields/{name}"


def _field_name(data: dict[str, Any]) -> str:
    data["documents"][1]["fields"]["st\udc00atus"] = "the status"
    return "/documents/1/fields/st\\udc00atus"


def _scope(data: dict[str, Any]) -> str:
    data["documents"][0]["tools"][0][1].append("tickets:\udbff")
    at = len(data["documents"][0]["tools"][0][1]) - 1
    return f"/documents/0/tools/0/1/{at}"


def _action(data: dict[str, Any]) -> str:
    data["documents"][2]["actions"] = ["\udfff", *data["documents"][2].get("actions", [])]
    return "/documents/2/actions/0"


def _other_member(data: dict[str, Any]) -> str:
    data["note"] = "kept by hand \ud83d"
    return "/note"


@pytest.fixture()
def package(tmp_path: Path) -> Path:
    if not (PACKAGE / SEARCH_FILE).is_file():
        pytest.skip("generated/tickets is not built")
    folder = tmp_path / "tickets"
    shutil.copytree(PACKAGE, folder)
    return folder


def _edit(folder: Path, edit: Edit) -> str:
    """Apply `edit` to the package's search.json, written as `json.dumps` writes it (a surrogate as
    its ``\\uXXXX`` escape); the pointer the edit says it made."""
    path = folder / SEARCH_FILE
    data = json.loads(path.read_text(encoding="utf-8"))
    pointer = edit(data)
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert "\\ud" in path.read_text(encoding="utf-8")  # the escape is in the file as a person writes it
    return pointer


def _ranked(index: ToolIndex) -> list[list[dict[str, object]]]:
    return [[h.to_json() for h in index.search(q, limit=5)] for q in QUERIES]


@pytest.mark.parametrize("edit", [_field_value, _field_name, _scope, _action, _other_member])
def test_the_warning_names_the_file_the_pointer_and_rebuild(package: Path, edit: Edit) -> None:
    expected = _ranked(ToolIndex.from_dir(PACKAGE))
    pointer = _edit(package, edit)
    for index in (ToolIndex.from_dir(package), ToolIndex.from_registry(Registry.from_dir(package))):
        [warning] = index.warnings
        assert warning.code == "search_index_unreadable"
        assert warning.file == str(package / SEARCH_FILE)
        assert f"the string at {pointer} holds a lone UTF-16 surrogate" in warning.message
        assert "rebuild the package (`toolgen build`)" in str(warning)
        assert _ranked(index) == expected  # the package analysed: the documents the build writes


def test_a_valid_surrogate_pair_is_a_character_not_a_refusal(package: Path) -> None:
    """``\\ud83d\\ude00`` escaped as a pair is one character (U+1F600): the index is read."""

    def pair(data: dict[str, Any]) -> str:
        doc = data["documents"][0]
        doc["fields"][min(doc["fields"])] += " \U0001f600"
        return ""

    _edit(package, pair)
    assert ToolIndex.from_dir(package).warnings == ()


def test_toolgen_search_names_the_file_and_still_answers(package: Path) -> None:
    pointer = _edit(package, _field_value)
    result = CliRunner().invoke(main, ["search", str(package), "list open tickets", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)[0]["tool"] == "list_tickets"
    assert f"{package / SEARCH_FILE}: not a tool-search index" in result.stderr
    assert pointer in result.stderr and "rebuild the package" in result.stderr


def test_toolgen_serve_names_the_file_at_start_up(package: Path, tmp_path: Path) -> None:
    """`toolgen serve` over stdio with the search meta-tool, its input closed at once: the start-up
    warning is what it says, and it starts (the load does not fail)."""
    pointer = _edit(package, _field_name)
    assert next(str(w) for w in index_warnings(Registry.from_dir(package))).count(pointer) == 1
    proc = serve_closed(package, tmp_path, "--search-tool", "always")
    assert "toolgen serve: warning: [search_index_unreadable]" in proc.stderr, proc.stderr
    assert f"{package / SEARCH_FILE}: " in proc.stderr and pointer in proc.stderr
    assert "rebuild the package" in proc.stderr and "Traceback" not in proc.stderr


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


def _strings(value: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The paths of the strings in `value` (members' values and list items), in document order."""
    if isinstance(value, str):
        return [path]
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in _strings(v, (*path, k))]
    if isinstance(value, list):
        return [p for i, v in enumerate(value) for p in _strings(v, (*path, str(i)))]
    return []


def _with_surrogate(value: Any, path: tuple[str, ...], code: int) -> Any:
    if not path:
        return value[: len(value) // 2] + chr(code) + value[len(value) // 2 :]
    key = int(path[0]) if isinstance(value, list) else path[0]
    copy = list(value) if isinstance(value, list) else dict(value)
    copy[key] = _with_surrogate(value[key], path[1:], code)  # type: ignore[index]
    return copy


@settings(max_examples=examples(100), deadline=None)
@given(value=_json_values, pick=st.integers(0, 1_000), code=st.integers(0xD800, 0xDFFF))
def test_the_pointer_names_where_a_lone_surrogate_was_put(value: Any, pick: int, code: int) -> None:
    """Whatever JSON value holds one lone surrogate, in a string or a member's name,
    `lone_surrogate_pointer` gives the pointer of what holds it (escaped, so it prints); nothing
    for the value without it."""
    assert lone_surrogate_pointer(value) is None
    holder = {"a": value, "b": [f"x{chr(code)}y"]}
    assert lone_surrogate_pointer(holder) == "/b/0"
    assert lone_surrogate_pointer({"a": value, f"z{chr(code)}~/": 1}) == f"/z\\u{code:04x}~0~1"
    strings = _strings(value)
    if strings:
        path = strings[pick % len(strings)]
        expected = "".join("/" + t.replace("~", "~0").replace("/", "~1") for t in path)
        assert lone_surrogate_pointer(_with_surrogate(value, path, code)) == expected
