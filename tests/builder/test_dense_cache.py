"""The dense option's embeddings in the build cache (`toolgen.builder.dense_cache`): a cached build
embeds only the texts it has not embedded before and writes the ``search.vectors`` bytes a build
without the cache writes; a model or tokenizer pin change embeds everything again; a damaged or
implausible entry is embedded again, never believed. The model is the tests' own
(`tests.support.dense_model`), never downloaded weights."""

from __future__ import annotations

import json
import math
import struct
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

from tests.support.build import copy_example
from tests.support.dense_model import sha256, write_model, write_tokenizer
from tests.support.profiles import examples

from toolgen.builder import cache as cache_module
from toolgen.builder.build import ApiBuild, build_project
from toolgen.builder.cache import Cache, digest
from toolgen.builder.dense_cache import KIND, CachedEmbedder, embedding_settings
from toolgen.builder.project import load_project
from toolgen.search.dense_index import pinned_embedder
from toolgen.search.dense_sidecar import SIDECAR_FILE, dense_texts
from toolgen.search.onnx_embedder import OnnxEmbedder

WORDS = "get list one issue issues pull request repository number label labels comment comments by of a"


@pytest.fixture
def cache_on(_no_build_cache: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The cache on (the suite runs without it), in a folder of the test's own, with a MAC key of its own."""
    monkeypatch.setenv("TOOLGEN_CACHE", "1")
    monkeypatch.setenv("TOOLGEN_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "home-cache"))
    cache_module.mac_key.cache_clear()
    yield tmp_path / "cache"
    cache_module.mac_key.cache_clear()


def _models(folder: Path, *, seed: int = 7, extra: str = "", model: bool = True) -> None:
    """models/tokenizer.json over the example's words (and `extra`), and models/tiny.onnx over it
    (unless not `model`: the model file is left as it is)."""
    (folder / "models").mkdir(exist_ok=True)
    words = (folder / "intent_maps" / "github.yaml").read_text(encoding="utf-8").replace(":", " ").split()
    vocab = write_tokenizer(folder / "models" / "tokenizer.json", [*WORDS.split(), *words, *extra.split()])
    if model:
        write_model(folder / "models" / "tiny.onnx", vocab, seed=seed)


def _project(folder: Path) -> Path:
    """The repository's GitHub example with the dense option, pinned to the models now in `folder`."""
    if not (folder / "intent_maps").exists():
        copy_example(folder, "github", "github.slice.json")
        _models(folder)
    path = folder / "toolgen.yaml"
    path.write_text(
        "toolgen: 1\napis:\n  - name: github\n    intent_map: intent_maps/github.yaml\n"
        "    out: out/github\n    emit: [mcp, policy]\n"
        "search:\n  semantic: onnx\n  model: models/tiny.onnx\n"
        f"  model_sha256: {sha256(folder / 'models' / 'tiny.onnx')}\n"
        "  tokenizer: models/tokenizer.json\n"
        f"  tokenizer_sha256: {sha256(folder / 'models' / 'tokenizer.json')}\n",
        encoding="utf-8",
    )
    return path


def _build(folder: Path, cache: Path | None) -> ApiBuild:
    [build] = build_project(load_project(_project(folder)), cache=Cache(cache) if cache else None)[1]
    assert not build.errors
    return build


def _same_as_without_cache(folder: Path, cache: Path, embedded: int) -> bytes:
    """A cached build of `folder`: it ran `embedded` texts through the model, and its sidecar is the
    bytes of a build without the cache. Returns them."""
    cached = _build(folder, cache)
    assert cached.computed["embedding"] == embedded
    plain = _build(folder, None)
    assert "embedding" not in plain.computed
    assert cached.files[SIDECAR_FILE] == plain.files[SIDECAR_FILE]
    assert cached.files["search.json"] == plain.files["search.json"]
    return cached.files[SIDECAR_FILE]


def _texts(build: ApiBuild) -> list[str]:
    return dense_texts(json.loads(build.files["search.json"])["documents"])


def test_a_rebuild_embeds_only_the_edited_description(cache_on: Path, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    _project(folder)
    texts = _texts(_build(folder, None))
    first = _same_as_without_cache(folder, cache_on, len(set(texts)))
    assert _same_as_without_cache(folder, cache_on, 0) == first  # nothing changed: nothing embedded
    intent = folder / "intent_maps" / "github.yaml"
    text = intent.read_text(encoding="utf-8")
    old = "Get one issue or pull request of a repository by its number."  # get_issue's description
    assert text.count(old) == 1
    intent.write_text(text.replace(old, "Get one issue by its number."), encoding="utf-8")
    edited = _same_as_without_cache(folder, cache_on, 1)  # one tool's text changed: one embedding
    assert edited != first
    changed = [a != b for a, b in zip(texts, _texts(_build(folder, None)), strict=True)]
    assert changed.count(True) == 1


@pytest.mark.parametrize("which", ["model", "tokenizer"])
def test_a_changed_pin_embeds_everything_again(cache_on: Path, tmp_path: Path, which: str) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    _project(folder)
    texts = _texts(_build(folder, None))
    first = _same_as_without_cache(folder, cache_on, len(set(texts)))
    pins = {p: sha256(folder / "models" / p) for p in ("tiny.onnx", "tokenizer.json")}
    if which == "model":
        _models(folder, seed=8)  # other weights, the same tokenizer bytes
    else:
        _models(folder, extra="zebra", model=False)  # one more word (no text has it), the same model file
    changed = {p for p, sha in pins.items() if sha256(folder / "models" / p) != sha}
    assert changed == {"tiny.onnx" if which == "model" else "tokenizer.json"}
    assert _same_as_without_cache(folder, cache_on, len(set(texts))) != first


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / KIND).rglob("*") if p.is_file() and not p.name.startswith("."))


def test_a_damaged_entry_is_embedded_again(cache_on: Path, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    _project(folder)
    count = len(set(_texts(_build(folder, None))))
    first = _same_as_without_cache(folder, cache_on, count)
    entries = _entries(cache_on)
    assert len(entries) == count
    damaged = bytearray(entries[0].read_bytes())
    damaged[-1] ^= 0x01  # a bit of the vector flipped: its MAC no longer holds
    entries[0].write_bytes(bytes(damaged))
    entries[1].write_bytes(entries[1].read_bytes()[:-8])  # cut short
    entries[2].unlink()
    assert _same_as_without_cache(folder, cache_on, 3) == first


def _bad_payloads(width: int) -> dict[str, bytes]:
    unit = [1.0] + [0.0] * (width - 1)
    return {
        "empty": b"",
        "ragged": struct.pack(f"<{width}d", *unit)[:-3],
        "nan": struct.pack(f"<{width}d", math.nan, *unit[1:]),
        "infinite": struct.pack(f"<{width}d", math.inf, *unit[1:]),
        "not unit": struct.pack(f"<{width}d", 0.5, *unit[1:]),
        "other width": struct.pack(f"<{width + 1}d", *unit, 0.0),
    }


def test_an_entry_that_is_not_a_vector_of_the_model_is_not_believed(cache_on: Path, tmp_path: Path) -> None:
    """Entries written under the user's own MAC key (so `Cache.get` returns them) that no model run
    wrote: each is a miss, embedded again, and the sidecar is still a build's without the cache."""
    folder = tmp_path / "project"
    folder.mkdir()
    _project(folder)
    texts = _texts(_build(folder, None))
    models = folder / "models"
    embedder = pinned_embedder(
        models / "tiny.onnx",
        sha256(models / "tiny.onnx"),
        models / "tokenizer.json",
        sha256(models / "tokenizer.json"),
    )
    first = _same_as_without_cache(folder, cache_on, len(set(texts)))
    width = len(embedder.embed([texts[0]])[0])
    for bad, payload in _bad_payloads(width).items():
        Cache(cache_on).put(KIND, digest(embedding_settings(embedder), texts[0]), payload)
        build = _build(folder, cache_on)
        # "other width" among right ones: no read-back vector is believed, all are embedded again
        assert build.computed["embedding"] == (len(set(texts)) if bad == "other width" else 1), bad
        assert build.files[SIDECAR_FILE] == first, bad


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OnnxEmbedder]:
    """The tests' model over `WORDS`, with a MAC key of the module's own for the caches it fills."""
    folder = tmp_path_factory.mktemp("tiny")
    vocab = write_tokenizer(folder / "tokenizer.json", WORDS.split())
    write_model(folder / "tiny.onnx", vocab)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(folder / "home-cache"))
        cache_module.mac_key.cache_clear()
        yield pinned_embedder(
            folder / "tiny.onnx",
            sha256(folder / "tiny.onnx"),
            folder / "tokenizer.json",
            sha256(folder / "tokenizer.json"),
        )
    cache_module.mac_key.cache_clear()


