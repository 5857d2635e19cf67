"""What a build after an edit computes again (`toolgen.builder.incremental.BuildPieces`,
`toolgen.compile.lower.reuse`): one edited operation is lowered, indexed and encoded again, the rest is
reused, and the files equal a build without the cache, on hand-made specs and on real ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from tests.builder.test_cache import _fresh_state, _spec, _write_inputs

from toolgen.builder.build import build_api
from toolgen.builder.cache import Cache
from toolgen.compile.lower import reuse
from toolgen.compile.lower.infer import infer_intent
from toolgen.emit import piece_key

REAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "specs" / "real"


@pytest.fixture(autouse=True)
def _cache_key_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))  # the user's MAC key, made fresh


def test_one_edited_summary_recomputes_one_operation(tmp_path: Path) -> None:
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    first = build_api(intent, tmp_path / "out", cache=cache)
    # the four explicit tools' operations and the include group's two, the two intents it inferred,
    # and the spec's input examples of each of the six
    assert first.computed["lower"] == 14
    again = build_api(intent, tmp_path / "out", cache=cache)
    assert again.files == first.files
    # nothing is computed again, but the tools of the two intents whose lowering reports something
    # (`toolgen.compile.lower.remembered_tools`: those are made every time)
    assert {kind: n for kind, n in again.computed.items() if n} == {"tools": 2}
    state["tree"] = "List every tree."
    _write_inputs(tmp_path, state)
    edited = build_api(intent, tmp_path / "out", cache=cache)
    cold = build_api(intent, tmp_path / "out", cache=None)
    assert edited.files == cold.files
    assert edited.diagnostics == cold.diagnostics
    # listTrees, and plantTree: its path item (and the response it refers to) is the one edited;
    # lowered, their intents inferred and their examples taken again
    assert edited.computed["lower"] == 6
    assert edited.computed["search"] == 1
    assert edited.computed["catalog"] == 4  # list_trees in four dialects: plant_tree's tools did not change
    assert edited.computed["plan"] == 0  # no argument schema changed


def test_remembered_diagnostics_are_located_in_the_edited_document(tmp_path: Path) -> None:
    """A remembered warning keeps its pointer, not its line: lines added above it move it."""
    state = _fresh_state()
    state["bad"] = True
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    build_api(intent, tmp_path / "out", cache=cache)
    spec = _spec(state)
    spec["info"]["description"] = "A\nlonger\ndescription."
    text = json.dumps(spec, indent=2).replace('"info": {', '"info": {\n\n\n\n', 1)
    (tmp_path / "items.json").write_text(text, encoding="utf-8")
    warm = build_api(intent, tmp_path / "out", cache=cache)
    cold = build_api(intent, tmp_path / "out", cache=None)
    assert warm.diagnostics == cold.diagnostics
    assert any(d.code == "schema-keyword-invalid" for d in warm.diagnostics)
    assert warm.files == cold.files


def _include_everything(folder: Path, spec: Path) -> Path:
    intent = folder / "api.yaml"
    intent.write_text(
        f'toolgen: 1\nspec: {spec.name}\napi: {{name: api}}\ninclude: [{{match: "*", toolset: from_tag}}]\n',
        encoding="utf-8",
    )
    return intent


def _first_operation(spec: dict[str, Any]) -> dict[str, Any]:
    for item in spec["paths"].values():
        for method in ("get", "post", "put", "patch", "delete"):
            if isinstance(item, dict) and isinstance(item.get(method), dict):
                found: dict[str, Any] = item[method]
                return found
    raise AssertionError("no operation")


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    ["asana.json", "spotify.json", "slack.json", "box.json", "digitalocean.json", "petstore-swagger2.json"],
)
def test_real_specs_rebuilt_after_edits_equal_cold_builds(tmp_path: Path, name: str) -> None:
    source = REAL / name
    if not source.is_file():
        pytest.skip("the shared real specs are not here")
    shutil.copy(source, tmp_path / name)
    intent = _include_everything(tmp_path, tmp_path / name)
    cache = Cache(tmp_path / "cache")
    filled = build_api(intent, tmp_path / "out", cache=cache)
    warm = build_api(intent, tmp_path / "out", cache=cache)
    assert warm.files == filled.files and warm.diagnostics == filled.diagnostics
    spec = json.loads(source.read_text(encoding="utf-8"))
    operation = _first_operation(spec)
    operation["summary"] = (operation.get("summary") or "") + " (edited)"
    schemas = (spec.get("components") or {}).get("schemas") or spec.get("definitions") or {}
    for schema in list(schemas.values())[:3]:  # a component several operations may reach
        if isinstance(schema, dict):
            schema["description"] = "Edited."
    (tmp_path / name).write_text(json.dumps(spec, indent=1), encoding="utf-8")
    edited = build_api(intent, tmp_path / "out", cache=cache)
    cold = build_api(intent, tmp_path / "out", cache=None)
    assert edited.files == cold.files
    assert edited.diagnostics == cold.diagnostics


def _plant_edited_builds(tmp_path: Path) -> tuple[Any, Any]:
    """A cached and a cold build after plantTree (lowered by an include group) is renamed in its
    summary from planting to deleting: its inferred effect goes from write to destructive. The
    cached build runs twice before the edit (the second infers nothing)."""
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    build_api(intent, tmp_path / "out", cache=cache)
    build_api(intent, tmp_path / "out", cache=cache)
    state["plant"] = "Delete every tree."
    _write_inputs(tmp_path, state)
    return build_api(intent, tmp_path / "out", cache=cache), build_api(intent, tmp_path / "out", cache=None)


def test_an_inferred_intent_is_inferred_again_only_for_the_edited_operation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inferred: list[str] = []
    real = infer_intent

    def counting(ctx: Any, op: Any, group: Any) -> Any:
        inferred.append(op.key)
        return real(ctx, op, group)

    monkeypatch.setattr("toolgen.compile.lower.reuse.infer_intent", counting)
    warm, cold = _plant_edited_builds(tmp_path)
    assert warm.files == cold.files and warm.diagnostics == cold.diagnostics
    assert "destructive" in {t.policy.effect for t in warm.ir.tools if t.name.endswith("plant_tree")}
    # the first build inferred both include-group operations, the second none; after the edit, the
    # cached build infers again the two whose path item (/trees) changed, as the cold build does
    assert inferred == ["GET /trees", "POST /trees"] * 3


def test_an_inferred_intent_keyed_without_its_operation_is_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: with a key that leaves out what the operation says, the cached build
    keeps the old effect and its files differ from a cold build's."""
    real = reuse._digest

    def careless(*parts: str) -> str:
        return real(*parts[:2], *parts[3:]) if parts[0] == "infer-intent 1" else real(*parts)

    monkeypatch.setattr(reuse, "_digest", careless)
    warm, cold = _plant_edited_builds(tmp_path)
    assert warm.files != cold.files


