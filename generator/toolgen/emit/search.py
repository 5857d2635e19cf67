"""Stage `emit`, the tool-search index: `policy.json` + `mcp.json` -> `search.json`.

Input: the policy table (the JSON value of ``policy.json``), the MCP catalog (``mcp.json``) and the
toolsets holding deferred tools. Output: the JSON value of ``search.json``: the index documents
`toolgen.search_text.search_documents` derives (one per operation: its tools and their permission
scopes, toolset, operation, action classes and the analysed text of each field), the FTS5 tables and
column weights they are ranked with, the documents' vectors for the semantic ranking fused with
the lexical one (`toolgen.search_vectors`), and the ``search_tools`` meta-tool entry (`toolgen.search_tool`)
an MCP server lists when the API has deferred tools. The runtime (`toolgen.runtime.search.ToolIndex`)
loads the documents into in-memory SQLite FTS5 instead of analysing the package again. Format:
docs/generated-format.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..remember import Remember, computed
from ..search_text import SEARCH_FORMAT, TABLES, search_documents
from ..search_tool import mcp_search_tool
from ..search_vectors import Embedder, semantic_index


def search_json(policy: Mapping[str, Any], mcp_catalog: Sequence[Mapping[str, Any]],
                searchable: Sequence[str], remember: Remember | None = None,
                embedder: Embedder | None = None) -> dict[str, Any]:
    """The ``search.json`` value (deterministic: documents in intent order, keys sorted on output).
    `remember`: as `toolgen.search_text.search_documents` takes it (the build cache). ``semantic``:
    the documents' vectors (`toolgen.search_vectors.semantic_index`: LSA learned from the documents
    themselves, or `embedder`'s vectors when one is given)."""
    documents = search_documents(policy, mcp_catalog, None if remember is computed else remember)
    return {
        "format": SEARCH_FORMAT,
        "engine": "sqlite-fts5 bm25, tokenize='porter unicode61'",
        "tables": {table: {"columns": {c: w for c, w in columns}, "weight": weight}
                   for table, (columns, weight) in TABLES.items()},
        "search_tool": mcp_search_tool(list(searchable)),
        "documents": documents,
        "semantic": semantic_index(documents, embedder),
    }
