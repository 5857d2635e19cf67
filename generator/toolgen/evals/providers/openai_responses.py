"""OpenAI Responses API adapter (official ``openai`` SDK, ``client.responses.create``).

Catalog: ``openai.responses.json`` when the package has it (namespaces, ``defer_loading`` and the
hosted ``{"type": "tool_search"}``: the provider loads deferred tools itself and reports it as
``tool_search_call`` / ``tool_search_output`` items), else the functions of ``openai.json`` in the
Responses shape (``{"type": "function", "name", "description", "parameters", "strict"}``).
Conversation: stateless (``store: false``); every output item is sent back as input, each call's
result as a ``function_call_output``. Usage: ``usage.input_tokens`` / ``usage.output_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2 as httpx

from ..conversation import ToolCall, Turn, parse_arguments


def responses_tools(package: Path) -> list[dict[str, Any]]:
    """The Responses tool list of the package (see the module docstring)."""
    native = package / "openai.responses.json"
    if native.is_file():
        tools: list[dict[str, Any]] = json.loads(native.read_text(encoding="utf-8"))
        return tools
    chat = json.loads((package / "openai.json").read_text(encoding="utf-8"))
    return [{"type": "function", **entry["function"]} for entry in chat]


class ResponsesAdapter:
    dialect = "openai"
    client_search = False  # the provider runs the search (hosted tool search)

    def __init__(
        self, package: Path, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
    ) -> None:
        import openai

        self.client: Any = openai.OpenAI(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0
        )
        self.model = model
        self.tools = responses_tools(package)
        self.system = ""
        self.items: list[dict[str, Any]] = []

    def load(self, names: Sequence[str]) -> tuple[str, ...]:
        return ()

    def begin(self, system: str, prompt: str) -> None:
        self.system = system
        self.items = [{"role": "user", "content": prompt}]

    def step(self) -> Turn:
        response = self.client.responses.create(
            model=self.model, instructions=self.system, input=self.items, tools=self.tools, store=False
        )
        data: dict[str, Any] = response.to_dict()
        calls: list[ToolCall] = []
        text: list[str] = []
        searches = 0
        loaded: list[str] = []
        for item in data.get("output") or []:
            self.items.append(item)
            kind = item.get("type")
            if kind == "function_call":
                calls.append(
                    ToolCall(str(item["call_id"]), str(item["name"]), parse_arguments(item.get("arguments")))
                )
            elif kind == "message":
                text.extend(
                    str(c.get("text", ""))
                    for c in item.get("content") or []
                    if c.get("type") == "output_text"
                )
            elif kind == "tool_search_call":
                searches += 1
            elif kind == "tool_search_output":
                for tool in item.get("tools") or []:
                    loaded.extend(str(t["name"]) for t in tool.get("tools") or [tool] if "name" in t)
        usage = data.get("usage") or {}
        return Turn(
            tuple(calls),
            "".join(text),
            int(usage.get("input_tokens") or 0),
            int(usage.get("output_tokens") or 0),
            searches,
            tuple(loaded),
        )

    def answer(self, results: Sequence[tuple[ToolCall, str, bool]]) -> None:
        for call, output, _error in results:
            self.items.append({"type": "function_call_output", "call_id": call.id, "output": output})
