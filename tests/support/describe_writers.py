"""Writers and maps for the `toolgen describe` tests that draft without a provider.

`FunctionWriter(answer, toolsets)` answers each request from a function of the names it asks for:
`answer(tools)` for a request of tools (``{"tools": [...]}``), `toolsets(names)` for one of toolsets
(``{"toolsets": [...]}``); it keeps every prompt. `good_answer` and `good_toolset_answer` draft two
well-formed requests per name. `with_toolsets` gives the example tickets map two toolsets its
intents use, one with `examples` already, and one no intent uses.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Answer = Callable[[list[str]], Any]


def writer_options(base_url: str, model: str = "m") -> tuple[str, ...]:
    """`toolgen describe` / `init --describe` options that send the writer's prompts to an
    OpenAI-compatible endpoint at `base_url` (a loopback test server) as `model`."""
    return ("--provider", "openai-compatible", "--model", model, "--base-url", base_url)


def good_answer(tools: list[str]) -> dict[str, Any]:
    return {
        "tools": [
            {
                "tool": t,
                "examples": [
                    f"please help me {t.replace('_', ' ')} today",
                    f"I need to {t.replace('_', ' ')} for a customer",
                ],
                "use_when": f"the user asks to {t.replace('_', ' ')}",
                "not_for": None,
            }
            for t in tools
        ]
    }


def good_toolset_answer(toolsets: list[str]) -> dict[str, Any]:
    return {
        "toolsets": [
            {"toolset": t, "examples": [f"anything about {t} tickets please", f"help me with {t} work today"]}
            for t in toolsets
        ]
    }


class FunctionWriter:
    """A writer whose answer is a function of the names each request asks for; counts requests."""

    name = "test writer"

    def __init__(self, answer: Answer, toolsets: Answer = good_toolset_answer) -> None:
        self.answer = answer
        self.toolsets = toolsets
        self.prompts: list[str] = []
        self.systems: list[str] = []

    def write(self, system: str, prompt: str, schema: Mapping[str, Any]) -> str:
        self.prompts.append(prompt)
        self.systems.append(system)
        data = json.loads(prompt)
        if "toolsets" in data:
            value = self.toolsets([t["toolset"] for t in data["toolsets"]])
        else:
            value = self.answer([t["tool"] for t in data["tools"]])
        return value if isinstance(value, str) else json.dumps(value)


#: the toolsets `with_toolsets` adds, and the toolset of each operation of the tickets map
TOOLSETS = (
    "toolsets:\n"
    "  reading:\n"
    "    description: Read tickets and their history.\n"
    "  changing:\n"
    "    description: Follow up on tickets or delete them.\n"
    "    examples:\n"
    '      - "close out an old ticket for good"\n'
    "  unused:\n"
    "    description: Nothing is in it yet.\n"
)
MEMBERS = {
    "getTicket": "reading",
    "listTickets": "reading",
    "getTicketHistory": "reading",
    "addFollowup": "changing",
    "DELETE /tickets/{ticket_id}": "changing",
}


def with_toolsets(intent_map: Path) -> Path:
    """The tickets map at `intent_map` with `TOOLSETS` above its `tools:` and each intent in its
    toolset (`MEMBERS`); returns the path."""
    text = intent_map.read_text(encoding="utf-8")
    for operation, toolset in MEMBERS.items():
        line = f"\n    operation: {operation}\n"  # an intent's, not a composite step's (deeper)
        assert text.count(line) == 1, line
        text = text.replace(line, f"{line}    toolset: {toolset}\n")
    assert text.count("\ntools:\n") == 1
    intent_map.write_text(text.replace("\ntools:\n", f"\n{TOOLSETS}tools:\n"), encoding="utf-8")
    return intent_map
