"""The dense option (toolgen.yaml ``search: {semantic: onnx, model, model_sha256, tokenizer,
tokenizer_sha256}``): a local ONNX model pinned by hash, its vectors in ``search.vectors``, fused with
the lexical ranking; every way it can be missing or wrong refuses at build time (located) or falls
back to the lexical ranking at run time. The model and tokenizer are written by the tests
(`tests.support.dense_model`), never downloaded."""

from __future__ import annotations

import json
import logging
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
pytest.importorskip("tokenizers")

import numpy as np
from tests.support.dense_model import sha256, write_model, write_tokenizer
from tests.support.profiles import examples

from toolgen.builder.build import build_project
from toolgen.builder.output_files import Output, check_outputs, write_outputs
from toolgen.builder.project import load_project
from toolgen.diagnostics import DiagnosticError
from toolgen.runtime.serving.tool_index import ToolIndex
from toolgen.search import dense_index
from toolgen.search.dense_sidecar import MAGIC, SIDECAR_FILE, SidecarError, decode, encode, same_pins
from toolgen.search.onnx_embedder import DenseModelError, OnnxEmbedder

REPO = Path(__file__).resolve().parents[2]
INTENT_MAP = REPO / "intent_maps" / "github.yaml"
#: a word no operation's text uses, which the test model embeds as it embeds "lock"
UNSEEN = "zorp"
HEX = "ab" * 32


def _vocabulary(scratch: Path) -> list[str]:
    """Every word of the GitHub package's dense texts, and `UNSEEN`."""
    from toolgen.search.dense_sidecar import dense_texts

    project = tmp_project(scratch, "")
    outputs, _ = build_project(load_project(project))
    value = json.loads(outputs[0].files["search.json"])
    words = sorted({w for text in dense_texts(value["documents"]) for w in text.replace(".", " ").split()})
    return [*words, UNSEEN]


def tmp_project(folder: Path, search: str, api_search: str = "") -> Path:
    path = folder / "toolgen.yaml"
    path.write_text(
        "toolgen: 1\n"
        "apis:\n"
        "  - name: github\n"
        f"    intent_map: {INTENT_MAP.as_posix()}\n"
        "    out: out/github\n"
        "    emit: [mcp, policy]\n"
        f"{api_search}"
        f"{search}",
        encoding="utf-8",
    )
    return path


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """models/tiny.onnx and models/tokenizer.json, written by the test."""
    scratch = tmp_path_factory.mktemp("vocabulary")
    folder = tmp_path_factory.mktemp("project")
    (folder / "models").mkdir()
    vocab = write_tokenizer(folder / "models" / "tokenizer.json", _vocabulary(scratch))
    write_model(folder / "models" / "tiny.onnx", vocab, same={UNSEEN: "lock"})
    return folder


def _search(
    folder: Path,
    *,
    model_sha: str | None = None,
    tokenizer_sha: str | None = None,
    model: str = "models/tiny.onnx",
) -> str:
    m = model_sha or sha256(folder / "models" / "tiny.onnx")
    t = tokenizer_sha or sha256(folder / "models" / "tokenizer.json")
    return (
        "search:\n  semantic: onnx\n"
        f"  model: {model}\n  model_sha256: {m}\n"
        "  tokenizer: models/tokenizer.json\n"
        f"  tokenizer_sha256: {t}\n"
    )


def _build(folder: Path, search: str) -> list[Output]:
    outputs, builds = build_project(load_project(tmp_project(folder, search)))
    assert not any(b.errors for b in builds)
    return outputs


@pytest.fixture(scope="module")
def built(model_dir: Path) -> Path:
    """The GitHub package built with the dense option, written to out/github."""
    write_outputs(_build(model_dir, _search(model_dir)))
    return model_dir / "out" / "github"


