"""Model-facing catalogs per dialect: OpenAI strict function tools, Anthropic tools, MCP tools.

Input: `ApiIR`. Output: one list of tool objects per dialect plus the dialect warnings (e.g. a
tool that cannot be strict, a recursive schema that Anthropic strict mode cannot take). The schema
rules themselves live in `toolgen.dialects` (see docs/provider-dialects rules cited there).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..compile.ir import ApiIR, Tool
from ..dialects.openai import (
    anthropic_input_schema,
    anthropic_tool,
    mcp_input_schema,
    mcp_output_schema,
    mcp_tool,
    openai_parameters,
    openai_tool,
)

DIALECTS = ("openai", "anthropic", "mcp")


@dataclass
class Catalogs:
    openai: list[dict[str, Any]] = field(default_factory=list)
    anthropic: list[dict[str, Any]] = field(default_factory=list)
    mcp: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (tool, message)

    def by_dialect(self) -> dict[str, list[dict[str, Any]]]:
        return {"openai": self.openai, "anthropic": self.anthropic, "mcp": self.mcp}


def build_catalogs(ir: ApiIR, progress: Callable[[int, int], None] | None = None) -> Catalogs:
    """Each tool's dialect schemas are computed once and feed both the tool object and the warnings.
    `progress(done, total)` is called after each tool, if given."""
    out = Catalogs()
    for done, tool in enumerate(ir.tools, 1):
        if progress is not None:
            progress(done, len(ir.tools))
        openai = openai_parameters(tool.input_schema)
        anthropic = anthropic_input_schema(tool.input_schema)
        mcp_in = mcp_input_schema(tool.input_schema)
        mcp_out = mcp_output_schema(tool.output_schema)
        out.openai.append(openai_tool(tool.name, tool.description, tool.input_schema, parameters=openai))
        out.anthropic.append(anthropic_tool(tool.name, tool.description, tool.input_schema, input_schema=anthropic))
        row = tool.policy
        out.mcp.append(mcp_tool(
            tool.name, tool.description, tool.input_schema, tool.output_schema,
            title=tool.title,
            read_only=row.mode != "record",
            destructive=row.mode == "record" and row.effect == "destructive",
            idempotent=row.mode != "record" or row.idempotency is not None,
            open_world=True,
            input_schema=mcp_in,
            output_schema=mcp_out,
        ))
        for dialect, result in (("openai", openai), ("anthropic", anthropic), ("mcp", mcp_in), ("mcp", mcp_out)):
            for warning in result.warnings:
                out.warnings.append((tool.name, f"{dialect}: {warning}"))
    return out


def tool_of(ir: ApiIR, name: str) -> Tool:
    return next(t for t in ir.tools if t.name == name)