@settings(max_examples=examples(60))
@given(
    st.lists(st.lists(st.sampled_from(WORDS.split()), min_size=0, max_size=6).map(" ".join), max_size=12),
    st.lists(st.lists(st.sampled_from(WORDS.split()), min_size=0, max_size=6).map(" ".join), max_size=12),
    st.sets(st.integers(0, 11), max_size=4),
)
def test_the_cache_answers_what_the_model_answers(
    tiny: OnnxEmbedder, first: list[str], second: list[str], damage: set[int]
) -> None:
    """Two rounds of texts through one cache (the second after some entries of the first were cut
    short): every answer is the model's own, float for float, and only the texts without a sound
    entry ran through the model."""
    with tempfile.TemporaryDirectory() as where:
        cache = Cache(Path(where))
        cached = CachedEmbedder(cache, tiny)
        assert cached.embed(first) == tiny.embed(first)
        assert cached.computed == len(set(first))
        salt = embedding_settings(tiny)
        spoiled = set()
        for i in damage:
            if i < len(first):
                key = digest(salt, first[i])
                path = Path(where) / KIND / key[:2] / key
                path.write_bytes(path.read_bytes()[:-1])
                spoiled.add(first[i])
        again = CachedEmbedder(cache, tiny)
        assert again.embed(second) == tiny.embed(second)
        assert again.computed == len({t for t in second if t not in set(first) or t in spoiled})


