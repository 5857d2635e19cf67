"""A package's ``search.vectors`` is checked when the runtime loads the package to serve tool search
(`toolgen.runtime.serving.search_tools.ToolSearch`, `toolgen.search.dense_check.checked_sidecar`):
missing, cut short, damaged, of another model, or of other documents (another count, another
order), it is found before any request, said in one warning naming the file and what to do
(rebuild), and the lexical ranking is served; a vector of it never ranks anything. The model and
tokenizer are the tests' own (`tests.support.dense_model`), never downloaded weights."""

from __future__ import annotations

import json
import logging
import os
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from tests.support.build import copy_example
from tests.support.dense_model import sha256, write_model, write_tokenizer
from tests.support.profiles import examples

from toolgen.builder.build import build_project
from toolgen.builder.output_files import write_outputs
from toolgen.builder.project import load_project
from toolgen.runtime import Actor, Registry
from toolgen.runtime.serving.search_tools import ToolSearch
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search import dense_index
from toolgen.search.dense_check import checked_sidecar
from toolgen.search.dense_sidecar import MAGIC, SIDECAR_FILE, decode, dense_texts, documents_sha256, encode

REPO = Path(__file__).resolve().parents[3]
#: a word no operation's text uses, which the test model embeds as it embeds "lock"
UNSEEN = "zorp"
QUERIES = [f"{UNSEEN} it", "lock the conversation", "labels of an issue", "comments on an issue"]
READER = Actor.of("reader", ["issues:read", "issues:write", "pull_requests:read", "metadata:read"])


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository's GitHub example built with the dense option (the tests' model), written to
    ``out/github`` of a project folder that also holds the model."""
    folder = tmp_path_factory.mktemp("dense-project")
    copy_example(folder, "github", "github.slice.json")
    (folder / "models").mkdir()
    project = folder / "toolgen.yaml"
    head = (
        "toolgen: 1\napis:\n  - name: github\n    intent_map: intent_maps/github.yaml\n"
        "    out: out/github\n    emit: [mcp, policy]\n"
    )
    project.write_text(head, encoding="utf-8")
    lexical = json.loads(build_project(load_project(project))[0][0].files["search.json"])
    words = {w for text in dense_texts(lexical["documents"]) for w in text.replace(".", " ").split()}
    vocab = write_tokenizer(folder / "models" / "tokenizer.json", [*sorted(words), UNSEEN])
    write_model(folder / "models" / "tiny.onnx", vocab, same={UNSEEN: "lock"})
    project.write_text(
        head + "search:\n  semantic: onnx\n  model: models/tiny.onnx\n"
        f"  model_sha256: {sha256(folder / 'models' / 'tiny.onnx')}\n"
        "  tokenizer: models/tokenizer.json\n"
        f"  tokenizer_sha256: {sha256(folder / 'models' / 'tokenizer.json')}\n",
        encoding="utf-8",
    )
    outputs, builds = build_project(load_project(project))
    assert not any(b.errors for b in builds)
    write_outputs(outputs)
    return folder / "out" / "github"


def _search_json(package: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((package / "search.json").read_text(encoding="utf-8"))
    return value


def _reencoded(original: bytes, vectors: list[list[float]], **header: str) -> bytes:
    """A well-formed sidecar of `vectors`, with `original`'s header but for `header`."""
    pins = {k: decode(original).header[k] for k in ("model_sha256", "tokenizer_sha256", "max_tokens")}
    return encode(
        vectors,
        model_sha256=header.get("model_sha256", pins["model_sha256"]),
        tokenizer_sha256=header.get("tokenizer_sha256", pins["tokenizer_sha256"]),
        documents=header.get("documents", decode(original).header["documents_sha256"]),
        max_tokens=pins["max_tokens"],
    )


