"""Provider adapters: one module per wire format, each built on the provider's official SDK.

`make_adapter(provider, ...)` returns the `toolgen.evals.conversation.Adapter` for ``openai``
(Responses API), ``anthropic`` (Messages), ``gemini`` (google-genai generateContent) or
``openai-compatible`` (Chat Completions: vLLM, llama.cpp server, Ollama...). Every adapter takes the
package folder (it reads the catalog of its dialect from there), the model name, an API key, an
optional base URL and the `httpx2.Client` it must send through (the runner's recording or replaying
transport). The SDKs are imported when an adapter is made, so the rest of toolgen does not need them.
"""

from __future__ import annotations

from pathlib import Path

import httpx2 as httpx

from ..conversation import Adapter
from ..provider_names import PROVIDERS


def make_adapter(
    provider: str, package: Path, model: str, *, api_key: str, base_url: str | None, http_client: httpx.Client
) -> Adapter:
    """The adapter for `provider` (one of `PROVIDERS`). Raises `ValueError` for another name and
    `ImportError` when the provider's SDK is not installed (the ``eval`` extra: ``pip install -e ".[eval]"`` in a clone of toolgen)."""
    if provider == "openai":
        from .openai_responses import ResponsesAdapter

        return ResponsesAdapter(package, model, api_key=api_key, base_url=base_url, http_client=http_client)
    if provider == "anthropic":
        from .anthropic_messages import MessagesAdapter

        return MessagesAdapter(package, model, api_key=api_key, base_url=base_url, http_client=http_client)
    if provider == "gemini":
        from .gemini_generate import GeminiAdapter

        return GeminiAdapter(package, model, api_key=api_key, base_url=base_url, http_client=http_client)
    if provider == "openai-compatible":
        from .openai_chat import ChatAdapter

        return ChatAdapter(package, model, api_key=api_key, base_url=base_url, http_client=http_client)
    raise ValueError(f"unknown provider {provider!r}: use one of {', '.join(PROVIDERS)}")
