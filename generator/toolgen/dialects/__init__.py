"""Provider dialects: canonical tool schemas -> OpenAI, Anthropic and MCP tool objects, and their checks."""
