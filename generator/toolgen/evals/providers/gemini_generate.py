"""Gemini adapter (official ``google-genai`` SDK, ``client.models.generate_content``).

Catalog: ``gemini.json`` (function declarations in the OpenAPI 3.0 subset) as one ``tools`` entry;
automatic function calling is off, so every call comes back to the runner. Gemini documents no
deferred loading or hosted tool search (docs/provider-rules.md F.3), so when the package defers tools
the first request carries the eager declarations and the client-run ``search_tools`` declaration
(`toolgen.search.tool.gemini_search_declaration`, `toolgen.evals.client_search`); the runner answers
a search and `load` adds the found declarations from ``gemini.json`` to the next request.
Conversation: the candidate's content is sent back; results as ``function_response`` parts
(``{"result": ...}`` or ``{"error": ...}``). Usage: ``prompt_token_count`` / ``candidates_token_count``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2 as httpx

from ...search.tool import gemini_search_declaration
from ..client_search import client_catalog
from ..conversation import ToolCall, Turn


class GeminiAdapter:
    dialect = "gemini"

    def __init__(
        self, package: Path, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
    ) -> None:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=base_url, httpx_client=http_client, retry_options=types.HttpRetryOptions(attempts=1)
        )
        self.client: Any = genai.Client(api_key=api_key, http_options=options)
        self.model = model
        self.catalog = client_catalog(package, "gemini.json", gemini_search_declaration)
        self.client_search = self.catalog.searching
        self.system = ""
        self.contents: list[dict[str, Any]] = []
        self._calls = 0

    @property
    def declarations(self) -> list[dict[str, Any]]:
        """The function declarations the next request carries."""
        return self.catalog.sent

    def load(self, names: Sequence[str]) -> tuple[str, ...]:
        return self.catalog.load(names)

    def begin(self, system: str, prompt: str) -> None:
        self.system = system
        self.contents = [{"role": "user", "parts": [{"text": prompt}]}]
        self._calls = 0

    def step(self) -> Turn:
        config = {
            "system_instruction": self.system,
            "tools": [{"function_declarations": self.declarations}],
            "automatic_function_calling": {"disable": True},
        }
        response = self.client.models.generate_content(
            model=self.model, contents=self.contents, config=config
        )
        data: dict[str, Any] = response.model_dump(mode="json", exclude_none=True)
        candidates = data.get("candidates") or [{}]
        content = dict(candidates[0].get("content") or {"role": "model", "parts": []})
        self.contents.append(content)
        calls: list[ToolCall] = []
        text: list[str] = []
        for part in content.get("parts") or []:
            if "function_call" in part:
                fc = part["function_call"]
                self._calls += 1
                calls.append(
                    ToolCall(
                        str(fc.get("id") or f"call-{self._calls}"), str(fc["name"]), fc.get("args") or {}
                    )
                )
            elif "text" in part:
                text.append(str(part["text"]))
        usage = data.get("usage_metadata") or {}
        return Turn(
            tuple(calls),
            "".join(text),
            int(usage.get("prompt_token_count") or 0),
            int(usage.get("candidates_token_count") or 0),
        )

    def answer(self, results: Sequence[tuple[ToolCall, str, bool]]) -> None:
        parts = []
        for call, output, error in results:
            response = {"error" if error else "result": json.loads(output)}
            part: dict[str, Any] = {"function_response": {"name": call.name, "response": response}}
            if not call.id.startswith("call-"):
                part["function_response"]["id"] = call.id
            parts.append(part)
        self.contents.append({"role": "user", "parts": parts})
