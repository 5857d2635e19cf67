"""A key written twice in one object of a spec (`toolgen.compile.duplicates`): JSON and YAML readers
keep the last and drop the others without a word, so `load_spec` warns (``spec-duplicate-key``) at
the occurrence it reads (file:line:col and the member's JSON pointer), naming the dropped ones; the
finding is remembered by the text (`SpecDocument.content_key`), so a build whose spec did not change
does not parse it again. A warning, never a refusal: the document loads as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.profiles import examples

from toolgen.compile import duplicates, load
from toolgen.compile.duplicates import json_duplicate_keys, yaml_duplicate_keys
from toolgen.compile.load import load_spec
from toolgen.compile.sourcemap import yaml_nodes
from toolgen.diagnostics import Diagnostic, DiagnosticError, DiagnosticSink
from toolgen.remember import Memo, computed

# `get` twice under one path (the first operation is lost) and `description` twice in a response
JSON_SPEC = """{
  "openapi": "3.0.3",
  "info": {"title": "Items", "version": "1"},
  "paths": {
    "/items": {
      "get": {"operationId": "listItems", "responses": {"200": {"description": "the items"}}},
      "get": {"operationId": "searchItems",
              "responses": {"200": {"description": "found", "description": "the matches"}}}
    }
  }
}
"""

# 200 and '200' are one key once loaded; a merge key's entries overridden by the mapping's own are not duplicates
YAML_SPEC = """openapi: 3.0.3
info: {title: Items, version: '1'}
components:
  responses:
    base: &base {description: base}
paths:
  /items:
    get:
      operationId: listItems
      responses:
        200: {description: ok}
        default:
          <<: *base
          description: other
        '200': {description: fine}
