"""Tool search, the part the build and the runtime share: `text_index` (the BM25 tables and the
words of a tool), `vector_index` (the semantic index), the dense option (`onnx_embedder`, a pinned
local ONNX model; `dense_sidecar`, its int8 vectors in ``search.vectors``; `dense_index`, from the
build's pins to the runtime's reciprocal rank fusion) and `tool` (the ``search_tools``
declarations the catalogs and the providers' adapters carry). The runtime reads the index in
`toolgen.runtime.serving.tool_index` and answers the meta-tool in
`toolgen.runtime.serving.search_tools`."""