def _entries(root: Path, kinds: tuple[str, ...]) -> dict[Path, bytes]:
    return {p: p.read_bytes() for kind in kinds for p in (root / kind).rglob("*") if p.is_file()}


def test_a_rebuild_after_one_edit_adds_deltas_and_keeps_the_tables(tmp_path: Path) -> None:
    """A build after one edit writes the pieces it computed as small delta entries beside the tables
    of the build before, which it leaves as they were (`toolgen.builder.incremental.PieceTable`); the
    next build reads both and computes nothing, and every build's files equal a build's without the
    cache. (The lowering's table is not among them: after the first build the intents' tools are taken whole,
    `toolgen.compile.lower.remembered_tools`, so the next build uses few of its pieces and writes it
    again with those alone.)"""
    state = _fresh_state()
    state["extra_ops"] = set(range(40))
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    kinds = ("search", "json", "catalog")
    build_api(intent, tmp_path / "out", cache=cache)
    tables = _entries(cache.root, kinds)
    assert len(tables) == len(kinds)
    state["tree"] = "List every tree."
    _write_inputs(tmp_path, state)
    edited = build_api(intent, tmp_path / "out", cache=cache)
    assert edited.files == build_api(intent, tmp_path / "out", cache=None).files
    after = _entries(cache.root, kinds)
    assert {p: after[p] for p in tables} == tables  # the tables are not written again
    assert len(after) == 2 * len(kinds)  # a delta of each kind beside them
    again = build_api(intent, tmp_path / "out", cache=cache)
    assert {kind: n for kind, n in again.computed.items() if n} == {"tools": 2}  # those that report
    assert again.files == edited.files
    assert _entries(cache.root, kinds) == after  # nothing new: nothing written
    # many edits later the deltas outgrow their bound and the tables are written whole again
    for k in range(40, 60, 5):
        state["extra_ops"].update(range(k, k + 5))
        _write_inputs(tmp_path, state)
        last = build_api(intent, tmp_path / "out", cache=cache)
    assert last.files == build_api(intent, tmp_path / "out", cache=None).files
    assert any(after[p] != b for p, b in _entries(cache.root, kinds).items() if p in tables)


