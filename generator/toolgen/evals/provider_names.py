"""The model providers `toolgen eval` and `toolgen describe` talk to, by name, with no import of their SDKs.

`PROVIDERS`: the names a command accepts (``openai-compatible`` is OpenAI's Chat Completions wire format
at another base URL); `SDK_MODULES`: the official SDK modules each one's adapter or writer imports (a
command checks them before it starts, to name the extra to install); `KEY_ENV`: the environment
variable that holds the API key by default.
"""

from __future__ import annotations

PROVIDERS = ("openai", "anthropic", "gemini", "openai-compatible")
SDK_MODULES: dict[str, tuple[str, ...]] = {
    "openai": ("openai",),
    "anthropic": ("anthropic",),
    "gemini": ("google.genai",),
    "openai-compatible": ("openai",),
}
KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
    "openai-compatible": "OPENAI_API_KEY",
}
