"""The callers of the tickets MCP server as the identity tests see them: the tickets package's scopes
(`SCOPES`), three callers with their bearer tokens and scopes (`TOKENS`: actor -> (token, scopes)),
and the token file that lists them by SHA-256 digest (`write_token_file`, mode 0600 unless told).
"""

from __future__ import annotations

from pathlib import Path

from toolgen.runtime.serving.mcp_http import token_sha256

SCOPES = ("ticket:read", "ticket:write", "ticket:delete")
TOKENS = {
    "reader": ("reader-token-0b1f", ["ticket:read"]),
    "writer": ("writer-token-77aa", ["ticket:read", "ticket:write"]),
    "admin": ("admin-token-c3d9", list(SCOPES)),
}


def write_token_file(path: Path, mode: int = 0o600) -> Path:
    lines = ["# callers of the tickets MCP server", "tokens:"]
    for actor, (token, scopes) in TOKENS.items():
        lines += [
            f"  - actor: {actor}",
            f"    sha256: {token_sha256(token)}",
            f"    scopes: [{', '.join(scopes)}]",
        ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    path.chmod(mode)
    return path
