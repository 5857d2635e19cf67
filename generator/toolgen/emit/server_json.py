"""Stage `emit`: ``server.json``, the record that publishes a built API in the MCP registry.

Input: the `ApiIR` and the API's `RegistryListing` (toolgen.yaml ``registry:``). Output: the
``server.json`` document of the registry's format 2025-12-11 (`SCHEMA_URL`; the published JSON
Schema is vendored byte for byte in ``toolgen/schemas/``, provenance in its README), and
`server_json_problems`, that schema's verdict on a document.

What it says: the listing's `name`; the API's title; a description of at most 100 characters (the
listing's, else how many tools and how many of them are approval-gated); the version (the listing's,
else the spec's ``info.version``); with a `url`, one ``streamable-http`` remote (what ``toolgen serve
--http`` answers) whose ``Authorization`` header is a required secret (a bearer token of the
server's tokens file); the repository and website when given; and under ``_meta`` the
publisher-provided counts (tools, toolsets, approval-gated tools). toolgen is served from a clone,
not from a package index, so no ``packages`` entry is written. The "server card" has no settled
schema yet and is not written.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..compile.ir import ApiIR
from ..dialects import RegistryListing

#: the registry format this module writes (``$schema`` of every server.json)
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SCHEMA_FILE = Path(__file__).resolve().parents[1] / "schemas" / "mcp-registry-server.2025-12-11.schema.json"
#: the ``_meta`` member the registry keeps for the publisher's own data
PUBLISHER_META = "io.modelcontextprotocol.registry/publisher-provided"
MAX_DESCRIPTION = 100  # ServerDetail.description maxLength
MAX_TITLE = 100  # ServerDetail.title maxLength
MAX_VERSION = 255  # ServerDetail.version maxLength


def server_json(ir: ApiIR, listing: RegistryListing) -> dict[str, Any]:
    """The ``server.json`` of `ir` as `listing` describes it (see the module docstring). A pure
    function of its arguments: the same IR and listing give the same document."""
    gated = sum(1 for t in ir.tools if t.policy.approval == "required")
    doc: dict[str, Any] = {
        "$schema": SCHEMA_URL,
        "name": listing.name,
        "description": listing.description or _description(ir, gated),
        "version": listing.version or _version(ir.version),
    }
    title = (ir.title or ir.name).strip()
    if title:
        doc["title"] = title if len(title) <= MAX_TITLE else title[: MAX_TITLE - 1] + "\u2026"
    if listing.url:
        doc["remotes"] = [
            {
                "type": "streamable-http",
                "url": listing.url,
                "headers": [
                    {
                        "name": "Authorization",
                        "description": "Bearer <token>: a token of the server's tokens file; its caller sees and calls "
                        "only the tools its scopes allow.",
                        "isRequired": True,
                        "isSecret": True,
                    }
                ],
            }
        ]
    if listing.repository:
        host = (urlsplit(listing.repository).hostname or "").lower()
        source = host.removeprefix("www.").split(".")[0] or "git"
        doc["repository"] = {"url": listing.repository, "source": source}
    if listing.website:
        doc["websiteUrl"] = listing.website
    doc["_meta"] = {
        PUBLISHER_META: {
            "tool": "toolgen",
            "tools": len(ir.tools),
            "approval_gated_tools": gated,
            "toolsets": sorted(t.name for t in ir.toolsets),
        }
    }
    return doc


def _description(ir: ApiIR, gated: int) -> str:
    """``"<title>: N tools (M approval-gated), enforced at run time"``, shortened to fit 100 characters."""
    counts = f"{len(ir.tools)} tools" + (f" ({gated} approval-gated)" if gated else "")
    title = (ir.title or ir.name).strip()
    for text in (
        f"{title}: {counts}, enforced at run time",
        f"{title}: {counts}",
        f"{ir.name}: {counts}",
        counts,
    ):
        if 0 < len(text) <= MAX_DESCRIPTION:
            return text
    return counts[:MAX_DESCRIPTION]


def _version(version: str) -> str:
    """The spec's ``info.version`` as a server version: trimmed, at most 255 characters, ``0`` when empty."""
    text = version.strip()
    return text[:MAX_VERSION] if text else "0"


@cache
def registry_schema() -> dict[str, Any]:
    """The vendored registry schema (JSON Schema draft-07), read once."""
    loaded: dict[str, Any] = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return loaded


def server_json_problems(doc: Any) -> list[str]:
    """What the registry's published schema refuses in `doc`, as ``"<JSON pointer>: <message>"``
    (empty: it conforms). Formats (``uri``) are not checked; the patterns of names and URLs are."""
    import jsonschema

    validator = jsonschema.Draft7Validator(registry_schema())
    return [
        ("/" + "/".join(str(p) for p in e.absolute_path)) + f": {e.message}"
        for e in sorted(validator.iter_errors(doc), key=lambda e: [str(p) for p in e.absolute_path])
    ]
