"""The build cache (`toolgen.builder.cache`, `toolgen.builder.incremental`): a cached build writes the bytes a
build
without the cache writes, whatever was edited between builds; `--check` answers from the manifest
only when the folder holds those bytes; entries are atomic, and a damaged entry or a build killed
while writing one never gives wrong bytes."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tests.support.build import run
from tests.support.profiles import examples

from toolgen.builder.cache import Cache, digest

EFFECTS = ("read", "write", "destructive")
OPERATIONS = ("listItems", "createItem", "getItem", "deleteItem")
OPTIONAL_QUERY = {
    "listItems": ("limit", "status", "cursor"),
    "getItem": ("fields",),
    "createItem": (),
    "deleteItem": (),
}


#: the build cache on, in a folder of each test's own (`cache_on`, tests/conftest.py)
pytestmark = pytest.mark.usefixtures("cache_on")


def _spec(state: dict[str, Any]) -> dict[str, Any]:
    item = {
        "type": "object",
        "required": ["name"],
        "properties": {
            "name": {"type": "string", "description": "The item's name."},
            "color": {"type": "string", "enum": ["red", "green", "blue"]},
            "size": {"type": "object", "properties": {"w": {"type": "integer"}, "h": {"type": "integer"}}},
            **{f"extra_{p}": {"type": "string"} for p in sorted(state["props"])},
        },
    }

    def ok(schema: dict[str, Any]) -> dict[str, Any]:
        return {"200": {"description": "ok", "content": {"application/json": {"schema": schema}}}}

    ref = {"$ref": "#/components/schemas/Item"}
    paths: dict[str, Any] = {
        "/items": {
            "get": {
                "operationId": "listItems",
                "summary": state["summaries"][0],
                "tags": ["items"],
                "parameters": [
                    {"name": n, "in": "query", "schema": {"type": "string"}}
                    for n in OPTIONAL_QUERY["listItems"]
                ],
                "responses": ok({"type": "array", "items": ref}),
            },
            "post": {
                "operationId": "createItem",
                "summary": state["summaries"][1],
                "tags": ["items"],
                "requestBody": {"required": True, "content": {"application/json": {"schema": ref}}},
                "responses": ok(ref),
            },
        },
        "/items/{id}": {
            "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
            "get": {
                "operationId": "getItem",
                "summary": state["summaries"][2],
                "tags": ["items"],
                "parameters": [{"name": "fields", "in": "query", "schema": {"type": "string"}}],
                "responses": ok(ref),
            },
            "delete": {
                "operationId": "deleteItem",
                "summary": state["summaries"][3],
                "tags": ["admin"],
                "responses": {"204": {"description": "gone"}},
            },
        },
    }
    # lowered through an include group: a recursive schema (a cycle note every tool that reaches it
    # carries), a reference into another path item, and a schema keyword that is dropped with a warning
    node = {
        "type": "object",
        "properties": {
            "label": {"type": "string", **({"minLength": "two"} if state["bad"] else {})},
            "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}},
        },
    }
    paths["/trees"] = {
        "get": {
            "operationId": "listTrees",
            "summary": state["tree"],
            "tags": ["tree"],
            "responses": ok({"type": "array", "items": {"$ref": "#/components/schemas/Node"}}),
        },
        "post": {
            "operationId": "plantTree",
            "summary": state["plant"],
            "tags": ["tree"],
            "requestBody": {
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}
            },
            "responses": {"200": {"$ref": "#/paths/~1trees/get/responses/200"}},
        },
    }
    for k in sorted(state["extra_ops"]):
        paths[f"/extra{k}"] = {
            "get": {
                "operationId": f"extra{k}",
                "summary": f"Extra number {k}.",
                "tags": ["extra"],
                "parameters": [{"name": f"q{k}", "in": "query", "schema": {"type": "integer"}}],
                "responses": ok({"type": "object", "properties": {"n": {"type": "integer"}}}),
            }
        }
    return {
        "openapi": "3.0.3",
        "info": {"title": "Items", "version": "1"},
        "servers": [{"url": "https://items.example.com"}],
        "paths": paths,
        "components": {"schemas": {"Item": item, "Node": node}},
    }


def _intent_map(state: dict[str, Any]) -> dict[str, Any]:
    tools: dict[str, Any] = {}
    for i, operation in enumerate(OPERATIONS):
        intent: dict[str, Any] = {"operation": operation, "effect": state["effects"][i]}
        if state["effects"][i] != "read":
            intent["approval"] = "required"
        if state["descriptions"][i]:
            intent["description"] = state["descriptions"][i]
        hidden = [name for name in OPTIONAL_QUERY[operation] if name in state["hidden"]]
        if hidden:
            intent["hide"] = hidden
        tools[f"tool_{operation.lower()}"] = intent
    for k in sorted(state["extra_ops"]):
        tools[f"extra_{k}"] = {"operation": f"extra{k}", "effect": "read"}
    return {
        "toolgen": 1,
        "spec": "items.json",
        "api": {"name": "items"},
        "tools": tools,
        "toolsets": {"trees": {"description": "Trees and their branches."}},
        "include": [{"match": "tag:tree", "toolset": "trees"}],
    }


INITIAL: dict[str, Any] = {
    "summaries": ["List items.", "Create an item.", "Get an item.", "Delete an item."],
    "descriptions": ["", "", "", ""],
    "effects": ["read", "write", "read", "destructive"],
    "hidden": set(),
    "extra_ops": set(),
    "props": set(),
    "tree": "List trees.",
    "bad": False,
    "plant": "Plant a tree.",
}


def _fresh_state() -> dict[str, Any]:
    return {
        k: (set(v) if isinstance(v, set) else list(v) if isinstance(v, list) else v)
        for k, v in INITIAL.items()
    }


_text = st.text(st.sampled_from("abcdefgh XYZ.é"), min_size=1, max_size=20).map(lambda s: s.strip() or "x")
_edits = st.one_of(
    st.tuples(st.just("summary"), st.integers(0, 3), _text),
    st.tuples(st.just("description"), st.integers(0, 3), _text),
    st.tuples(st.just("effect"), st.integers(0, 3), st.sampled_from(EFFECTS)),
    st.tuples(st.just("hide"), st.sampled_from(["limit", "status", "cursor", "fields"])),
    st.tuples(st.just("operation"), st.integers(0, 2)),
    st.tuples(st.just("property"), st.sampled_from(["a", "b"])),
    st.tuples(st.just("tamper"), st.sampled_from(["openai.json", "models.py", "REPORT.md", "search.json"])),
    st.tuples(st.just("tree"), _text),
    # an include group's operation whose inferred effect follows its summary (write or destructive)
    st.tuples(st.just("plant"), st.sampled_from(["Plant a tree.", "Delete every tree.", "Update a tree."])),
    st.tuples(st.just("bad")),
)


def _apply(state: dict[str, Any], edit: tuple[Any, ...]) -> None:
    kind = edit[0]
    if kind in ("tree", "plant"):
        state[kind] = edit[1]
    elif kind == "bad":
        state["bad"] = not state["bad"]
    elif kind in ("summary", "description", "effect"):
        state[{"summary": "summaries", "description": "descriptions", "effect": "effects"}[kind]][edit[1]] = (
            edit[2]
        )
    elif kind in ("hide", "operation", "property"):
        chosen = state[{"hide": "hidden", "operation": "extra_ops", "property": "props"}[kind]]
        chosen.symmetric_difference_update({edit[1]})


def _write_inputs(folder: Path, state: dict[str, Any]) -> Path:
    (folder / "items.json").write_text(json.dumps(_spec(state), indent=2), encoding="utf-8")
    intent = folder / "items.yaml"
    intent.write_text(json.dumps(_intent_map(state), indent=2), encoding="utf-8")
    return intent


def _write_project(folder: Path, states: dict[str, dict[str, Any]]) -> None:
    """A project of one API per state: `NAME/items.json` and `NAME/items.yaml` (`_write_inputs`) and a
    toolgen.yaml naming them in the order of `states`, each built into `out/NAME`."""
    for name, state in states.items():
        (folder / name).mkdir()
        _write_inputs(folder / name, state)
    (folder / "toolgen.yaml").write_text(
        "toolgen: 1\napis:\n"
        + "".join(f"  - name: {n}\n    intent_map: {n}/items.yaml\n    out: out/{n}\n" for n in states),
        encoding="utf-8",
    )


def _tree(folder: Path) -> dict[str, bytes]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def _build(intent: Path, out: Path, *flags: str) -> int:
    return run("build", str(intent), "--out", str(out), "-q", *flags).exit_code


@pytest.mark.long
@settings(
    max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(edits=st.lists(_edits, min_size=1, max_size=4))
@example(edits=[("effect", 3, "read")])  # a first edit the build refuses (a delete drafted as a read)
@example(
    edits=[("effect", 3, "read"), ("tamper", "openai.json")]
)  # then a file changed under a refused build
@example(
    edits=[("plant", "Delete every tree."), ("plant", "Plant a tree.")]
)  # an inferred effect changes, and back
def test_a_cached_build_writes_the_bytes_of_a_build_without_the_cache(
    tmp_path_factory: pytest.TempPathFactory, edits: list[tuple[Any, ...]]
) -> None:
    work = tmp_path_factory.mktemp("edits")
    state = _fresh_state()
    intent = _write_inputs(work, state)
    cached, cold = work / "cached", work / "cold"
    assert _build(intent, cached) == 0
    # the cold folder starts from the same build: an edit the build refuses leaves both as they were
    assert _build(intent, cold, "--no-cache") == 0
    for edit in edits:
        if edit[0] == "tamper":  # the inputs stay, the folder changes: --check must see it
            target = cached / edit[1]
            target.write_bytes(target.read_bytes() + b"\n")
            assert _build(intent, cached, "--check") == 1
        else:
            _apply(state, edit)
            _write_inputs(work, state)
        before, before_cold = _tree(cached), _tree(cold)
        code = _build(intent, cached)
        assert code == _build(intent, cold, "--no-cache")
        if code != 0:  # a refused build writes nothing, cached or not (a tampered file stays tampered)
            assert (_tree(cached), _tree(cold)) == (before, before_cold)
        else:
            assert _tree(cached) == _tree(cold)
            # twice: the second answers from the manifest
            assert _build(intent, cached, "--check") == 0
            assert _build(intent, cached, "--check") == 0


def _project(folder: Path) -> Path:
    state = _fresh_state()
    return _write_inputs(folder, state)


def test_check_answers_from_the_manifest_without_building(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = _project(tmp_path)
    out = tmp_path / "out"
    assert _build(intent, out) == 0
    import toolgen.cli.build_cmd as cli_build

    def no_build(*args: object, **kwargs: object) -> None:
        raise AssertionError("built although the inputs and the folder are unchanged")

    monkeypatch.setattr(cli_build, "build_api", no_build)
    result = run("build", str(intent), "--out", str(out), "--check")
    assert result.exit_code == 0, result.output
    assert "up to date" in result.output
    # the findings of the recorded build are printed again, as the build printed them
    assert "warning[" in result.output or "info[" in result.output
    # a file toolgen did not write, or a changed input: built again (and here, the build is refused)
    (out / "stray.txt").write_text("x", encoding="utf-8")
    again = run("build", str(intent), "--out", str(out), "--check")
    assert again.exit_code != 0 and "built although" in again.output


def test_a_cache_from_elsewhere_is_never_believed(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pull request that commits a cache folder (with a manifest calling a tampered output folder
    up to date) must not make `--check` pass: entries are MACed with the builder's own secret,
    kept outside the project, so another user's (or a forger's) entries are misses."""
    import hashlib

    import toolgen.builder.cache as cache_module

    intent = _project(tmp_path)
    out = tmp_path / "out"
    assert _build(intent, out) == 0
    policy = out / "policy.json"
    tampered = policy.read_bytes().replace(b'"required"', b'"never"')
    assert tampered != policy.read_bytes()
    policy.write_bytes(tampered)
    records = {
        e: json.loads(e.read_bytes().split(b"\n", 1)[1])
        for e in (cache_on / "manifest").rglob("*")
        if e.is_file() and not e.name.startswith(".")
    }
    assert records

    def forge(secret_home: Path | None) -> None:
        """Rewrite every manifest record to vouch for the tampered folder, MACed under `secret_home`."""
        if secret_home is None:
            monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        else:
            monkeypatch.setenv("XDG_CACHE_HOME", str(secret_home))
        cache_module.mac_key.cache_clear()
        for entry, record in records.items():
            record["files"]["policy.json"] = hashlib.sha256(tampered).hexdigest()
            Cache(cache_on).put("manifest", entry.name, cache_module.canonical(record).encode("utf-8"))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
        cache_module.mac_key.cache_clear()

    # control: a record vouched for with the builder's own secret is believed (the test can fail)
    forge(None)
    assert _build(intent, out, "--check") == 0
    # the same record from anyone else (a committed cache folder) is not: the drift is found
    forge(tmp_path / "forger-home")
    assert _build(intent, out, "--check") != 0