"""


def _warnings(path: Path, remember: Any = computed) -> tuple[Any, list[Diagnostic]]:
    sink = DiagnosticSink()
    doc = load_spec(path, path.name, sink=sink, remember=remember)
    return doc, [d for d in sink.items if d.code == "spec-duplicate-key"]


def test_json_duplicates_are_located_warnings_and_the_last_is_read(tmp_path: Path) -> None:
    path = tmp_path / "items.json"
    path.write_text(JSON_SPEC, encoding="utf-8")
    doc, found = _warnings(path)
    assert doc.data["paths"]["/items"]["get"]["operationId"] == "searchItems"
    assert [
        (d.severity, d.location.line, d.location.col, d.location.pointer) for d in found if d.location
    ] == [
        ("warning", 7, 7, "/paths/~1items/get"),
        ("warning", 8, 61, "/paths/~1items/get/responses/200/description"),
    ]
    assert "line:column 6:7 is ignored" in found[0].message
    assert all(
        d.location and d.location.file == "items.json" and d.hint and "keep one" in d.hint for d in found
    )


def test_yaml_duplicates_compare_keys_as_loaded_and_merge_keys_are_not_duplicates(tmp_path: Path) -> None:
    path = tmp_path / "items.yaml"
    path.write_text(YAML_SPEC, encoding="utf-8")
    doc, found = _warnings(path)
    assert doc.data["paths"]["/items"]["get"]["responses"]["200"] == {"description": "fine"}
    assert [(d.location.line, d.location.col, d.location.pointer) for d in found if d.location] == [
        (15, 9, "/paths/~1items/get/responses/200")
    ]
    assert "11:9" in found[0].message


def test_a_yaml_spec_without_duplicates_is_not_walked(tmp_path: Path, monkeypatch: Any) -> None:
    """The loader proves there is none (no mapping lost a key): the representation tree is not composed."""
    walked: list[int] = []

    def walk(root: Any) -> Any:
        walked.append(1)
        return ()

    monkeypatch.setattr(load, "yaml_duplicate_keys", walk)
    path = tmp_path / "items.yaml"
    path.write_text(
        YAML_SPEC.replace("        '200': {description: fine}\n", "").replace(
            "          description: other\n", ""
        ),
        encoding="utf-8",
    )
    doc, found = _warnings(path)
    assert found == [] and walked == [] and doc._yaml_root is None


def test_swagger2_duplicates_name_the_pointer_of_the_text_as_written(tmp_path: Path) -> None:
    path = tmp_path / "petstore.json"
    path.write_text(
        json.dumps(
            {
                "swagger": "2.0",
                "info": {"title": "p", "version": "1"},
                "paths": {
                    "/pets": {"get": {"operationId": "listPets", "responses": {"200": {"description": "ok"}}}}
                },
                "definitions": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}},
            },
            indent=1,
        ).replace('"type": "object",', '"type": "object", "type": "object",'),
        encoding="utf-8",
    )
    _, found = _warnings(path)
    assert [d.location.pointer for d in found if d.location] == ["/definitions/Pet/type"]


def test_the_finding_is_remembered_by_the_text(tmp_path: Path, monkeypatch: Any) -> None:
    """With a `Remember` (the build cache's `spec` table), a second load of the same text reports the
    same warnings without parsing the text for duplicates again; an edited text is parsed again."""
    calls: list[int] = []
    real = duplicates.json_duplicate_keys

    def counted(text: str) -> Any:
        calls.append(1)
        return real(text)

    monkeypatch.setattr(load, "json_duplicate_keys", counted)
    path = tmp_path / "items.json"
    path.write_text(JSON_SPEC, encoding="utf-8")
    memo = Memo()
    first = _warnings(path, memo)[1]
    again = _warnings(path, memo)[1]
    assert calls == [1] and again == first
    path.write_text(JSON_SPEC.replace('"description": "found", ', ""), encoding="utf-8")
    assert len(_warnings(path, memo)[1]) == 1 and calls == [1, 1]


def test_an_error_a_dropped_duplicate_causes_comes_with_the_warning(tmp_path: Path) -> None:
    """`responses` written twice, the second one empty of what OpenAPI requires: the error and the
    duplicate that explains it are reported together."""
    path = tmp_path / "items.json"
    path.write_text(
        '{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},\n'
        ' "info": {"version": "1"}, "paths": {}}',
        encoding="utf-8",
    )
    try:
        load_spec(path, path.name, sink=DiagnosticSink())
    except DiagnosticError as exc:
        codes = [d.code for d in exc.diagnostics]
    else:
        raise AssertionError("an info without a title is not a valid OpenAPI document")
    assert "spec-invalid" in codes and "spec-duplicate-key" in codes


# a JSON object as the pairs written: keys from a small alphabet, so they repeat
_values = st.recursive(
    st.integers(0, 9),
    lambda inner: st.lists(st.tuples(st.sampled_from("abc"), inner), max_size=4),
    max_leaves=12,
)


def _text(value: Any, indent: int = 0) -> str:
    if not isinstance(value, list):
        return str(value)
    pad = "\n" + " " * (indent + 1)
    return "{" + ",".join(f'{pad}"{k}": {_text(v, indent + 1)}' for k, v in value) + "}"


def _expected(value: Any, pointer: str = "") -> set[tuple[str, str, int]]:
    """(object pointer, key, times written) of each repeated key, in the values a reader keeps."""
    if not isinstance(value, list):
        return set()
    counts: dict[str, int] = {}
    kept: dict[str, Any] = {}
    for key, child in value:
        counts[key] = counts.get(key, 0) + 1
        kept[key] = child
    found = {(pointer, k, n) for k, n in counts.items() if n > 1}
    for key, child in kept.items():
        found |= _expected(child, f"{pointer}/{key}")
    return found


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), _values), max_size=4))
def test_json_and_yaml_find_exactly_the_keys_written_twice(pairs: list[tuple[str, Any]]) -> None:
    text = _text(pairs)
    want = _expected(pairs)
    for found in (json_duplicate_keys(text), yaml_duplicate_keys(yaml_nodes(text))):
        assert {(d.pointer, d.key, len(d.positions)) for d in found} == want
        for d in found:  # each position is where the key is written
            for line, col in d.positions:
                assert text.splitlines()[line - 1][col - 1 :].startswith(f'"{d.key}"')


def test_an_object_that_repeats_many_keys_is_scanned_in_linear_time() -> None:
    """30,000 keys each written twice in one object (about 0.8 MB): every key is found at both of
    its positions, in CPU time linear in the text (a scan that looks each key up in a list of the
    ones found took minutes)."""
    import time

    n = 30_000
    body = ",".join(f'"k{i}": {i}' for i in range(n))
    text = "{" + body + ",\n" + body + "}"
    started = time.process_time()
    found = json_duplicate_keys(text)
    assert time.process_time() - started < 10
    assert len(found) == n
    assert found[0].key == "k0" and found[0].positions == ((1, 2), (2, 1))
    assert found[-1].positions[-1][0] == 2


def test_yaml_keys_that_load_as_one_value_are_duplicates(tmp_path: Path) -> None:
    """PyYAML builds a Python dict, where ``1``, ``1.0`` and ``true`` are one key (the first one
    written, with the last value): each such key is a duplicate, located at the occurrence whose value
    is read, also when a key of another type becomes the same string afterwards (``'1'``)."""
    path = tmp_path / "items.yaml"
    path.write_text(
        "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\n"
        "x-a:\n  1: one\n  1.0: float\n"
        "x-b:\n  1: one\n  true: yes\n"
        "x-c:\n  1: int\n  '1': str\n  1.0: float\n",
        encoding="utf-8",
    )
    doc, found = _warnings(path)
    assert (doc.data["x-a"], doc.data["x-b"], doc.data["x-c"]) == ({"1": "float"}, {"1": True}, {"1": "str"})
    assert [(d.location.line, d.location.col, d.location.pointer) for d in found if d.location] == [
        (6, 3, "/x-a/1"),
        (9, 3, "/x-b/1"),
        (12, 3, "/x-c/1"),
    ]
    assert "6:3" not in found[0].message and "5:3" in found[0].message
    assert "11:3, 13:3 are ignored" in found[2].message


def test_an_error_before_validation_comes_with_the_duplicate_that_causes_it(tmp_path: Path) -> None:
    """``openapi`` written twice, the kept one not a version string: the version error is raised
    with the warning that points at both occurrences (it said only that the field is missing)."""
    for name, text in (
        (
            "items.json",
            ('{"openapi": "3.0.3",\n "info": {"title": "t", "version": "1"},\n "paths": {}, "openapi": 3}'),
        ),
        ("items.yaml", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths: {}\nopenapi: 3\n"),
    ):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        try:
            load_spec(path, name, sink=DiagnosticSink())
        except DiagnosticError as exc:
            found = [(d.code, d.location.line if d.location else None) for d in exc.diagnostics]
        else:
            raise AssertionError("the openapi field read is not a version string")
        assert ("spec-version-missing", 1) in found and (
            "spec-duplicate-key",
            4 if name.endswith("yaml") else 3,
        ) in found
