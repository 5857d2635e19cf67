"""Client-run tool search for the providers that defer nothing (OpenAI Chat Completions, Gemini:
docs/provider-rules.md F.1, F.3): what an adapter sends up front, and the tools a search adds.

Input: a package folder, its catalog file for the dialect (``openai.json`` or ``gemini.json``: every
tool's entry, the pool, each named as `toolgen.runtime.identity.tool_entry_name` reads it), and the
dialect's ``search_tools`` entry
(`toolgen.search.tool.openai_search_function`, `gemini_search_declaration`). Output: a
`ClientCatalog`, the tool list of the next request. With no deferred row in ``policy.json`` it is
the whole file and no search entry; with one, the eager entries in file order and then the
``search_tools`` entry naming the sorted toolsets that hold deferred tools: the up-front view the
build checks and prices (`toolgen.dialects.deferred_views`, REPORT.md "Up-front cost").

The runner answers a ``search_tools`` call with `toolgen.runtime.serving.search_tools.ToolSearch` (the
caller's scopes applied) and passes the names it found to `ClientCatalog.load`, which appends their
entries from the pool to the next request.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..policy.format import read_policy
from ..runtime.identity import is_deferred, tool_entry_name

JSON = Any


@dataclass
class ClientCatalog:
    """`sent`: the tools the next request carries, in order; `pool`: every entry of the catalog file,
    by tool name; `searching`: whether `sent` holds the ``search_tools`` entry (some tool is deferred)."""

    sent: list[dict[str, JSON]]
    pool: dict[str, dict[str, JSON]] = field(default_factory=dict)
    searching: bool = False
    _names: set[str] = field(default_factory=set)

    def load(self, names: Sequence[str]) -> tuple[str, ...]:
        """Append the pool entries of `names` not sent yet, in the given order; the names added. A
        name the pool lacks is skipped (the caller's index and catalog come from one package)."""
        added: list[str] = []
        for name in names:
            entry = self.pool.get(name)
            if entry is None or name in self._names:
                continue
            self.sent.append(entry)
            self._names.add(name)
            added.append(name)
        return tuple(added)


def client_catalog(
    package: Path, file: str, search_entry: Callable[[Sequence[str]], dict[str, JSON]]
) -> ClientCatalog:
    """The `ClientCatalog` of `package` for catalog `file` (see the module docstring). Raises
    `OSError` / `ValueError` when ``policy.json`` or `file` cannot be read as JSON."""
    entries: list[dict[str, JSON]] = json.loads((package / file).read_text(encoding="utf-8"))
    rows = read_policy(package / "policy.json").tools
    deferred = [r for r in rows if is_deferred(r)]
    pool = {str(tool_entry_name(e)): e for e in entries}
    if not deferred:
        return ClientCatalog(list(entries), pool, False, set(pool))
    eager = {r.tool for r in rows if not is_deferred(r)}
    sent = [e for e in entries if tool_entry_name(e) in eager]
    toolsets = sorted({r.toolset for r in deferred if r.toolset is not None})
    return ClientCatalog([*sent, search_entry(toolsets)], pool, True, {str(tool_entry_name(e)) for e in sent})