def test_no_cache_and_the_environment_turn_it_off(
    tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    intent = _project(tmp_path)
    assert _build(intent, tmp_path / "a", "--no-cache") == 0
    assert not cache_on.exists()
    monkeypatch.setenv("TOOLGEN_CACHE", "0")
    assert _build(intent, tmp_path / "b") == 0
    assert not cache_on.exists()
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    assert _build(intent, tmp_path / "c") == 0
    assert {p.name for p in cache_on.iterdir()} >= {"manifest", "package", "black", "catalog"}


def _entries(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "header"])
def test_a_damaged_entry_is_computed_again(tmp_path: Path, cache_on: Path, damage: str) -> None:
    intent = _project(tmp_path)
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _build(intent, tmp_path / "first") == 0
    for entry in _entries(cache_on):
        data = entry.read_bytes()
        if damage == "truncate":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "flip":
            entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
        elif damage == "empty":
            entry.write_bytes(b"")
        else:
            entry.write_bytes(b"garbage\n" + data)
    # the folder is stale, so the manifest's answer is not enough: every stage reads a damaged entry
    second = tmp_path / "second"
    assert _build(intent, second) == 0
    assert _tree(second) == _tree(tmp_path / "cold")
    assert _build(intent, second, "--check") == 0


def test_get_and_put(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    key = digest("k")
    assert cache.get("x", key) is None
    cache.put("x", key, b"payload\nwith lines")
    assert cache.get("x", key) == b"payload\nwith lines"
    calls: list[int] = []

    def make(value: bytes) -> bytes:
        calls.append(1)
        return value

    assert cache.memo("x", digest("other"), lambda: make(b"v")) == b"v"
    assert cache.memo("x", digest("other"), lambda: make(b"w")) == b"v"
    assert calls == [1]
    assert [p.name for p in (tmp_path / "c").rglob(".*") if p.is_file()] == [
        ".gitignore"
    ]  # no temporary file
    assert (tmp_path / "c" / ".gitignore").read_text(encoding="utf-8").splitlines()[
        -1
    ] == "*"  # git ignores it


def test_an_unwritable_cache_costs_only_time(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder", encoding="utf-8")
    cache = Cache(blocked / "cache")
    cache.put("x", digest("k"), b"v")
    assert cache.get("x", digest("k")) is None
    assert cache.memo("x", digest("k"), lambda: b"v") == b"v"


def _writer(root: str, key: str, fill: int, rounds: int) -> None:
    cache = Cache(Path(root))
    for _ in range(rounds):
        cache.put("x", key, bytes([fill]) * 300_000)


def test_concurrent_writers_never_show_half_an_entry(tmp_path: Path) -> None:
    key = digest("shared")
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_writer, args=(str(tmp_path), key, fill, 30)) for fill in (1, 2, 3)]
    for w in writers:
        w.start()
    cache = Cache(tmp_path)
    seen = set()
    while any(w.is_alive() for w in writers):
        found = cache.get("x", key)
        if found is not None:
            assert len(found) == 300_000 and len(set(found)) == 1  # one writer's whole entry
            seen.add(found[0])
    for w in writers:
        w.join()
        assert w.exitcode == 0
    final = cache.get("x", key)
    assert final is not None and len(set(final)) == 1
    assert [p.name for p in tmp_path.rglob(".*") if p.is_file()] == [".gitignore"]