def test_the_build_writes_the_pins_and_the_sidecar(built: Path, model_dir: Path) -> None:
    value = json.loads((built / "search.json").read_text(encoding="utf-8"))
    semantic = value["semantic"]
    assert value["format"] == 4 and semantic["embedder"] == "onnx"
    assert semantic["model"] == {
        "path": "../../models/tiny.onnx",
        "sha256": sha256(model_dir / "models/tiny.onnx"),
    }
    assert semantic["tokenizer"]["path"] == "../../models/tokenizer.json"
    sidecar = decode((built / SIDECAR_FILE).read_bytes())
    assert sidecar.header["count"] == len(value["documents"]) and sidecar.header["dimensions"] == 16
    assert sidecar.header["documents_sha256"] == semantic["documents_sha256"]
    assert "." not in json.dumps([v for v in semantic.values() if not isinstance(v, (str, dict))])  # no float
    assert semantic["max_tokens"] == 256


def test_the_runtime_finds_an_operation_through_a_word_its_text_never_uses(built: Path) -> None:
    fused = ToolIndex.from_dir(built)
    assert fused._dense is not None and not fused.warnings
    hits = fused.search(f"{UNSEEN} it")
    assert hits and hits[0].tool == "record_lock_issue"
    # scope filtering holds for what the model brings in
    assert all(h.tool != "record_lock_issue" for h in fused.search(f"{UNSEEN} it", scopes=["issues:read"]))


def test_check_compares_the_pins_not_the_vector_bytes(built: Path, model_dir: Path) -> None:
    outputs = _build(model_dir, _search(model_dir))
    assert check_outputs(outputs) == []
    path = built / SIDECAR_FILE
    data = bytearray(path.read_bytes())
    original = bytes(data)
    try:
        header = decode(original).header
        nudged = decode(original).vectors.astype(np.float64)
        nudged[0] *= 0.999  # another CPU's rounding: the same pins, other vector bytes
        pins = {k: header[k] for k in ("model_sha256", "tokenizer_sha256", "max_tokens")}
        other_cpu = encode(nudged.tolist(), documents=header["documents_sha256"], **pins)
        assert other_cpu != original
        path.write_bytes(other_cpu)
        assert check_outputs(outputs) == []
        data[-1] = (data[-1] + 1) % 128  # a bit flipped: its vectors_sha256 no longer holds
        path.write_bytes(bytes(data))
        assert [d.path.endswith(SIDECAR_FILE) for d in check_outputs(outputs)] == [True]
        other = encode(
            decode(original).vectors.tolist(),
            model_sha256=header["model_sha256"],
            tokenizer_sha256=header["tokenizer_sha256"],
            documents="0" * 64,
            max_tokens=header["max_tokens"],
        )
        path.write_bytes(other)  # vectors of other documents
        assert [d.path.endswith(SIDECAR_FILE) for d in check_outputs(outputs)] == [True]
        path.write_bytes(original[:-3])  # truncated
        assert check_outputs(outputs)
    finally:
        path.write_bytes(original)


@pytest.mark.parametrize("which", ["model", "tokenizer"])
def test_the_pin_refuses_a_changed_file(model_dir: Path, which: str) -> None:
    text = _search(model_dir, **({"model_sha": HEX} if which == "model" else {"tokenizer_sha": HEX}))
    with pytest.raises(DiagnosticError) as raised:
        build_project(load_project(tmp_project(model_dir, text)))
    [d] = raised.value.diagnostics
    assert d.code == "search-dense-pin-mismatch" and d.location is not None
    assert d.location.pointer == f"/search/{which}_sha256" and d.location.line == (
        10 if which == "model" else 12
    )
    assert HEX in d.message and "pin" in (d.hint or "")


