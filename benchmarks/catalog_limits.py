"""Check a generated API folder against every provider's per-request limits, file by file.

    python benchmarks/catalog_limits.py GENERATED_DIR [--json]

For each catalog file the folder holds, what one request sends of it and the provider's limit:

- ``anthropic.json`` or each part ``anthropic.<k>.json``: every entry is sent (deferred tools
  included), at most 10,000 with tool search (F.2); the file is also checked with
  `check_anthropic_catalog`.
- ``openai.responses.json`` or each part: top-level entries (a namespace is one), at most 128 (A.1).
- ``openai.json`` (Chat Completions) and ``gemini.json``: neither provider defers loading (F.1,
  F.3), so with deferred tools the file is the pool a client picks found entries from, and a request
  carries the up-front view: the eager entries and the client-run ``search_tools`` entry
  (`toolgen.evals.client_search.client_catalog`, what the eval adapters send), at most 128 (A.1,
  C.1), checked with `check_openai_catalog` / `check_gemini_catalog` (strict mode included). With
  nothing deferred the view is the whole file. Over 128 is reported, not hidden (`toolgen lint`
  warns: the eager tools are the intent map's choice).
- ``mcp.json``: ``tools/list`` (the eager tools and ``search_tools``): MCP states no count limit.

Prints one line per file (or JSON with ``--json``) and exits 1 when a catalog meant to be sent
whole (an Anthropic or Responses file) is over its limit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from toolgen.dialects.anthropic import ANTHROPIC_MAX_SEARCH_TOOLS, check_anthropic_catalog
from toolgen.dialects.gemini import GEMINI_MAX_TOOLS, check_gemini_catalog
from toolgen.dialects.openai import OPENAI_MAX_TOOLS, check_openai_catalog
from toolgen.evals.client_search import ClientCatalog, client_catalog
from toolgen.search.tool import gemini_search_declaration, openai_search_function

#: the pools of a client-run search: file -> (its search entry, limit, checker)
POOLS: dict[str, tuple[Any, int, Any]] = {
    "openai.json": (openai_search_function, OPENAI_MAX_TOOLS, check_openai_catalog),
    "gemini.json": (gemini_search_declaration, GEMINI_MAX_TOOLS, check_gemini_catalog),
}


def upfront(folder: Path, name: str) -> ClientCatalog:
    """What one request carries of pool `name` (``openai.json``, ``gemini.json``) before any search
    (``.sent``; ``.searching``: its last entry is ``search_tools``)."""
    search_entry, _, _ = POOLS[name]
    return client_catalog(folder, name, search_entry)


def check(folder: Path) -> list[dict[str, Any]]:
    """One row per catalog file of `folder`: file, what is sent, entries, limit, within (bool)."""
    policy = json.loads((folder / "policy.json").read_text(encoding="utf-8"))
    deferred = {row["tool"] for row in policy.get("tools", []) if row.get("loading") == "deferred"}
    rows: list[dict[str, Any]] = []
    for path in sorted(folder.glob("*.json")):
        name = path.name
        if name in ("policy.json", "search.json") or name.endswith(".parts.json"):
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        if name.startswith("anthropic"):
            problems = check_anthropic_catalog(data)
            rows.append(
                {
                    "file": name,
                    "sent": "every entry (tool search)",
                    "entries": len(data),
                    "limit": ANTHROPIC_MAX_SEARCH_TOOLS,
                    "whole": True,
                    "within": len(data) <= ANTHROPIC_MAX_SEARCH_TOOLS and not problems,
                    "violations": len(problems),
                }
            )
        elif name.startswith("openai.responses"):
            rows.append(
                {
                    "file": name,
                    "sent": "top-level entries",
                    "entries": len(data),
                    "limit": OPENAI_MAX_TOOLS,
                    "whole": True,
                    "within": len(data) <= OPENAI_MAX_TOOLS,
                }
            )
        elif name in POOLS:
            _, limit, checker = POOLS[name]
            catalog = upfront(folder, name)
            view = catalog.sent
            problems = checker(view, max_tools=None)
            rows.append(
                {
                    "file": name,
                    "sent": "eager entries and search_tools" if catalog.searching else "every entry",
                    "entries": len(view),
                    "limit": limit,
                    "whole": False,
                    "within": len(view) <= limit and not problems,
                    "violations": len(problems),
                }
            )
        elif name == "mcp.json":
            up = sum(1 for e in data if e.get("name") not in deferred) + (1 if deferred else 0)
            rows.append(
                {
                    "file": name,
                    "sent": "tools/list: eager tools and search_tools",
                    "entries": up,
                    "limit": None,
                    "whole": False,
                    "within": True,
                }
            )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rows = check(args.folder)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            limit = f"{row['limit']:,}" if row["limit"] is not None else "none"
            print(
                f"{row['file']}: {row['entries']:,} sent ({row['sent']}), limit {limit}: "
                f"{'within' if row['within'] else 'OVER'}"
            )
    return 1 if any(row["whole"] and not row["within"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
