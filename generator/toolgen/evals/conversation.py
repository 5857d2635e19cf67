"""What every provider adapter speaks to the runner: tool calls in, tool results out, usage counted.

Input: nothing (types only). Output: `ToolCall`, `Turn` and the `Adapter` protocol the adapters in
`toolgen.evals.providers` implement. An adapter owns one conversation in its provider's wire format:
`begin` starts it with the system text and the user's prompt, `step` sends the conversation and
returns what the model did (`Turn`), `answer` appends the results of the calls it made.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class ToolCall:
    """One call the model made: provider call id, tool name, arguments (parsed JSON; the raw text when
    it did not parse, so the runtime reports ``invalid_arguments``)."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class Turn:
    """One model response: its tool calls, its text, tokens in and out as the provider counted them,
    and the provider-run tool searches in it (`searches`; `loaded`: the tool names they loaded)."""

    calls: tuple[ToolCall, ...] = ()
    text: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    searches: int = 0
    loaded: tuple[str, ...] = field(default_factory=tuple)


class Adapter(Protocol):
    """One provider conversation (see the module docstring). `dialect` names the catalog the model saw
    (``openai``, ``anthropic``, ``gemini``): the runtime undoes its argument rewrites.
    `client_search`: the adapter sent the client-run ``search_tools`` entry (a provider with no
    deferred loading, and a package with deferred tools), so the runner answers that call itself and
    passes the tool names it found to `load`, which adds them to the next request and returns the
    names added (a provider that runs its own search: always ``()``)."""

    dialect: str
    client_search: bool

    def load(self, names: Sequence[str]) -> tuple[str, ...]: ...

    def begin(self, system: str, prompt: str) -> None: ...

    def step(self) -> Turn: ...

    def answer(self, results: Sequence[tuple[ToolCall, str, bool]]) -> None:
        """`results`: (call, the result as JSON text, whether it is an error)."""
        ...


def parse_arguments(text: Any) -> Any:
    """JSON arguments a provider sent as text, parsed; the text itself when it is not JSON."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text
