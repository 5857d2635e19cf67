"""Anthropic Messages adapter (official ``anthropic`` SDK, ``client.messages.create``).

Catalog: ``anthropic.json`` as is: strict tools, ``defer_loading`` on deferred ones and the BM25
tool-search server tool last; the API runs the search itself and reports it as a
``server_tool_use`` block and a ``tool_search_tool_result`` block of ``tool_reference`` items.
Conversation: the assistant's content blocks are sent back unchanged; results as ``tool_result``
blocks (``is_error`` for a structured error). Usage: ``usage.input_tokens`` / ``output_tokens``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2 as httpx

from ..conversation import ToolCall, Turn

#: the most a model may write in one turn (the Messages API requires a bound)
MAX_TOKENS = 2048


class MessagesAdapter:
    dialect = "anthropic"
    client_search = False  # the provider runs the search (hosted tool search)

    def __init__(
        self, package: Path, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
    ) -> None:
        import anthropic

        self.client: Any = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0
        )
        self.model = model
        self.tools = json.loads((package / "anthropic.json").read_text(encoding="utf-8"))
        self.system = ""
        self.messages: list[dict[str, Any]] = []

    def load(self, names: Sequence[str]) -> tuple[str, ...]:
        return ()

    def begin(self, system: str, prompt: str) -> None:
        self.system = system
        self.messages = [{"role": "user", "content": prompt}]

    def step(self) -> Turn:
        response = self.client.messages.create(
            model=self.model,
            max_tokens=MAX_TOKENS,
            system=self.system,
            messages=self.messages,
            tools=self.tools,
        )
        data: dict[str, Any] = response.to_dict()
        blocks = list(data.get("content") or [])
        self.messages.append({"role": "assistant", "content": blocks})
        calls: list[ToolCall] = []
        text: list[str] = []
        searches = 0
        loaded: list[str] = []
        for block in blocks:
            kind = block.get("type")
            if kind == "tool_use":
                calls.append(ToolCall(str(block["id"]), str(block["name"]), block.get("input")))
            elif kind == "text":
                text.append(str(block.get("text", "")))
            elif kind == "server_tool_use" and str(block.get("name", "")).startswith("tool_search"):
                searches += 1
            elif kind == "tool_search_tool_result":
                content = block.get("content") or {}
                loaded.extend(str(r["tool_name"]) for r in content.get("tool_references") or [])
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
        self.messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call.id,
                        "content": output,
                        **({"is_error": True} if error else {}),
                    }
                    for call, output, error in results
                ],
            }
        )
