"""OpenAI-compatible Chat Completions adapter (official ``openai`` SDK, ``client.chat.completions``):
any endpoint that speaks the chat wire format (vLLM, llama.cpp server, Ollama, OpenAI itself).

Catalog: the functions of ``openai.json`` (``{"type": "function", "function": {...}, strict}``).
The chat format has no deferred loading (docs/provider-rules.md F.1), so when the package defers
tools the first request carries the eager functions and the client-run ``search_tools`` function
(`toolgen.search.tool.openai_search_function`, `toolgen.evals.client_search`); the runner answers a
search and `load` adds the found functions from ``openai.json`` to the next request. Conversation: the assistant message is sent back with its
``tool_calls``, each result as a ``role: tool`` message. Usage: ``prompt_tokens`` /
``completion_tokens`` (0 when the server does not report usage).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2 as httpx

from ...search.tool import openai_search_function
from ..client_search import client_catalog
from ..conversation import ToolCall, Turn, parse_arguments


class ChatAdapter:
    dialect = "openai"

    def __init__(
        self, package: Path, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
    ) -> None:
        import openai

        self.client: Any = openai.OpenAI(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0
        )
        self.model = model
        self.catalog = client_catalog(package, "openai.json", openai_search_function)
        self.client_search = self.catalog.searching
        self.messages: list[dict[str, Any]] = []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The functions the next request carries."""
        return self.catalog.sent

    def load(self, names: Sequence[str]) -> tuple[str, ...]:
        return self.catalog.load(names)

    def begin(self, system: str, prompt: str) -> None:
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": prompt}]

    def step(self) -> Turn:
        response = self.client.chat.completions.create(
            model=self.model, messages=self.messages, tools=self.tools
        )
        data: dict[str, Any] = response.to_dict()
        choices = data.get("choices") or [{}]
        message = dict(choices[0].get("message") or {"role": "assistant", "content": ""})
        message = {k: v for k, v in message.items() if k in ("role", "content", "tool_calls")}
        self.messages.append(message)
        calls = tuple(
            ToolCall(
                str(c["id"]), str(c["function"]["name"]), parse_arguments(c["function"].get("arguments"))
            )
            for c in message.get("tool_calls") or []
            if c.get("type", "function") == "function"
        )
        usage = data.get("usage") or {}
        return Turn(
            calls,
            str(message.get("content") or ""),
            int(usage.get("prompt_tokens") or 0),
            int(usage.get("completion_tokens") or 0),
        )

    def answer(self, results: Sequence[tuple[ToolCall, str, bool]]) -> None:
        for call, output, _error in results:
            self.messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
