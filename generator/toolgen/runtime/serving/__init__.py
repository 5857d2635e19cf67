"""Serving: the `registry` (load a generated package, run calls), the MCP servers
(`mcp_server` over stdio, `mcp_http` over Streamable HTTP, `elicit`), issued approvals
(`issuing`), tool search (`tool_index`, `search_tools`), the shared options of
`toolgen call` and `toolgen serve` (`loading`) and forked workers (`workers`)."""
