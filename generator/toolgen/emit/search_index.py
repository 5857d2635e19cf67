"""Stage `emit`, the tool-search index: `policy.json` + `mcp.json` -> `search.json`.

Input: the policy table (the JSON value of ``policy.json``), the MCP catalog (``mcp.json``) and the
toolsets holding deferred tools. Output: the JSON value of ``search.json``: the index documents
`toolgen.search.text_index.search_documents` derives (one per operation: its tools and their permission
scopes, toolset, operation, action classes and the analysed text of each field), the FTS5 tables and
column weights they are ranked with, and the ``search_tools`` meta-tool entry (`toolgen.search.tool`)
an MCP server lists when the API has deferred tools. The runtime
(`toolgen.runtime.serving.tool_index.ToolIndex`)
loads the documents into in-memory SQLite FTS5 instead of analysing the package again. Format:
docs/generated-format.md.

With the project's semantic option (toolgen.yaml ``search: {semantic: lsa}``) or an `Embedder`, the
file is of format `toolgen.search.vector_index.SEMANTIC_FORMAT` and also holds the documents' vectors
(``semantic``, `toolgen.search.vector_index.semantic_index`), which the runtime fuses with the lexical
ranking. Without either (the default) no vector is computed and numpy is not imported. With the
dense option (``search: {semantic: onnx, ...}``, `dense_search`) the vectors go into the binary
sidecar ``search.vectors`` and ``search.json`` names the pinned model and what the vectors were made
from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..remember import Remember, computed
from ..search.dense_index import DenseModel, dense_files
from ..search.text_index import SEARCH_FORMAT, TABLES, search_documents
from ..search.tool import mcp_search_tool
from ..search.vector_index import SEMANTIC_BACKENDS, SEMANTIC_FORMAT, Embedder, semantic_index
from . import piece_key


def search_json(
    policy: Mapping[str, Any],
    mcp_catalog: Sequence[Mapping[str, Any]],
    searchable: Sequence[str],
    remember: Remember | None = None,
    *,
    semantic: str | None = None,
    embedder: Embedder | None = None,
) -> dict[str, Any]:
    """The ``search.json`` value (deterministic: documents in intent order, keys sorted on output).
    `remember`: as `toolgen.search.text_index.search_documents` takes it (the build cache).

    `semantic`: the project's ``search.semantic`` (None: off; ``"lsa"``: latent semantic analysis
    learned from the documents themselves); `embedder`: another backend's vectors instead. With
    either, the value is of format `SEMANTIC_FORMAT` and holds ``semantic``
    (`toolgen.search.vector_index.semantic_index`); raises `toolgen.search.vector_index.SemanticUnavailable`
    when numpy is not installed."""
    if semantic is not None and semantic not in SEMANTIC_BACKENDS:
        raise ValueError(f"search.semantic: {semantic!r} is not one of {', '.join(SEMANTIC_BACKENDS)}")
    documents = search_documents(policy, mcp_catalog, None if remember is computed else remember, piece_key)
    value: dict[str, Any] = {
        "format": SEARCH_FORMAT,
        "engine": "sqlite-fts5 bm25, tokenize='porter unicode61'",
        "tables": {
            table: {"columns": {c: w for c, w in columns}, "weight": weight}
            for table, (columns, weight) in TABLES.items()
        },
        "search_tool": mcp_search_tool(list(searchable)),
        "documents": documents,
    }
    if semantic is not None or embedder is not None:
        value["format"] = SEMANTIC_FORMAT
        value["semantic"] = semantic_index(documents, embedder)
    return value


def dense_search(value: dict[str, Any], pins: DenseModel, embedder: Embedder | None = None) -> bytes:
    """Make `value` (a lexical ``search.json`` value of `search_json`) the dense option's: format
    `SEMANTIC_FORMAT`, ``semantic`` naming the pinned model and the documents' hash (no float: the
    file is the same bytes on every CPU). Returns the ``search.vectors`` bytes
    (`toolgen.search.dense_index.dense_files`). Raises `toolgen.search.onnx_embedder.DenseUnavailable`
    and `toolgen.search.onnx_embedder.DenseModelError` (the build checked both first:
    `toolgen.builder.build.dense_pins`)."""
    semantic, sidecar = dense_files(value["documents"], pins, embedder)
    value["format"] = SEMANTIC_FORMAT
    value["semantic"] = semantic
    return sidecar