def test_a_text_is_embedded_alone_so_its_vector_never_depends_on_its_neighbours(tmp_path: Path) -> None:
    """With a model whose output changes with padding, a batch of texts of unequal length would give
    each text another vector than it gets alone; the embedder runs each text alone, so the cache's
    vectors (embedded a few at a time) are those of a build that embeds all at once."""
    vocab = write_tokenizer(tmp_path / "tokenizer.json", WORDS.split())
    write_model(tmp_path / "padded.onnx", vocab, pad_sensitive=True)
    embedder = OnnxEmbedder.load(
        tmp_path / "padded.onnx",
        sha256(tmp_path / "padded.onnx"),
        tmp_path / "tokenizer.json",
        sha256(tmp_path / "tokenizer.json"),
    )
    texts = ["get issue", "list the comments of one pull request by number", "label"]
    together = embedder.embed(texts)
    assert together == [embedder.embed([text])[0] for text in texts]
    assert together == [embedder.embed([text])[0] for text in texts]
    # the model is pad-sensitive indeed: padding one text to another's width changes its vector
    np = pytest.importorskip("numpy")
    ids = np.array([[vocab["get"], vocab["issue"], 0, 0]], dtype=np.int64)
    mask = np.array([[1, 1, 0, 0]], dtype=np.int64)
    padded = embedder._session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
    alone = embedder._session.run(None, {"input_ids": ids[:, :2], "attention_mask": mask[:, :2]})[0]
    assert not np.allclose(padded[0, :2], alone[0])