def _paging_edited_builds(tmp_path: Path) -> tuple[Any, Any]:
    """A cached and a cold build after listTrees (an array of trees, no paging parameter) gains a
    `cursor` query parameter: its pagination finding now names it."""
    intent = _write_inputs(tmp_path, _fresh_state())
    cache = Cache(tmp_path / "cache")
    build_api(intent, tmp_path / "out", cache=cache)
    spec = json.loads((tmp_path / "items.json").read_text(encoding="utf-8"))
    spec["paths"]["/trees"]["get"]["parameters"] = [
        {"name": "cursor", "in": "query", "schema": {"type": "string"}}
    ]
    (tmp_path / "items.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return build_api(intent, tmp_path / "out", cache=cache), build_api(intent, tmp_path / "out", cache=None)


def _paging_findings(build: Any) -> list[str]:
    return [d.message for d in build.diagnostics if d.code == "pagination-missing"]


def test_remembered_lint_facts_follow_the_operation(tmp_path: Path) -> None:
    """What the pagination and output-size rules read of an operation is remembered under its part
    of the document: after an edit there, the findings are a cold build's."""
    warm, cold = _paging_edited_builds(tmp_path)
    assert warm.diagnostics == cold.diagnostics and warm.files == cold.files
    assert any("takes cursor" in m for m in _paging_findings(warm))
    assert warm.computed["lint"] > 0


def test_lint_facts_keyed_without_the_operation_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: keyed without the operation's part of the document, the finding of
    the build before comes back."""
    _key_lint_facts_without_the_operation(monkeypatch)
    warm, cold = _paging_edited_builds(tmp_path)
    assert _paging_findings(warm) != _paging_findings(cold)


def _key_lint_facts_without_the_operation(monkeypatch: pytest.MonkeyPatch) -> None:
    """The lint rules' facts of an operation keyed without its part of the document (other keys as they are)."""
    monkeypatch.setattr(
        "toolgen.review.lint.operation_checks.piece_key",
        lambda kind, *parts: (
            piece_key(kind, parts[0], parts[2]) if len(parts) == 3 else piece_key(kind, *parts)
        ),
    )


def _idempotency_edited_builds(tmp_path: Path) -> tuple[Any, Any]:
    """A cached and a cold build after createItem (a write whose record sends no idempotency key)
    gains an ``Idempotency-Key`` header parameter: where it takes its key changes."""
    intent = _write_inputs(tmp_path, _fresh_state())
    cache = Cache(tmp_path / "cache")
    build_api(intent, tmp_path / "out", cache=cache)
    spec = json.loads((tmp_path / "items.json").read_text(encoding="utf-8"))
    spec["paths"]["/items"]["post"]["parameters"] = [
        {"name": "Idempotency-Key", "in": "header", "schema": {"type": "string"}}
    ]
    (tmp_path / "items.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")
    return build_api(intent, tmp_path / "out", cache=cache), build_api(intent, tmp_path / "out", cache=None)


def _idempotency_findings(build: Any) -> list[str]:
    return [d.message for d in build.diagnostics if d.code.startswith("idempotency-")]


def test_remembered_idempotency_places_follow_the_operation(tmp_path: Path) -> None:
    """Where a write takes its idempotency key (the policy rules' `idempotency_place`) is remembered
    under its operation's part of the document: after an edit there, the findings are a cold build's."""
    warm, cold = _idempotency_edited_builds(tmp_path)
    assert warm.diagnostics == cold.diagnostics and warm.files == cold.files
    assert any("Idempotency-Key" in m for m in _idempotency_findings(warm))


def test_idempotency_places_keyed_without_the_operation_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: keyed without the operation's part of the document, the place the
    build before found comes back."""
    _key_lint_facts_without_the_operation(monkeypatch)
    warm, cold = _idempotency_edited_builds(tmp_path)
    assert _idempotency_findings(warm) != _idempotency_findings(cold)


def _policy_edited_builds(tmp_path: Path) -> tuple[Any, Any]:
    """A cached and a cold build after deleteItem's effect changes from destructive to write: its
    policy rows (effect, approval) change, its tools' names do not."""
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    first = build_api(intent, tmp_path / "out", cache=cache)
    rewritten = [t.name for t in first.ir.tools if t.name in first.catalogs.rewrites]
    assert rewritten == ["preview_plant_tree"]  # Gemini takes its recursive tree as a JSON string
    assert first.computed["policy"] == len(rewritten)  # the other rows are kept with their tools
    state["effects"][3] = "write"
    _write_inputs(tmp_path, state)
    return build_api(intent, tmp_path / "out", cache=cache), build_api(intent, tmp_path / "out", cache=None)


def test_remembered_policy_rows_follow_their_tools(tmp_path: Path) -> None:
    """Each policy row's JSON is kept with its tool's catalog record, by the tool's content, or (a row
    with argument rewrites) remembered by its tool's content and rewrites
    (`toolgen.emit.policy.table_json`): after an edit of one intent, the files are a cold build's."""
    warm, cold = _policy_edited_builds(tmp_path)
    assert warm.files == cold.files
    assert warm.computed["policy"] == 0  # the rewritten row was found by its key


def test_policy_rows_kept_by_the_tool_name_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: the values derived from a tool kept by its name (not in the record of
    its content), the POLICY.md line of the intent before the edit comes back (its row's JSON is made
    from the tool itself; what the record keeps of it, the members the search index groups by, did
    not change)."""
    kept: dict[tuple[str, str], Any] = {}

    def by_name(tool: Any, what: str, compute: Any, otherwise: Any = None) -> Any:
        return (
            kept[(tool.name, what)]
            if (tool.name, what) in kept
            else kept.setdefault((tool.name, what), compute())
        )

    monkeypatch.setattr("toolgen.emit.policy.derived", by_name)
    warm, cold = _policy_edited_builds(tmp_path)
    assert warm.files["POLICY.md"] != cold.files["POLICY.md"]
    assert warm.files["policy.json"] == cold.files["policy.json"]


def test_policy_rows_with_rewrites_keyed_without_the_tool_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A row with argument rewrites is keyed by its tool and the rewrites: keyed by the tool's name
    alone, the row from before its toolset was renamed comes back."""
    monkeypatch.setattr(
        "toolgen.emit.policy.piece_key", lambda kind, tool, rewrites: piece_key(kind, tool.name)
    )
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    cache = Cache(tmp_path / "cache")
    build_api(intent, tmp_path / "out", cache=cache)
    edited = json.loads(intent.read_text(encoding="utf-8"))  # the tree tools' toolset renamed
    edited["toolsets"] = {"groves": edited["toolsets"].pop("trees")}
    edited["include"][0]["toolset"] = "groves"
    intent.write_text(json.dumps(edited), encoding="utf-8")
    warm, cold = (build_api(intent, tmp_path / "out", cache=c) for c in (cache, None))
    assert b'"toolset": "groves"' in cold.files["policy.json"]
    assert warm.files["policy.json"] != cold.files["policy.json"]


def _example_edited_builds(tmp_path: Path, first: Any, then: Any) -> tuple[Any, Any]:
    """A cached and a cold build after createItem's request-body example changes from `first` to
    `then` (the spec's examples become the tool's input examples, `toolgen.compile.lower.input_examples`)."""
    intent = _write_inputs(tmp_path, _fresh_state())
    cache = Cache(tmp_path / "cache")

    def write(example: Any) -> None:
        spec = json.loads((tmp_path / "items.json").read_text(encoding="utf-8"))
        spec["paths"]["/items"]["post"]["requestBody"]["content"]["application/json"]["example"] = example
        (tmp_path / "items.json").write_text(json.dumps(spec, indent=2), encoding="utf-8")

    write(first)
    build_api(intent, tmp_path / "out", cache=cache)
    write(then)
    return build_api(intent, tmp_path / "out", cache=cache), build_api(intent, tmp_path / "out", cache=None)


def _input_examples(build: Any) -> dict[str, Any]:
    return {t.name: t.input_examples for t in build.ir.tools if t.input_examples}


@pytest.mark.parametrize(
    ("then", "shown"), [({"name": "fir", "color": "green"}, True), ({"name": 7}, False), ("no object", False)]
)
def test_remembered_spec_examples_follow_the_operation(tmp_path: Path, then: Any, shown: bool) -> None:
    """A tool's input examples taken from the spec are remembered under its operation's part of the
    document (`toolgen.compile.lower.reuse.remembered_examples`): after the example changes (to
    another valid one, to one the schema refuses: a located warning, or to one that gives no
    arguments: left out), the tools, findings and files are a cold build's."""
    warm, cold = _example_edited_builds(tmp_path, {"name": "oak", "color": "red"}, then)
    assert _input_examples(warm) == _input_examples(cold)
    assert warm.diagnostics == cold.diagnostics and warm.files == cold.files
    assert shown == any(then in examples for examples in _input_examples(warm).values())
    assert (then == {"name": 7}) == any(d.code == "spec-example-invalid" for d in warm.diagnostics)


def test_spec_examples_keyed_without_the_operation_are_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check above can fail: keyed without the operation's part of the document, the example the
    build before found comes back."""
    digest = reuse._digest
    monkeypatch.setattr(
        reuse,
        "_digest",
        lambda *parts: digest(*parts[:2], *parts[3:]) if parts[0] == "spec-examples 1" else digest(*parts),
    )
    warm, cold = _example_edited_builds(
        tmp_path, {"name": "oak", "color": "red"}, {"name": "fir", "color": "green"}
    )
    assert _input_examples(warm) != _input_examples(cold)