def _killed_at_rename(root: str) -> None:
    """Write an entry and die (SIGKILL) just before the rename that publishes it."""

    def die(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    os.replace = die  # type: ignore[assignment]  # in this child process only
    Cache(Path(root)).put("x", digest("k"), b"v" * 100_000)


def test_a_writer_killed_mid_write_leaves_no_entry(tmp_path: Path) -> None:
    child = multiprocessing.get_context("fork").Process(target=_killed_at_rename, args=(str(tmp_path),))
    child.start()
    child.join()
    assert child.exitcode == -signal.SIGKILL
    cache = Cache(tmp_path)
    assert cache.get("x", digest("k")) is None  # only a temporary file is left, never read as the entry
    assert cache.memo("x", digest("k"), lambda: b"fresh") == b"fresh"


def _build_killed_on_first_entry(intent: str, out: str, at: int = 1) -> None:
    """A cached build killed (SIGKILL) while it publishes its `at`-th cache entry (the first: a black
    piece; later ones: the catalog table, the per-tool pieces' tables)."""

    def die(*args: object) -> None:
        os.kill(os.getpid(), signal.SIGKILL)

    import toolgen.builder.cache

    real = os.replace
    published = [0]

    def replace(src: Any, dst: Any) -> None:
        if str(src).startswith(os.environ["TOOLGEN_CACHE_DIR"]):
            published[0] += 1
            if published[0] == at:
                die()
        real(src, dst)

    toolgen.builder.cache.os.replace = replace  # type: ignore[attr-defined]
    run("build", intent, "--out", out, "-q")


@pytest.mark.parametrize("at", [1, 4, 8])
def test_a_build_killed_while_caching_leaves_no_wrong_bytes(tmp_path: Path, at: int) -> None:
    intent = _project(tmp_path)
    os.environ["TOOLGEN_WORKERS"] = "0"  # the pieces are cached in this process, so the kill reaches them
    try:
        child = multiprocessing.get_context("fork").Process(
            target=_build_killed_on_first_entry, args=(str(intent), str(tmp_path / "killed"), at)
        )
        child.start()
        child.join()
    finally:
        del os.environ["TOOLGEN_WORKERS"]
    assert child.exitcode == -signal.SIGKILL
    assert not (tmp_path / "killed").exists()
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _build(intent, tmp_path / "cached") == 0
    assert _tree(tmp_path / "cached") == _tree(tmp_path / "cold")


def _build_state(work: str, summary: str) -> None:
    state = _fresh_state()
    state["tree"] = summary
    folder = Path(work)
    folder.mkdir(parents=True, exist_ok=True)
    intent = _write_inputs(folder, state)
    for _ in range(2):  # the second build reads what the other process may have written meanwhile
        assert _build(intent, folder / "out") == 0


def test_concurrent_builds_of_different_edits_share_the_cache(tmp_path: Path) -> None:
    """Two projects in different states build at once into one cache (the per-tool tables are one
    entry per kind, each build writing its own back); afterwards each cached build of each state
    equals a build without the cache."""
    context = multiprocessing.get_context("fork")
    builders = [
        context.Process(target=_build_state, args=(str(tmp_path / name), summary))
        for name, summary in (("a", "List trees."), ("b", "Every tree there is."))
    ]
    for b in builders:
        b.start()
    for b in builders:
        b.join()
        assert b.exitcode == 0
    for name in ("a", "b"):
        intent = tmp_path / name / "items.yaml"
        assert _build(intent, tmp_path / name / "again") == 0
        assert _build(intent, tmp_path / name / "cold", "--no-cache") == 0
        assert (
            _tree(tmp_path / name / "again")
            == _tree(tmp_path / name / "cold")
            == _tree(tmp_path / name / "out")
        )


def test_what_the_spec_alone_gives_is_kept_by_its_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The spec's validation, each operation's part of it, the lines and columns of the findings'
    pointers and the keys written twice (`SpecDocument.content_key`) come from the cache while the
    spec's text is unchanged (an edit of the intent map only), with the findings they gave; an edit
    of the spec computes them again, and its new findings are reported (at their lines: the files
    equal a build without the cache)."""
    from toolgen.compile import duplicates, load, sourcemap, spec_validation
    from toolgen.compile.lower import reuse

    validated: list[int] = []
    read: list[str] = []
    scanned: list[int] = []  # the text parsed again for keys written twice (`toolgen.compile.duplicates`)
    located: list[int] = []  # the text scanned for the lines and columns of pointers
    real_findings, real_read = spec_validation.model_findings, reuse.OperationKeys._read
    real_scan = duplicates.json_duplicate_keys
    real_locate = sourcemap.locate_json_many

    def locate(text: str, pointers: list[str]) -> Any:
        located.append(len(pointers))
        return real_locate(text, pointers)

    monkeypatch.setattr("toolgen.compile.load.locate_json_many", locate)

    def findings(doc: Any) -> Any:
        validated.append(1)
        return real_findings(doc)

    def scan(text: str) -> Any:
        scanned.append(1)
        return real_scan(text)

    def reads(self: Any, op: Any) -> Any:
        read.append(op.pointer)
        return real_read(self, op)

    monkeypatch.setattr(spec_validation, "model_findings", findings)
    monkeypatch.setattr(reuse.OperationKeys, "_read", reads)
    monkeypatch.setattr(load, "json_duplicate_keys", scan)
    state = _fresh_state()
    state["bad"] = True  # a schema keyword of the wrong type: a spec-schema-invalid warning
    intent = _write_inputs(tmp_path, state)
    out = tmp_path / "out"
    assert _build(intent, out) == 0
    assert validated == [1] and read and scanned == [1] and located
    assert "spec-schema-invalid" in (out / "REPORT.md").read_text(encoding="utf-8")
    validated.clear()
    read.clear()
    scanned.clear()
    located.clear()
    state["descriptions"][0] = "Every item there is."  # the intent map only
    _write_inputs(tmp_path, state)
    assert _build(intent, out) == 0
    assert validated == [] and read == [] and scanned == [] and located == []
    assert "spec-schema-invalid" in (out / "REPORT.md").read_text(encoding="utf-8")  # the kept finding
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _tree(out) == _tree(tmp_path / "cold")
    validated.clear()
    scanned.clear()
    located.clear()
    state["bad"] = False  # the spec: validated again, and the warning is gone
    state["summaries"][0] = "List the items there are."
    _write_inputs(tmp_path, state)
    assert _build(intent, out) == 0
    assert validated == [1] and read and scanned == [1]
    assert "spec-schema-invalid" not in (out / "REPORT.md").read_text(encoding="utf-8")
    assert _build(intent, tmp_path / "cold", "--no-cache") == 0
    assert _tree(out) == _tree(tmp_path / "cold")


def test_the_cache_folder_is_ignored_by_git() -> None:
    from tests.support.build import REPO

    assert ".toolgen/" in (REPO / ".gitignore").read_text(encoding="utf-8").split()


def test_each_api_of_a_project_keeps_its_own_pieces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In a project of two APIs, building one does not drop what the other's build keeps: after an edit
    of one API's intent map (its spec unchanged) its spec is not validated again, whichever API was
    built last. (The tables of pieces were one per kind for the whole cache, and each build keeps only
    the pieces it used, so each API's build threw away the other's: alternate edits of two APIs
    validated, lowered and transformed everything each time.)"""
    from toolgen.compile import spec_validation

    validated: list[str] = []
    real_findings = spec_validation.model_findings

    def findings(doc: Any) -> Any:
        validated.append(doc.display)
        return real_findings(doc)

    monkeypatch.setattr(spec_validation, "model_findings", findings)
    states = {name: _fresh_state() for name in ("left", "right")}
    states["right"]["tree"] = "List the trees."  # two specs, not one text validated once for both
    _write_project(tmp_path, states)
    monkeypatch.chdir(tmp_path)
    assert run("build", "-q").exit_code == 0
    assert len(validated) == 2
    for turn, name in enumerate(["left", "right", "left", "right"]):
        validated.clear()
        states[name]["descriptions"][0] = f"Every item there is, take {turn}."  # the intent map only
        _write_inputs(tmp_path / name, states[name])
        assert run("build", "-q").exit_code == 0
        assert validated == [], (turn, name)


def test_the_yaml_reader_is_part_of_the_key_of_what_yaml_gives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML's C loader (libyaml) and its pure-Python one read some texts differently, so which one
    parsed a YAML spec keys what its text gives (`SpecDocument.content_key`) and every cache entry
    (`toolgen.builder.cache.environment_key`): after the reader changes, a build validates the spec again
    instead of taking the other reader's findings. A JSON spec's key does not depend on it."""
    import yaml

    from toolgen.builder.cache import environment_key
    from toolgen.compile import load, spec_validation

    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML has no C loader: one reader only")
    # the edge that makes them differ: a tab after a key's colon is separation to libyaml, an error to PyYAML's scanner
    assert yaml.load("a:\tb\n", Loader=yaml.CSafeLoader) == {"a": "b"}
    with pytest.raises(yaml.YAMLError):
        yaml.load("a:\tb\n", Loader=yaml.SafeLoader)
    validated: list[int] = []
    real_findings = spec_validation.model_findings

    def findings(doc: Any) -> Any:
        validated.append(1)
        return real_findings(doc)

    monkeypatch.setattr(spec_validation, "model_findings", findings)
    state = _fresh_state()
    intent = _write_inputs(tmp_path, state)
    spec = json.loads((tmp_path / "items.json").read_text(encoding="utf-8"))
    (tmp_path / "items.spec.yaml").write_text(yaml.safe_dump(spec), encoding="utf-8")
    intent.write_text(json.dumps({**_intent_map(state), "spec": "items.spec.yaml"}), encoding="utf-8")
    keys: dict[str, tuple[str, str, str]] = {}
    try:
        for loader in (yaml.CSafeLoader, yaml.SafeLoader):
            monkeypatch.setattr(load, "_YamlLoader", loader)
            environment_key.cache_clear()
            assert _build(intent, tmp_path / "out") == 0
            assert len(validated) == 1, (
                loader.__name__
            )  # computed under each reader, never taken from the other's
            keys[loader.__name__] = (
                environment_key(),
                load.load_spec(tmp_path / "items.spec.yaml").content_key,
                load.load_spec(tmp_path / "items.json").content_key,
            )
            validated.clear()
    finally:
        monkeypatch.undo()
        environment_key.cache_clear()
    c_reader, py_reader = keys["CSafeLoader"], keys["SafeLoader"]
    assert c_reader[0] != py_reader[0] and c_reader[1] != py_reader[1]
    assert c_reader[2] == py_reader[2]


def test_a_project_prints_its_findings_in_the_same_order_cached_or_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`toolgen build` of a project prints each API's findings in the project's order whichever APIs
    the manifest answered: after an edit of the second API only, the first is reused and its findings
    (recorded) came after the second's (built), where a build without the cache printed them in the
    project's order."""
    states = {name: _fresh_state() for name in ("left", "right")}
    for state in states.values():
        state["bad"] = True  # a warning each API prints
    _write_project(tmp_path, states)
    monkeypatch.chdir(tmp_path)
    assert run("build", "-q").exit_code == 0
    states["right"]["descriptions"][0] = "Every item there is."
    _write_inputs(tmp_path / "right", states["right"])
    cached = run("build", "-q")
    cold = run("build", "-q", "--no-cache")
    assert (cached.exit_code, cold.exit_code) == (0, 0)
    assert "left/items.json" in cold.output and "right/items.json" in cold.output
    assert cached.output == cold.output