def _damage(kind: str, original: bytes, package: Path) -> bytes | None:
    """The sidecar `kind` of damage leaves (None: no file)."""
    vectors = decode(original).vectors.astype("float64").tolist()
    if kind == "missing":
        return None
    if kind == "truncated":
        return original[: len(original) // 2]
    if kind == "bit flipped":
        flipped = bytearray(original)
        flipped[-5] ^= 0x10
        return bytes(flipped)
    if kind == "older format":
        return b"TOOLGEN-VECTORS 1\n" + original[len(MAGIC) :]
    if kind == "foreign model":  # well formed, of another model's vectors
        return _reencoded(original, vectors, model_sha256="c" * 64)
    if kind == "foreign tokenizer":
        return _reencoded(original, vectors, tokenizer_sha256="d" * 64)
    if kind == "one document fewer":  # the vectors of a search.json with one document less
        documents = _search_json(package)["documents"][:-1]
        return _reencoded(original, vectors[:-1], documents=documents_sha256(dense_texts(documents)))
    if kind == "other order":  # the same documents' vectors, made in another order
        texts = dense_texts(_search_json(package)["documents"])
        return _reencoded(original, vectors[::-1], documents=documents_sha256(texts[::-1]))
    raise AssertionError(kind)


KINDS = [
    "missing",
    "truncated",
    "bit flipped",
    "older format",
    "foreign model",
    "foreign tokenizer",
    "one document fewer",
    "other order",
]


def _lexical(package: Path) -> ToolIndex:
    """The package's documents ranked lexically (no vectors, no model)."""
    registry = Registry.from_dir(package)
    return ToolIndex(registry.policy, registry.catalog(), documents=_search_json(package)["documents"])


def _with_sidecar(package: Path, data: bytes | None, check: Callable[[], None]) -> None:
    path = package / SIDECAR_FILE
    original = path.read_bytes()
    try:
        if data is None:
            path.unlink()
        else:
            path.write_bytes(data)
        dense_index._WARNED.clear()
        check()
    finally:
        path.write_bytes(original)
        dense_index._WARNED.clear()


def test_an_intact_sidecar_is_served(package: Path, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="toolgen.search"):
        search = ToolSearch(Registry.from_dir(package))
    assert search._index is not None and search._index._dense is not None  # loaded when the server starts
    assert not caplog.records and not search.index.warnings
    found = search.run({"query": f"{UNSEEN} it"}, READER).result
    assert (
        found is not None and found["hits"][0]["tool"] == "record_lock_issue"
    )  # found by the model alone: no text has the word


@pytest.mark.parametrize("kind", KINDS)
def test_a_bad_sidecar_is_found_when_the_package_loads_and_the_lexical_ranking_is_served(
    package: Path, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    original = (package / SIDECAR_FILE).read_bytes()

    def check() -> None:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="toolgen.search"):
            search = ToolSearch(Registry.from_dir(package))
            said = [r.getMessage() for r in caplog.records if r.name == "toolgen.search"]
            # said once, when the package loads: before any request, naming the file and what to do
            assert len(said) == 1, said
            assert said[0].startswith(f"{package / SIDECAR_FILE}: ") and "rebuild the package" in said[0]
            assert "ranks lexically" in said[0]
            index = search.index
            assert index._dense is None
            [warning] = index.warnings
            assert warning.code == "search_dense_unavailable" and warning.file == str(package / SIDECAR_FILE)
            assert "toolgen build" in warning.hint
            lexical = _lexical(package)
            for query in QUERIES:
                assert index.search(query) == lexical.search(query)
                search.run({"query": query}, READER)
            assert (
                len([r for r in caplog.records if r.name == "toolgen.search"]) == 1
            )  # not again per request

    _with_sidecar(package, _damage(kind, original, package), check)


@settings(max_examples=examples(100), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_truncation_or_flipped_bit_is_served(package: Path, data: st.DataObject) -> None:
    """Whatever single bit is flipped, or wherever the file is cut, the runtime's loader refuses the
    sidecar (never a vector of it ranks) and never raises."""
    original = (package / SIDECAR_FILE).read_bytes()
    if data.draw(st.booleans(), label="truncate"):
        damaged = original[: data.draw(st.integers(0, len(original) - 1), label="length")]
    else:
        at = data.draw(st.integers(0, len(original) - 1), label="byte")
        bit = data.draw(st.integers(0, 7), label="bit")
        damaged = original[:at] + bytes([original[at] ^ (1 << bit)]) + original[at + 1 :]
    value = _search_json(package)

    def check() -> None:
        sidecar, problem = checked_sidecar(package, value["semantic"], value["documents"])
        assert sidecar is None and problem is not None and "rebuild" in problem.hint
        index = ToolIndex.from_dir(package)
        assert index._dense is None and [w.code for w in index.warnings] == ["search_dense_unavailable"]
        assert index.search(f"{UNSEEN} it") == _lexical(package).search(f"{UNSEEN} it")

    _with_sidecar(package, damaged, check)


def _flip_header_count(original: bytes) -> bytes:
    """The sidecar with its header claiming one vector more (and nothing else changed)."""
    size = struct.unpack("<I", original[len(MAGIC) : len(MAGIC) + 4])[0]
    header = json.loads(original[len(MAGIC) + 4 : len(MAGIC) + 4 + size])
    head = json.dumps({**header, "count": header["count"] + 1}, sort_keys=True, separators=(",", ":"))
    return MAGIC + struct.pack("<I", len(head)) + head.encode() + original[len(MAGIC) + 4 + size :]


def test_a_header_that_claims_more_than_the_file_holds_is_refused(package: Path) -> None:
    original = (package / SIDECAR_FILE).read_bytes()
    value = _search_json(package)

    def check() -> None:
        sidecar, problem = checked_sidecar(package, value["semantic"], value["documents"])
        assert sidecar is None and problem is not None and "bytes, not the" in problem.message

    _with_sidecar(package, _flip_header_count(original), check)


@pytest.mark.long
@pytest.mark.anyio
@pytest.mark.parametrize("kind", ["intact", "truncated", "foreign model"])
async def test_toolgen_serve_says_it_once_at_start_and_serves_the_lexical_ranking(
    package: Path, tmp_path: Path, kind: str
) -> None:
    """`toolgen serve` over stdio, the real MCP SDK client: the warning is on the server's stderr
    before the first request, once; ``search_tools`` answers with the lexical ranking."""
    from mcp import Client, StdioServerParameters

    original = (package / SIDECAR_FILE).read_bytes()
    errors = tmp_path / "stderr.txt"
    params = StdioServerParameters(
        command="/bin/sh",
        args=[
            "-c",
            'exec "$0" "$@" 2>"$SERVE_STDERR"',
            sys.executable,
            "-m",
            "toolgen",
            "serve",
            str(package),
            "--search-tool",
            "always",
            "--scopes",
            "issues:read,issues:write,pull_requests:read,metadata:read",
            "--receipts",
            str(tmp_path / "receipts.sqlite3"),
        ],
        env={
            "PATH": os.environ.get("PATH", ""),
            "PYTHONPATH": str(REPO / "generator"),
            "SERVE_STDERR": str(errors),
            "GITHUB_TOKEN": "unused",
        },
        cwd=str(tmp_path),
    )
    path = package / SIDECAR_FILE
    try:
        if kind != "intact":
            damaged = _damage(kind, original, package)
            assert damaged is not None
            path.write_bytes(damaged)
        async with Client(params) as client:
            listed = await client.list_tools()
            assert "search_tools" in [t.name for t in listed.tools]
            said = [line for line in errors.read_text(encoding="utf-8").splitlines() if SIDECAR_FILE in line]
            if kind == "intact":
                assert said == []
            else:
                assert len(said) == 1 and str(path) in said[0] and "rebuild the package" in said[0]
            found = await client.call_tool("search_tools", {"query": f"{UNSEEN} it"})
            hits = [h["tool"] for h in (found.structured_content or {}).get("hits", [])]
            assert ("record_lock_issue" in hits[:1]) == (kind == "intact")
            await client.call_tool("search_tools", {"query": "lock the conversation"})
        lines = [line for line in errors.read_text(encoding="utf-8").splitlines() if SIDECAR_FILE in line]
        assert len(lines) == (0 if kind == "intact" else 1)
    finally:
        path.write_bytes(original)


def test_a_lone_surrogate_in_search_json_is_a_mismatch_not_a_raise(package: Path) -> None:
    """``"\\ud800"`` is valid JSON: a hand-edited search.json holding one in a field made hashing its
    documents raise UnicodeEncodeError at load. It is now a documents_sha256 mismatch: the sidecar is
    refused with its rebuild hint, and nothing raises."""
    value = _search_json(package)
    documents = [dict(d) for d in value["documents"]]
    documents[0] = {**documents[0], "fields": {**documents[0]["fields"], "title": "a\ud800"}}
    sidecar, problem = checked_sidecar(package, value["semantic"], documents)
    assert sidecar is None and problem is not None and "rebuild" in problem.hint
