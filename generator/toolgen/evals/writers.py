"""Writers for `toolgen describe`: a provider's model asked for one JSON answer of a given schema,
through the provider's official SDK, as the eval adapters (`toolgen.evals.providers`) reach them.

`make_writer(provider, model, api_key=, base_url=, http_client=)` returns a `ProviderWriter` for
``openai`` (Responses API, ``text.format`` a strict ``json_schema``), ``openai-compatible`` (Chat
Completions, ``response_format`` a strict ``json_schema``), ``anthropic`` (Messages: one tool whose
``input_schema`` is the schema, forced by ``tool_choice``; its input is the answer) or ``gemini``
(generateContent with ``response_mime_type: application/json`` and ``response_json_schema``). Every
request goes through `http_client`: a `toolgen.evals.cassette.RecordingTransport` keeps the exchanges
and a `ReplayTransport` answers from them, so a recorded run replays offline (`Cassette`). The SDK
is imported when a writer is made; it retries nothing (a failed request ends the run).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx

from .provider_names import PROVIDERS

#: the most a model may write for one batch (the Messages API requires a bound; the others take it too)
MAX_OUTPUT_TOKENS = 4096
ANSWER_NAME = "search_expansions"
#: the largest recording read (a run of 1,000 tools records about 10 MB)
MAX_CASSETTE_BYTES = 256 * 1024 * 1024


@dataclass
class ProviderWriter:
    """One provider's model as a `toolgen.scaffold.describe.Writer`: `write(system, prompt, schema)`
    sends one request and returns the answer's text (the JSON the model wrote, or for Anthropic the
    forced tool call's input as JSON)."""

    provider: str
    model: str
    client: Any

    @property
    def name(self) -> str:
        return f"{self.provider} {self.model}"

    def write(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        if self.provider == "openai":
            return self._responses(system, prompt, schema)
        if self.provider == "openai-compatible":
            return self._chat(system, prompt, schema)
        if self.provider == "anthropic":
            return self._messages(system, prompt, schema)
        return self._gemini(system, prompt, schema)

    def _responses(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        response = self.client.responses.create(
            model=self.model,
            instructions=system,
            input=prompt,
            store=False,
            max_output_tokens=MAX_OUTPUT_TOKENS,
            text={
                "format": {"type": "json_schema", "name": ANSWER_NAME, "schema": dict(schema), "strict": True}
            },
        )
        data: dict[str, Any] = response.to_dict()
        return "".join(
            str(c.get("text", ""))
            for item in data.get("output") or []
            if item.get("type") == "message"
            for c in item.get("content") or []
            if c.get("type") == "output_text"
        )

    def _chat(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        response = self.client.chat.completions.create(
            model=self.model,
            max_tokens=MAX_OUTPUT_TOKENS,
            messages=[{"role": "system", "content": system}, {"role": "user", "content": prompt}],
            response_format={
                "type": "json_schema",
                "json_schema": {"name": ANSWER_NAME, "schema": dict(schema), "strict": True},
            },
        )
        data: dict[str, Any] = response.to_dict()
        choices = data.get("choices") or [{}]
        return str((choices[0].get("message") or {}).get("content") or "")

    def _messages(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        tool = {
            "name": ANSWER_NAME,
            "description": "Record the search expansions of the tools.",
            "input_schema": dict(schema),
        }
        response = self.client.messages.create(
            model=self.model,
            max_tokens=MAX_OUTPUT_TOKENS,
            system=system,
            messages=[{"role": "user", "content": prompt}],
            tools=[tool],
            tool_choice={"type": "tool", "name": ANSWER_NAME},
        )
        data: dict[str, Any] = response.to_dict()
        for block in data.get("content") or []:
            if block.get("type") == "tool_use" and block.get("name") == ANSWER_NAME:
                return json.dumps(block.get("input"), ensure_ascii=False)
        return "".join(str(b.get("text", "")) for b in data.get("content") or [] if b.get("type") == "text")

    def _gemini(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        config = {
            "system_instruction": system,
            "response_mime_type": "application/json",
            "response_json_schema": dict(schema),
            "max_output_tokens": MAX_OUTPUT_TOKENS,
        }
        response = self.client.models.generate_content(
            model=self.model, contents=[{"role": "user", "parts": [{"text": prompt}]}], config=config
        )
        data: dict[str, Any] = response.model_dump(mode="json", exclude_none=True)
        candidates = data.get("candidates") or [{}]
        parts = (candidates[0].get("content") or {}).get("parts") or []
        return "".join(str(p["text"]) for p in parts if "text" in p and not p.get("thought"))


def make_writer(
    provider: str, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
) -> ProviderWriter:
    """The writer for `provider` (one of `toolgen.evals.providers.PROVIDERS`). Raises `ValueError` for
    another name and `ImportError` when the provider's SDK is not installed (the ``eval`` extra)."""
    if provider not in PROVIDERS:
        raise ValueError(f"unknown provider {provider!r}: use one of {', '.join(PROVIDERS)}")
    client: Any
    if provider in ("openai", "openai-compatible"):
        import openai

        client = openai.OpenAI(api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0)
    elif provider == "anthropic":
        import anthropic

        client = anthropic.Anthropic(
            api_key=api_key, base_url=base_url, http_client=http_client, max_retries=0
        )
    else:
        from google import genai
        from google.genai import types

        options = types.HttpOptions(
            base_url=base_url, httpx_client=http_client, retry_options=types.HttpRetryOptions(attempts=1)
        )
        client = genai.Client(api_key=api_key, http_options=options)
    return ProviderWriter(provider, model, client)


@dataclass
class Cassette:
    """A recorded `toolgen describe` run: the writer it used (provider, model, base URL) and every
    exchange (`toolgen.evals.cassette`'s ``{"request", "response"}`` objects), as one JSON file:
    ``{"writer": {"provider", "model", "base_url"}, "exchanges": [...]}``."""

    provider: str
    model: str
    base_url: str | None = None
    exchanges: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def read(cls, path: Path) -> Cassette:
        """Raises `OSError` when the file cannot be read, `ValueError` when it is no cassette: not a
        regular file (a device or pipe may never end), over `MAX_CASSETTE_BYTES`, not JSON or not
        of the shape."""
        if not path.is_file():
            raise ValueError("not a regular file: name a recording written by --record")
        with path.open("rb") as tape:
            raw = tape.read(MAX_CASSETTE_BYTES + 1)
        if len(raw) > MAX_CASSETTE_BYTES:
            raise ValueError(f"the recording has more than {MAX_CASSETTE_BYTES:,} bytes")
        data = json.loads(raw.decode("utf-8"))
        if not _is_cassette(data):
            raise ValueError(
                'not a describe cassette: {"writer": {provider, model, base_url}, "exchanges": '
                "[{request: {method, path, body}, response: {status, content_type, body}}, ...]}"
            )
        writer = data["writer"]
        base_url = writer.get("base_url")
        return cls(
            writer["provider"],
            writer["model"],
            base_url if isinstance(base_url, str) else None,
            data["exchanges"],
        )

    def text(self) -> str:
        """The recording as the JSON text `read` reads (what ``--record`` writes)."""
        data = {
            "writer": {"provider": self.provider, "model": self.model, "base_url": self.base_url},
            "exchanges": self.exchanges,
        }
        return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def _is_cassette(data: Any) -> bool:
    writer = data.get("writer") if isinstance(data, dict) else None
    exchanges = data.get("exchanges") if isinstance(data, dict) else None
    if not isinstance(writer, dict) or not isinstance(exchanges, list):
        return False
    if not isinstance(writer.get("provider"), str) or not isinstance(writer.get("model"), str):
        return False
    for exchange in exchanges:
        request = exchange.get("request") if isinstance(exchange, dict) else None
        response = exchange.get("response") if isinstance(exchange, dict) else None
        if not isinstance(request, dict) or not isinstance(response, dict):
            return False
        if not all(isinstance(request.get(k), str) for k in ("method", "path", "body")):
            return False
        if not isinstance(response.get("status"), int) or not all(
            isinstance(response.get(k), str) for k in ("content_type", "body")
        ):
            return False
    return True


__all__ = ["Cassette", "ProviderWriter", "make_writer"]