def test_a_missing_model_or_an_unknown_graph_is_a_located_error(model_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(DiagnosticError) as raised:
        build_project(
            load_project(
                tmp_project(model_dir, _search(model_dir, model="models/absent.onnx", model_sha=HEX))
            )
        )
    [d] = raised.value.diagnostics
    assert (d.code, d.location and d.location.pointer) == ("search-dense-model", "/search/model")
    vocab = json.loads((model_dir / "models" / "tokenizer.json").read_text(encoding="utf-8"))["model"][
        "vocab"
    ]
    odd = model_dir / "models" / "odd.onnx"
    write_model(odd, vocab, input_name="words")
    with pytest.raises(DiagnosticError) as raised:
        build_project(
            load_project(
                tmp_project(model_dir, _search(model_dir, model="models/odd.onnx", model_sha=sha256(odd)))
            )
        )
    [d] = raised.value.diagnostics
    assert d.code == "search-dense-model" and "expected inputs input_ids and attention_mask" in d.message
    with pytest.raises(DenseModelError, match="not an ONNX model"):
        (tmp_path / "junk.onnx").write_bytes(b"not a model")
        OnnxEmbedder.load(
            tmp_path / "junk.onnx",
            sha256(tmp_path / "junk.onnx"),
            model_dir / "models" / "tokenizer.json",
            sha256(model_dir / "models" / "tokenizer.json"),
        )


@pytest.mark.parametrize(
    "text",
    [
        "search: {semantic: onnx, model: m.onnx}\n",
        f"search: {{semantic: lsa, model: m.onnx, model_sha256: {HEX}}}\n",
        "search: {semantic: onnx, model: m.onnx, model_sha256: ABC, tokenizer: t.json, tokenizer_sha256: ABC}\n",
    ],
)
def test_a_bad_dense_option_is_a_located_error(tmp_path: Path, text: str) -> None:
    with pytest.raises(DiagnosticError) as raised:
        load_project(tmp_project(tmp_path, text))
    assert all(
        d.code == "project-invalid"
        and d.location is not None
        and d.location.line == 7
        and (d.location.pointer or "").startswith("/search")
        for d in raised.value.diagnostics
    )


def _lexical(built: Path) -> ToolIndex:
    index = ToolIndex.from_dir(REPO / "generated" / "github")
    assert index._dense is None
    return index


QUERIES = ["lock the conversation", "who reviewed the pull request", "labels of an issue", "merge it"]


def _falls_back(built: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="toolgen.search"):
        first, second = ToolIndex.from_dir(built), ToolIndex.from_dir(built)
    assert first._dense is None and [w.code for w in first.warnings] == ["search_dense_unavailable"]
    assert len([r for r in caplog.records if "dense ranking is off" in r.getMessage()]) <= 1
    lexical = _lexical(built)
    for q in QUERIES:
        assert first.search(q) == second.search(q) == lexical.search(q)


@pytest.mark.parametrize("damage", ["missing", "truncated", "magic", "dimensions", "nan", "long", "stale"])
def test_a_missing_or_hostile_sidecar_falls_back_to_the_lexical_ranking(
    built: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = built / SIDECAR_FILE
    original = path.read_bytes()
    header_size = struct.unpack("<I", original[len(MAGIC) : len(MAGIC) + 4])[0]
    payload = len(MAGIC) + 4 + header_size
    header = json.loads(original[len(MAGIC) + 4 : payload])
    damaged = {
        "truncated": original[:-1],
        "magic": b"X" + original[1:],
        "nan": original[:payload] + struct.pack("<f", float("nan")) + original[payload + 4 :],
        "long": original + b"\0",
    }
    if damage == "dimensions":  # a header that says 8 dimensions over the same bytes
        head = json.dumps({**header, "dimensions": 8}, sort_keys=True, separators=(",", ":")).encode()
        damaged[damage] = MAGIC + struct.pack("<I", len(head)) + head + original[payload:]
    if damage == "stale":  # well formed, but made from other documents
        d = decode(original)
        damaged[damage] = encode(
            d.vectors.tolist(),
            model_sha256=header["model_sha256"],
            tokenizer_sha256=header["tokenizer_sha256"],
            documents="1" * 64,
            max_tokens=header["max_tokens"],
        )
    try:
        if damage == "missing":
            path.unlink()
        else:
            path.write_bytes(damaged[damage])
            if damage != "stale":
                with pytest.raises(SidecarError):
                    decode(damaged[damage])
        _falls_back(built, caplog)
    finally:
        path.write_bytes(original)


def test_a_changed_model_falls_back_and_says_so_once(
    built: Path, model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = model_dir / "models" / "tiny.onnx"
    original = model.read_bytes()
    dense_index._EMBEDDERS.clear()
    try:
        vocab = json.loads((model_dir / "models" / "tokenizer.json").read_text(encoding="utf-8"))["model"][
            "vocab"
        ]
        write_model(model, vocab, seed=8)
        _falls_back(built, caplog)
        messages = [r.getMessage() for r in caplog.records if "dense ranking is off" in r.getMessage()]
        assert len(messages) == 1 and "SHA-256" in messages[0]
    finally:
        model.write_bytes(original)
        dense_index._EMBEDDERS.clear()


_WITHOUT_ONNXRUNTIME = (
    "import sys\nsys.modules['onnxruntime'] = None  # `import onnxruntime` raises ImportError\n"
)


def test_without_the_extra_a_build_names_it_and_a_runtime_ranks_lexically(
    built: Path, model_dir: Path
) -> None:
    code = _WITHOUT_ONNXRUNTIME + (
        "from pathlib import Path\n"
        "from toolgen.builder.build import build_project\n"
        "from toolgen.builder.project import load_project\n"
        "from toolgen.diagnostics import DiagnosticError\n"
        "from toolgen.runtime.serving.tool_index import ToolIndex\n"
        "try:\n"
        f"    build_project(load_project(Path({str(model_dir / 'toolgen.yaml')!r})))\n"
        "except DiagnosticError as exc:\n"
        "    [d] = exc.diagnostics\n"
        "    print(d.code, d.location.pointer, d.hint, sep='|')\n"
        f"index = ToolIndex.from_dir({str(built)!r})\n"
        "print(index._dense is None, [w.code for w in index.warnings], index.search('lock the conversation')[0].tool)\n"
    )
    tmp_project(model_dir, _search(model_dir))
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.strip().splitlines()
    code_, pointer, hint = first.split("|")
    assert (code_, pointer) == ("search-dense-unavailable", "/search/semantic") and "'.[dense]'" in hint
    assert second == "True ['search_dense_unavailable'] record_lock_issue"


def test_a_default_build_and_search_import_neither_onnxruntime_nor_tokenizers(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from toolgen.builder.build import build_project\n"
        "from toolgen.builder.project import load_project\n"
        "from toolgen.runtime.serving.tool_index import ToolIndex\n"
        f"outputs, _ = build_project(load_project(Path({str(tmp_project(tmp_path, ''))!r})))\n"
        "assert not any('search.vectors' in o.files for o in outputs)\n"
        f"assert ToolIndex.from_dir({str(REPO / 'generated' / 'github')!r}).search('lock the conversation')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('onnxruntime', 'tokenizers', 'onnx')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, cwd=REPO, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


@settings(max_examples=examples(100))
@given(
    st.lists(st.lists(st.floats(-1, 1, allow_nan=False), min_size=3, max_size=3), min_size=1, max_size=8),
    st.integers(1, 48),
)
def test_the_sidecar_round_trips_within_its_quantisation_bound(rows: list[list[float]], width: int) -> None:
    rng = np.random.default_rng(len(rows) * 100 + width)
    vectors = np.vstack([rng.standard_normal((len(rows), width)), np.zeros((1, width))])
    vectors[:, :3] = np.resize(np.asarray(rows), (len(vectors), 3))[:, :3] if width >= 3 else vectors[:, :3]
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    vectors = vectors / np.where(norms == 0, 1, norms)
    data = encode(vectors.tolist(), model_sha256=HEX, tokenizer_sha256=HEX, documents=HEX, max_tokens=256)
    back = decode(data)
    assert back.header["count"] == len(vectors) and back.header["dimensions"] == width
    bound = np.abs(vectors).max(axis=1, keepdims=True) / 127 / 2 + 1e-6
    assert (np.abs(back.vectors - vectors) <= bound).all()  # each component within half a step
    assert (np.abs(back.vectors @ vectors.T - vectors @ vectors.T).diagonal() <= 0.02).all()
    assert same_pins(data, data) and decode(data).header == back.header


def test_toolgen_search_says_once_that_the_sidecar_is_not_used(built: Path) -> None:
    """`toolgen search` on a package whose `search.vectors` is missing prints the warning once (the
    index's warning), names the file and ranks lexically; the log record `serve` relies on is not
    printed beside it."""
    path = built / SIDECAR_FILE
    original = path.read_bytes()
    path.unlink()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "toolgen", "search", str(built), "lock the conversation", "--limit", "1"],
            check=False,
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=300,
        )
    finally:
        path.write_bytes(original)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("dense ranking is off") == 1, done.stderr
    assert "[search_dense_unavailable]" in done.stderr and SIDECAR_FILE in done.stderr
    assert "record_lock_issue" in done.stdout
